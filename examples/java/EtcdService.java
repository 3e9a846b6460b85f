// A service on two nodes whose shards shardline places, with etcd holding the coordinator lease
// and the coordinator's state. Both nodes live in this JVM and talk through an in-process
// transport; each runs a region and an AsyncCoordinatorDriver contending for the etcd lease,
// writing to the etcd store bound to that lease. The story: node a starts alone and gets every
// shard, node b joins and the rebalance moves shards to it (its decision events are logged
// through the SLF4J bridge), then a's coordinator stops and b's, the standby, takes over from
// what a left in etcd. It checks its outcome (every message delivered exactly once, by the
// shard's owner; shards moved on join; the successor active with a larger fencing token and the
// same allocation) and exits non-zero otherwise.
//
// EtcdTest runs it in scripts/test-etcd.sh. By hand, against an etcd, after
// `mvn -Dshardline.cargo.features=bench,etcd test-compile` in bindings/java (any SLF4J 2 backend
// will do; the test class path has logback):
//
//   SHARDLINE_ETCD_ENDPOINTS=http://127.0.0.1:2379 java -cp \
//     "bindings/java/shardline/target/classes:bindings/java/shardline/target/test-classes:$(cat bindings/java/shardline/target/classpath.txt)" \
//     examples/java/EtcdService.java

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.shardline.AbstractCoordinator;
import org.shardline.AsyncCoordinatorDriver;
import org.shardline.AsyncLease;
import org.shardline.AsyncStore;
import org.shardline.Clock;
import org.shardline.Coordinator;
import org.shardline.EntityHost;
import org.shardline.Envelope;
import org.shardline.Etcd;
import org.shardline.EtcdLease;
import org.shardline.EtcdStore;
import org.shardline.Member;
import org.shardline.Notice;
import org.shardline.Region;
import org.shardline.RegionDriver;
import org.shardline.ShardExtractor;
import org.shardline.Shardline;
import org.shardline.Strategy;
import org.shardline.Wire;
import org.shardline.observe.NoticeLogger;
import org.shardline.observe.ShardlineMetrics;

public class EtcdService {
  static final int SHARDS = 12;
  static final int ENTITIES = 40;
  static final String COORDINATOR =
      "{\"decisionEvents\": true, \"rebalanceIntervalMs\": 300, \"leaseRetryIntervalMs\": 200}";
  static final String REGION = "{\"retryIntervalMs\": 200}";

  final List<String> endpoints;
  final String namespace = "shardline-example/" + UUID.randomUUID();
  /** Every driver call, delivery and timer runs here, one at a time. */
  final ScheduledExecutorService loop = Executors.newSingleThreadScheduledExecutor();
  /** etcd's blocking calls, off the loop. */
  final ExecutorService etcdCalls = Executors.newCachedThreadPool();
  final Map<String, Node> nodes = new ConcurrentHashMap<>();
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  final Map<Long, Integer> deliveries = new ConcurrentHashMap<>();
  final Map<String, String> hosting = new ConcurrentHashMap<>(); // shard -> node, as the hosts see it
  final List<String> problems = new CopyOnWriteArrayList<>();
  long sent;

  EtcdService(List<String> endpoints) {
    this.endpoints = endpoints;
  }

  /** One node: its own etcd connection, as a separate process would have. */
  final class Node implements EntityHost {
    final String name;
    final String address;
    final Etcd etcd;
    final EtcdLease lease;
    final EtcdStore store;
    final AsyncCoordinatorDriver coordinator;
    final RegionDriver region;

    Node(String name, int index) {
      this.name = name;
      address = "pekko://service@10.0.0." + index + ":2552";
      etcd = new Etcd(endpoints, namespace);
      lease = etcd.lease("coordinator", name, 5_000);
      store = etcd.store("state", "coordinator"); // writes need the lease still ours
      coordinator =
          new AsyncCoordinatorDriver(
              // At most two moves a round, so the rebalance takes a few rounds.
              new Coordinator(COORDINATOR, Strategy.leastShard(2, 1.0), address),
              e -> {
                later(() -> carry(e));
                return CompletableFuture.completedFuture(null);
              },
              AsyncLease.of(lease, etcdCalls),
              AsyncStore.of(store, etcdCalls),
              Clock.system(),
              loop);
      NoticeLogger log = new NoticeLogger(Map.of("node", name));
      coordinator.onNotice(n -> {
        if (!idleRound(n)) log.accept(n);
      });
      coordinator.onNotice(n -> {
        if (n.type().equals(Wire.CoordinatorNotice.ACTIVE)) {
          later(() -> nodes.values().forEach(x -> x.region.coordinatorChanged()));
        }
      });
      region = new RegionDriver(new Region(REGION, name, address, ShardExtractor.pekko(SHARDS)), e -> later(() -> carry(e)), Clock.system(), this);
      new ShardlineMetrics(coordinator::metrics, Tags.of("node", name)).bindTo(registry);
      new ShardlineMetrics(region::metrics, Tags.of("node", name)).bindTo(registry);
    }

