package org.shardline;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * Random conformance vectors over every strategy kind (no expectations: they are decided by two
 * implementations and compared). One seed gives the same vectors.
 */
final class RandomVectors {
  private static final String[] STATUSES = {"Up", "Up", "Up", "Up", "Leaving", "Exiting", "Down", "Joining", "WeaklyUp"};
  private static final String[] VERSIONS = {"1.0.0", "1.0", "1.0.1", "1.0.0-RC1", "2.0.0", "1.0.0+3-abc"};
  private static final String[] SHARD_CHARS = {"a", "B", "0", "9", "-", "\u00e9", "\u65e5", "\ud83d\ude00"};

  private final Random rnd;
  /** actor-ts needs non-negative integer shard ids. */
  private boolean numericShards;

  RandomVectors(long seed) {
    this.rnd = new Random(seed);
  }

  private boolean chance(double p) {
    return rnd.nextDouble() < p;
  }

  private <T> T pick(T[] a) {
    return a[rnd.nextInt(a.length)];
  }

  ObjectNode next(String id) {
    ObjectNode v = Vectors.JSON.createObjectNode();
    v.put("id", id);
    String[] kinds = {"least-shard", "least-shard-legacy", "consistent-hashing", "external", "actor-ts-hash", "actor-ts-least-shard"};
    String kind = pick(kinds);
    boolean actorTs = kind.startsWith("actor-ts");
    numericShards = actorTs;
    ObjectNode s = v.putObject("strategy");
    s.put("kind", kind);
    switch (kind) {
      case "least-shard":
        s.put("absoluteLimit", rnd.nextInt(12));
        s.put("relativeLimit", (1 + rnd.nextInt(100)) / 100.0);
        if (chance(0.2)) s.put("tieBreakByAge", true);
        if (chance(0.2)) s.put("phase1FromMostLoaded", true);
        break;
      case "least-shard-legacy":
        s.put("rebalanceThreshold", rnd.nextInt(4));
        s.put("maxSimultaneousRebalance", rnd.nextInt(5));
        break;
      case "consistent-hashing":
        s.put("rebalanceLimit", rnd.nextInt(6) - 1);
        break;
      case "actor-ts-least-shard":
        s.put("rebalanceThreshold", 1 + rnd.nextInt(3));
        s.put("maxSimultaneousRebalance", 1 + rnd.nextInt(4));
        break;
      default:
    }
    String op = actorTs || chance(0.5) ? (chance(0.5) ? "allocate" : "rebalance") : (chance(0.8) ? (chance(0.5) ? "allocate" : "rebalance") : "rank");
    v.put("op", op);

    int n = 1 + rnd.nextInt(9);
    List<String> nodes = new ArrayList<>();
    Set<String> used = new LinkedHashSet<>();
    while (nodes.size() < n) {
      String host = "10.0.0." + (1 + rnd.nextInt(30));
      int port = chance(0.7) ? 2552 : pick(new Integer[] {999, 2551, 10000, 25520});
      String node = actorTs ? "sys@" + host + ":" + port : "pekko://sys@" + host + ":" + port;
      if (used.add(node)) nodes.add(node);
    }
    if (!actorTs) {
      ObjectNode cluster = v.putObject("cluster");
      cluster.put("self", nodes.get(rnd.nextInt(n)));
      ArrayNode members = cluster.putArray("members");
      boolean mixed = chance(0.3);
      for (String node : nodes) {
        if (chance(0.07)) continue; // a region whose node the view does not know
        ObjectNode m = members.addObject();
        m.put("address", node);
        m.put("status", chance(0.7) ? "Up" : pick(STATUSES));
        m.put("appVersion", mixed ? pick(VERSIONS) : "1.0.0");
        if (chance(0.1)) m.put("dataCenter", "east");
      }
      if (members.isEmpty()) {
        ObjectNode m = members.addObject();
        m.put("address", nodes.get(0));
      }
      ArrayNode unreachable = cluster.putArray("unreachable");
      if (chance(0.1)) unreachable.add(members.get(0).get("address").asText());
    }
    ArrayNode regions = v.putArray("regions");
    List<String> allShards = new ArrayList<>();
    Set<String> usedShards = new LinkedHashSet<>();
    List<String> regionIds = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ObjectNode r = regions.addObject();
      String rid = actorTs ? nodes.get(i) : "region-" + (char) ('A' + i);
      regionIds.add(rid);
      r.put("region", rid);
      r.put("address", nodes.get(i));
      ArrayNode shards = r.putArray("shards");
      int count = chance(0.2) ? 0 : rnd.nextInt(chance(0.8) ? 10 : 40);
      for (int j = 0; j < count; j++) {
        String shard = freshShard(usedShards);
        shards.add(shard);
        allShards.add(shard);
      }
    }
    if (actorTs && chance(0.3)) {
      ArrayNode cands = v.putArray("candidates");
      List<String> copy = new ArrayList<>(nodes);
      Collections.shuffle(copy, rnd);
      copy.subList(0, 1 + rnd.nextInt(copy.size())).forEach(cands::add);
    }
    if (kind.equals("external")) {
      ObjectNode loc = s.putObject("locations");
      for (String shard : allShards) if (chance(0.4)) loc.put(shard, nodes.get(rnd.nextInt(n)));
      if (chance(0.3)) loc.put(freshShard(usedShards), nodes.get(rnd.nextInt(n)));
    }
    ArrayNode inProgress = v.putArray("rebalanceInProgress");
    if (!allShards.isEmpty() && chance(0.3)) {
      for (int i = 0; i < 1 + rnd.nextInt(3); i++) inProgress.add(allShards.get(rnd.nextInt(allShards.size())));
    }
    if (op.equals("allocate")) {
      v.put("shardId", !allShards.isEmpty() && chance(0.1) && kind.equals("external") ? allShards.get(0) : freshShard(usedShards));
      if (chance(0.8)) v.put("requester", regionIds.get(rnd.nextInt(n)));
      if (kind.equals("external") && chance(0.5)) {
        ((ObjectNode) v.get("strategy").get("locations")).put(v.get("shardId").asText(), nodes.get(rnd.nextInt(n)));
      }
    }
    if (op.equals("rebalance") && !actorTs && !kind.equals("external") && chance(0.2)) {
      v.putObject("then");
    }
    return v;
  }

  private String freshShard(Set<String> used) {
    while (true) {
      String s;
      int style = numericShards ? 1 : rnd.nextInt(3);
      if (style == 0) {
        s = String.format("%03d", rnd.nextInt(1000));
      } else if (style == 1) {
        s = Integer.toString(rnd.nextInt(500));
      } else {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 1 + rnd.nextInt(3); i++) b.append(pick(SHARD_CHARS));
        s = b.toString();
      }
      if (used.add(s)) return s;
    }
  }
}
