package org.shardline;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Exercises every kind of JNI traffic (callbacks in loops, exceptions thrown from callbacks,
 * large arrays in and out, typed outputs) so that {@link JniHygieneTest} can run it under
 * {@code -Xcheck:jni} in a child JVM. Exits 0 when done.
 */
public final class JniWorkload {
  private JniWorkload() {}

  public static void main(String[] args) throws Exception {
    List<String> shards = new ArrayList<>();
    for (int i = 0; i < 5_000; i++) shards.add("s" + i);
    try (AllocationState s = new AllocationState("pekko://sys@h0:1")) {
      s.upsertMember(Member.up("pekko://sys@h0:1"));
      s.upsertMember(Member.up("pekko://sys@h1:1"));
      s.addRegion("a", "pekko://sys@h0:1", false, shards);
      s.addRegion("b", "pekko://sys@h1:1");
      if (s.region("a").orElseThrow().shards().size() != 5_000) throw new AssertionError("shards");
      try (Strategy least = Strategy.leastShard(100, 1.0);
          Strategy ext =
              Strategy.external(
                  new ShardLocations() {
                    @Override
                    public Optional<String> location(String shard) {
                      return Optional.of("pekko://sys@h1:1");
                    }

                    @Override
                    public Map<String, String> locations() {
                      return Map.of("s1", "pekko://sys@h1:1", "s2", "pekko://sys@h1:1");
                    }
                  });
          Strategy throwing =
              Strategy.custom(
                  new CustomStrategy() {
                    @Override
                    public Allocation allocate(AllocationState state, String r, String shard) {
                      throw new IllegalStateException("on purpose");
                    }

                    @Override
                    public List<String> rebalance(AllocationState state, Set<String> inProgress) {
                      return state.region("a").orElseThrow().shards().subList(0, 100);
                    }
                  })) {
        for (int i = 0; i < 200; i++) {
          least.explainRebalance(s, shards.subList(0, 0));
          ext.allocate(s, "a", "x" + i);
          ext.rebalance(s, List.of());
          throwing.rebalance(s, shards.subList(0, 50));
          try {
            throwing.allocate(s, null, "y");
            throw new AssertionError("expected the callback's exception");
          } catch (IllegalStateException expected) {
            // the original exception, re-thrown by the native side
          }
        }
      }
    }
    // drivers: thousands of callbacks in one native call
    DriverTest.Entities host = new DriverTest.Entities();
    try (DriverTest.Cluster cl = new DriverTest.Cluster();
        InMemoryLease lease = new InMemoryLease("c1", 30_000);
        InMemoryStore store = new InMemoryStore()) {
      cl.coordinator(DriverTest.javaLease(lease), DriverTest.javaStore(store)).start();
      RegionDriver r = cl.region("a", 1, host);
      r.start();
      cl.deliver();
      for (int i = 0; i < 3_000; i++) r.route("y" + i, new byte[] {(byte) i});
      cl.deliver();
      if (host.log.size() != 3_001) throw new AssertionError("delivered " + host.log.size());
    }
    // the step API: many typed outputs in one array
    try (Region region = new Region("r", "pekko://sys@h1:1", ShardExtractor.pekko(1000))) {
      region.start(0);
      for (int i = 0; i < 3_000; i++) region.route(0, "e" + i, new byte[] {1});
      if (region.drainOutputs().isEmpty()) throw new AssertionError("outputs");
    }
    // worker ids: clock callbacks inside reservation loops, thousands of ids
    try (InMemoryRegistry registry = new InMemoryRegistry()) {
      WorkerIdTest.ManualIdClock clock = new WorkerIdTest.ManualIdClock(registry);
      try (WorkerIdHolder h = WorkerIdTest.holder(registry, clock, "w", ReserveConfig.defaults())) {
        for (int i = 0; i < 5_000; i++) {
          h.nextId();
          if (i % 500 == 0) clock.advance(1_000);
        }
      }
    }
    String all = new String(java.nio.file.Files.readAllBytes(Vectors.dir().resolve("pekko-strategies.json")));
    Shardline.decide(all, true);
    System.out.println("workload done");
  }
}
