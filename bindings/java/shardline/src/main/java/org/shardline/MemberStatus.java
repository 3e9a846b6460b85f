package org.shardline;

/** A cluster member's status, as Pekko names it. */
public enum MemberStatus {
  JOINING(Wire.MemberStatus.JOINING),
  WEAKLY_UP(Wire.MemberStatus.WEAKLY_UP),
  UP(Wire.MemberStatus.UP),
  LEAVING(Wire.MemberStatus.LEAVING),
  EXITING(Wire.MemberStatus.EXITING),
  DOWN(Wire.MemberStatus.DOWN);

  private final String pekkoName;

  MemberStatus(String pekkoName) {
    this.pekkoName = pekkoName;
  }

  /** {@code "WeaklyUp"} etc.: the spelling of the conformance vectors and of Pekko. */
  public String pekkoName() {
    return pekkoName;
  }

  /** Leaving, Exiting and Down regions sort last and are drained first. */
  public boolean isLeaving() {
    return this == LEAVING || this == EXITING || this == DOWN;
  }

  public static MemberStatus fromPekkoName(String name) {
    for (MemberStatus s : values()) {
      if (s.pekkoName.equals(name)) return s;
    }
    throw new ShardlineException(
        Status.INVALID_ARGUMENT,
        "member status " + name + ": expected one of Joining, WeaklyUp, Up, Leaving, Exiting, Down");
  }
}
