package org.shardline;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * The coordinator lease on etcd (from {@link Etcd#lease}): the fencing token is the lease key's
 * revision, so it grows with every acquisition, by anyone. A driver given it calls it on the
 * driver's thread; give it to one driver.
 */
public final class EtcdLease extends NativeHandle implements Lease {
  EtcdLease(long handle) {
    super(handle, EtcdLease::nFree, "EtcdLease");
  }

  @Override
  public Optional<LeaseGrant> acquire(long nowMs) {
    return InMemoryLease.grant(op(EtcdLease::nOp, "acquire", nowMs));
  }

  @Override
  public OptionalLong renew(long token, long nowMs) {
    return InMemoryLease.deadline(op(EtcdLease::nOp, "renew", token, nowMs));
  }

  @Override
  public void release(long token) {
    op(EtcdLease::nOp, "release", token);
  }

  /** The holder and token as etcd has them now. */
  public Optional<InMemoryLease.Holder> holder() {
    return InMemoryLease.holderOf(op(EtcdLease::nOp, "holder"));
  }

  private static native Object nOp(long h, String op, Object[] args);

  private static native void nFree(long h);
}
