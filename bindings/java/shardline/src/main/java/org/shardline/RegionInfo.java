package org.shardline;

import java.util.List;

/**
 * One region of an {@link AllocationState}.
 *
 * @param address the region's own address (no host for a region local to the coordinator)
 * @param node the node it runs on: the self address for a local region
 * @param eligible whether it may receive new shards
 * @param shards oldest first
 */
public record RegionInfo(
    String id, String address, String node, boolean local, boolean eligible, List<String> shards) {}
