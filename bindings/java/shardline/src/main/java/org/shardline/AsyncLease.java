package org.shardline;

import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * The coordinator lease for an {@link AsyncCoordinatorDriver}: {@link Lease}'s contract, each
 * answer a stage that completes when the backend has answered. A stage that completes
 * exceptionally counts as a backend that could not be reached.
 */
public interface AsyncLease {
  /** Tries to take the lease; empty when someone else holds it. */
  CompletionStage<Optional<LeaseGrant>> acquire(long nowMs);

  /** Extends grant {@code token}; the new local deadline, or empty when it is gone. */
  CompletionStage<OptionalLong> renew(long token, long nowMs);

  CompletionStage<Void> release(long token);

  /** A blocking {@link Lease} (an embedded or etcd one) whose calls run on {@code executor}. */
  static AsyncLease of(Lease lease, Executor executor) {
    return new AsyncLease() {
      @Override
      public CompletionStage<Optional<LeaseGrant>> acquire(long nowMs) {
        return CompletableFuture.supplyAsync(() -> lease.acquire(nowMs), executor);
      }

      @Override
      public CompletionStage<OptionalLong> renew(long token, long nowMs) {
        return CompletableFuture.supplyAsync(() -> lease.renew(token, nowMs), executor);
      }

      @Override
      public CompletionStage<Void> release(long token) {
        return CompletableFuture.runAsync(() -> lease.release(token), executor);
      }
    };
  }
}
