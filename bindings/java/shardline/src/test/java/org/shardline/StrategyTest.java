package org.shardline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class StrategyTest {
  static final String A = AllocationStateTest.A;
  static final String B = AllocationStateTest.B;
  static final String C = AllocationStateTest.C;

  /** Three Up members; regions a (4 shards), b (1), c (0) in that map order. */
  static AllocationState threeRegions() {
    AllocationState s = new AllocationState(A);
    for (String n : List.of(A, B, C)) s.upsertMember(Member.up(n));
    s.addRegion("a", A, false, List.of("1", "2", "3", "4"));
    s.addRegion("b", B, false, List.of("5"));
    s.addRegion("c", C);
    return s;
  }

  @Test
  void leastShardAllocatesToTheEmptiestAndRebalancesTheFullest() {
    try (AllocationState s = threeRegions(); Strategy st = Strategy.leastShard(20, 1.0)) {
      assertEquals("least-shard", st.name());
      assertEquals(Allocation.to("c"), st.allocate(s, "a", "9"));
      assertEquals(List.of("1", "2"), st.rebalance(s, List.of()));
      assertEquals(List.of(), st.rebalance(s, List.of("5")), "one round at a time");
    }
  }

  @Test
  void packedRebalanceAnswersUnpackWhateverTheLengths() {
    String long12 = "1:2:3:4:5:6:", long300 = "y".repeat(300);
    assertEquals(List.of(long12, "", long300, "\ud83d\ude00"), Strategy.unpack("12:" + long12 + "0:300:" + long300 + "2:\ud83d\ude00"));
    assertEquals(List.of(), Strategy.unpack(""));
  }

  @Test
  void idsOfEveryShapeCrossTheBoundaryUnchanged() {
    // short ASCII takes the stack-buffer paths; NUL, non-ASCII, characters outside the BMP and
    // long ids take the general ones; a rebalance packs its answer as length ':' id, which an id
    // of digits and colons must not confuse: all must come back exactly
    String longId = "r".repeat(300);
    List<String> odd = List.of("7:x:", "a\u0000b", "\ud83d\ude00", "\u00e9t\u00e9", "x".repeat(200), "");
    for (String region : List.of("c", "c\u0000", "\u00e7", "\ud83d\ude00", longId)) {
      try (AllocationState s = new AllocationState(A); Strategy st = Strategy.leastShard(20, 1.0)) {
        for (String n : List.of(A, B, C)) s.upsertMember(Member.up(n));
        s.addRegion("a", A, false, odd);
        s.addRegion(region, C);
        assertEquals(Allocation.to(region), st.allocate(s, region, "\ud83d\ude01"));
        assertEquals(Allocation.to(region), st.explainAllocate(s, null, "n\u0000").decision());
        assertEquals(odd.subList(0, 3), st.rebalance(s, List.of()));
        assertEquals(List.of(region), s.regionIds().subList(1, 2));
        for (String shard : odd) assertEquals(Optional.of("a"), s.homeOf(shard), shard);
      }
    }
  }

  @Test
  void allocateReadsEveryShardIdAsTheOperationPathDoes() {
    // ids of up to 16 ASCII characters cross packed in two longs, the rest as Strings; a
    // consistent-hashing decision depends on every character, and explainAllocate reads the id
    // through the general path
    List<String> ids = new ArrayList<>(List.of("\u00e9", "abcdefg\u00e9", "abcdefghijklmno\u00e9", "a\u0000b", "\ud83d\ude00"));
    for (int n = 0; n <= 20; n++) ids.add("0123456789abcdefghijk".substring(0, n));
    for (int n = 0; n <= 20; n++) ids.add("~zZ9 !@#$%^&*()_+{}|:".substring(20 - n));
    try (AllocationState s = threeRegions(); Strategy ch = Strategy.consistentHashing(10)) {
      for (String id : ids) {
        assertEquals(ch.explainAllocate(s, null, id).decision(), ch.allocate(s, null, id), id);
      }
      ShardlineException e = assertThrows(ShardlineException.class, () -> ch.allocate(s, null, null));
      assertEquals(Status.NULL_POINTER, e.status());
      assertTrue(e.getMessage().contains("shard"), e.getMessage());
    }
  }

  @Test
  void repeatedAnswersFollowTheMap() {
    // a region answered before comes back from the binding's cache: it must follow the map as
    // regions go and come back under the same or another id
    try (AllocationState s = threeRegions(); Strategy st = Strategy.leastShard(20, 1.0)) {
      for (int i = 0; i < 3; i++) assertEquals(Allocation.to("c"), st.allocate(s, null, "9"));
      s.removeRegion("c");
      assertEquals(Allocation.to("b"), st.allocate(s, null, "9"));
      s.addRegion("c", C);
      assertEquals(Allocation.to("c"), st.allocate(s, null, "9"));
      s.removeRegion("c");
      s.addRegion("d", C);
      assertEquals(Allocation.to("d"), st.allocate(s, null, "9"));
      try (AllocationState other = threeRegions()) {
        assertEquals(Allocation.to("c"), st.allocate(other, null, "9"));
        assertEquals(Allocation.to("d"), st.allocate(s, null, "9"));
      }
      assertEquals(Allocation.to("d"), st.allocate(s, null, "9"));
      // a repeated answer is the same object; a new one is not kept from before
      Allocation d = st.allocate(s, null, "9");
      assertSame(d, st.allocate(s, null, "9"));
      s.removeRegion("d");
      assertEquals(Allocation.to("b"), st.allocate(s, null, "9"));
      assertNotSame(d, st.allocate(s, null, "9"));
    }
  }

  @Test
  void answersOutliveTheStrategyAndItsHandOff() {
    // the cached Strings are the binding's until the handle is freed; the caller's stay valid
    AllocationState s = threeRegions();
    Strategy st = Strategy.leastShard(20, 1.0);
    String first = st.allocate(s, null, "9").regionId().orElseThrow();
    String again = st.allocate(s, null, "9").regionId().orElseThrow();
    try (Coordinator c = new Coordinator(st, A)) {
      assertEquals(AbstractCoordinator.Phase.IDLE, c.phase());
      ShardlineException e = assertThrows(ShardlineException.class, () -> st.allocate(s, null, "9"));
      assertEquals(Status.INVALID_STATE, e.status());
    }
    s.close();
    System.gc();
    assertEquals("c", first);
    assertEquals("c", again);
  }

  @Test
  void legacyMovesTheLexicographicallyFirstShardsOfTheFullest() {
    // at most `threshold` shards per round: min(4 - 0 - threshold, threshold, 3)
    try (AllocationState s = threeRegions();
        Strategy one = Strategy.leastShardLegacy(1, 3);
        Strategy two = Strategy.leastShardLegacy(2, 3)) {
      assertEquals(List.of("1"), one.rebalance(s, List.of()));
      assertEquals(List.of("1", "2"), two.rebalance(s, List.of()));
    }
  }

  @Test
  void explanationsSayWhyNothingMoved() {
    try (AllocationState s = threeRegions(); Strategy st = Strategy.leastShard(20, 1.0)) {
      s.upsertMember(Member.up(B).withAppVersion("2.0.0"));
      Explained<List<String>> e = st.explainRebalance(s, List.of());
      assertEquals(List.of(), e.decision());
      assertTrue(e.explanation().contains("mixedVersions"), e.explanation());
      Explained<Allocation> a = st.explainAllocate(s, null, "9");
      assertTrue(a.explanation().contains("\"candidates\""), a.explanation());
    }
  }

  @Test
  void consistentHashingAndExternal() {
    try (AllocationState s = threeRegions();
        Strategy ch = Strategy.consistentHashing(10);
        Strategy ext = Strategy.external(Map.of("9", B))) {
      assertTrue(ch.allocate(s, null, "x").regionId().isPresent());
      assertEquals(Allocation.to("b"), ext.allocate(s, "a", "9"));
      assertEquals(Allocation.to("a"), ext.allocate(s, "a", "unknown"), "falls back to the requester");
      assertEquals(Allocation.pending(), ext.allocate(s, null, "unknown"));
    }
  }

  @Test
  void externalAsksAJavaSourceAndTreatsNullAsUnavailable() {
    Map<String, String> where = new HashMap<>(Map.of("1", C));
    AtomicReference<Boolean> available = new AtomicReference<>(true);
    ShardLocations source =
        new ShardLocations() {
          @Override
          public Optional<String> location(String shard) {
            return available.get() ? Optional.ofNullable(where.get(shard)) : null;
          }

          @Override
          public Map<String, String> locations() {
            return available.get() ? where : null;
          }
        };
    try (AllocationState s = threeRegions(); Strategy ext = Strategy.external(source)) {
      assertEquals(List.of("1"), ext.rebalance(s, List.of()), "1 lives on a but belongs on c");
      where.put("new", B);
      assertEquals(Allocation.to("b"), ext.allocate(s, "a", "new"));
      available.set(false);
      assertEquals(Allocation.to("a"), ext.allocate(s, "a", "new"), "unavailable: the requester");
      assertTrue(ext.explainRebalance(s, List.of()).explanation().contains("lookupUnavailable"));
    }
  }

  @Test
  void aSourceNamingNoAddressIsACallbackFailure() {
    ShardLocations source =
        new ShardLocations() {
          @Override
          public Optional<String> location(String shard) {
            return Optional.of("nowhere");
          }

          @Override
          public Map<String, String> locations() {
            return Map.of("1", "nowhere");
          }
        };
    try (AllocationState s = threeRegions(); Strategy ext = Strategy.external(source)) {
      ShardlineException e = assertThrows(ShardlineException.class, () -> ext.allocate(s, "a", "1"));
      assertEquals(Status.CALLBACK_FAILED, e.status());
      assertTrue(e.getMessage().contains("ShardLocations.location") && e.getMessage().contains("nowhere"), e.getMessage());
      e = assertThrows(ShardlineException.class, () -> ext.rebalance(s, List.of()));
      assertTrue(e.getMessage().contains("ShardLocations.locations"), e.getMessage());
    }
  }

  @Test
  void actorTsStrategiesNeedCandidates() {
    try (AllocationState s = new AllocationState("sys@h:1"); Strategy st = Strategy.actorTsHash()) {
      ShardlineException e = assertThrows(ShardlineException.class, () -> st.allocate(s, null, "1"));
      assertEquals(Status.NO_CANDIDATES, e.status());
    }
  }

  @Test
  void badConfigurationIsAnInvalidArgument() {
    assertEquals(Status.INVALID_ARGUMENT, assertThrows(ShardlineException.class, () -> Strategy.leastShard(1, 1.5)).status());
    assertEquals(Status.INVALID_ARGUMENT, assertThrows(ShardlineException.class, () -> Strategy.leastShard(1, Double.NaN)).status());
    assertEquals(Status.INVALID_ARGUMENT, assertThrows(ShardlineException.class, () -> Strategy.fromJson("{\"kind\":\"best\"}")).status());
    assertEquals(Status.INVALID_ARGUMENT, assertThrows(ShardlineException.class, () -> Strategy.fromJson("[")).status());
  }

  // ---- custom strategies -------------------------------------------------------------------

  @Test
  void aCustomStrategyDecidesAndSeesTheState() {
    List<String> seen = new ArrayList<>();
    CustomStrategy mine =
        new CustomStrategy() {
          @Override
          public Allocation allocate(AllocationState state, String requester, String shard) {
            assertTrue(state.isView());
            seen.add(requester + ":" + shard + ":" + state.regionIds());
            return Allocation.to(state.regionIds().get(state.regionCount() - 1));
          }

          @Override
          public List<String> rebalance(AllocationState state, Set<String> inProgress) {
            seen.add("in progress " + inProgress);
            return state.region("a").orElseThrow().shards().subList(0, 1);
          }
        };
    try (AllocationState s = threeRegions(); Strategy st = Strategy.custom("mine", mine)) {
      assertEquals("mine", st.name());
      assertEquals(Allocation.to("c"), st.allocate(s, "b", "9"));
      assertEquals(List.of("1"), st.rebalance(s, List.of("5")));
      assertEquals(List.of("b:9:[a, b, c]", "in progress [5]"), seen);
      assertTrue(st.explainAllocate(s, null, "9").explanation().contains("custom strategy chose region c"));
    }
  }

  @Test
  void anExceptionFromACallbackComesOutUnchanged() {
    IllegalStateException boom = new IllegalStateException("boom");
    try (AllocationState s = threeRegions();
        Strategy st = Strategy.custom((state, requester, shard) -> { throw boom; })) {
      assertSame(boom, assertThrows(IllegalStateException.class, () -> st.allocate(s, null, "9")));
      // and the strategy is still usable afterwards
      assertSame(boom, assertThrows(IllegalStateException.class, () -> st.allocate(s, null, "9")));
    }
  }

  @Test
  void errorsAreNotExceptionsOnlyWhenTheyAreUnchecked() {
    AssertionError error = new AssertionError("an Error passes through too");
    try (AllocationState s = threeRegions();
        Strategy st = Strategy.custom((state, requester, shard) -> { throw error; })) {
      assertSame(error, assertThrows(AssertionError.class, () -> st.allocate(s, null, "9")));
    }
  }

  @Test
  void unusableAnswersAreCallbackFailures() {
    try (AllocationState s = threeRegions();
        Strategy nowhere = Strategy.custom((state, r, shard) -> Allocation.to("nope"));
        Strategy nothing = Strategy.custom((state, r, shard) -> null);
        Strategy twice =
            Strategy.custom(
                new CustomStrategy() {
                  @Override
                  public Allocation allocate(AllocationState state, String r, String shard) {
                    return Allocation.pending();
                  }

                  @Override
                  public List<String> rebalance(AllocationState state, Set<String> inProgress) {
                    return List.of("1", "1");
                  }
                })) {
      ShardlineException e = assertThrows(ShardlineException.class, () -> nowhere.allocate(s, null, "9"));
      assertEquals(Status.INVALID_STATE, e.status());
      assertTrue(e.getMessage().contains("not registered"), e.getMessage());
      assertEquals(Status.CALLBACK_FAILED, assertThrows(ShardlineException.class, () -> nothing.allocate(s, null, "9")).status());
      assertEquals(Allocation.pending(), twice.allocate(s, null, "9"));
      assertEquals(Status.INVALID_STATE, assertThrows(ShardlineException.class, () -> twice.rebalance(s, List.of())).status());
    }
  }

  @Test
  void reentrancyIsAClearError() {
    AtomicReference<Strategy> self = new AtomicReference<>();
    AtomicReference<AllocationState> owned = new AtomicReference<>();
    List<Status> seen = new ArrayList<>();
    CustomStrategy nosy =
        (state, requester, shard) -> {
          try {
            self.get().allocate(state, null, "again");
          } catch (ShardlineException e) {
            seen.add(e.status());
          }
          try {
            owned.get().addShard("c", "sneaky");
          } catch (ShardlineException e) {
            seen.add(e.status());
          }
          try {
            state.addShard("c", "sneaky");
          } catch (ShardlineException e) {
            seen.add(e.status());
          }
          // reading the owned map while it is being decided on is fine
          assertEquals(3, owned.get().regionCount());
          return Allocation.to("c");
        };
    try (AllocationState s = threeRegions(); Strategy st = Strategy.custom(nosy)) {
      self.set(st);
      owned.set(s);
      assertEquals(Allocation.to("c"), st.allocate(s, null, "9"));
      assertEquals(List.of(Status.REENTRANT_CALL, Status.REENTRANT_CALL, Status.REENTRANT_CALL), seen);
      assertEquals(Optional.empty(), s.homeOf("sneaky"));
    }
  }

  @Test
  void closingObjectsFromInsideTheirOwnCallbackIsDeferred() {
    AtomicReference<Strategy> self = new AtomicReference<>();
    AtomicReference<AllocationState> owned = new AtomicReference<>();
    CustomStrategy closer =
        (state, requester, shard) -> {
          self.get().close();
          owned.get().close();
          // the map being decided on is still intact for the rest of this decision
          assertEquals(3, state.regionCount());
          return Allocation.to("c");
        };
    AllocationState s = threeRegions();
    Strategy st = Strategy.custom(closer);
    self.set(st);
    owned.set(s);
    assertEquals(Allocation.to("c"), st.allocate(s, null, "9"));
    assertTrue(st.isClosed() && s.isClosed());
    assertEquals(Status.INVALID_STATE, assertThrows(ShardlineException.class, () -> st.allocate(s, null, "9")).status());
  }

  @Test
  void theViewExpiresWhenTheCallbackReturns() {
    AtomicReference<AllocationState> kept = new AtomicReference<>();
    try (AllocationState s = threeRegions();
        Strategy st =
            Strategy.custom(
                (state, r, shard) -> {
                  kept.set(state);
                  return Allocation.pending();
                })) {
      st.allocate(s, null, "9");
      assertNotNull(kept.get());
      ShardlineException e = assertThrows(ShardlineException.class, () -> kept.get().regionCount());
      assertEquals(Status.INVALID_STATE, e.status());
      assertTrue(e.getMessage().contains("only valid during the callback"), e.getMessage());
    }
  }

  @Test
  void anotherThreadWaitsForTheCallInProgress() throws Exception {
    AtomicReference<Strategy> self = new AtomicReference<>();
    AtomicReference<Throwable> fromOtherThread = new AtomicReference<>();
    List<String> order = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch otherStarted = new CountDownLatch(1);
    AtomicReference<Thread> other = new AtomicReference<>();
    CustomStrategy slow =
        (state, r, shard) -> {
          order.add("begin " + shard);
          if (shard.equals("first")) {
            Thread t =
                new Thread(
                    () -> {
                      otherStarted.countDown();
                      try (AllocationState s2 = threeRegions()) {
                        self.get().allocate(s2, null, "second");
                      } catch (Throwable e) {
                        fromOtherThread.set(e);
                      }
                    });
            other.set(t);
            t.start();
            try {
              otherStarted.await();
              // Gives the other thread time to reach the strategy while this call holds it.
              Thread.sleep(50);
            } catch (InterruptedException e) {
              throw new IllegalStateException(e);
            }
          }
          order.add("end " + shard);
          return Allocation.pending();
        };
    try (AllocationState s = threeRegions(); Strategy st = Strategy.custom(slow)) {
      self.set(st);
      st.allocate(s, null, "first");
      other.get().join();
      assertNull(fromOtherThread.get());
      assertEquals(List.of("begin first", "end first", "begin second", "end second"), order);
    }
  }

  @Test
  void aThreadInsideACallbackDoesNotWaitForAHandleBusyElsewhere() throws Exception {
    CountDownLatch bInside = new CountDownLatch(1);
    CountDownLatch bGo = new CountDownLatch(1);
    AtomicReference<Throwable> seen = new AtomicReference<>();
    CustomStrategy b =
        (state, r, shard) -> {
          bInside.countDown();
          try {
            bGo.await();
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
          return Allocation.pending();
        };
    try (Strategy sb = Strategy.custom(b);
        AllocationState sa = threeRegions();
        AllocationState sbState = threeRegions()) {
      CustomStrategy a =
          (state, r, shard) -> {
            try {
              bInside.await();
              sb.allocate(sbState, null, "from-a");
            } catch (Throwable e) {
              seen.set(e);
            } finally {
              bGo.countDown();
            }
            return Allocation.pending();
          };
      Thread tb =
          new Thread(
              () -> {
                try (AllocationState x = threeRegions()) {
                  sb.allocate(x, null, "b");
                }
              });
      tb.start();
      try (Strategy sta = Strategy.custom(a)) {
        sta.allocate(sa, null, "a");
      }
      tb.join();
      assertEquals(Status.REENTRANT_CALL, ((ShardlineException) seen.get()).status());
      assertTrue(seen.get().getMessage().contains("another thread"), seen.get().getMessage());
    }
  }

  @Test
  void manyCallbacksInOneCallDoNotExhaustLocalReferences() {
    // 20 000 callbacks in one native call each create several local references; without a
    // frame per callback the JVM's local reference table would grow without bound.
    int[] calls = {0};
    CustomStrategy counting =
        new CustomStrategy() {
          @Override
          public Allocation allocate(AllocationState state, String requester, String shard) {
            return Allocation.pending();
          }

          @Override
          public List<String> rebalance(AllocationState state, Set<String> inProgress) {
            calls[0]++;
            return List.of();
          }
        };
    try (AllocationState s = new AllocationState(A)) {
      List<String> shards = new ArrayList<>();
      for (int i = 0; i < 20_000; i++) shards.add(Integer.toString(i));
      s.addRegion("a", A, false, shards);
      try (Strategy st = Strategy.custom(counting)) {
        for (int i = 0; i < 2_000; i++) st.rebalance(s, shards.subList(0, 10));
      }
      assertEquals(2_000, calls[0]);
      assertEquals(20_000, s.region("a").orElseThrow().shards().size());
    }
  }

  @Test
  void aPanicInsideTheLibraryIsAShardlineException() {
    ShardlineException e = assertThrows(ShardlineException.class, Shardline::nPanicForTest);
    assertEquals(Status.PANIC, e.status());
    assertTrue(e.getMessage().contains("deliberate panic"), e.getMessage());
    // the library keeps working
    assertEquals("0", Shardline.pekkoShardId("", 10));
  }

  @Test
  void theLibraryReportsItsVersionAndOrigin() {
    assertEquals("shardline/0.1.0", Shardline.version());
    assertNotNull(NativeLibrary.loadedFrom());
  }
}
