package org.shardline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class AllocationStateTest {
  static final String A = "pekko://sys@10.0.0.1:2552";
  static final String B = "pekko://sys@10.0.0.2:2552";
  static final String C = "pekko://sys@10.0.0.3:2552";

  @Test
  void regionsKeepMapOrderAndShardsKeepAllocationOrder() {
    try (AllocationState s = new AllocationState(A)) {
      s.addRegion("b", B);
      s.addRegion("a", A, false, List.of("3", "1"));
      s.addShard("b", "2");
      s.addShard("a", "0");
      assertEquals(List.of("b", "a"), s.regionIds());
      assertEquals(List.of("3", "1", "0"), s.region("a").orElseThrow().shards());
      assertEquals(Optional.of("b"), s.homeOf("2"));
      assertEquals(2, s.regionCount());
      assertEquals(4, s.shardCount());
      assertEquals("b", s.removeShard("2"));
      assertEquals(List.of("3", "1", "0"), s.removeRegion("a"));
      assertEquals(Optional.empty(), s.homeOf("1"));
      assertEquals(0, s.shardCount());
    }
  }

  @Test
  void shardIdsOfEveryShapeCrossIntact() {
    // short ASCII ids cross packed, the rest as Strings: both must name the same shard
    List<String> ids = List.of("", "x", "12345678", "123456789", "0123456789abcdef", "0123456789abcdefg", "é", "𝄞 shard");
    try (AllocationState s = new AllocationState(A)) {
      s.addRegion("a", A);
      for (String id : ids) s.addShard("a", id);
      assertEquals(ids, s.region("a").orElseThrow().shards());
      for (String id : ids) assertEquals(Optional.of("a"), s.homeOf(id), id);
      s.dropShard("123456789");
      assertEquals("a", s.removeShard("𝄞 shard"));
      assertEquals(Optional.empty(), s.homeOf("123456789"));
      assertEquals(ids.size() - 2, s.shardCount());
      assertEquals(Status.INVALID_STATE, assertThrows(ShardlineException.class, () -> s.dropShard("123456789")).status());
      assertEquals(Status.NULL_POINTER, assertThrows(ShardlineException.class, () -> s.dropShard(null)).status());
    }
  }

  @Test
  void aLocalRegionRunsOnTheSelfNode() {
    try (AllocationState s = new AllocationState(A)) {
      s.addRegion("mine", "pekko://sys", true);
      RegionInfo r = s.region("mine").orElseThrow();
      assertTrue(r.local());
      assertEquals("pekko://sys", r.address());
      assertEquals(A, r.node());
      assertTrue(r.eligible());
      s.setEligible("mine", false);
      assertFalse(s.region("mine").orElseThrow().eligible());
    }
  }

  @Test
  void membersAndReachability() {
    try (AllocationState s = new AllocationState(A)) {
      s.upsertMember(Member.up(B).withStatus(MemberStatus.LEAVING).withAppVersion("1.2").withDataCenter("east"));
      Member m = s.member(B).orElseThrow();
      assertEquals(MemberStatus.LEAVING, m.status());
      assertEquals("1.2", m.appVersion());
      assertEquals("east", m.dataCenter());
      s.setReachable(B, false);
      assertTrue(s.isUnreachable(B));
      assertEquals(List.of(B), s.memberAddresses());
      assertTrue(s.removeMember(B));
      assertFalse(s.removeMember(B));
      assertEquals(A, s.selfAddress());
    }
  }

  @Test
  void pekkoRankingPutsLeavingLastAndFewerShardsFirst() {
    try (AllocationState s = new AllocationState(A)) {
      s.upsertMember(Member.up(A));
      s.upsertMember(Member.up(B).withStatus(MemberStatus.LEAVING));
      s.upsertMember(Member.up(C));
      s.addRegion("a", A, false, List.of("1", "2"));
      s.addRegion("b", B);
      s.addRegion("c", C, false, List.of("3"));
      assertEquals(Optional.of(List.of("c", "a", "b")), s.pekkoRanking());
    }
  }

  @Test
  void mistakesAreReportedWithTheirStatus() {
    try (AllocationState s = new AllocationState(A)) {
      s.addRegion("a", A);
      assertEquals(Status.INVALID_STATE, assertThrows(ShardlineException.class, () -> s.addRegion("a", A)).status());
      assertEquals(Status.INVALID_ARGUMENT, assertThrows(ShardlineException.class, () -> s.addRegion("x", "not an address")).status());
      assertEquals(Status.INVALID_STATE, assertThrows(ShardlineException.class, () -> s.addShard("nope", "1")).status());
      assertEquals(Status.NULL_POINTER, assertThrows(ShardlineException.class, () -> s.addShard("a", null)).status());
      s.addShard("a", "1");
      ShardlineException twice = assertThrows(ShardlineException.class, () -> s.addShard("a", "1"));
      assertEquals(Status.INVALID_STATE, twice.status());
      assertTrue(twice.getMessage().contains("already allocated"), twice.getMessage());
      // all or nothing: a duplicate shard in a new region's list leaves no region behind
      assertThrows(ShardlineException.class, () -> s.addRegion("b", B, false, List.of("2", "1")));
      assertEquals(List.of("a"), s.regionIds());
      assertEquals(Optional.empty(), s.homeOf("2"));
      assertEquals(Status.INVALID_ARGUMENT, assertThrows(ShardlineException.class, () -> new AllocationState("x")).status());
    }
  }

  @Test
  void closeIsIdempotentAndLaterUseIsAnError() {
    AllocationState s = new AllocationState(A);
    s.close();
    s.close();
    assertTrue(s.isClosed());
    ShardlineException e = assertThrows(ShardlineException.class, s::regionCount);
    assertEquals(Status.INVALID_STATE, e.status());
    assertTrue(e.getMessage().contains("closed"), e.getMessage());
  }

  @Test
  void nonBmpIdsSurviveTheRoundTrip() {
    try (AllocationState s = new AllocationState(A)) {
      String shard = "\ud83d\ude00-\u65e5\u672c";
      s.addRegion("r\u00e9gion", A, false, List.of(shard));
      assertEquals(Optional.of("r\u00e9gion"), s.homeOf(shard));
      assertEquals(List.of(shard), s.region("r\u00e9gion").orElseThrow().shards());
    }
  }
}
