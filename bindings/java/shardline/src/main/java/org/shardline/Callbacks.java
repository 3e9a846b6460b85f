package org.shardline;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Bridges the native library calls to reach user objects. Each adapts plain JNI-friendly
 * values to the public interfaces and checks what the user returned; exceptions from user code
 * pass through untouched (the native side re-throws them from the triggering call).
 */
final class Callbacks {
  private Callbacks() {}

  private static ShardlineException nonsense(String what) {
    return new ShardlineException(Status.CALLBACK_FAILED, what);
  }

  static String allocate(CustomStrategy s, long view, String requester, String shard) {
    AllocationState state = AllocationState.view(view);
    try {
      Allocation a = s.allocate(state, requester, shard);
      if (a == null) {
        throw nonsense("CustomStrategy.allocate returned null; return Allocation.pending() to decide later");
      }
      return a.regionId().orElse(null);
    } finally {
      state.expire();
    }
  }

  static String[] rebalance(CustomStrategy s, long view, String[] inProgress) {
    AllocationState state = AllocationState.view(view);
    try {
      List<String> picked =
          s.rebalance(state, java.util.Collections.unmodifiableSet(new LinkedHashSet<>(Arrays.asList(inProgress))));
      if (picked == null) throw nonsense("CustomStrategy.rebalance returned null; return an empty list");
      String[] out = picked.toArray(new String[0]);
      for (String x : out) if (x == null) throw nonsense("CustomStrategy.rebalance returned a null shard id");
      return out;
    } finally {
      state.expire();
    }
  }

  /** {@code null}: unavailable; {@code {}}: no location; {@code {address}}. */
  static String[] location(ShardLocations source, String shard) {
    Optional<String> l = source.location(shard);
    if (l == null) return null;
    return l.map(a -> new String[] {a}).orElseGet(() -> new String[0]);
  }

  /** {@code null}: unavailable; else {shard, address, shard, address, ...}. */
  static String[] locations(ShardLocations source) {
    Map<String, String> all = source.locations();
    if (all == null) return null;
    String[] flat = new String[all.size() * 2];
    int i = 0;
    for (Map.Entry<String, String> e : all.entrySet()) {
      if (e.getKey() == null || e.getValue() == null) {
        throw nonsense("ShardLocations.locations returned a null shard or address");
      }
      flat[i++] = e.getKey();
      flat[i++] = e.getValue();
    }
    return flat;
  }

  static void send(Transport t, byte[] envelope) {
    t.send(new Envelope(envelope));
  }

  /** {@code null}: denied; else {token, validUntilMs}. */
  static long[] leaseAcquire(Lease lease, long nowMs) {
    Optional<LeaseGrant> g = lease.acquire(nowMs);
    if (g == null) throw nonsense("Lease.acquire returned null; return Optional.empty() when denied");
    return g.map(x -> new long[] {x.token(), x.validUntilMs()}).orElse(null);
  }

  /** -1: the grant is gone; else the new local deadline. */
  static long leaseRenew(Lease lease, long token, long nowMs) {
    OptionalLong r = lease.renew(token, nowMs);
    if (r == null) throw nonsense("Lease.renew returned null; return OptionalLong.empty() when the grant is gone");
    if (r.isPresent() && r.getAsLong() < 0) throw nonsense("Lease.renew returned a negative deadline");
    return r.orElse(-1);
  }

  private static long outcome(WriteOutcome o, String what) {
    if (o == null) throw nonsense(what + " returned null");
    return o.isWritten() ? -1 : o.highestToken();
  }

  static long storeAppend(Store s, long token, String record) {
    return outcome(s.append(token, record), "Store.append");
  }

  static long storeSaveSnapshot(Store s, long token, String snapshot) {
    return outcome(s.saveSnapshot(token, snapshot), "Store.saveSnapshot");
  }

  /** {@code null}: fenced. */
  static String storeLoad(Store s, long token) {
    Optional<String> state = s.load(token);
    if (state == null) throw nonsense("Store.load returned null; return Optional.empty() when fenced");
    return state.orElse(null);
  }

  static void startShard(EntityHost host, String shard, String[] entities) {
    host.startShard(shard, List.of(entities));
  }

  static void startEntities(EntityHost host, String shard, String[] entities) {
    host.startEntities(shard, List.of(entities));
  }

  static void deliver(EntityHost host, String shard, String entity, byte[] payload) {
    host.deliver(shard, entity, payload);
  }
}
