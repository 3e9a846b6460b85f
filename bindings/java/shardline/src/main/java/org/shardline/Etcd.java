package org.shardline;

import java.util.List;
import java.util.Objects;

/**
 * A connection to an etcd cluster under one key namespace: it hands out the coordinator
 * {@link EtcdLease} and {@link EtcdStore}, and a {@link WorkerIdHolder} can reserve its worker id
 * in it ({@link WorkerIdHolder#acquire(Etcd, ReserveConfig, TenureConfig, SnowflakeLayout,
 * String, long, long, IdClock)}). Every call blocks the calling thread until etcd answers or the
 * timeout passes.
 *
 * <p>Leases and stores keep the connection open after {@link #close()}; close them too.
 */
public final class Etcd extends NativeHandle {
  static {
    NativeLibrary.load();
  }

  /** Per-request timeout unless given. */
  public static final long DEFAULT_TIMEOUT_MS = 5_000;

  /** The coordinator lease's time to live unless given. */
  public static final long DEFAULT_LEASE_TTL_MS = 30_000;

  /** Connects to {@code endpoints} (e.g. {@code http://127.0.0.1:2379}); keys go under {@code namespace/}. */
  public Etcd(List<String> endpoints, String namespace) {
    this(endpoints, namespace, DEFAULT_TIMEOUT_MS);
  }

  /**
   * Connects lazily: an etcd that cannot be reached shows in the first request, as {@link
   * Status#INVALID_STATE}.
   *
   * @param timeoutMs per request
   * @throws ShardlineException {@link Status#INVALID_STATE} when this build of the library has no
   *     etcd support
   */
  public Etcd(List<String> endpoints, String namespace, long timeoutMs) {
    super(
        nConnect(Objects.requireNonNull(endpoints, "endpoints").toArray(new String[0]), namespace, timeoutMs),
        Etcd::nFree,
        "Etcd");
  }

  public String namespace() {
    return op(Etcd::nOp, "namespace");
  }

  /** The coordinator lease {@code name}, contended for as {@code owner}. Give it to one driver. */
  public EtcdLease lease(String name, String owner) {
    return lease(name, owner, DEFAULT_LEASE_TTL_MS);
  }

  public EtcdLease lease(String name, String owner, long ttlMs) {
    return new EtcdLease(callLong(h -> nLease(h, name, owner, ttlMs)));
  }

  /** Coordinator state {@code name}, guarded by fencing tokens. Give it to one driver. */
  public EtcdStore store(String name) {
    return store(name, null);
  }

  /**
   * Coordinator state {@code name}; with {@code boundToLease} (a lease name, or null), writes
   * also require that lease to still carry the writer's token, so a coordinator whose lease
   * lapsed is refused even before a successor has loaded.
   */
  public EtcdStore store(String name, String boundToLease) {
    return new EtcdStore(callLong(h -> nStore(h, name, boundToLease)));
  }

  private static native long nConnect(String[] endpoints, String namespace, long timeoutMs);

  private static native long nLease(long h, String name, String owner, long ttlMs);

  private static native long nStore(long h, String name, String boundToLease);

  static native long nHolder(
      long h, long[] config, long[] tenure, long[] layout, String owner, long incarnation, long seed, IdClock clock);

  private static native Object nOp(long h, String op, Object[] args);

  private static native void nFree(long h);
}
