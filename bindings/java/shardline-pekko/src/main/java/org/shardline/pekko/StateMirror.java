package org.shardline.pekko;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.ClusterEvent.CurrentClusterState;
import org.apache.pekko.cluster.Member;
import org.shardline.AllocationState;
import org.shardline.MemberStatus;
import scala.collection.immutable.BitmapIndexedMapNode;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.MapNode;
import scala.jdk.javaapi.CollectionConverters;

/**
 * shardline's copy of what Pekko's coordinator hands a strategy (the allocation map and the
 * cluster view), kept across calls and brought up to date with only what changed, so a decision
 * costs O(R) identity checks instead of O(S) JNI calls.
 *
 * <p>Pekko's coordinator passes persistent Scala maps: a region whose shards did not change keeps
 * its very {@code Vector} object, and {@code Cluster.state} is one object until the view changes.
 * So: the same map (or view) object as last time is skipped outright; a map that differs from
 * the last only in some shard lists is compared with it along the hash trie's unshared paths
 * ({@link #listsChanged}); any other map is walked in step with the last one (same ref in the
 * same place, same shard list object: two identity compares per region, no hashing). Only the
 * regions whose list changed are diffed, by the vectors' unshared arrays ({@link ShardLists}),
 * removals everywhere first, then appends. The map's iteration order is the order Pekko breaks
 * ties by, and shardline only appends regions: when a region appears anywhere but after all known
 * ones (Pekko's HashMap puts a new key at its hash's place), or known regions change order, the
 * copy is rebuilt from scratch, in O(S). Any failure while syncing throws the copy away, so the
 * next call rebuilds it.
 *
 * <p>Not thread-safe: the adapter calls it under its own lock.
 */
final class StateMirror {
  private static final class Known {
    final String id;
    /** Position in shardline's map order (registration order). */
    final long pos;
    ActorRef ref;
    IndexedSeq<String> shards;
    long seen;

    Known(String id, long pos, ActorRef ref, IndexedSeq<String> shards) {
      this.id = id;
      this.pos = pos;
      this.ref = ref;
      this.shards = shards;
    }
  }

  private static final class KnownMember {
    Member member;
    final MemberStatus status;
    final String appVersion;
    final String dataCenter;
    long seen;

    KnownMember(Member member, MemberStatus status, String appVersion, String dataCenter) {
      this.member = member;
      this.status = status;
      this.appVersion = appVersion;
      this.dataCenter = dataCenter;
    }
  }

  private AllocationState state;
  private Address selfAddress;
  private Object lastMap;
  private CurrentClusterState lastView;
  /** By object identity: no hashing of actor paths per region per call. */
  private final IdentityHashMap<ActorRef, Known> byRef = new IdentityHashMap<>();
  private final Map<String, Known> byId = new HashMap<>();
  private final Map<String, KnownMember> members = new HashMap<>();
  private Set<String> unreachable = new HashSet<>();
  private long nextPos;
  private long generation;

  /** least-load's inputs the host reported: shard -> load, node address -> capacity. */
  private final Map<String, Object> loads = new HashMap<>();
  private final Map<String, Object> capacities = new HashMap<>();

  /** Known regions in map order, as of the last sync. */
  private final List<Known> order = new ArrayList<>();

  // state of one walk over the map (foreachEntry cannot return early or carry locals)
  private long walkGen;
  private int seen;
  private long lastPos;
  private boolean aliased;
  private boolean inStep;
  private boolean outOfOrder;

  // scratch lists for one sync, kept to spare the allocations
  private final List<Known> visited = new ArrayList<>();
  private final List<Known> changed = new ArrayList<>();
  private final List<IndexedSeq<String>> changedTo = new ArrayList<>();
  private final List<Integer> appendFrom = new ArrayList<>();
  private final List<ActorRef> added = new ArrayList<>();
  private final List<IndexedSeq<String>> addedShards = new ArrayList<>();
  private final ShardLists lists = new ShardLists();
  /** Syncs that visited every region (the rest found the changes in the trie; for the tests). */
  long walks;

  /** Brings the copy up to date with Pekko's arguments and returns it. */
  AllocationState sync(
      scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current, CurrentClusterState view, Member self) {
    try {
      if (state == null || !self.address().equals(selfAddress)) reset(self.address());
      if (view != lastView) {
        syncMembers(view);
        lastView = view;
      }
      if (current != lastMap) {
        if (!syncRegions(current)) {
          // map order changed: start over (members first, as a fresh copy is built)
          reset(selfAddress);
          syncMembers(view);
          lastView = view;
          if (!syncRegions(current)) throw new IllegalStateException("a fresh copy cannot be out of order");
        }
        lastMap = current;
      }
      return state;
    } catch (RuntimeException e) {
      discard();
      throw e;
    }
  }

