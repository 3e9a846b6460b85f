package org.shardline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The CompletionStage driver: stages complete on the executor, never blocking the caller. */
class AsyncDriverTest {
  final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
  final ConcurrentLinkedQueue<Envelope> wire = new ConcurrentLinkedQueue<>();
  final AsyncTransport transport =
      e -> {
        wire.add(e);
        return CompletableFuture.completedFuture(null);
      };

  @AfterEach
  void stopExecutor() {
    executor.shutdownNow();
  }

  /** An embedded store whose appends wait, while {@code gate} is set, until the test opens it. */
  static final class GatedStore implements AsyncStore {
    final InMemoryStore inner = new InMemoryStore();
    volatile CompletableFuture<Void> gate;

    @Override
    public CompletionStage<WriteOutcome> append(long token, String record) {
      CompletableFuture<Void> g = gate;
      return g == null
          ? CompletableFuture.completedFuture(inner.append(token, record))
          : g.thenApply(x -> inner.append(token, record));
    }

    @Override
    public CompletionStage<WriteOutcome> saveSnapshot(long token, String snapshot) {
      return CompletableFuture.completedFuture(inner.saveSnapshot(token, snapshot));
    }

    @Override
    public CompletionStage<Optional<String>> load(long token) {
      return CompletableFuture.completedFuture(inner.load(token));
    }
  }

  AsyncCoordinatorDriver coordinator(String config, AsyncLease lease, AsyncStore store, Clock clock) {
    Coordinator c = new Coordinator(config, Strategy.leastShard(20, 0.1), DriverTest.node(0));
    AsyncCoordinatorDriver d = new AsyncCoordinatorDriver(c, transport, lease, store, clock, executor);
    assertTrue(c.isClosed(), "the coordinator was handed to the driver");
    return d;
  }

