package org.shardline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The etcd backends against a real etcd: SHARDLINE_ETCD_ENDPOINTS (set by scripts/test-etcd.sh,
 * which builds the library with the {@code etcd} feature); skipped without one.
 */
class EtcdTest {
  static final String RECORD =
      "{\"seq\":1,\"event\":{\"type\":\"shardRegionRegistered\",\"region\":\"r1\",\"node\":\"n1\"}}";

  List<String> endpoints;

  @BeforeEach
  void needsEtcd() {
    String e = System.getenv("SHARDLINE_ETCD_ENDPOINTS");
    assumeTrue(e != null && !e.isEmpty(), "SHARDLINE_ETCD_ENDPOINTS is not set");
    endpoints = List.of(e.split(","));
  }

  /** A namespace of its own per connection, so reruns against one etcd never meet old keys. */
  Etcd connect() {
    return new Etcd(endpoints, "jvm-test/" + UUID.randomUUID());
  }

  @Test
  void aLeaseIsRenewedAndTakenOverWithALargerToken() {
    try (Etcd etcd = connect();
        EtcdLease a = etcd.lease("coordinator", "a", 2_000);
        EtcdLease b = etcd.lease("coordinator", "b", 2_000)) {
      assertTrue(etcd.namespace().startsWith("jvm-test/"));
      LeaseGrant g = a.acquire(0).orElseThrow();
      assertTrue(g.token() > 0);
      assertEquals(Optional.empty(), b.acquire(0));
      assertEquals(Optional.of(new InMemoryLease.Holder("a", g.token())), b.holder());
      assertTrue(a.renew(g.token(), 10).orElseThrow() > 10);
      a.release(g.token());
      assertEquals(Optional.empty(), a.holder());
      LeaseGrant next = b.acquire(20).orElseThrow();
      assertTrue(next.token() > g.token());
      assertEquals(OptionalLong.empty(), a.renew(g.token(), 30));
    }
  }

  @Test
  void aStoreFencesSmallerTokens() {
    try (Etcd etcd = connect();
        EtcdStore store = etcd.store("state")) {
      assertEquals(Optional.of("{\"snapshot\":null,\"events\":[]}"), store.load(5));
      assertEquals(WriteOutcome.written(), store.append(5, RECORD));
      assertEquals(WriteOutcome.fenced(5), store.append(3, RECORD));
      assertEquals(Optional.empty(), store.load(4));
      assertTrue(store.load(6).orElseThrow().contains("\"r1\""));
      ShardlineException e = assertThrows(ShardlineException.class, () -> store.append(7, "{\"seq\": 2}"));
      assertEquals(Status.INVALID_ARGUMENT, e.status());
    }
  }

  @Test
  void aCoordinatorDriverRunsOnAnEtcdLeaseAndStore() {
    try (Etcd etcd = connect();
        EtcdLease lease = etcd.lease("coordinator", "c1", 5_000);
        EtcdStore store = etcd.store("state", "coordinator");
        EtcdLease watcher = etcd.lease("coordinator", "watcher")) {
      List<Envelope> wire = new ArrayList<>();
      Coordinator c = new Coordinator(Strategy.leastShard(20, 0.1), DriverTest.node(0));
      try (CoordinatorDriver d = new CoordinatorDriver(c, wire::add, new ManualClock(0), lease, store)) {
        d.member(Member.up(DriverTest.node(1)));
        d.start();
        assertTrue(d.isActive());
        assertEquals(Optional.of(new InMemoryLease.Holder("c1", d.token().orElseThrow())), watcher.holder());
        d.stop();
        assertEquals(Optional.empty(), watcher.holder());
      }
    }
  }

  @Test
  void workerIdHoldersReserveDistinctIdsInEtcd() {
    try (Etcd etcd = connect()) {
      TenureConfig tenure = TenureConfig.forTtl(5_000);
      WorkerIdHolder a = WorkerIdHolder.acquire(
          etcd, ReserveConfig.defaults(), tenure, SnowflakeLayout.DEFAULT, "a", 1, 1, IdClock.system());
      WorkerIdHolder b = WorkerIdHolder.acquire(
          etcd, ReserveConfig.defaults(), tenure, SnowflakeLayout.DEFAULT, "b", 1, 1, IdClock.system());
      assertEquals(List.of(0, 1), List.of(a.workerId(), b.workerId()));
      assertNotEquals(a.nextId(), b.nextId());
      long epoch = a.epoch();
      a.close();
      try (WorkerIdHolder c = WorkerIdHolder.acquire(
          etcd, ReserveConfig.defaults(), tenure, SnowflakeLayout.DEFAULT, "c", 1, 1, IdClock.system())) {
        assertEquals(0, c.workerId());
        assertTrue(c.epoch() > epoch);
      }
      b.close();
    }
  }

  /**
   * examples/java/EtcdService.java, run as a user would run it (the source-file launcher, on
   * this test's class path): two nodes on etcd, a rebalance whose decision events it logs, a
   * coordinator fail-over. It checks its own outcome; this checks that it did, and what it printed.
   */
  @Test
  void theEtcdServiceExampleRebalancesAndFailsOver() throws Exception {
    Path example = Path.of(System.getProperty("shardline.examples.dir"), "EtcdService.java");
    Path log = Files.createTempFile("etcd-service", ".log");
    try {
      Process p =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-cp",
                  System.getProperty("java.class.path"),
                  example.toString())
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      boolean exited = p.waitFor(120, TimeUnit.SECONDS);
      if (!exited) p.destroyForcibly().waitFor();
      String out = Files.readString(log, StandardCharsets.UTF_8);
      System.out.println(out);
      assertTrue(exited, "the example finished within 120 s:\n" + out);
      assertEquals(0, p.exitValue(), out);
      List<String> lines = out.lines().toList();
      int joins = lines.indexOf("== node b joins; the rebalance's decision events:");
      int stops = lines.indexOf("== a's coordinator stops; b's takes over from etcd");
      assertTrue(0 < joins && joins < stops, out);
      List<String> rebalance = lines.subList(joins, stops);
      assertTrue(
          rebalance.stream().anyMatch(l -> l.matches("INFO +shardline - shardline rebalanceRound node=a \\{.*\"shards\":\\[\".*")),
          "a rebalance round that moved shards, logged through SLF4J:\n" + out);
      assertTrue(rebalance.stream().anyMatch(l -> l.contains("shardline handOffCompleted node=a ")), out);
      assertTrue(rebalance.stream().anyMatch(l -> l.contains("\"region\":\"b\"") && l.contains("shardline allocated node=a ")), out);
      assertTrue(lines.subList(stops, lines.size()).stream().anyMatch(l -> l.contains("shardline active node=b ")), out);
      assertTrue(out.contains("delivered exactly once"), out);
      assertEquals("done", lines.get(lines.size() - 1), out);
    } finally {
      Files.deleteIfExists(log);
    }
  }
}
