package org.shardline;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/** Carries an {@link AsyncCoordinatorDriver}'s envelopes; the stage completes once sent. */
public interface AsyncTransport {
  CompletionStage<Void> send(Envelope envelope);

  /** A blocking {@link Transport} whose sends run on {@code executor}. */
  static AsyncTransport of(Transport transport, Executor executor) {
    return e -> CompletableFuture.runAsync(() -> transport.send(e), executor);
  }
}
