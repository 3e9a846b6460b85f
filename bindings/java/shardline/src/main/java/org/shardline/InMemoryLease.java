package org.shardline;

import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The embedded lease: contenders made with {@link #contender} share one backend, each with its
 * own owner name, so a fail-over can be played inside one process. Time is whatever callers
 * pass, so it runs under simulated time. Deadlines are shortened by a safety margin (ttl/10, at
 * most 1 s) and 0.1% clock drift.
 */
public final class InMemoryLease extends NativeHandle implements Lease {
  static {
    NativeLibrary.load();
  }

  /** Who holds the lease and under which token. */
  public record Holder(String owner, long token) {}

  public InMemoryLease(String owner, long ttlMs) {
    this(nNew(owner, ttlMs));
  }

  private InMemoryLease(long handle) {
    super(handle, InMemoryLease::nFree, "InMemoryLease");
  }

  /** Another contender for the same lease. */
  public InMemoryLease contender(String owner) {
    return new InMemoryLease(callLong(h -> nContender(h, owner)));
  }

  /** Sets the safety margin and assumed clock-rate error (parts per million) of deadlines. */
  public InMemoryLease withSafety(long marginMs, long driftPpm) {
    run(h -> nWithSafety(h, marginMs, driftPpm));
    return this;
  }

  @Override
  public Optional<LeaseGrant> acquire(long nowMs) {
    return grant(op(InMemoryLease::nOp, "acquire", nowMs));
  }

  /** A lease operation's grant ({@code {token, validUntilMs}} or null). */
  static Optional<LeaseGrant> grant(Map<String, Long> g) {
    return g == null ? Optional.empty() : Optional.of(new LeaseGrant(g.get("token"), g.get("validUntilMs")));
  }

  static OptionalLong deadline(Long d) {
    return d == null ? OptionalLong.empty() : OptionalLong.of(d);
  }

  static Optional<Holder> holderOf(Map<String, Object> f) {
    return f == null ? Optional.empty() : Optional.of(new Holder((String) f.get("owner"), (Long) f.get("token")));
  }

  @Override
  public OptionalLong renew(long token, long nowMs) {
    return deadline(op(InMemoryLease::nOp, "renew", token, nowMs));
  }

  @Override
  public void release(long token) {
    op(InMemoryLease::nOp, "release", token);
  }

  /** The current holder as the backend sees it at {@code nowMs}. */
  public Optional<Holder> holder(long nowMs) {
    return holderOf(op(InMemoryLease::nOp, "holder", nowMs));
  }

  /** Test hook: the backend forgets the holder, as when its session expires server-side. */
  public void expireNow() {
    op(InMemoryLease::nOp, "expire_now");
  }

  private static native long nNew(String owner, long ttlMs);

  private static native long nContender(long h, String owner);

  private static native void nWithSafety(long h, long marginMs, long driftPpm);

  private static native Object nOp(long h, String op, Object[] args);

  private static native void nFree(long h);
}
