package org.shardline;

import java.util.Objects;

/** Every error shardline reports, with its {@link Status}. */
public class ShardlineException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Status status;

  public ShardlineException(Status status, String message) {
    super(status.name() + ": " + message);
    this.status = Objects.requireNonNull(status, "status");
  }

  /** Made by the native library. */
  ShardlineException(int code, String message) {
    this(Status.fromCode(code), message);
  }

  public Status status() {
    return status;
  }

  public int code() {
    return status.code();
  }
}
