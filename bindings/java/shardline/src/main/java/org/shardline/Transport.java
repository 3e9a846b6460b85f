package org.shardline;

/**
 * Carries envelopes to {@link Envelope#to()}. Called synchronously during driver calls; queue
 * the envelope rather than delivering it into the same driver (that would be a re-entrant call).
 */
@FunctionalInterface
public interface Transport {
  void send(Envelope envelope);
}
