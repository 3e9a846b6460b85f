package org.shardline;

/** Native queries that accept a Coordinator handle or a CoordinatorDriver handle. */
final class CoordinatorQueries {
  private CoordinatorQueries() {}

  static native String nPhase(long h, boolean driver);

  static native long nToken(long h, boolean driver);

  static native long nNextDeadline(long h, boolean driver);

  static native String nHomeOf(long h, boolean driver, String shard);

  static native String[] nList(long h, boolean driver, int what, String arg);

  static native String nSnapshot(long h, boolean driver);

  static native boolean nIsAlive(long h, boolean driver, String region);
}
