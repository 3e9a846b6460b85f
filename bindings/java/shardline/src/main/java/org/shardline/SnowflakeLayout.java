package org.shardline;

/**
 * Bit widths and epoch of Snowflake ids: {@code timestamp | worker | sequence} in at most 63
 * bits, so ids are positive {@code long}s.
 *
 * @param epochMs Unix ms of timestamp 0
 */
public record SnowflakeLayout(int timestampBits, int workerBits, int sequenceBits, long epochMs) {
  /** 41 timestamp bits, 10 worker bits, 12 sequence bits, epoch 2024-01-01T00:00:00Z. */
  public static final SnowflakeLayout DEFAULT;

  static {
    NativeLibrary.load();
    long[] d = WorkerIdHolder.nDefaults(2, 0);
    DEFAULT = new SnowflakeLayout((int) d[0], (int) d[1], (int) d[2], d[3]);
  }

  /** An id taken apart. */
  public record Parts(long unixMs, long worker, long sequence) {}

  public SnowflakeLayout {
    Snowflake.nValidate(timestampBits, workerBits, sequenceBits, epochMs);
  }

  public Parts decompose(long id) {
    long[] p = Snowflake.nDecompose(timestampBits, workerBits, sequenceBits, epochMs, id);
    return new Parts(p[0], p[1], p[2]);
  }

  long[] fields() {
    return new long[] {timestampBits, workerBits, sequenceBits, epochMs};
  }
}
