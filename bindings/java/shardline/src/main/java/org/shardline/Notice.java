package org.shardline;

/**
 * Something worth logging or asserting on (a coordinator became active, a hand-off timed out,
 * a region refused an old directive). Acting on notices is optional.
 *
 * @param type one of {@link Wire.CoordinatorNotice} or {@link Wire.RegionNotice}, e.g. {@code
 *     "active"}, {@code "handOffCompleted"}, {@code "directiveRefused"}
 * @param json the whole notice as a JSON object
 */
public record Notice(String type, String json) {}
