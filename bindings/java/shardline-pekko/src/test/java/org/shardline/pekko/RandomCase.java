package org.shardline.pekko;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * A random allocation state as plain data: members, regions in insertion order, shards.
 * Stresses what decides ties and gates in Pekko: map order (regions are inserted into a Scala
 * Map, whose iteration order past four entries is a hash order), statuses of one class
 * (Leaving / Exiting / Down compare as equal), app versions that are equal but spelled
 * differently, unreachable and joining members, a second data center, local regions, regions on
 * nodes the cluster view does not know, ports that sort differently as text and as numbers, and
 * shard ids on both sides of the UTF-16 surrogate block.
 */
final class RandomCase {
  static final class MemberSpec {
    final String host;
    final int port;
    final String status;
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

  static final class RegionSpec {
    final String name;
    final String host; // null: local to the coordinator's node
    final int port;
    final List<String> shards;

    RegionSpec(String name, String host, int port, List<String> shards) {
      this.name = name;
      this.host = host;
      this.port = port;
      this.shards = shards;
    }
  }

  private static final int[] PORTS = {2552, 2552, 2552, 2551, 999, 10000, 25520};
  private static final String[] VERSIONS = {"1.0.0", "1.0", "1.0.1", "1.0.0-RC1", "2.0.0", "1.0.0+3-abc"};
  private static final String[] ODD = {"a", "B", "0", "9", "-", "\u00e9", "\uff5e", "\ue000", "\ud83d\ude00"};

  String kind; // least-shard | legacy | consistent-hashing
  String op; // allocate | rebalance
  int absoluteLimit;
  double relativeLimit;
  int threshold;
  int maxSimultaneous;
  int rebalanceLimit;
  final List<MemberSpec> members = new ArrayList<>();
  MemberSpec self;
  final Set<MemberSpec> unreachable = new LinkedHashSet<>();
  final List<RegionSpec> regions = new ArrayList<>();
  final List<String> inProgress = new ArrayList<>();
  String shardId;
  int requester; // index into regions