  /** The region id shardline knows {@code ref} by (unique per region incarnation). */
  String idOf(ActorRef ref) {
    Known k = byRef.get(ref);
    return k != null ? k.id : regionId(ref);
  }

  /** The ref of a region in the last synced map, or null. */
  ActorRef refOf(String id) {
    Known k = byId.get(id);
    return k == null ? null : k.ref;
  }

  /** Drops the copy; the next sync rebuilds it. */
  void discard() {
    if (state != null) state.close();
    state = null;
    selfAddress = null;
    lastMap = null;
    lastView = null;
    byRef.clear();
    byId.clear();
    order.clear();
    members.clear();
    unreachable = new HashSet<>();
    nextPos = 0;
  }

  private void reset(Address self) {
    discard();
    state = new AllocationState(self.toString());
    selfAddress = self;
    loads.forEach((shard, load) -> setLoad(state, shard, load));
  }

  // ---- least-load's inputs ----------------------------------------------------------------

  /**
   * A shard's load (a {@code Double}, or a {@code Map<String, Double>} per dimension; null: the
   * default 1). Checked by the core before it is kept, so a bad value never reaches a decision.
   */
  void reportLoad(String shard, Object load) {
    try (AllocationState probe = new AllocationState("pekko://probe@probe:1")) {
      setLoad(probe, shard, load);
    }
    if (load == null) loads.remove(shard);
    else loads.put(shard, load);
    if (state != null) setLoad(state, shard, load);
  }

  /** The capacity of the regions on node {@code address} (as {@link #reportLoad}'s loads). */
  void setCapacity(String address, Object capacity) {
    try (AllocationState probe = new AllocationState("pekko://probe@probe:1")) {
      probe.addRegion("probe", "pekko://probe@probe:1");
      setCapacity(probe, "probe", capacity);
    }
    if (capacity == null) capacities.remove(address);
    else capacities.put(address, capacity);
    for (Known k : byId.values()) {
      if (k.ref.path().address().toString().equals(address)) setCapacity(state, k.id, capacity);
    }
  }

  @SuppressWarnings("unchecked")
  private static void setLoad(AllocationState s, String shard, Object load) {
    if (load instanceof Map) s.setShardLoad(shard, (Map<String, Double>) load);
    else s.setShardLoad(shard, load == null ? 1.0 : ((Number) load).doubleValue());
  }

  @SuppressWarnings("unchecked")
  private static void setCapacity(AllocationState s, String region, Object capacity) {
    if (capacity instanceof Map) s.setRegionCapacity(region, (Map<String, Double>) capacity);
    else s.setRegionCapacity(region, capacity == null ? 1.0 : ((Number) capacity).doubleValue());
  }

  // ---- cluster view -----------------------------------------------------------------------

  private void syncMembers(CurrentClusterState view) {
    long gen = ++generation;
    int seen = 0;
    for (Member m : view.getMembers()) {
      MemberStatus status = status(m);
      if (status == null) continue; // Removed: as if absent
      String address = m.address().toString();
      KnownMember k = members.get(address);
      if (k == null || k.member != m) {
        String version = m.appVersion().toString();
        String dc = m.dataCenter();
        if (k == null || k.status != status || !k.appVersion.equals(version) || !k.dataCenter.equals(dc)) {
          state.upsertMember(new org.shardline.Member(address, status, version, dc, Integer.MAX_VALUE));
          k = new KnownMember(m, status, version, dc);
          members.put(address, k);
        }
        k.member = m;
      }
      if (k.seen != gen) seen++;
      k.seen = gen;
    }
    if (seen < members.size()) {
      for (java.util.Iterator<Map.Entry<String, KnownMember>> it = members.entrySet().iterator(); it.hasNext(); ) {
        Map.Entry<String, KnownMember> e = it.next();
        if (e.getValue().seen != gen) {
          state.removeMember(e.getKey());
          unreachable.remove(e.getKey()); // removing a member clears its flag too
          it.remove();
        }
      }
    }
    Set<String> now = new HashSet<>();
    for (Member m : view.getUnreachable()) now.add(m.address().toString());
    for (String a : now) if (!unreachable.contains(a)) state.setReachable(a, false);
    for (String a : unreachable) if (!now.contains(a)) state.setReachable(a, true);
    unreachable = now;
  }

