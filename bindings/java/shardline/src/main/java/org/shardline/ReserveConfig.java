package org.shardline;

/**
 * How a worker id is reserved.
 *
 * @param workerBits ids are {@code 0 .. 2^workerBits}
 * @param spreadWindow 0: try the lowest free id first; n: the lowest n free ids in random
 *     order (simultaneous starters collide less)
 * @param maxFailures consecutive registry failures tolerated before giving up
 */
public record ReserveConfig(int workerBits, int spreadWindow, long backoffBaseMs, long backoffMaxMs, int maxFailures) {
  /** shardline's defaults: 10 bits, lowest first, backoff 20 ms .. 2 s, 8 failures. */
  public static ReserveConfig defaults() {
    long[] d = WorkerIdHolder.nDefaults(0, 0);
    return new ReserveConfig((int) d[0], (int) d[1], d[2], d[3], (int) d[4]);
  }

  public ReserveConfig withWorkerBits(int bits) {
    return new ReserveConfig(bits, spreadWindow, backoffBaseMs, backoffMaxMs, maxFailures);
  }

  public ReserveConfig withSpreadWindow(int window) {
    return new ReserveConfig(workerBits, window, backoffBaseMs, backoffMaxMs, maxFailures);
  }

  long[] fields() {
    return new long[] {workerBits, spreadWindow, backoffBaseMs, backoffMaxMs, maxFailures};
  }
}