  static RandomCase next(Random rnd) {
    RandomCase c = new RandomCase();
    double k = rnd.nextDouble();
    c.kind = k < 0.4 ? "least-shard" : k < 0.75 ? "legacy" : "consistent-hashing";
    c.op = rnd.nextDouble() < 0.35 ? "allocate" : "rebalance";
    c.absoluteLimit = rnd.nextInt(3) == 0 ? new int[] {1, 2, 5, 1000}[rnd.nextInt(4)] : 1 + rnd.nextInt(20);
    c.relativeLimit = rnd.nextInt(2) == 0 ? new double[] {0.05, 0.1, 0.29, 0.57, 1.0}[rnd.nextInt(5)] : (1 + rnd.nextInt(100)) / 100.0;
    c.threshold = rnd.nextInt(4);
    c.maxSimultaneous = rnd.nextInt(5);
    c.rebalanceLimit = new int[] {-1, 0, 1, 2, 3, 10}[rnd.nextInt(6)];

    boolean draining = rnd.nextDouble() < 0.2;
    boolean calm = draining || rnd.nextDouble() < 0.45;
    boolean mixed = !calm && rnd.nextDouble() < 0.5;
    boolean twoDcs = rnd.nextDouble() < 0.1;
    // no region maps to a known member: Pekko's allocate retries in 50 ms instead of deciding
    boolean staleView = rnd.nextDouble() < 0.03;
    int n = 1 + rnd.nextInt(11);
    int local = rnd.nextDouble() < 0.15 ? rnd.nextInt(n) : -1;
    Map<String, MemberSpec> byNode = new LinkedHashMap<>();
    List<String[]> nodes = new ArrayList<>();
    Set<String> used = new LinkedHashSet<>();
    for (int i = 0; i < n; i++) {
      if (i == local) {
        nodes.add(null);
        continue;
      }
      String[] node;
      if (!nodes.isEmpty() && nodes.get(nodes.size() - 1) != null && rnd.nextDouble() < 0.04) {
        node = nodes.get(nodes.size() - 1); // two regions on one node
      } else {
        node = fresh(rnd, used);
      }
      nodes.add(node);
      String key = node[0] + ":" + node[1];
      if (!byNode.containsKey(key)) {
        if (!staleView && rnd.nextDouble() < 0.93) {
          String status =
              draining
                  ? pickWeighted(rnd, "Up", 10, "Leaving", 30, "Exiting", 30, "Down", 30)
                  : calm
                      ? pickWeighted(rnd, "Up", 80, "Leaving", 10, "Exiting", 5, "Down", 5)
                      : pickWeighted(rnd, "Up", 70, "Leaving", 10, "Exiting", 6, "Down", 6, "Joining", 4, "WeaklyUp", 4);
          byNode.put(key, member(rnd, node, status, mixed, twoDcs));
        } else {
          byNode.put(key, null); // a region on a node the view does not know
        }
      }
    }
    for (MemberSpec m : byNode.values()) if (m != null) c.members.add(m);
    if (rnd.nextDouble() < 0.3) {
      String status = calm ? pickWeighted(rnd, "Up", 60, "Leaving", 40) : pickWeighted(rnd, "Joining", 50, "Up", 30, "WeaklyUp", 20);
      c.members.add(member(rnd, fresh(rnd, used), status, mixed, twoDcs));
    }
    if (c.members.isEmpty()) c.members.add(member(rnd, fresh(rnd, used), "Up", mixed, twoDcs));
    c.self = c.members.get(rnd.nextInt(c.members.size()));
    if (!calm && rnd.nextDouble() < 0.3) c.unreachable.add(c.members.get(rnd.nextInt(c.members.size())));

    int style = rnd.nextInt(4);
    Set<String> usedShards = new LinkedHashSet<>();
    List<String> all = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int count = rnd.nextDouble() < 0.2 ? 0 : rnd.nextDouble() < 0.85 ? rnd.nextInt(12) : rnd.nextInt(45);
      List<String> shards = new ArrayList<>();
      for (int j = 0; j < count; j++) {
        String s = shard(rnd, style, usedShards);
        shards.add(s);
        all.add(s);
      }
      if (rnd.nextBoolean()) Collections.shuffle(shards, rnd);
      String[] node = nodes.get(i);
      c.regions.add(new RegionSpec("region" + (char) ('A' + i), node == null ? null : node[0], node == null ? 0 : Integer.parseInt(node[1]), shards));
    }
    if (!all.isEmpty() && rnd.nextDouble() < (calm ? 0.2 : 0.5)) {
      List<String> copy = new ArrayList<>(all);
      Collections.shuffle(copy, rnd);
      c.inProgress.addAll(copy.subList(0, 1 + rnd.nextInt(Math.min(5, copy.size()))));
    }
    if (rnd.nextDouble() < 0.1) c.inProgress.add(shard(rnd, style, usedShards));
    c.shardId = shard(rnd, style, usedShards);
    c.requester = rnd.nextInt(n);
    return c;
  }

  String address(String host, int port) {
    return "pekko://ClusterSystem@" + host + ":" + port;
  }

  private static MemberSpec member(Random rnd, String[] node, String status, boolean mixed, boolean twoDcs) {
    return new MemberSpec(
        node[0],
        Integer.parseInt(node[1]),
        status,
        mixed ? VERSIONS[rnd.nextInt(VERSIONS.length)] : "1.0.0",
        twoDcs && rnd.nextDouble() < 0.4 ? "east" : "default");
  }

  private static String[] fresh(Random rnd, Set<String> used) {
    while (true) {
      String host = "127.0.0." + (1 + rnd.nextInt(rnd.nextDouble() < 0.8 ? 12 : 40));
      int port = PORTS[rnd.nextInt(PORTS.length)];
      if (used.add(host + ":" + port)) return new String[] {host, Integer.toString(port)};
    }
  }

  private static String shard(Random rnd, int style, Set<String> used) {
    while (true) {
      String s;
      switch (style) {
        case 0:
          s = String.format("%03d", rnd.nextInt(1000));
          break;
        case 1:
          s = Integer.toString(rnd.nextInt(1500) - 100);
          break;
        case 2:
          s = "shard-" + rnd.nextInt(400);
          break;
        default:
          StringBuilder b = new StringBuilder();
          for (int i = 0; i < 1 + rnd.nextInt(3); i++) b.append(ODD[rnd.nextInt(ODD.length)]);
          s = b.toString();
      }
      if (used.add(s)) return s;
    }
  }

  private static String pickWeighted(Random rnd, Object... pairs) {
    double total = 0;
    for (int i = 1; i < pairs.length; i += 2) total += ((Number) pairs[i]).doubleValue();
    double x = rnd.nextDouble() * total;
    for (int i = 0; i < pairs.length; i += 2) {
      x -= ((Number) pairs[i + 1]).doubleValue();
      if (x < 0) return (String) pairs[i];
    }
    return (String) pairs[pairs.length - 2];
  }
}
