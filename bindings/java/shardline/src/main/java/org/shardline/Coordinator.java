package org.shardline;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

/**
 * The shard coordinator as a sans-IO state machine (Pekko's {@code ShardCoordinator}, gated by
 * a fenced lease). Feed inputs with your monotonic {@code nowMs}, call {@link #onTimeout} at
 * {@link #nextDeadline()}, and carry out {@link #drainOutputs()} in order (see {@link
 * CoordinatorOutput}). {@link CoordinatorDriver} does that loop for you with callbacks.
 *
 * <p>Errors are host mistakes (a lease token that does not grow, a stored state that breaks its
 * own preconditions); protocol anomalies are ignored, not errors.
 */
public final class Coordinator extends AbstractCoordinator {
  /**
   * @param configJson null for Pekko's defaults, else e.g. {@code {"rebalanceIntervalMs": 10000,
   *     "handoffTimeoutMs": 60000, "minMembers": 1, "rememberEntities": false}} (keys of
   *     core/src/coordinator/config.rs)
   * @param strategy moved into the coordinator; the Strategy object is retired
   * @param selfAddress the node this coordinator runs on
   */
  public Coordinator(String configJson, Strategy strategy, String selfAddress) {
    super(take(configJson, strategy, selfAddress), Coordinator::nFree, "Coordinator", 0);
  }

  public Coordinator(Strategy strategy, String selfAddress) {
    this(null, strategy, selfAddress);
  }

  private static long take(String configJson, Strategy strategy, String selfAddress) {
    Objects.requireNonNull(strategy, "strategy");
    long h = strategy.callLong(s -> nNew(configJson, s, selfAddress));
    strategy.retire("handed to a Coordinator");
    return h;
  }

  /** Starts contending for the lease. */
  public void start(long nowMs) {
    run(h -> nStart(h, nowMs));
  }

  public void onTimeout(long nowMs) {
    run(h -> nOnTimeout(h, nowMs));
  }

  /**
   * Everything queued so far, in order: one native call however many outputs there are. A
   * {@link CoordinatorOutput.Send}'s message stays UTF-8 until {@link Envelope#message()} is read.
   */
  public List<CoordinatorOutput> drainOutputs() {
    Rows.Scratch s = Rows.scratch();
    long h = enter();
    try {
      return Rows.coordinatorOutputs(s.rows(nDrain(h, s.address, s.capacity)));
    } finally {
      exit();
    }
  }

  public void receive(long nowMs, Envelope e) {
    input(nowMs, 0, null, e.flat(), 0, 0);
  }

  /** A cluster member joined or changed (status, version, data center). */
  public void member(long nowMs, Member m) {
    run(h -> nMember(h, nowMs, m.fields(), m.upNumber()));
  }

  /** A member left the cluster: its regions are treated as terminated. */
  public void memberRemoved(long nowMs, String address) {
    input(nowMs, 1, address, null, 0, 0);
  }

  public void reachability(long nowMs, String address, boolean reachable) {
    input(nowMs, 2, address, null, reachable ? 1 : 0, 0);
  }

  /** A region stopped or crashed while its node stays in the cluster. */
  public void regionTerminated(long nowMs, String region) {
    input(nowMs, 3, region, null, 0, 0);
  }

  public void leaseGranted(long nowMs, long token, long validUntilMs) {
    input(nowMs, 4, null, null, token, validUntilMs);
  }

  public void leaseDenied(long nowMs) {
    input(nowMs, 5, null, null, 0, 0);
  }

  public void leaseRenewed(long nowMs, long token, long validUntilMs) {
    input(nowMs, 6, null, null, token, validUntilMs);
  }

  public void leaseRenewFailed(long nowMs, long token) {
    input(nowMs, 7, null, null, token, 0);
  }

  public void leaseLost(long nowMs, long token) {
    input(nowMs, 8, null, null, token, 0);
  }

  /** The answer to {@link CoordinatorOutput.LoadState}: the store's JSON. */
  public void stateLoaded(long nowMs, String storedStateJson) {
    input(nowMs, 9, null, storedStateJson.getBytes(StandardCharsets.UTF_8), 0, 0);
  }

  /** {@code fenced}: the store has seen a larger token (another coordinator took over). */
  public void stateLoadFailed(long nowMs, boolean fenced) {
    input(nowMs, 10, null, null, fenced ? 1 : 0, 0);
  }

  public void storeFailed(long nowMs, boolean fenced) {
    input(nowMs, 11, null, null, fenced ? 1 : 0, 0);
  }

  /** Full-cluster shutdown is coming: no more rebalancing. */
  public void preparingForShutdown(long nowMs) {
    input(nowMs, 12, null, null, 0, 0);
  }

  /** Stop coordinating and release the lease. */
  public void stop(long nowMs) {
    input(nowMs, 13, null, null, 0, 0);
  }

  /**
   * A planned shutdown of {@code region} is coming: least-load moves its shards away within its
   * movement budget; with other strategies this throws ({@code INVALID_STATE}).
   */
  public void drain(long nowMs, String region) {
    input(nowMs, 14, region, null, 0, 0);
  }

  /** Ends a drain: the region takes shards again. */
  public void undrain(long nowMs, String region) {
    input(nowMs, 15, region, null, 0, 0);
  }

  private void input(long nowMs, int kind, String a, byte[] c, long x, long y) {
    long at = Rows.scratch().put(c);
    long h = enter();
    try {
      nInput(h, nowMs, kind, a, at == 0 ? c : null, at, x, y);
    } finally {
      exit();
    }
  }

  private static native long nNew(String configJson, long strategy, String selfAddress);

  private static native void nFree(long h);

  private static native void nStart(long h, long nowMs);

  private static native void nOnTimeout(long h, long nowMs);

  private static native byte[] nDrain(long h, long at, int capacity);

  private static native void nInput(
      long h, long nowMs, int kind, String a, byte[] c, long at, long x, long y);

  private static native void nMember(long h, long nowMs, String[] fields, int upNumber);
}
