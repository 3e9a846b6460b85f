package org.shardline.pekko;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.RootActorPath;
import org.apache.pekko.cluster.ClusterEvent.CurrentClusterState;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.Member$;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.cluster.sharding.ShardCoordinator;
import org.apache.pekko.cluster.sharding.internal.LeastShardAllocationStrategy;
import org.apache.pekko.util.Version;
import scala.Option;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Map$;
import scala.collection.immutable.Set;
import scala.collection.immutable.Set$;
import scala.collection.immutable.TreeSet;
import scala.collection.immutable.TreeSet$;
import scala.jdk.javaapi.CollectionConverters;

/** Builds real Pekko objects (members, cluster state, region refs, the Scala map) for tests. */
final class PekkoFixtures {
  private PekkoFixtures() {}

  static Config config(int port, String... extra) {
    return ConfigFactory.parseString(
            String.join(
                "\n",
                "pekko.actor.provider = cluster",
                "pekko.remote.artery.canonical.hostname = 127.0.0.1",
                "pekko.remote.artery.canonical.port = " + port,
                "pekko.loglevel = WARNING",
                "pekko.stdout-loglevel = WARNING",
                "pekko.log-dead-letters = off",
                "pekko.log-dead-letters-during-shutdown = off",
                "pekko.cluster.jmx.enabled = off",
                "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook = off",
                "pekko.coordinated-shutdown.terminate-actor-system = on",
                String.join("\n", extra)))
        .withFallback(ConfigFactory.load());
  }

  /** A member walked through Pekko's legal status transitions (Member.copy checks them). */
  static Member member(Address address, String status, String appVersion, String dataCenter) {
    Set<String> roles = Set$.MODULE$.<String>empty().incl("dc-" + dataCenter);
    Member joining = Member$.MODULE$.apply(UniqueAddress.apply(address, 1L), roles, Version.apply(appVersion));
    switch (status) {
      case "Joining":
        return joining;
      case "WeaklyUp":
        return joining.copy(MemberStatus.weaklyUp());
      case "Up":
        return joining.copy(MemberStatus.up());
      case "Leaving":
        return joining.copy(MemberStatus.up()).copy(MemberStatus.leaving());
      case "Exiting":
        return joining.copy(MemberStatus.up()).copy(MemberStatus.leaving()).copy(MemberStatus.exiting());
      case "Down":
        return joining.copy(MemberStatus.up()).copy(MemberStatus.down());
      default:
        throw new IllegalArgumentException(status);
    }
  }

  static CurrentClusterState state(List<Member> members, List<Member> unreachable) {
    TreeSet<Member> sorted = TreeSet$.MODULE$.<Member>empty(Member.ordering());
    for (Member m : members) sorted = sorted.incl(m);
    Set<Member> u = Set$.MODULE$.<Member>empty();
    for (Member m : unreachable) u = u.incl(m);
    return new CurrentClusterState(
        sorted,
        u,
        Set$.MODULE$.<Address>empty(),
        Option.<Address>empty(),
        Map$.MODULE$.<String, Option<Address>>empty(),
        Set$.MODULE$.<String>empty(),
        Set$.MODULE$.<UniqueAddress>empty());
  }

  /** A region ref at {@code address/system/fake/name} (a RemoteActorRef), or local-scope. */
  static ActorRef region(ActorSystem system, Address address, String name) {
    ExtendedActorSystem ext = (ExtendedActorSystem) system;
    if (address == null) {
      return ext.provider().resolveActorRef("pekko://" + system.name() + "/system/fake/" + name);
    }
    return ext.provider().resolveActorRef(new RootActorPath(address, "/").child("system").child("fake").child(name));
  }

  /** The allocation map, built by inserting in the given order (as the coordinator does). */
  @SuppressWarnings("unchecked") // Scala's toVector[B >: A] erases to a raw Vector
  static scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> allocations(Map<ActorRef, List<String>> inInsertionOrder) {
    scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> m = Map$.MODULE$.empty();
    for (Map.Entry<ActorRef, List<String>> e : inInsertionOrder.entrySet()) {
      m = m.updated(e.getKey(), CollectionConverters.asScala(new ArrayList<>(e.getValue())).toVector());
    }
    return m;
  }

  @SuppressWarnings("unchecked") // Scala's toSet[B >: A] erases to a raw Set
  static Set<String> set(java.util.Collection<String> c) {
    return CollectionConverters.asScala(new java.util.LinkedHashSet<>(c)).toSet();
  }

  /** Pekko's own new least-shard strategy with a fixed cluster view, as Pekko's specs build it. */
  static final class PekkoLeastShard extends LeastShardAllocationStrategy {
    private final CurrentClusterState state;
    private final Member self;

    PekkoLeastShard(int absoluteLimit, double relativeLimit, CurrentClusterState state, Member self) {
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

  /** Pekko's legacy least-shard strategy with a fixed cluster view. */
  static final class PekkoLegacy extends ShardCoordinator.LeastShardAllocationStrategy {
    private static final long serialVersionUID = 1L;
    private final transient CurrentClusterState state;
    private final transient Member self;

    PekkoLegacy(int threshold, int maxSimultaneous, CurrentClusterState state, Member self) {
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

  /** The adapter with the same fixed cluster view. */
  static final class FixedView extends ShardlineAllocationStrategy {
    private final CurrentClusterState state;
    private final Member self;

    FixedView(String json, CurrentClusterState state, Member self) {
      super(json);
      this.state = state;
      this.self = self;
    }

    @Override
    protected CurrentClusterState clusterState() {
      return state;
    }

    @Override
    protected Member selfMember() {
      return self;
    }
  }
}
