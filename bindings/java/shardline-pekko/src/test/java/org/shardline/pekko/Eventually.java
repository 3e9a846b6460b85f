package org.shardline.pekko;

import java.util.concurrent.Callable;

/**
 * Waits for a condition of a live cluster (membership, DData propagation, hand-offs), polling
 * it; fails with {@code what} if it does not hold within the bound. Nothing here asserts on
 * timing: the bound only keeps a broken run from hanging.
 */
final class Eventually {
  private Eventually() {}

  static void await(int seconds, Callable<Boolean> condition, String what) throws Exception {
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    Throwable last = null;
    while (true) {
      try {
        if (Boolean.TRUE.equals(condition.call())) return;
        last = null;
      } catch (Exception | AssertionError e) {
        last = e;
      }
      if (System.nanoTime() > deadline) {
        AssertionError e = new AssertionError("not within " + seconds + " s: " + what);
        if (last != null) e.initCause(last);
        throw e;
      }
      Thread.sleep(50);
    }
  }
}
