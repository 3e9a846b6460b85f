package org.shardline;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * Coordinator state storage for an {@link AsyncCoordinatorDriver}: {@link Store}'s contract,
 * each answer a stage. The driver sends nothing a write must precede until the write's stage
 * has completed. A stage that completes exceptionally counts as a store that could not be
 * reached.
 */
public interface AsyncStore {
  CompletionStage<WriteOutcome> append(long token, String record);

  CompletionStage<WriteOutcome> saveSnapshot(long token, String snapshot);

  /** The stored state as JSON, fencing every token below {@code token}; empty when fenced. */
  CompletionStage<Optional<String>> load(long token);

  /** A blocking {@link Store} whose calls run on {@code executor}. */
  static AsyncStore of(Store store, Executor executor) {
    return new AsyncStore() {
      @Override
      public CompletionStage<WriteOutcome> append(long token, String record) {
        return CompletableFuture.supplyAsync(() -> store.append(token, record), executor);
      }

      @Override
      public CompletionStage<WriteOutcome> saveSnapshot(long token, String snapshot) {
        return CompletableFuture.supplyAsync(() -> store.saveSnapshot(token, snapshot), executor);
      }

      @Override
      public CompletionStage<Optional<String>> load(long token) {
        return CompletableFuture.supplyAsync(() -> store.load(token), executor);
      }
    };
  }
}
