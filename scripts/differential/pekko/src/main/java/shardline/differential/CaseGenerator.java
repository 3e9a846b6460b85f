package shardline.differential;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import shardline.differential.CaseSpec.MemberSpec;
import shardline.differential.CaseSpec.RegionSpec;

/**
 * Makes random cases. Everything comes from one {@link Random} seeded by the caller, so a seed
 * reproduces the same cases (and, since ActorRef hash codes are derived from their paths, the same
 * Scala Map iteration order).
 */
final class CaseGenerator {

  private static final int[] PORTS = {2551, 2552, 2553, 7355, 999, 10000, 25520, 252525};

  /** "1.0" equals "1.0.0"; "1.0.0-RC1" is below "1.0.0"; "+3-abc" is an sbt-dynver suffix. */
  private static final String[] VERSIONS = {
    "1.0.0", "1.0", "1.0.1", "1.1.0", "1.0.0-RC1", "2.0.0", "0.0.0", "1.0.0+3-abc1234", "1.0.0+10-def"
  };

  /** Code units that sort differently by UTF-16 (Java String.compareTo) and by code point. */
  private static final String[] ODD_CHARS = {
    "a", "B", "b", "Z", "0", "9", "-", "_", "\u00e9", "\u65e5", "\uff5e", "\ud83d\ude00", "\ud800\udc00"
  };

  private static final String[] SURROGATE_EDGE = {"\uff5e", "\ue000", "\ud83d\ude00", "\ud800\udc00"};

  private static final String[] REGION_NAMES = {
    "regionA", "regionB", "regionC", "regionD", "regionE", "regionF", "regionG", "regionH",
    "regionI", "regionJ", "regionK", "regionL", "regionM", "regionN"
  };

  private final Random rnd;

  CaseGenerator(long seed) {
    this.rnd = new Random(seed);
  }

  private boolean chance(double p) {
    return rnd.nextDouble() < p;
  }

  private <T> T pick(T[] values) {
    return values[rnd.nextInt(values.length)];
  }

  private <T> T pick(List<T> values) {
    return values.get(rnd.nextInt(values.size()));
  }

  private String weighted(Object... statusWeightPairs) {
    double total = 0;
    for (int i = 1; i < statusWeightPairs.length; i += 2) total += ((Number) statusWeightPairs[i]).doubleValue();
    double x = rnd.nextDouble() * total;
    for (int i = 0; i < statusWeightPairs.length; i += 2) {
      x -= ((Number) statusWeightPairs[i + 1]).doubleValue();
      if (x < 0) return (String) statusWeightPairs[i];
    }
    return (String) statusWeightPairs[statusWeightPairs.length - 2];
  }

