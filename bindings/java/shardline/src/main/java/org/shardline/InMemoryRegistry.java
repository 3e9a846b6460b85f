package org.shardline;

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
    return callLong(h -> nAdvanceTo(h, nowMs));
  }

  public long nowMs() {
    return advanceTo(0);
  }

  /** Live claims by worker id. */
  public Map<Integer, Claim> liveClaims() {
    String[] f = call(InMemoryRegistry::nLiveClaims);
    Map<Integer, Claim> out = new TreeMap<>();
    for (int i = 0; i + 3 < f.length; i += 4) {
      out.put(Integer.parseInt(f[i]), new Claim(f[i + 1], Long.parseLong(f[i + 2]), Long.parseLong(f[i + 3])));
    }
    return out;
  }

  public Optional<Fence> fence(int workerId) {
    long[] f = call(h -> nFence(h, workerId));
    return f == null ? Optional.empty() : Optional.of(new Fence(f[0], f[1], f[2]));
  }

  private static native long nNew();

  private static native void nFree(long h);

  private static native long nSession(long h, long ttlMs);

  private static native long nAdvanceTo(long h, long nowMs);

  private static native String[] nLiveClaims(long h);

  private static native long[] nFence(long h, int id);
}
