package org.shardline;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The embedded worker-id registry: process-local, linearizable, with server time you advance
 * yourself ({@link #advanceTo}), so session expiry is deterministic. Open one {@link
 * InMemorySession} per contender.
 */
public final class InMemoryRegistry extends NativeHandle {
  static {
    NativeLibrary.load();
  }

  /** A live reservation of a worker id. */
  public record Claim(String owner, long incarnation, long epoch) {}

  /** The persistent time fence of a worker id: the next holder stamps only above {@code floorMs}. */
  public record Fence(long epoch, long floorMs, long hwmMs) {}

  public InMemoryRegistry() {
    super(nNew(), InMemoryRegistry::nFree, "InMemoryRegistry");
  }

  /** A new session, live for {@code ttlMs} of server time unless kept alive. */
  public InMemorySession session(long ttlMs) {
    return new InMemorySession(callLong(h -> nSession(h, ttlMs)));
  }

  /** Moves server time forward (never back); sessions past their expiry end now. */
  public long advanceTo(long nowMs) {
    return op(InMemoryRegistry::nOp, "advance_to", nowMs);
  }

  public long nowMs() {
    return op(InMemoryRegistry::nOp, "now_ms");
  }

  /** Live claims by worker id. */
  public Map<Integer, Claim> liveClaims() {
    List<Map<String, Object>> claims = op(InMemoryRegistry::nOp, "live_claims");
    Map<Integer, Claim> out = new TreeMap<>();
    for (Map<String, Object> c : claims) {
      out.put(
          ((Long) c.get("workerId")).intValue(),
          new Claim((String) c.get("owner"), (Long) c.get("incarnation"), (Long) c.get("epoch")));
    }
    return out;
  }

  public Optional<Fence> fence(int workerId) {
    Map<String, Long> f = op(InMemoryRegistry::nOp, "fence", workerId);
    return f == null ? Optional.empty() : Optional.of(new Fence(f.get("epoch"), f.get("floorMs"), f.get("hwmMs")));
  }

  private static native long nNew();

  private static native void nFree(long h);

  private static native long nSession(long h, long ttlMs);

  private static native Object nOp(long h, String op, Object[] args);
}
