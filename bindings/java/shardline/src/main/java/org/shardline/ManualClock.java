package org.shardline;

import java.util.concurrent.atomic.AtomicLong;

/** A clock tests and simulations set by hand; it never goes backwards. */
public final class ManualClock implements Clock {
  private final AtomicLong now;

  public ManualClock(long startMs) {
    this.now = new AtomicLong(startMs);
  }

  @Override
  public long nowMs() {
    return now.get();
  }

  public void set(long ms) {
    now.accumulateAndGet(ms, Math::max);
  }

  public void advance(long ms) {
    now.addAndGet(ms);
  }
}
