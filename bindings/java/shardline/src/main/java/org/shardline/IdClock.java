package org.shardline;

/** The clocks a {@link WorkerIdHolder} reads and waits on. */
public interface IdClock {
  /** Milliseconds since the Unix epoch (UTC); may jump. */
  long wallMs();

  /** A clock that never goes back, for deadlines. */
  long monotonicMs();

  /** Returns once {@link #monotonicMs()} reads at least {@code monotonicMs}. */
  void sleepUntil(long monotonicMs);

  /** {@link System#currentTimeMillis()}, {@link System#nanoTime()} and {@link Thread#sleep}. */
  static IdClock system() {
    return new IdClock() {
      @Override
      public long wallMs() {
        return System.currentTimeMillis();
      }

      @Override
      public long monotonicMs() {
        return System.nanoTime() / 1_000_000L;
      }

      @Override
      public void sleepUntil(long until) {
        for (long left = until - monotonicMs(); left > 0; left = until - monotonicMs()) {
          try {
            Thread.sleep(left);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
      }
    };
  }
}