  /** Null for members the strategies never see (Removed). */
  static MemberStatus status(Member m) {
    org.apache.pekko.cluster.MemberStatus s = m.status();
    if (s.equals(org.apache.pekko.cluster.MemberStatus.up())) return MemberStatus.UP;
    if (s.equals(org.apache.pekko.cluster.MemberStatus.joining())) return MemberStatus.JOINING;
    if (s.equals(org.apache.pekko.cluster.MemberStatus.weaklyUp())) return MemberStatus.WEAKLY_UP;
    if (s.equals(org.apache.pekko.cluster.MemberStatus.leaving())) return MemberStatus.LEAVING;
    if (s.equals(org.apache.pekko.cluster.MemberStatus.exiting())) return MemberStatus.EXITING;
    if (s.equals(org.apache.pekko.cluster.MemberStatus.down())) return MemberStatus.DOWN;
    if (s.equals(org.apache.pekko.cluster.MemberStatus.removed())) return null;
    // PreparingForShutdown / ReadyForShutdown: not leaving, so Up's class in Pekko's ranking.
    return MemberStatus.UP;
  }

  // ---- regions and shards -----------------------------------------------------------------

  /** Applies the map's changes; false (nothing applied) when its order no longer matches. */
  private boolean syncRegions(scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current) {
    long gen = ++generation;
    changed.clear();
    changedTo.clear();
    appendFrom.clear();
    added.clear();
    addedShards.clear();
    aliased = false;
    boolean sameRegions = listsChanged(lastMap, current);
    if (!sameRegions) {
      changed.clear();
      changedTo.clear();
      if (!walkRegions(current, gen)) return false;
      sameRegions = allInStep();
    }
    // Removals everywhere before any addition: a shard may move between regions in one step.
    for (int i = 0; i < changed.size(); i++) appendFrom.add(removeGone(changed.get(i), changedTo.get(i)));
    for (int i = 0; i < added.size(); i++) {
      ActorRef ref = added.get(i);
      Address a = ref.path().address();
      Known k = new Known(regionId(ref), nextPos++, ref, addedShards.get(i));
      state.addRegion(k.id, a.toString(), a.hasLocalScope(), CollectionConverters.asJava(k.shards));
      Object capacity = capacities.get(a.toString());
      if (capacity != null) setCapacity(state, k.id, capacity);
      k.seen = gen;
      byId.put(k.id, k);
      byRef.put(ref, k);
    }
    for (int i = 0; i < changed.size(); i++) {
      Known k = changed.get(i);
      IndexedSeq<String> to = changedTo.get(i);
      for (int j = appendFrom.get(i), n = to.length(); j < n; j++) state.addShard(k.id, to.apply(j));
      k.shards = to;
    }
    if (aliased) {
      byRef.clear();
      for (Known k : byId.values()) byRef.put(k.ref, k);
    }
    if (!sameRegions) {
      order.clear();
      order.addAll(visited);
      for (ActorRef ref : added) order.add(byRef.get(ref));
    }
    return true;
  }

  /**
   * Walks the whole map in step with {@code order}, collecting changed, added and (taking them
   * out) removed regions; false when the map's order no longer matches.
   */
  private boolean walkRegions(scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current, long gen) {
    walks++;
    walkGen = gen;
    seen = 0;
    lastPos = -1;
    inStep = true;
    outOfOrder = false;
    visited.clear();
    // foreachEntry walks Pekko's HashMap without an iterator or a Tuple2 per region
    current.foreachEntry(this::visit);
    if (outOfOrder) return false;
    if (inStep && !allInStep()) {
      // every region in step, but fewer: the map is a prefix of `order`
      for (int i = seen; i < order.size(); i++) {
        Known k = order.get(i);
        state.removeRegion(k.id);
        byId.remove(k.id);
      }
      aliased = true; // drop the removed regions' refs
      visited.addAll(order.subList(0, seen));
    } else if (!inStep && seen < byId.size()) {
      for (java.util.Iterator<Known> ki = byId.values().iterator(); ki.hasNext(); ) {
        Known k = ki.next();
        if (k.seen != gen) {
          state.removeRegion(k.id);
          ki.remove();
        }
      }
      aliased = true; // drop the removed regions' refs
    }
    return true;
  }

  private boolean allInStep() {
    return inStep && seen == order.size();
  }