  CaseSpec next() {
    CaseSpec c = new CaseSpec();
    c.kind = weighted("least-shard", 40, "least-shard-legacy", 35, "consistent-hashing", 25);
    c.op = chance(0.35) ? "allocate" : "rebalance";
    if (chance(0.15)) c.system = "ClusterSystem";

    switch (c.kind) {
      case "least-shard":
        {
          int[] abs = {0, 1, 2, 3, 5, 10, 1000};
          c.absoluteLimit = chance(0.6) ? abs[rnd.nextInt(abs.length)] : rnd.nextInt(21);
          // shardline accepts (0, 1] only (Pekko itself takes any double, config does not check)
          double[] rel = {0.05, 0.1, 0.29, 0.5, 0.57, 0.7, 1.0};
          int r = rnd.nextInt(3);
          c.relativeLimit =
              r == 0 ? rel[rnd.nextInt(rel.length)] : r == 1 ? (1 + rnd.nextInt(100)) / 100.0 : 1.0 - rnd.nextDouble();
          break;
        }
      case "least-shard-legacy":
        c.rebalanceThreshold = chance(0.7) ? 1 + rnd.nextInt(3) : rnd.nextInt(6);
        c.maxSimultaneousRebalance = chance(0.7) ? 1 + rnd.nextInt(5) : rnd.nextInt(8);
        break;
      default:
        {
          int[] lim = {-1, 0, 0, 1, 2, 3, 5, 10};
          c.rebalanceLimit = lim[rnd.nextInt(lim.length)];
        }
    }

    // ---- nodes and members
    int nRegions = 1 + rnd.nextInt(12);
    boolean multiDc = chance(0.12);
    // half the cases are a calm cluster, where Pekko's rebalance gate is open and the algorithms
    // themselves decide; the rest stir in rolling updates, joining and unreachable members
    // many nodes on their way out at once (rolling shutdown): Leaving, Exiting and Down compare as
    // equal to each other but not transitively, which stresses Pekko's sort and min
    boolean draining = chance(0.2);
    boolean calm = draining || chance(0.45);
    boolean staleView = chance(0.03); // no region maps to a known member: Pekko's allocate retries
    boolean mixedVersions = !calm && chance(0.5);
    String baseVersion = chance(0.5) ? "1.0.0" : pick(VERSIONS);
    String[] versionPool = {baseVersion, pick(VERSIONS), pick(VERSIONS)};

    Set<String> usedNodes = new HashSet<>();
    List<String[]> regionNodes = new ArrayList<>(); // {host, port} per region, null for local
    Map<String, MemberSpec> memberByNode = new LinkedHashMap<>();

    int localIndex = chance(0.15) ? rnd.nextInt(nRegions) : -1;
    for (int i = 0; i < nRegions; i++) {
      if (i == localIndex) {
        regionNodes.add(null);
        continue;
      }
      String[] node;
      if (!regionNodes.isEmpty() && chance(0.04)) {
        // two regions of the map on one node (e.g. a restarted region not yet removed)
        List<String[]> nonLocal = new ArrayList<>();
        for (String[] n : regionNodes) if (n != null) nonLocal.add(n);
        node = nonLocal.isEmpty() ? freshNode(usedNodes) : pick(nonLocal);
      } else {
        node = freshNode(usedNodes);
      }
      regionNodes.add(node);
      String key = node[0] + ":" + node[1];
      if (!memberByNode.containsKey(key)) {
        if (!staleView && chance(0.93)) {
          String status =
              draining
                  ? weighted("Up", 10, "Leaving", 30, "Exiting", 30, "Down", 30)
                  : calm
                  ? weighted("Up", 76, "Leaving", 10, "Exiting", 8, "Down", 6)
                  : weighted("Up", 72, "Leaving", 10, "Exiting", 8, "Down", 6, "Joining", 2, "WeaklyUp", 2);
          memberByNode.put(key, member(node, status, mixedVersions, baseVersion, versionPool, multiDc));
        } else {
          memberByNode.put(key, null); // region on a node the cluster view does not know
        }
      }
    }
    for (MemberSpec m : memberByNode.values()) if (m != null) c.members.add(m);

    // members without a region: joining nodes, proxies, other roles
    if (chance(0.3)) {
      int extra = 1 + rnd.nextInt(2);
      for (int i = 0; i < extra; i++) {
        String status =
            calm
                ? weighted("Up", 60, "Leaving", 20, "Down", 20)
                : weighted("Joining", 50, "Up", 20, "WeaklyUp", 10, "Leaving", 10, "Down", 10);
        c.members.add(member(freshNode(usedNodes), status, mixedVersions, baseVersion, versionPool, multiDc));
      }
    }
    if (c.members.isEmpty()) {
      c.members.add(member(freshNode(usedNodes), "Up", mixedVersions, baseVersion, versionPool, multiDc));
    }
    c.self = pick(c.members);

    if (!calm && chance(0.3)) {
      int n = 1 + rnd.nextInt(Math.min(2, c.members.size()));
      for (int i = 0; i < n; i++) c.unreachable.add(pick(c.members));
    }

    // ---- shards
    int style = rnd.nextInt(11);
    Set<String> usedShards = new HashSet<>();
    List<String> allShards = new ArrayList<>();
    List<String> names = new ArrayList<>(List.of(REGION_NAMES));
    if (chance(0.3)) Collections.shuffle(names, rnd);
    for (int i = 0; i < nRegions; i++) {
      int count;
      double r = rnd.nextDouble();
      if (r < 0.2) count = 0;
      else if (r < 0.85) count = rnd.nextInt(12);
      else count = rnd.nextInt(45);
      List<String> shards = new ArrayList<>();
      for (int j = 0; j < count; j++) {
        String s = freshShard(style, usedShards);
        shards.add(s);
        allShards.add(s);
      }
      if (chance(0.5)) Collections.shuffle(shards, rnd);
      String[] node = regionNodes.get(i);
      c.regions.add(
          node == null
              ? new RegionSpec(names.get(i), null, 0, true, shards)
              : new RegionSpec(names.get(i), node[0], Integer.parseInt(node[1]), false, shards));
    }

    // ---- rebalance in progress
    if (chance(calm ? 0.2 : 0.5) && !allShards.isEmpty()) {
      int n = 1 + rnd.nextInt(Math.min(5, allShards.size()));
      List<String> copy = new ArrayList<>(allShards);
      Collections.shuffle(copy, rnd);
      c.rebalanceInProgress.addAll(copy.subList(0, n));
    }
    if (chance(0.1)) c.rebalanceInProgress.add(freshShard(style, usedShards)); // not allocated anywhere

    if (c.op.equals("allocate")) {
      c.shardId = chance(0.85) || allShards.isEmpty() ? freshShard(style, usedShards) : pick(allShards);
      c.requester = pick(c.regions).id;
    }
    return c;
  }

  private MemberSpec member(
      String[] node, String status, boolean mixed, String base, String[] pool, boolean multiDc) {
    String version = mixed ? pick(pool) : base;
    String dc = multiDc && chance(0.4) ? "east" : "default";
    return new MemberSpec(node[0], Integer.parseInt(node[1]), status, version, dc);
  }

  private String[] freshNode(Set<String> used) {
    while (true) {
      String host = "127.0.0." + (1 + rnd.nextInt(chance(0.8) ? 12 : 40));
      int port = chance(0.6) ? 2552 : PORTS[rnd.nextInt(PORTS.length)];
      String key = host + ":" + port;
      if (used.add(key)) return new String[] {host, Integer.toString(port)};
    }
  }

  private String freshShard(int style, Set<String> used) {
    while (true) {
      String s;
      switch (style) {
        case 0: case 1: case 2:
          s = String.format("%03d", rnd.nextInt(1000));
          break;
        case 3: case 4: case 5:
          s = Integer.toString(rnd.nextInt(1200));
          break;
        case 6: case 7:
          s = (chance(0.5) ? "shard-" : chance(0.5) ? "Shard-" : "s") + rnd.nextInt(400);
          break;
        case 8:
          s = Integer.toString(rnd.nextInt(2000) - 100);
          break;
        default:
          {
            StringBuilder b = new StringBuilder();
            int len = 1 + rnd.nextInt(3);
            // style 10 starts every id on either side of the surrogate block, where UTF-16 order
            // (Java's String.compareTo) and code-point order disagree
            if (style == 10) b.append(pick(SURROGATE_EDGE));
            for (int i = 0; i < len; i++) b.append(pick(ODD_CHARS));
            s = b.toString();
          }
      }
      if (used.add(s)) return s;
    }
  }
}
