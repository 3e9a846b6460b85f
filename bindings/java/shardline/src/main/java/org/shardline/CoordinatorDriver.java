package org.shardline;

import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * Runs a {@link Coordinator} and carries out its outputs through your host objects: envelopes
 * go to the {@link Transport}, records to the {@link Store}, lease requests to the {@link
 * Lease}, time comes from the {@link Clock}. Callbacks run synchronously on the calling thread.
 *
 * <p>A driver keeps going after a failed callback (the state machine stays consistent with
 * what was already done) and then throws the first failure: a Java exception from a callback
 * comes out unchanged.
 */
public final class CoordinatorDriver extends AbstractCoordinator {
  /** {@code coordinator} is moved into the driver; the Coordinator object is retired. */
  public CoordinatorDriver(
      Coordinator coordinator, Transport transport, Clock clock, Lease lease, Store store) {
    super(make(coordinator, transport, clock, lease, store), CoordinatorDriver::nFree, "CoordinatorDriver", 1);
  }

  private static long make(
      Coordinator coordinator, Transport transport, Clock clock, Lease lease, Store store) {
    Objects.requireNonNull(coordinator, "coordinator");
    Objects.requireNonNull(transport, "transport");
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(lease, "lease");
    Objects.requireNonNull(store, "store");
    // The embedded backends are used natively: no round trip through Java per call.
    long h =
        coordinator.callLong(
            c ->
                lease instanceof InMemoryLease
                    ? ((InMemoryLease) lease).callLong(l -> withStore(c, transport, clock, l, null, store))
                    : withStore(c, transport, clock, 0, lease, store));
    coordinator.retire("handed to a CoordinatorDriver");
    return h;
  }

  private static long withStore(
      long c, Transport transport, Clock clock, long leaseHandle, Lease lease, Store store) {
    return store instanceof InMemoryStore
        ? ((InMemoryStore) store).callLong(s -> nNew(c, transport, clock, leaseHandle, lease, s, null))
        : nNew(c, transport, clock, leaseHandle, lease, 0, store);
  }

  public void start() {
    input(-1, null, null, false);
  }

  public void receive(Envelope e) {
    input(0, null, e.flat(), false);
  }

  public void member(Member m) {
    run(h -> nMember(h, m.fields(), m.upNumber()));
  }

  public void memberRemoved(String address) {
    input(1, address, null, false);
  }

  public void reachability(String address, boolean reachable) {
    input(2, address, null, reachable);
  }

  public void regionTerminated(String region) {
    input(3, region, null, false);
  }

  /** The lease backend reports the current grant lost. */
  public void leaseLost() {
    input(-2, null, null, false);
  }

  public void preparingForShutdown() {
    input(12, null, null, false);
  }

  public void stop() {
    input(13, null, null, false);
  }

  /** As {@link Coordinator#drain}. */
  public void drain(String region) {
    input(14, region, null, false);
  }

  public void undrain(String region) {
    input(15, region, null, false);
  }

  /** Runs every timer that is due; returns when to call again. */
  public OptionalLong poll() {
    long t = callLong(CoordinatorDriver::nPoll);
    return t < 0 ? OptionalLong.empty() : OptionalLong.of(t);
  }

  /** Notices since the last call. */
  public List<Notice> takeNotices() {
    Rows.Scratch s = Rows.scratch();
    return Rows.notices(s.rows(call(h -> nTakeNotices(h, s.address, s.capacity))));
  }

  /** Kinds -1 (start) and -2 (leaseLost), else numbered as in {@code Coordinator.nInput}. */
  private void input(int kind, String a, byte[] c, boolean flag) {
    run(h -> nInput(h, kind, a, c, flag ? 1 : 0));
  }

  private static native long nNew(
      long coordinator,
      Transport transport,
      Clock clock,
      long leaseHandle,
      Lease lease,
      long storeHandle,
      Store store);

  private static native void nFree(long h);

  private static native void nInput(long h, int kind, String a, byte[] c, long x);

  private static native void nMember(long h, String[] fields, int upNumber);

  private static native long nPoll(long h);

  private static native byte[] nTakeNotices(long h, long at, int capacity);
}
