package org.shardline;

/** Native queries that accept a Coordinator handle or a CoordinatorDriver handle. */
final class CoordinatorQueries {
  private CoordinatorQueries() {}

  static native long nNextDeadline(long h, boolean driver);

  /** The operations by name (ops.rs); {@link AbstractCoordinator} names each. */
  static native Object nOp(long h, boolean driver, String op, Object[] args);
}
