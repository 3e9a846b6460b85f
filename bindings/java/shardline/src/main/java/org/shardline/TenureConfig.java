package org.shardline;

/**
 * How a reserved worker id is held: session TTL, renewal period, how far ahead of the wall
 * clock the timestamp budget is kept, safety margin and assumed clock-rate error (ppm).
 */
public record TenureConfig(long ttlMs, long renewEveryMs, long lookaheadMs, long marginMs, long driftPpm) {
  /** Renew at a third of the TTL, budget two renewals ahead, 1% drift, margin ttl/10 ({@literal <=} 1 s). */
  public static TenureConfig forTtl(long ttlMs) {
    long[] d = WorkerIdHolder.nDefaults(1, ttlMs);
    return new TenureConfig(d[0], d[1], d[2], d[3], d[4]);
  }

  long[] fields() {
    return new long[] {ttlMs, renewEveryMs, lookaheadMs, marginMs, driftPpm};
  }
}
