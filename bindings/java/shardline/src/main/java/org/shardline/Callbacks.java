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

  /** A List's items, or a Map's entries flattened (key, value, ...), for the native side. */
  static Object[] items(Object o) {
    if (o instanceof List<?> l) return l.toArray();
    Map<?, ?> m = (Map<?, ?>) o;
    Object[] out = new Object[m.size() * 2];
    int i = 0;
    for (Map.Entry<?, ?> e : m.entrySet()) {
      out[i++] = e.getKey();
      out[i++] = e.getValue();
    }
    return out;
  }

  /**
   * A driver's call of host object {@code target}'s {@code method} (the core's name, camelCase),
   * with its arguments as the native side hands them (Long, String, byte[], a List of Strings),
   * answering in the plain forms every language answers with (host.rs reads them): null for
   * nothing, a number, a boolean, text, a list.
   */
  static Object host(Object target, String method, List<?> a) {
    switch (method) {
      case "send":
        ((Transport) target).send(new Envelope((byte[]) a.get(0)));
        return null;
      case "location": // null: unavailable; [] no location; [address]
        Optional<String> l = ((ShardLocations) target).location((String) a.get(0));
        return l == null ? null : l.map(List::of).orElse(List.of());
      case "locations":
        Map<String, String> all = ((ShardLocations) target).locations();
        // containsKey(null) throws for Map.of and friends, so every entry is looked at.
        if (all != null && all.entrySet().stream().anyMatch(e -> e.getKey() == null || e.getValue() == null)) {
          throw nonsense("ShardLocations.locations returned a null shard or address");
        }
        return all;
      case "nowMs":
        return ((Clock) target).nowMs();
      case "wallMs":
        return ((IdClock) target).wallMs();
      case "monotonicMs":
        return ((IdClock) target).monotonicMs();
      case "sleepUntil":
        ((IdClock) target).sleepUntil((Long) a.get(0));
        return null;
      case "acquire":
        Optional<LeaseGrant> g = ((Lease) target).acquire((Long) a.get(0));
        if (g == null) throw nonsense("Lease.acquire returned null; return Optional.empty() when denied");
        return g.map(x -> List.of(x.token(), x.validUntilMs())).orElse(null);
      case "renew":
        OptionalLong r = ((Lease) target).renew((Long) a.get(0), (Long) a.get(1));
        if (r == null) throw nonsense("Lease.renew returned null; return OptionalLong.empty() when the grant is gone");
        if (r.isPresent() && r.getAsLong() < 0) throw nonsense("Lease.renew returned a negative deadline");
        return r.isPresent() ? r.getAsLong() : null;
      case "release":
        ((Lease) target).release((Long) a.get(0));
        return null;
      case "append":
        return outcome(((Store) target).append((Long) a.get(0), (String) a.get(1)), "Store.append");
      case "saveSnapshot":
        return outcome(((Store) target).saveSnapshot((Long) a.get(0), (String) a.get(1)), "Store.saveSnapshot");
      case "load":
        Optional<String> state = ((Store) target).load((Long) a.get(0));
        if (state == null) throw nonsense("Store.load returned null; return Optional.empty() when fenced");
        return state.orElse(null);
      case "startShard":
        ((EntityHost) target).startShard((String) a.get(0), strings(a.get(1)));
        return null;
      case "startEntities":
        ((EntityHost) target).startEntities((String) a.get(0), strings(a.get(1)));
        return null;
      case "deliver":
        ((EntityHost) target).deliver((String) a.get(0), (String) a.get(1), (byte[]) a.get(2));
        return null;
      case "stopShard":
        return ((EntityHost) target).stopShard((String) a.get(0));
      case "undeliverable":
        ((EntityHost) target).undeliverable((String) a.get(0), (String) a.get(1), (byte[]) a.get(2), (String) a.get(3));
        return null;
      case "stopped":
        ((EntityHost) target).stopped();
        return null;
      default:
        throw new IllegalStateException("no host method " + method);
    }
  }

  @SuppressWarnings("unchecked")
  private static List<String> strings(Object list) {
    return List.copyOf((List<String>) list);
  }

  /** Written: null; fenced: the write outcome's own form. */
  static Object outcome(WriteOutcome o, String what) {
    if (o == null) throw nonsense(what + " returned null");
    return o.isWritten() ? null : Map.of("outcome", "fenced", "highest", o.highestToken());
  }
}