    @Override
    public void startShard(String shard, List<String> entities) {
      hosting.put(shard, name);
    }

    @Override
    public void deliver(String shard, String entity, byte[] payload) {
      if (!name.equals(hosting.get(shard))) problems.add(name + " delivered to " + entity + " of shard " + shard + " it does not host");
      deliveries.merge(Long.parseLong(new String(payload, StandardCharsets.UTF_8)), 1, Integer::sum);
    }

    @Override
    public boolean stopShard(String shard) {
      hosting.remove(shard, name);
      return true; // these entities hold nothing to wind down
    }

    void close() {
      coordinator.close();
      region.close();
      lease.close();
      store.close();
      etcd.close();
    }
  }

  /** A rebalance round that moved nothing: there is one every interval, left out of the log. */
  static boolean idleRound(Notice n) {
    return n.type().equals(Wire.CoordinatorNotice.REBALANCE_ROUND) && n.json().contains("\"shards\":[]");
  }

  /** The in-process transport: coordinator mail to whichever coordinator is active. */
  void carry(Envelope e) {
    if (e.to().isCoordinator()) {
      for (Node n : nodes.values()) {
        if (n.coordinator.isActive()) n.coordinator.receive(e);
      }
    } else {
      Node n = nodes.get(e.to().regionId());
      if (n != null) n.region.receive(e);
    }
  }

  /** {@code r}, keeping what it throws: a task on an executor would lose it. */
  Runnable safely(Runnable r) {
    return () -> {
      try {
        r.run();
      } catch (RuntimeException e) {
        problems.add(e.toString());
      }
    };
  }

  void later(Runnable r) {
    loop.execute(safely(r));
  }

  <T> T onLoop(Callable<T> c) throws Exception {
    return loop.submit(c).get(10, TimeUnit.SECONDS);
  }

