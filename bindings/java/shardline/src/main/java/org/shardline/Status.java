package org.shardline;

/**
 * Why a call failed. The codes are those of the C ABI's {@code shardline_status}, so a code
 * means the same in every language binding.
 */
public enum Status {
  OK(0),
  /** A parameter, identifier or document is malformed or out of range. */
  INVALID_ARGUMENT(1),
  /** A required argument was null. */
  NULL_POINTER(2),
  /**
   * The call is not valid in the object's current state: unknown region, shard already
   * allocated, a closed handle, a buffer that is full.
   */
  INVALID_STATE(3),
  /** A strategy was asked to allocate while no candidate region exists. */
  NO_CANDIDATES(4),
  /** A callback answered something unusable (a Java exception comes out as itself instead). */
  CALLBACK_FAILED(5),
  /**
   * A callback called back into the object running it, tried to change the state being decided
   * on, or (on a thread inside a callback) used an object another thread is using; a thread
   * outside any call waits for the object instead.
   */
  REENTRANT_CALL(6),
  /** shardline panicked (a bug); close the objects involved. */
  PANIC(7),
  /** An internal limit or invariant failed (a bug). */
  INTERNAL(8);

  private final int code;

  Status(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }

  /** The status with this code; {@link #INTERNAL} for a code this version does not know. */
  public static Status fromCode(int code) {
    for (Status s : values()) {
      if (s.code == code) return s;
    }
    return INTERNAL;
  }
}