  /**
   * Whether {@code current} is {@code last} with only some regions' shard lists replaced, which
   * is what every allocation and hand-off makes of Pekko's map; if so the replaced ones are in
   * {@code changed} / {@code changedTo}. Pekko's map (from R = 5 on) is a Scala 2.13 {@code
   * HashMap}, a hash trie whose updated versions share every node off the path to the change: the
   * two tries are walked together, skipping shared nodes by reference, so this costs O(changes x
   * depth) instead of a visit per region. Same bitmaps and the same key objects everywhere on the
   * way mean the same regions in the same iteration order; anything else (a region joined or
   * left, a ref in a new object, hash collisions, a map of another kind) answers false and the
   * whole map is walked.
   */
  private boolean listsChanged(Object last, scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current) {
    return last instanceof scala.collection.immutable.HashMap
        && current instanceof scala.collection.immutable.HashMap
        && valuesChanged(
            ((scala.collection.immutable.HashMap<?, ?>) last).rootNode(),
            ((scala.collection.immutable.HashMap<?, ?>) current).rootNode());
  }

  @SuppressWarnings("unchecked")
  private boolean valuesChanged(BitmapIndexedMapNode<?, ?> a, BitmapIndexedMapNode<?, ?> b) {
    if (a == b) return true;
    if (a.dataMap() != b.dataMap() || a.nodeMap() != b.nodeMap()) return false;
    for (int i = 0, n = a.payloadArity(); i < n; i++) {
      Object ref = a.getKey(i);
      if (b.getKey(i) != ref) return false;
      Object shards = b.getValue(i);
      if (a.getValue(i) != shards) {
        Known k = byRef.get(ref);
        if (k == null) return false;
        changed.add(k);
        changedTo.add((IndexedSeq<String>) shards);
      }
    }
    for (int j = 0, n = a.nodeArity(); j < n; j++) {
      MapNode<?, ?> x = a.getNode(j), y = b.getNode(j);
      if (x == y) continue;
      if (!(x instanceof BitmapIndexedMapNode && y instanceof BitmapIndexedMapNode)) return false;
      if (!valuesChanged((BitmapIndexedMapNode<?, ?>) x, (BitmapIndexedMapNode<?, ?>) y)) return false;
    }
    return true;
  }

  /**
   * One region of the map, in map order. Usually the map lists the same refs in the same order
   * as last time: {@code order} is walked in step with it, and refs are looked up (and regions
   * marked as seen) only once that fails.
   */
  private Object visit(ActorRef ref, IndexedSeq<String> shards) {
    if (outOfOrder) return null;
    Known k;
    if (inStep && seen < order.size() && order.get(seen).ref == ref) {
      // the common case touches nothing but the shard list's identity
      k = order.get(seen);
    } else {
      if (inStep) {
        // from here on regions are marked and listed one by one
        inStep = false;
        for (int i = 0; i < seen; i++) order.get(i).seen = walkGen;
        visited.addAll(order.subList(0, seen));
      }
      k = byRef.get(ref);
      if (k == null && !byId.isEmpty()) {
        // an equal ref in a new object (e.g. deserialized again): same region
        k = byId.get(regionId(ref));
        aliased |= k != null;
      }
      if (k == null) {
        added.add(ref);
        addedShards.add(shards);
        return null;
      }
      if (!added.isEmpty() || k.pos < lastPos) {
        outOfOrder = true;
        return null;
      }
      lastPos = k.pos;
      k.seen = walkGen;
      k.ref = ref;
      visited.add(k);
    }
    seen++;
    if (k.shards != shards) {
      changed.add(k);
      changedTo.add(shards);
    }
    return null;
  }

  /**
   * Takes out of {@code k}'s region what keeps it from being a prefix of {@code to}; returns the
   * index in {@code to} from which the rest must be appended. shardline keeps a region's shards
   * in list order and only appends, so with {@code from = P X Q} and {@code to = P Y Q} (P and Q
   * as long as they go): X comes out, and when Y is not empty Q comes out too and goes back in
   * after Y. Pekko appends one shard (X and Q empty) or removes one (Y empty), so only the
   * change is touched; any other change still ends in exactly {@code to}. P and Q are found by
   * the vectors' shared arrays ({@link ShardLists}), not by reading every shard.
   */
  private int removeGone(Known k, IndexedSeq<String> to) {
    IndexedSeq<String> from = k.shards;
    int n = from.length(), m = to.length();
    int p = lists.commonPrefix(from, to, Math.min(n, m));
    if (p == n) return n;
    int q = lists.commonSuffix(from, to, Math.min(n, m) - p);
    boolean inserts = p + q < m;
    for (int i = p, end = inserts ? n : n - q; i < end; i++) state.dropShard(from.apply(i));
    return inserts ? p : m;
  }

  /** Unique per region incarnation: the path with the actor's uid. */
  static String regionId(ActorRef ref) {
    return ref.path().toSerializationFormat();
  }
}
