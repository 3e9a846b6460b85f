package org.shardline;

/**
 * What a {@link Coordinator} asks its host to do. Carry them out in order: a {@link Persist} or
 * {@link SaveSnapshot} must be durable before any later output is carried out, and if it fails
 * drop the rest of the batch and report {@link Coordinator#storeFailed}.
 */
public sealed interface CoordinatorOutput {
  /** Deliver to {@code envelope.to()}. */
  record Send(Envelope envelope) implements CoordinatorOutput {}

  /** Append {@code record} (JSON) to the store, fenced by {@code token}. */
  record Persist(long token, String record) implements CoordinatorOutput {}

  /** Replace the stored snapshot, fenced by {@code token}. */
  record SaveSnapshot(long token, String snapshot) implements CoordinatorOutput {}

  /** Try to take the lease; answer with leaseGranted or leaseDenied. */
  record AcquireLease() implements CoordinatorOutput {}

  /** Extend the grant; answer with leaseRenewed, leaseRenewFailed or leaseLost. */
  record RenewLease(long token) implements CoordinatorOutput {}

  record ReleaseLease(long token) implements CoordinatorOutput {}

  /** Load the stored state, fencing older writers; answer with stateLoaded or stateLoadFailed. */
  record LoadState(long token) implements CoordinatorOutput {}

  record Notify(Notice notice) implements CoordinatorOutput {}

  /** Tags match the native side (bind/src/rows.rs). */
  static CoordinatorOutput of(Rows r) {
    long token = r.token;
    switch (r.tag) {
      case 0:
        return new Send(new Envelope(r.c));
      case 1:
        return new Persist(token, r.cText());
      case 2:
        return new SaveSnapshot(token, r.cText());
      case 3:
        return new AcquireLease();
      case 4:
        return new RenewLease(token);
      case 5:
        return new ReleaseLease(token);
      case 6:
        return new LoadState(token);
      case 7:
        return new Notify(r.notice());
      default:
        throw new ShardlineException(Status.INTERNAL, "unknown coordinator output tag " + r.tag);
    }
  }
}
