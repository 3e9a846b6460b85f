package org.shardline;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * A reserved worker id with its Snowflake generator: reserves the lowest free id (or one of the
 * lowest, see {@link ReserveConfig#spreadWindow}), keeps its session alive and its timestamp
 * budget ahead of the wall clock, and issues ids that no earlier or later holder of the same id
 * can repeat. Everything that waits goes through the {@link IdClock}, on the calling thread.
 *
 * <p>Call {@link #maintain()} at the time it returns (or rely on {@link #nextId()} doing it);
 * {@link #close()} releases the id and ends the session.
 */
public final class WorkerIdHolder extends NativeHandle {
  static {
    NativeLibrary.load();
  }

  private WorkerIdHolder(long handle) {
    super(handle, WorkerIdHolder::nFree, "WorkerIdHolder");
  }

  /**
   * Reserves an id and confirms it (first keep-alive and budget) before returning.
   *
   * @param session moved into the holder
   * @param owner a stable name (host, pod); {@code incarnation} is new on every process start
   * @param seed for the jitter of backoffs and spread order (fix it to replay a simulation)
   * @throws ShardlineException {@link Status#NO_CANDIDATES} when every id has a live claim
   */
  public static WorkerIdHolder acquire(
      InMemorySession session,
      ReserveConfig config,
      TenureConfig tenure,
      SnowflakeLayout layout,
      String owner,
      long incarnation,
      long seed,
      IdClock clock) {
    Objects.requireNonNull(session, "session");
    requireTerms(config, tenure, layout, clock);
    long h =
        session.callLong(
            s -> nAcquire(s, config.fields(), tenure.fields(), layout.fields(), owner, incarnation, seed, clock));
    session.retire("handed to a WorkerIdHolder");
    return new WorkerIdHolder(h);
  }

  /**
   * Reserves an id in {@code etcd}'s worker-id registry, in a session of {@code tenure.ttlMs()};
   * otherwise as {@link #acquire(InMemorySession, ReserveConfig, TenureConfig, SnowflakeLayout,
   * String, long, long, IdClock)}. Registry calls block on etcd.
   */
  public static WorkerIdHolder acquire(
      Etcd etcd,
      ReserveConfig config,
      TenureConfig tenure,
      SnowflakeLayout layout,
      String owner,
      long incarnation,
      long seed,
      IdClock clock) {
    Objects.requireNonNull(etcd, "etcd");
    requireTerms(config, tenure, layout, clock);
    return new WorkerIdHolder(
        etcd.callLong(
            e -> Etcd.nHolder(e, config.fields(), tenure.fields(), layout.fields(), owner, incarnation, seed, clock)));
  }

  private static void requireTerms(ReserveConfig config, TenureConfig tenure, SnowflakeLayout layout, IdClock clock) {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(tenure, "tenure");
    Objects.requireNonNull(layout, "layout");
    Objects.requireNonNull(clock, "clock");
  }

  public int workerId() {
    return this.<Long>op(WorkerIdHolder::nOp, "worker_id").intValue();
  }

  /** Grows on every acquisition of this worker id, by anyone. */
  public long epoch() {
    return op(WorkerIdHolder::nOp, "epoch");
  }

  /** Earlier holders of this id stamped at most this (Unix ms); this one stamps above it. */
  public long floorMs() {
    return op(WorkerIdHolder::nOp, "floor_ms");
  }

  /** The acknowledged timestamp budget (Unix ms). */
  public long budgetMs() {
    return op(WorkerIdHolder::nOp, "budget_ms");
  }

  /** The local deadline (monotonic ms) of the reservation. */
  public OptionalLong validUntilMs() {
    Long v = op(WorkerIdHolder::nOp, "valid_until_ms");
    return v == null ? OptionalLong.empty() : OptionalLong.of(v);
  }

  /**
   * The next Snowflake id, waiting on the clock when it must.
   *
   * @throws ShardlineException {@link Status#INVALID_STATE} once the id is lost (deadline
   *     passed, session ended, taken over): stop issuing ids
   */
  public long nextId() {
    return callLong(WorkerIdHolder::nNextId);
  }

  /** Does whatever upkeep is due; returns the monotonic time of the next. */
  public long maintain() {
    return op(WorkerIdHolder::nOp, "maintain");
  }

  /** Keeps the id alive (sleeping on the clock) until the monotonic clock reads {@code untilMs}. */
  public void holdUntil(long untilMs) {
    if (untilMs < 0) throw new ShardlineException(Status.INVALID_ARGUMENT, "untilMs is negative");
    op(WorkerIdHolder::nOp, "hold_until", untilMs);
  }

  /** Hands the id back (the unused budget too) and ends the session; later calls fail. */
  public void release() {
    op(WorkerIdHolder::nOp, "release");
  }

  static native long[] nDefaults(int kind, long arg);

  private static native long nAcquire(
      long session, long[] config, long[] tenure, long[] layout, String owner, long incarnation, long seed, IdClock clock);

  private static native void nFree(long h);

  private static native long nNextId(long h);

  private static native Object nOp(long h, String op, Object[] args);
}
