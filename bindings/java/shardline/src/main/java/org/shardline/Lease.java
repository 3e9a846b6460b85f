package org.shardline;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * The coordinator lease, as a driver uses it (see core/src/host/lease.rs for the full contract).
 * {@link InMemoryLease} is the embedded implementation.
 */
public interface Lease {
  /** Tries to take the lease; empty when someone else holds it. */
  Optional<LeaseGrant> acquire(long nowMs);

  /** Extends grant {@code token}; returns the new local deadline, or empty when it is gone. */
  OptionalLong renew(long token, long nowMs);

  void release(long token);
}
