package org.shardline;

import java.util.Optional;

/**
 * Coordinator state storage, as a driver uses it. Every write carries the writer's fencing
 * token: refuse ({@link WriteOutcome#fenced}) any below the highest seen, and make a load raise
 * that mark to the loader's token. Records and snapshots are JSON; store them verbatim. Throw
 * when the store cannot be reached. {@link InMemoryStore} is the embedded implementation.
 */
public interface Store {
  WriteOutcome append(long token, String record);

  WriteOutcome saveSnapshot(long token, String snapshot);

  /**
   * The stored state as JSON ({@code {"snapshot": ..., "events": [...]}}), fencing every token
   * below {@code token}; empty when a larger token has fenced this one out.
   */
  Optional<String> load(long token);
}
