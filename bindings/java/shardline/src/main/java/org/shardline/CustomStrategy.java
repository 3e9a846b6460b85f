package org.shardline;

import java.util.List;
import java.util.Set;

/**
 * Your own placement policy, run by shardline exactly where a built-in strategy would run
 * (directly through {@link Strategy}, or inside a {@link Coordinator}).
 *
 * <p>Callbacks run synchronously on the thread that made the call into shardline. The {@code
 * state} they receive is a read-only view valid only until the callback returns. An exception
 * thrown here comes out of the shardline call that triggered it, unchanged. Calling back into
 * the {@link Strategy} that runs this object fails with {@link Status#REENTRANT_CALL}.
 */
public interface CustomStrategy {
  /**
   * Chooses a home for {@code shard}: {@link Allocation#to} a registered region, or {@link
   * Allocation#pending()}.
   *
   * @param requester the region that asked, or null for allocations the coordinator starts
   */
  Allocation allocate(AllocationState state, String requester, String shard);

  /**
   * Chooses shards to hand off, in decision order; each must be allocated, none twice. The
   * default never moves anything.
   *
   * @param inProgress shards whose hand-off is already under way
   */
  default List<String> rebalance(AllocationState state, Set<String> inProgress) {
    return List.of();
  }
}
