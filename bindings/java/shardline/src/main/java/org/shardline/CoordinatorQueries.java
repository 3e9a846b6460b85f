package org.shardline;

/** Native queries that accept the handle of any kind of {@link AbstractCoordinator}. */
final class CoordinatorQueries {
  private CoordinatorQueries() {}

  static native long nNextDeadline(long h, int kind);

  /** The operations by name (ops.rs); {@link AbstractCoordinator} names each. */
  static native Object nOp(long h, int kind, String op, Object[] args);
}
