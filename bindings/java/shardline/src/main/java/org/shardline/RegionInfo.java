package org.shardline;

import java.util.List;
import java.util.Map;

/**
 * One region of an {@link AllocationState}.
 *
 * @param address the region's own address (no host for a region local to the coordinator)
 * @param node the node it runs on: the self address for a local region
 * @param eligible whether it may receive new shards
 * @param shards oldest first
 */
public record RegionInfo(
    String id, String address, String node, boolean local, boolean eligible, List<String> shards) {
  /** A region row of the native operations ({@code id, address, node, local, eligible, shards}). */
  @SuppressWarnings("unchecked")
  static RegionInfo of(Map<String, Object> r) {
    return new RegionInfo(
        (String) r.get("id"),
        (String) r.get("address"),
        (String) r.get("node"),
        (Boolean) r.get("local"),
        (Boolean) r.get("eligible"),
        List.copyOf((List<String>) r.get("shards")));
  }
}
