package org.shardline;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A protocol message between regions and the coordinator. Hosts carry envelopes to {@link
 * #to()} without looking inside: {@link #toJson()} / {@link #fromJson} (or the UTF-8 bytes) is
 * the wire form. Delivery may be lossy and reordered; the protocol copes.
 *
 * <p>The message is JSON, opaque to the host. Between the state machines an envelope crosses in
 * its native form (the message's kind and fields, packed as bind/src/rows.rs describes), so an
 * envelope keeps whichever form it was made in and makes the other only when asked, once: one a
 * state machine sent is handed to another without any JSON, and its endpoints and {@link
 * #message()} text are read only if asked for; one made from JSON is read natively on its first
 * crossing.
 */
public final class Envelope {
  // Null in an envelope the native side made: its endpoints are read from the native form when
  // first asked (a step's outputs are often passed on unread) and kept in fromFlat and toFlat.
  private final Endpoint from;
  private final Endpoint to;
  private Endpoint fromFlat;
  private Endpoint toFlat;
  // Made once, when first needed; volatile publishes the array's contents with it, and a String
  // publishes safely through a data race.
  private volatile byte[] flat;
  private String message;

  /**
   * @param message the message as JSON, e.g. {@code {"command":{"type":"getShardHome","shard":"7"}}}
   */
  public Envelope(Endpoint from, Endpoint to, String message) {
    this.from = Objects.requireNonNull(from, "from");
    this.to = Objects.requireNonNull(to, "to");
    this.message = Objects.requireNonNull(message, "message");
  }

  /** The native side's envelope: {@code flat} is its native form, owned by this envelope. */
  Envelope(byte[] flat) {
    this.from = null;
    this.to = null;
    this.flat = flat;
  }

  /**
   * Region id {@code i} of the native form: kind (1 byte), then the sender's and the
   * addressee's region ids (empty: the coordinator).
   */
  private Endpoint endpoint(int i) {
    byte[] f = flat;
    ByteBuffer in = ByteBuffer.wrap(f);
    int at = 1;
    if (i == 1) at += 4 + in.getInt(at);
    int n = in.getInt(at);
    return n == 0 ? Endpoint.coordinator() : new Endpoint(new String(f, at + 4, n, StandardCharsets.UTF_8));
  }

  public Endpoint from() {
    if (from != null) return from;
    Endpoint e = fromFlat;
    if (e == null) fromFlat = e = endpoint(0);
    return e;
  }

  public Endpoint to() {
    if (to != null) return to;
    Endpoint e = toFlat;
    if (e == null) toFlat = e = endpoint(1);
    return e;
  }

  /** The message as JSON text. */
  public String message() {
    String m = message;
    if (m == null) message = m = Shardline.nMessageJson(flat);
    return m;
  }

  /**
   * The native form, as it crosses to the native side; never modified. Reading the message
   * fails here (ShardlineException INVALID_ARGUMENT) if it is not a protocol message.
   */
  byte[] flat() {
    byte[] f = flat;
    if (f == null) flat = f = Shardline.nFlatten(from().regionId(), to().regionId(), message);
    return f;
  }

  public String toJson() {
    return "{\"from\":" + from().json() + ",\"to\":" + to().json() + ",\"message\":" + message() + "}";
  }

  public byte[] toBytes() {
    return toJson().getBytes(StandardCharsets.UTF_8);
  }

  /** Parses and validates an envelope written by {@link #toJson()} in any language binding. */
  public static Envelope fromJson(String json) {
    return new Envelope(Shardline.nParseEnvelope(json));
  }

  public static Envelope fromBytes(byte[] bytes) {
    return fromJson(new String(bytes, StandardCharsets.UTF_8));
  }

  /** Same endpoints and the same message text. */
  @Override
  public boolean equals(Object o) {
    return o instanceof Envelope e
        && from().equals(e.from())
        && to().equals(e.to())
        && message().equals(e.message());
  }

  @Override
  public int hashCode() {
    return Objects.hash(from(), to(), message());
  }

  @Override
  public String toString() {
    return "Envelope[from=" + from() + ", to=" + to() + ", message=" + message() + "]";
  }
}
