package org.shardline;

/** The result of a store write: written, or fenced by a writer with a larger token. */
public final class WriteOutcome {
  private static final WriteOutcome WRITTEN = new WriteOutcome(-1);

  private final long highestToken;

  private WriteOutcome(long highestToken) {
    this.highestToken = highestToken;
  }

  public static WriteOutcome written() {
    return WRITTEN;
  }

  /** A writer with token {@code highestToken} exists; this one must stop. */
  public static WriteOutcome fenced(long highestToken) {
    if (highestToken < 0) {
      throw new ShardlineException(Status.INVALID_ARGUMENT, "highestToken is negative: " + highestToken);
    }
    return new WriteOutcome(highestToken);
  }

  public boolean isWritten() {
    return highestToken < 0;
  }

  /** The larger token the store has seen; -1 when written. */
  public long highestToken() {
    return highestToken;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof WriteOutcome && ((WriteOutcome) o).highestToken == highestToken;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(highestToken);
  }

  @Override
  public String toString() {
    return isWritten() ? "WriteOutcome.written" : "WriteOutcome.fenced(" + highestToken + ")";
  }
}
