package org.shardline;

/** Native queries that accept a Region handle or a RegionDriver handle. */
final class RegionQueries {
  private RegionQueries() {}

  static native long nNextDeadline(long h, boolean driver);

  /** The operations by name (ops.rs); {@link AbstractRegion} names each. */
  static native Object nOp(long h, boolean driver, String op, Object[] args);
}
