package shardline.differential;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One random case, before Pekko has seen it: plain data, no Pekko types. {@link PekkoRunner} turns
 * it into Pekko objects, asks Pekko, and writes the conformance vector.
 */
final class CaseSpec {

  /** A cluster member (UniqueAddress uid is always 1, like Pekko's own specs). */
  static final class MemberSpec {
    final String host;
    final int port;
    final String status; // Pekko MemberStatus name: Joining, WeaklyUp, Up, Leaving, Exiting, Down
    final String appVersion;
    final String dataCenter;

    MemberSpec(String host, int port, String status, String appVersion, String dataCenter) {
      this.host = host;
      this.port = port;
      this.status = status;
      this.appVersion = appVersion;
      this.dataCenter = dataCenter;
    }
  }

  /** A shard region: an ActorRef at {@code <address>/system/fake/<id>}, or a local-scope ref. */
  static final class RegionSpec {
    final String id;
    final String host; // ignored when local
    final int port; // ignored when local
    final boolean local;
    final List<String> shards; // allocation order, oldest first

    RegionSpec(String id, String host, int port, boolean local, List<String> shards) {
      this.id = id;
      this.host = host;
      this.port = port;
      this.local = local;
      this.shards = shards;
    }
  }

  String kind; // least-shard | least-shard-legacy | consistent-hashing
  String op; // allocate | rebalance

  // least-shard
  int absoluteLimit;
  double relativeLimit;
  // least-shard-legacy
  int rebalanceThreshold;
  int maxSimultaneousRebalance;
  // consistent-hashing
  int rebalanceLimit;

  String system = "myapp";
  final List<MemberSpec> members = new ArrayList<>();
  MemberSpec self;
  final Set<MemberSpec> unreachable = new LinkedHashSet<>();

  /** In the order the harness inserts them into the Scala Map (NOT necessarily the map's order). */
  final List<RegionSpec> regions = new ArrayList<>();

  final List<String> rebalanceInProgress = new ArrayList<>();

  // allocate only
  String shardId;
  String requester; // a region id

  String address(String host, int port) {
    return "pekko://" + system + "@" + host + ":" + port;
  }

  String address(MemberSpec m) {
    return address(m.host, m.port);
  }

  /** The node a region lives on: the self member for a local region (Pekko's regionEntriesFor). */
  String nodeAddress(RegionSpec r) {
    return r.local ? address(self) : address(r.host, r.port);
  }
}
