package org.shardline;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

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
    run(h -> nUpsertMember(h, m.fields(), m.upNumber()));
  }

  /** Returns whether the member was known. */
  public boolean removeMember(String address) {
    return callBoolean(h -> nRemoveMember(h, address));
  }

  public void setReachable(String address, boolean reachable) {
    run(h -> nSetReachable(h, address, reachable));
  }

  public Optional<Member> member(String address) {
    String[] f = call(h -> nList(h, 3, address));
    if (f == null) return Optional.empty();
    return Optional.of(
        new Member(f[0], MemberStatus.fromPekkoName(f[1]), f[2], f[3], Integer.parseInt(f[4])));
  }

  /** Member addresses, sorted. */
  public List<String> memberAddresses() {
    return List.of(call(h -> nList(h, 4, null)));
  }

  public boolean isUnreachable(String address) {
    return callBoolean(h -> nIsUnreachable(h, address));
  }

  public String selfAddress() {
    return call(h -> nList(h, 6, null))[0];
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
    String[] s = shards.toArray(new String[0]);
    run(h -> nAddRegion(h, id, address, local, s));
  }

  /** Removes a region; returns its shards, which are now unallocated. */
  public List<String> removeRegion(String id) {
    return List.of(call(h -> nRemoveRegion(h, id)));
  }

  /** Whether a region may receive new shards (it still gives shards away either way). */
  public void setEligible(String id, boolean eligible) {
    run(h -> nSetEligible(h, id, eligible));
  }

  public void addShard(String region, String shard) {
    run(h -> nAddShard(h, region, shard));
  }

  /** Deallocates a shard; returns the region that held it. */
  public String removeShard(String shard) {
    return call(h -> nRemoveShard(h, shard));
  }

  public Optional<String> homeOf(String shard) {
    return Optional.ofNullable(call(h -> nHomeOf(h, shard)));
  }

  public int regionCount() {
    return callInt(h -> nCount(h, 0));
  }

  public int shardCount() {
    return callInt(h -> nCount(h, 1));
  }

  /** Region ids in map order. */
  public List<String> regionIds() {
    return List.of(call(h -> nList(h, 0, null)));
  }

  public Optional<RegionInfo> region(String id) {
    return call(
        h -> {
          String[] f = nList(h, 1, id);
          if (f == null) return Optional.empty();
          List<String> shards = List.of(nList(h, 2, id));
          return Optional.of(
              new RegionInfo(
                  id, f[0], f[1], Boolean.parseBoolean(f[2]), Boolean.parseBoolean(f[3]), shards));
        });
  }

  /** Every region, in map order. */
  public List<RegionInfo> regions() {
    List<RegionInfo> out = new ArrayList<>();
    for (String id : regionIds()) region(id).ifPresent(out::add);
    return out;
  }

  /**
   * Regions with a known member, best first by Pekko's {@code ShardSuitabilityOrdering}; empty
   * when Pekko's own sort would throw on its comparator's inconsistency.
   */
  public Optional<List<String>> pekkoRanking() {
    String[] r = call(h -> nList(h, 5, null));
    return r == null ? Optional.empty() : Optional.of(Arrays.asList(r));
  }

  private static native long nNew(String selfAddress);

  private static native void nFree(long h);

  private static native void nUpsertMember(long h, String[] fields, int upNumber);

  private static native boolean nRemoveMember(long h, String address);

  private static native void nSetReachable(long h, String address, boolean reachable);

  private static native void nAddRegion(
      long h, String id, String address, boolean local, String[] shards);

  private static native String[] nRemoveRegion(long h, String id);

  private static native void nSetEligible(long h, String id, boolean eligible);

  private static native void nAddShard(long h, String region, String shard);

  private static native String nRemoveShard(long h, String shard);

  private static native String nHomeOf(long h, String shard);

  private static native int nCount(long h, int what);

  private static native boolean nIsUnreachable(long h, String address);

  /** What: see the native side (state.rs); null for a region or member that is not there. */
  private static native String[] nList(long h, int what, String arg);
}
