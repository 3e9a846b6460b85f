package org.shardline;

/**
 * A decision with its explanation: a JSON object listing the ranked candidates, the limit and
 * optimal count applied, and why a rebalance was skipped, e.g. {@code {"strategy":
 * "least-shard", "op": "rebalance", "summary": "...", "skipped": {"reason":
 * "mixedVersions", ...}}}.
 */
public record Explained<T>(T decision, String explanation) {}