  void await(String what, Callable<Boolean> done) throws Exception {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!onLoop(done)) {
      if (System.nanoTime() > until) throw new IllegalStateException("timed out waiting until " + what);
      Thread.sleep(20);
    }
  }

  static void check(boolean ok, String what) {
    if (!ok) throw new IllegalStateException("check failed: " + what);
  }

  Node join(String name, int index) throws Exception {
    Node node = new Node(name, index);
    onLoop(() -> {
      nodes.put(name, node);
      for (Node n : nodes.values()) {
        for (Node m : nodes.values()) n.coordinator.member(Member.up(m.address));
      }
      node.region.start();
      node.coordinator.start();
      return null;
    });
    return node;
  }

  /** One message to every entity, each through a node taken in turn. */
  void traffic() {
    List<Node> via = new ArrayList<>(new TreeMap<>(nodes).values());
    for (int e = 0; e < ENTITIES; e++) {
      long id = sent++;
      via.get(e % via.size()).region.route("user-" + e, Long.toString(id).getBytes(StandardCharsets.UTF_8));
    }
  }

  boolean allDelivered() {
    return deliveries.size() == sent;
  }

  static Map<String, Set<String>> allocation(AbstractCoordinator c) {
    Map<String, Set<String>> out = new TreeMap<>();
    for (String r : c.regions()) out.put(r, new TreeSet<>(c.shardsOf(r)));
    return out;
  }

  /** The shards each node's entity host runs. */
  Map<String, Set<String>> hosted() {
    Map<String, Set<String>> out = new TreeMap<>();
    hosting.forEach((shard, node) -> out.computeIfAbsent(node, n -> new TreeSet<>()).add(shard));
    return out;
  }

  void run() throws Exception {
    System.out.println(Shardline.version() + ", etcd " + endpoints + ", namespace " + namespace);
    loop.scheduleWithFixedDelay(safely(() -> nodes.values().forEach(n -> n.region.poll())), 50, 50, TimeUnit.MILLISECONDS);

    System.out.println("== node a starts alone");
    Node a = join("a", 1);
    await("a's coordinator is active and its region registered", () -> a.coordinator.isActive() && a.region.isRegistered());
    later(this::traffic);
    await("every message is delivered", this::allDelivered);
    check(hosting.size() == SHARDS && hosting.values().stream().allMatch("a"::equals), "a hosts every shard: " + hosting);

    System.out.println("== node b joins; the rebalance's decision events:");
    Node b = join("b", 2);
    ScheduledFuture<?> traffic = loop.scheduleWithFixedDelay(safely(this::traffic), 0, 100, TimeUnit.MILLISECONDS);
    // Balanced as the hosts see it, and as the coordinator has it: a shard's new home is
    // announced only once etcd has the allocation.
    await("the shards are balanced", () -> {
      Map<String, Set<String>> hosted = hosted();
      int onA = hosted.getOrDefault("a", Set.of()).size();
      int onB = hosted.getOrDefault("b", Set.of()).size();
      return onA + onB == SHARDS && Math.abs(onA - onB) <= 1 && a.coordinator.handoffsInProgress().isEmpty()
          && allocation(a.coordinator).equals(hosted);
    });
    traffic.cancel(false);
    await("every message is delivered", this::allDelivered);
    Set<String> moved = hosted().getOrDefault("b", Set.of());
    check(!moved.isEmpty(), "b got shards when it joined");
    System.out.println("rebalance moved " + moved.size() + " shards to b: " + moved);

    System.out.println("== a's coordinator stops; b's takes over from etcd");
    Map<String, Set<String>> before = onLoop(() -> allocation(a.coordinator));
    long oldToken = a.coordinator.token().orElseThrow();
    onLoop(() -> {
      a.coordinator.stop();
      return null;
    });
    await("b's coordinator is active", b.coordinator::isActive);
    long newToken = b.coordinator.token().orElseThrow();
    check(newToken > oldToken, "the successor's fencing token " + newToken + " is larger than " + oldToken);
    check(onLoop(() -> allocation(b.coordinator)).equals(before), "b loaded the allocation a left in etcd");
    await("both regions registered with b", () -> b.coordinator.isAlive("a") && b.coordinator.isAlive("b"));
    later(this::traffic);
    await("every message is delivered", this::allDelivered);
    System.out.println("b is active with token " + newToken + " (a had " + oldToken + "), allocation " + before);

    System.out.println("== metrics, from a Micrometer registry");
    // What a scrape does: read every meter. Reading also registers the meters that appeared
    // since the last read (b's shards per region, now that it has loaded them).
    for (Meter m : registry.getMeters()) m.measure().forEach(Measurement::getValue);
    for (Gauge g : registry.get("shardline.coordinator.shards").tag("node", "b").gauges()) {
      System.out.println("shardline.coordinator.shards{node=b,shardline.region=" + g.getId().getTag("shardline.region") + "} " + (long) g.value());
    }
    double moves = registry.get("shardline.coordinator.rebalance.moves").tag("node", "a").functionCounter().count();
    double delivered = registry.get("shardline.region.delivered").functionCounters().stream().mapToDouble(FunctionCounter::count).sum();
    System.out.println("shardline.coordinator.rebalance.moves{node=a} " + (long) moves);
    for (String m : List.of("allocation.latency_ms.max", "handoffs.duration_ms.max")) {
      double ms = registry.get("shardline.coordinator." + m).tag("node", "a").gauge().value();
      System.out.println("shardline.coordinator." + m + "{node=a} " + (long) ms);
    }
    System.out.println("shardline.region.delivered, both regions: " + (long) delivered);
    check(moves >= moved.size(), "a counted its moves");
    check(delivered == sent, "the regions counted every delivery");

    List<Long> twice = deliveries.entrySet().stream().filter(e -> e.getValue() != 1).map(Map.Entry::getKey).toList();
    check(twice.isEmpty(), "no message delivered twice: " + twice);
    check(problems.isEmpty(), "no problems: " + problems);
    for (Node n : List.of(a, b)) check(n.coordinator.takeErrors().isEmpty(), n.name + "'s coordinator kept no errors");
    System.out.println(sent + " messages to " + ENTITIES + " entities delivered exactly once; " + moved.size()
        + " shards moved to b on join; b took over with token " + newToken);

    onLoop(() -> {
      b.coordinator.stop(); // releases the lease
      return null;
    });
    b.coordinator.whenIdle().toCompletableFuture().get(10, TimeUnit.SECONDS);
    loop.shutdown();
    loop.awaitTermination(10, TimeUnit.SECONDS);
    etcdCalls.shutdown();
    nodes.values().forEach(Node::close);
  }

  public static void main(String[] args) throws Exception {
    String endpoints = System.getenv("SHARDLINE_ETCD_ENDPOINTS");
    if (endpoints == null || endpoints.isEmpty()) {
      System.err.println("set SHARDLINE_ETCD_ENDPOINTS, e.g. http://127.0.0.1:2379");
      System.exit(2);
    }
    try {
      new EtcdService(List.of(endpoints.split(","))).run();
    } catch (Exception e) {
      System.err.println("FAILED: " + e.getMessage());
      e.printStackTrace();
      System.exit(1);
    }
    System.out.println("done");
  }
}
