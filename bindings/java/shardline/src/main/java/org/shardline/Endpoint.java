package org.shardline;

import java.util.Objects;

/**
 * Who a message is from or for: the (one, logical) coordinator of an entity type, or a region.
 * The host routes {@link #coordinator()} to whichever node runs the coordinator now.
 *
 * @param regionId null for the coordinator
 */
public record Endpoint(String regionId) {
  private static final Endpoint COORDINATOR = new Endpoint(null);

  public static Endpoint coordinator() {
    return COORDINATOR;
  }

  public static Endpoint region(String id) {
    return new Endpoint(Objects.requireNonNull(id, "region id"));
  }

  static Endpoint of(String regionIdOrNull) {
    return regionIdOrNull == null ? COORDINATOR : new Endpoint(regionIdOrNull);
  }

  public boolean isCoordinator() {
    return regionId == null;
  }

  String json() {
    return regionId == null ? "\"coordinator\"" : "{\"region\":" + Json.quote(regionId) + "}";
  }

  @Override
  public String toString() {
    return regionId == null ? "coordinator" : "region " + regionId;
  }
}
