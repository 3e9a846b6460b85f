package org.shardline;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The allocation map a coordinator keeps: regions in map order (registration order; ties
 * between equally good regions go to the earlier one, as in Pekko), each with its shards oldest
 * first, plus the cluster view (members, reachability) the strategies consult.
 *
 * <p>While a {@link Strategy} decides on this map it is held read-only: a {@link CustomStrategy}
 * callback that tries to change it gets {@link Status#REENTRANT_CALL}. The map a callback
 * receives is a read-only view that is valid only during that callback, on its thread.
 *
 * <p>Calls from several threads take turns (one waits for the call in progress), as for every
 * shardline object; never a data race.
 */
public final class AllocationState extends NativeHandle {
  static {
    NativeLibrary.load();
  }

  private final boolean view;

  /** An empty map whose coordinator runs at {@code selfAddress} (local regions live there). */
  public AllocationState(String selfAddress) {
    super(nNew(selfAddress), AllocationState::nFree, "AllocationState");
    this.view = false;
  }

  private AllocationState(long viewHandle) {
    super(viewHandle, h -> {}, "AllocationState view");
    this.view = true;
  }

  static AllocationState view(long handle) {
    return new AllocationState(handle);
  }

  /** Ends a lent view; waits for calls other threads may have in flight on it. */
  void expire() {
    retire("only valid during the callback that received it");
    awaitIdle();
  }

  /** True for the read-only map lent to a custom strategy's callback. */
  public boolean isView() {
    return view;
  }

  // ---- cluster view -------------------------------------------------------------------------

  /** Adds a member or replaces the one with the same address. */
  public void upsertMember(Member m) {
    Objects.requireNonNull(m, "member");
    op(AllocationState::nOp, "upsert_member", m.init());
  }

  /** Returns whether the member was known. */
  public boolean removeMember(String address) {
    return op(AllocationState::nOp, "remove_member", address);
  }

  /** Marks a member unreachable (false) or reachable again (true). */
  public void setReachable(String address, boolean reachable) {
    op(AllocationState::nOp, "set_reachable", address, reachable);
  }

  /** The member at {@code address}, if known. */
  public Optional<Member> member(String address) {
    Map<String, Object> m = op(AllocationState::nOp, "member", address);
    return Optional.ofNullable(m).map(Member::of);
  }

  /** Member addresses, sorted. */
  public List<String> memberAddresses() {
    List<Map<String, Object>> all = op(AllocationState::nOp, "members");
    return all.stream().map(m -> (String) m.get("address")).toList();
  }

  /** Whether the cluster view marks {@code address} unreachable. */
  public boolean isUnreachable(String address) {
    return op(AllocationState::nOp, "is_unreachable", address);
  }

  /** The coordinator's own node. */
  public String selfAddress() {
    return op(AllocationState::nOp, "self_address");
  }

  // ---- regions and shards -------------------------------------------------------------------

  /** Registers a region at the end of map order; it starts eligible, with no shards. */
  public void addRegion(String id, String address) {
    addRegion(id, address, false, List.of());
  }

  /** {@code local}: the region runs on the coordinator's own node (Pekko's local-scope ref). */
  public void addRegion(String id, String address, boolean local) {
    addRegion(id, address, local, List.of());
  }

  /** Registers a region holding {@code shards} (oldest first), all or nothing. */
  public void addRegion(String id, String address, boolean local, Collection<String> shards) {
    op(AllocationState::nOp, "add_region", id, address, local, List.copyOf(shards));
  }

  /** Removes a region; returns its shards, which are now unallocated. */
  public List<String> removeRegion(String id) {
    return List.copyOf(op(AllocationState::nOp, "remove_region", id));
  }

  /** Whether a region may receive new shards (it still gives shards away either way). */
  public void setEligible(String id, boolean eligible) {
    op(AllocationState::nOp, "set_eligible", id, eligible);
  }

  /** Allocates {@code shard} to {@code region}. */
  public void addShard(String region, String shard) {
    // Typed and without lambdas: a host mirroring a coordinator's map calls it per allocation.
    int n = ShortAscii.length(shard);
    long h = enter();
    try {
      nAddShard(h, region, ShortAscii.word(shard, 0, n), ShortAscii.word(shard, 8, n), n, shard);
    } finally {
      exit();
    }
  }

  /** Deallocates a shard; returns the region that held it. */
  public String removeShard(String shard) {
    return remove(shard, true);
  }

  /**
   * {@link #removeShard} for a caller that knows the region already: the answer would cost a
   * new String per hand-off.
   */
  public void dropShard(String shard) {
    remove(shard, false);
  }

  private String remove(String shard, boolean answer) {
    int n = ShortAscii.length(shard);
    long h = enter();
    try {
      return nRemoveShard(h, ShortAscii.word(shard, 0, n), ShortAscii.word(shard, 8, n), n, shard, answer);
    } finally {
      exit();
    }
  }

  // ---- least-load's inputs: utilisation is load / capacity, the maximum over dimensions ----

  /** A shard's load (default 1), allocated or not. */
  public void setShardLoad(String shard, double load) {
    op(AllocationState::nOp, "set_shard_load", shard, load);
  }

  /** A shard's load per dimension (e.g. {@code Map.of("cpu", 2.0)}); a missing dimension is 0. */
  public void setShardLoad(String shard, Map<String, Double> load) {
    op(AllocationState::nOp, "set_shard_load", shard, Map.copyOf(load));
  }

  /** The tags a shard's region must have and the one region it may live on (null: any). */
  public void setShardRule(String shard, Collection<String> tags, String pin) {
    Map<String, Object> rule = new java.util.HashMap<>();
    rule.put("tags", List.copyOf(tags));
    rule.put("pin", pin);
    op(AllocationState::nOp, "set_shard_rule", shard, rule);
  }

  /** A region's capacity (default 1). */
  public void setRegionCapacity(String id, double capacity) {
    op(AllocationState::nOp, "set_region_capacity", id, capacity);
  }

  /** A region's capacity per dimension; a missing dimension is unbounded. */
  public void setRegionCapacity(String id, Map<String, Double> capacity) {
    op(AllocationState::nOp, "set_region_capacity", id, Map.copyOf(capacity));
  }

  public void setRegionTags(String id, Collection<String> tags) {
    op(AllocationState::nOp, "set_region_tags", id, List.copyOf(tags));
  }

  /** At most {@code max} shards on the region; empty: no cap. */
  public void setRegionMaxShards(String id, OptionalInt max) {
    op(AllocationState::nOp, "set_region_max_shards", id, max.isPresent() ? (Object) (long) max.getAsInt() : null);
  }

  /** A draining region receives no shards and gives all of its shards away. */
  public void setRegionDraining(String id, boolean draining) {
    op(AllocationState::nOp, "set_region_draining", id, draining);
  }

  /** The region holding {@code shard}, if it is allocated. */
  public Optional<String> homeOf(String shard) {
    return Optional.ofNullable(op(AllocationState::nOp, "home_of", shard));
  }

  /** Registered regions. */
  public int regionCount() {
    // A typed native rather than an operation by name: the binding's cheapest call.
    return callInt(AllocationState::nRegionCount);
  }

  /** Allocated shards. */
  public int shardCount() {
    return this.<Long>op(AllocationState::nOp, "shard_count").intValue();
  }

  /** Region ids in map order. */
  public List<String> regionIds() {
    return regions().stream().map(RegionInfo::id).toList();
  }

  /** The region {@code id}, if registered. */
  public Optional<RegionInfo> region(String id) {
    Map<String, Object> r = op(AllocationState::nOp, "region", id);
    return Optional.ofNullable(r).map(RegionInfo::of);
  }

  /** Every region, in map order. */
  public List<RegionInfo> regions() {
    List<Map<String, Object>> all = op(AllocationState::nOp, "regions");
    return all.stream().map(RegionInfo::of).toList();
  }

  /**
   * Regions with a known member, best first by Pekko's {@code ShardSuitabilityOrdering}; empty
   * when Pekko's own sort would throw on its comparator's inconsistency.
   */
  public Optional<List<String>> pekkoRanking() {
    List<String> r = op(AllocationState::nOp, "ranking");
    return Optional.ofNullable(r).map(List::copyOf);
  }

  private static native long nNew(String selfAddress);

  private static native void nFree(long h);

  private static native int nRegionCount(long h);

  private static native void nAddShard(long h, String region, long lo, long hi, int shardLength, String shard);

  private static native String nRemoveShard(long h, long lo, long hi, int shardLength, String shard, boolean answer);

  /** The operations of the native ops::state, by name. */
  private static native Object nOp(long h, String op, Object[] args);
}
