package org.shardline;

/** The host's monotonic clock, in milliseconds. */
@FunctionalInterface
public interface Clock {
  long nowMs();

  /** {@link System#nanoTime()} in milliseconds: monotonic, unrelated to wall time. */
  static Clock system() {
    return () -> System.nanoTime() / 1_000_000L;
  }
}
