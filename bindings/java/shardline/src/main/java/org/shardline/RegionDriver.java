package org.shardline;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * Runs a {@link Region} and carries out its outputs: envelopes go to the {@link Transport},
 * shards and messages to the {@link EntityHost}. Callbacks run synchronously on the calling
 * thread; a Java exception from one comes out of the call that triggered it, unchanged, after
 * the remaining outputs were carried out.
 */
public final class RegionDriver extends AbstractRegion {
  /** {@code region} is moved into the driver; the Region object is retired. */
  public RegionDriver(Region region, Transport transport, Clock clock, EntityHost host) {
    super(make(region, transport, clock, host), RegionDriver::nFree, "RegionDriver", true, region.extractor);
  }

  private static long make(Region region, Transport transport, Clock clock, EntityHost host) {
    Objects.requireNonNull(region, "region");
    Objects.requireNonNull(transport, "transport");
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(host, "host");
    long h = region.callLong(r -> nNew(r, transport, clock, host));
    region.retire("handed to a RegionDriver");
    return h;
  }

  public void start() {
    run(RegionDriver::nStart);
  }

  /** Routes a message from a local sender; throws INVALID_STATE when the buffer is full. */
  public void route(String entityId, byte[] payload) {
    String shard = extractor instanceof BuiltinExtractor ? null : checkedShard(entityId);
    run(h -> nRoute(h, shard, entityId, payload));
  }

  public void routeToShard(String shard, String entityId, byte[] payload) {
    Objects.requireNonNull(shard, "shard");
    run(h -> nRoute(h, shard, entityId, payload));
  }

  public void receive(Envelope e) {
    input(0, null, null, e.flat());
  }

  public void coordinatorChanged() {
    input(1, null, null, null);
  }

  public void regionTerminated(String region) {
    input(2, region, null, null);
  }

  /** The entities of {@code shard} have stopped (after stopShard returned false). */
  public void shardStopped(String shard) {
    input(3, shard, null, null);
  }

  public void entityPassivated(String shard, String entityId) {
    input(4, shard, entityId, null);
  }

  public void gracefulShutdown() {
    input(5, null, null, null);
  }

  /** As {@link Region#reportLoads}. */
  public void reportLoads(Map<String, ?> loads) {
    input(6, null, null, Region.loadsInput(loads));
  }

  /** As {@link Region#updateOffer}. */
  public void updateOffer(Object capacity, List<String> tags, Long maxShards) {
    input(6, null, null, Region.offerInput(capacity, tags, maxShards));
  }

  /** Runs every timer that is due; returns when to call again. */
  public OptionalLong poll() {
    long t = callLong(RegionDriver::nPoll);
    return t < 0 ? OptionalLong.empty() : OptionalLong.of(t);
  }

  public List<Notice> takeNotices() {
    Rows.Scratch s = Rows.scratch();
    return Rows.notices(s.rows(call(h -> nTakeNotices(h, s.address, s.capacity))));
  }

  private void input(int kind, String a, String b, byte[] c) {
    run(h -> nInput(h, kind, a, b, c));
  }

  private static native long nNew(long region, Transport transport, Clock clock, EntityHost host);

  private static native void nFree(long h);

  private static native void nStart(long h);

  private static native void nRoute(long h, String shard, String entity, byte[] payload);

  private static native void nInput(long h, int kind, String a, String b, byte[] c);

  private static native long nPoll(long h);

  private static native byte[] nTakeNotices(long h, long at, int capacity);
}