  static void idle(AsyncCoordinatorDriver d) throws Exception {
    d.whenIdle().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** Delivers the wire: coordinator mail to {@code d}, the rest to {@code r}. */
  void deliver(AsyncCoordinatorDriver d, RegionDriver r) {
    for (Envelope e = wire.poll(); e != null; e = wire.poll()) {
      if (e.to().isCoordinator()) d.receive(e);
      else r.receive(e);
    }
  }

  @Test
  void aShardHomeWaitsForItsWriteWhileTheCallerGoesOn() throws Exception {
    ManualClock clock = new ManualClock(1_000);
    GatedStore store = new GatedStore();
    List<Notice> notices = new CopyOnWriteArrayList<>();
    try (InMemoryLease lease = new InMemoryLease("c1", 30_000);
        AsyncCoordinatorDriver d =
            coordinator("{\"decisionEvents\": true}", AsyncLease.of(lease, executor), store, clock);
        RegionDriver r =
            new RegionDriver(
                new Region("a", DriverTest.node(1), e -> e.substring(0, 1)),
                wire::add,
                clock,
                new DriverTest.Entities())) {
      d.onNotice(notices::add);
      d.start();
      for (int i = 0; i < 2; i++) d.member(Member.up(DriverTest.node(i)));
      idle(d);
      assertTrue(d.isActive(), "took the lease and loaded the state through the stages");
      r.start();
      deliver(d, r);
      idle(d);
      deliver(d, r);

      store.gate = new CompletableFuture<>();
      r.route("x1", "hello".getBytes(StandardCharsets.UTF_8));
      deliver(d, r); // the GetShardHome: the allocation's append is now waiting at the gate
      assertEquals(1, d.inFlight(), "the append is in flight");
      assertTrue(wire.isEmpty(), "the shard home is not sent before its record is written");
      assertEquals(List.of("a"), d.regions(), "queries answer meanwhile");

      store.gate.complete(null);
      idle(d);
      assertFalse(wire.isEmpty(), "sent once the write completed");
      deliver(d, r);
      assertEquals(Optional.of("a"), d.homeOf("x"));
      assertTrue(
          notices.stream().anyMatch(n -> n.type().equals("allocated") && n.json().contains("\"x\"")),
          "decision events reach the listener: " + notices);
      assertTrue(d.takeErrors().isEmpty());
    }
  }

  @Test
  void aFailedStageIsKeptAndTheCoordinatorTriesAgain() throws Exception {
    IllegalStateException down = new IllegalStateException("lease backend down");
    List<Long> attempts = new CopyOnWriteArrayList<>();
    try (InMemoryLease inner = new InMemoryLease("c1", 30_000)) {
      AsyncLease lease =
          new AsyncLease() {
            @Override
            public CompletionStage<Optional<LeaseGrant>> acquire(long nowMs) {
              attempts.add(nowMs);
              return attempts.size() == 1
                  ? CompletableFuture.failedFuture(down)
                  : CompletableFuture.completedFuture(inner.acquire(nowMs));
            }

            @Override
            public CompletionStage<OptionalLong> renew(long token, long nowMs) {
              return CompletableFuture.completedFuture(inner.renew(token, nowMs));
            }

            @Override
            public CompletionStage<Void> release(long token) {
              inner.release(token);
              return CompletableFuture.completedFuture(null);
            }
          };
      Clock real = System::currentTimeMillis;
      try (AsyncCoordinatorDriver d =
          coordinator("{\"leaseRetryIntervalMs\": 50}", lease, new GatedStore(), real)) {
        d.start();
        idle(d);
        assertEquals(List.of(down), d.takeErrors(), "the failure is kept as it was");
        assertFalse(d.isActive());
        // The retry comes from the driver's own timer on the executor.
        long until = System.currentTimeMillis() + 10_000;
        while (!d.isActive() && System.currentTimeMillis() < until) Thread.sleep(10);
        assertTrue(d.isActive(), "acquired on the retry");
        assertEquals(2, attempts.size());
      }
    }
  }

  @Test
  void anAnswerThatDoesNotFitIsKeptNamingTheMethod() throws Exception {
    AsyncLease nulls =
        new AsyncLease() {
          @Override
          public CompletionStage<Optional<LeaseGrant>> acquire(long nowMs) {
            return CompletableFuture.completedFuture(null);
          }

          @Override
          public CompletionStage<OptionalLong> renew(long token, long nowMs) {
            return CompletableFuture.completedFuture(OptionalLong.empty());
          }

          @Override
          public CompletionStage<Void> release(long token) {
            return CompletableFuture.completedFuture(null);
          }
        };
    try (AsyncCoordinatorDriver d = coordinator("{}", nulls, new GatedStore(), new ManualClock(0))) {
      d.start();
      idle(d);
      List<Throwable> errors = d.takeErrors();
      assertEquals(1, errors.size());
      ShardlineException e = (ShardlineException) errors.get(0);
      assertEquals(Status.CALLBACK_FAILED, e.status());
      assertTrue(e.getMessage().contains("acquire"), e.getMessage());
      assertFalse(d.isActive());
    }
  }

  @Test
  void hostsAreRequiredAndTheCoordinatorIsTakenOnce() throws Exception {
    Coordinator c = new Coordinator(Strategy.leastShard(20, 0.1), DriverTest.node(0));
    ManualClock clock = new ManualClock(0);
    AsyncStore store = new GatedStore();
    try (InMemoryLease l = new InMemoryLease("c1", 30_000)) {
      AsyncLease lease = AsyncLease.of(l, executor);
      NullPointerException npe =
          assertThrows(
              NullPointerException.class,
              () -> new AsyncCoordinatorDriver(c, transport, lease, null, clock, executor));
      assertEquals("store", npe.getMessage());
      assertFalse(c.isClosed(), "a refused construction leaves the coordinator usable");
      try (AsyncCoordinatorDriver d = new AsyncCoordinatorDriver(c, transport, lease, store, clock, executor)) {
        ShardlineException taken =
            assertThrows(
                ShardlineException.class,
                () -> new AsyncCoordinatorDriver(c, transport, lease, store, clock, executor));
        assertSame(Status.INVALID_STATE, taken.status());
        assertTrue(taken.getMessage().contains("handed to an AsyncCoordinatorDriver"), taken.getMessage());
      }
    }
  }
}
