package org.shardline;

import java.util.Objects;
import java.util.Optional;

/** Where a shard goes: a region, or "not now" (the caller retries, as Pekko does). */
public final class Allocation {
  private static final Allocation PENDING = new Allocation(null);

  private final String region;

  private Allocation(String region) {
    this.region = region;
  }

  public static Allocation to(String regionId) {
    return new Allocation(Objects.requireNonNull(regionId, "regionId"));
  }

  /** No decision now: no region maps to a known member (or, for External, no requester). */
  public static Allocation pending() {
    return PENDING;
  }

  public Optional<String> regionId() {
    return Optional.ofNullable(region);
  }

  /** Whether this is an allocation to exactly this String object (not an equal one). */
  boolean isTo(String regionId) {
    return region == regionId;
  }

  public boolean isPending() {
    return region == null;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Allocation && Objects.equals(region, ((Allocation) o).region);
  }

  @Override
  public int hashCode() {
    return Objects.hashCode(region);
  }

  @Override
  public String toString() {
    return region == null ? "Allocation.pending" : "Allocation.to(" + region + ")";
  }
}
