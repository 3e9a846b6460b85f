package org.shardline;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * One worker's Snowflake id generator (sans-IO: you pass the wall clock in). One per thread;
 * for a reserved worker id use {@link WorkerIdHolder}, which keeps the generator's timestamp
 * budget in step with the registry.
 */
public final class Snowflake extends NativeHandle {
  static {
    NativeLibrary.load();
  }

  /** What the generator answered: an id, or a wall time to ask again at. */
  public record Next(boolean isId, long value) {
    public long id() {
      if (!isId) throw new ShardlineException(Status.INVALID_STATE, "no id yet: wait until " + value);
      return value;
    }
  }

  private final SnowflakeLayout layout;

  private Snowflake(long handle, SnowflakeLayout layout) {
    super(handle, Snowflake::nFree, "Snowflake");
    this.layout = layout;
  }

  /** For a worker id made unique by other means (configuration): no floor, no budget limit. */
  public static Snowflake create(SnowflakeLayout layout, long worker) {
    return make(layout, worker, -1, false);
  }

  /**
   * For a reserved worker id: issues nothing at or below {@code floorMs} (-1: none), and
   * nothing until {@link #extendBudget} grants a ceiling.
   */
  public static Snowflake fenced(SnowflakeLayout layout, long worker, long floorMs) {
    return make(layout, worker, floorMs, true);
  }

  private static Snowflake make(SnowflakeLayout layout, long worker, long floor, boolean fenced) {
    Objects.requireNonNull(layout, "layout");
    long h = nNew(layout.timestampBits(), layout.workerBits(), layout.sequenceBits(), layout.epochMs(), worker, floor, fenced);
    return new Snowflake(h, layout);
  }

  public SnowflakeLayout layout() {
    return layout;
  }

  /** The next id at wall time {@code wallMs} (Unix ms), or when to ask again. */
  public Next next(long wallMs) {
    long[] r = call(h -> nNext(h, wallMs));
    return new Next(r[0] == 0, r[1]);
  }

  /** The next id by the system clock, sleeping through sequence overflows and short rollbacks. */
  public long nextId() throws InterruptedException {
    for (int waits = 0; waits < 64; waits++) {
      long now = System.currentTimeMillis();
      Next n = next(now);
      if (n.isId()) return n.value();
      Thread.sleep(Math.max(1, n.value() - now));
    }
    throw new ShardlineException(Status.INVALID_STATE, "the clock did not advance while waiting for it");
  }

  /** Raises the timestamp ceiling to an acknowledged budget (never lowers it). */
  public void extendBudget(long ceilingMs) {
    op(Snowflake::nOp, "extend_budget", ceilingMs);
  }

  /** Stops issuing ids at once (the reservation was lost). */
  public void revoke() {
    op(Snowflake::nOp, "revoke");
  }

  public Snowflake withRollbackTolerance(long toleranceMs) {
    op(Snowflake::nOp, "rollback_tolerance", toleranceMs);
    return this;
  }

  public Snowflake withMaxFenceWait(long maxFenceWaitMs) {
    op(Snowflake::nOp, "max_fence_wait", maxFenceWaitMs);
    return this;
  }

  public long worker() {
    return op(Snowflake::nOp, "worker");
  }

  public OptionalLong lastTimestampMs() {
    return opt("last_timestamp_ms");
  }

  public OptionalLong floorMs() {
    return opt("floor_ms");
  }

  public OptionalLong budgetMs() {
    return opt("budget_ms");
  }

  private OptionalLong opt(String name) {
    Long v = op(Snowflake::nOp, name);
    return v == null ? OptionalLong.empty() : OptionalLong.of(v);
  }

  private static native long nNew(int t, int w, int s, long epochMs, long worker, long floor, boolean fenced);

  private static native void nFree(long h);

  private static native long[] nNext(long h, long wallMs);

  private static native Object nOp(long h, String op, Object[] args);

  static native void nValidate(int t, int w, int s, long epochMs);

  static native long[] nDecompose(int t, int w, int s, long epochMs, long id);
}
