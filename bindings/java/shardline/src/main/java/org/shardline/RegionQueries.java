package org.shardline;

/** Native queries that accept a Region handle or a RegionDriver handle. */
final class RegionQueries {
  private RegionQueries() {}

  static native String nString(long h, boolean driver, int what, String arg);

  static native String[] nList(long h, boolean driver, int what);

  static native long nLong(long h, boolean driver, int what, String arg);
}
