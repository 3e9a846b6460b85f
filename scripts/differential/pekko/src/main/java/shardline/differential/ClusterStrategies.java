package shardline.differential;

import org.apache.pekko.cluster.ClusterEvent.CurrentClusterState;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.sharding.ShardCoordinator;
import org.apache.pekko.cluster.sharding.internal.LeastShardAllocationStrategy;

/**
 * Pekko's own strategies with a fixed cluster view, the way Pekko's specs build them: the spec
 * subclasses the strategy and overrides {@code clusterState} and {@code selfMember} (Scala
 * {@code protected}, public in bytecode). Nothing else is overridden: every decision is Pekko's.
 */
final class ClusterStrategies {
  private ClusterStrategies() {}

  /** {@code pekko.cluster.sharding.internal.LeastShardAllocationStrategy(absoluteLimit, relativeLimit)}. */
  static final class LeastShard extends LeastShardAllocationStrategy {
    private final CurrentClusterState state;
    private final Member self;

    LeastShard(int absoluteLimit, double relativeLimit, CurrentClusterState state, Member self) {
      super(absoluteLimit, relativeLimit);
      this.state = state;
      this.self = self;
    }

    @Override
    public CurrentClusterState clusterState() {
      return state;
    }

    @Override
    public Member selfMember() {
      return self;
    }
  }

  /** The legacy {@code ShardCoordinator.LeastShardAllocationStrategy(threshold, maxSimultaneous)}. */
  static final class LegacyLeastShard extends ShardCoordinator.LeastShardAllocationStrategy {
    private static final long serialVersionUID = 1L;
    private final transient CurrentClusterState state;
    private final transient Member self;

    LegacyLeastShard(int threshold, int maxSimultaneous, CurrentClusterState state, Member self) {
      super(threshold, maxSimultaneous);
      this.state = state;
      this.self = self;
    }

    @Override
    public CurrentClusterState clusterState() {
      return state;
    }

    @Override
    public Member selfMember() {
      return self;
    }
  }
}
