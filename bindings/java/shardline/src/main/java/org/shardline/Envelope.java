package org.shardline;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * A protocol message between regions and the coordinator. Hosts carry envelopes to {@link
 * #to()} without looking inside: {@link #toJson()} / {@link #fromJson} (or the UTF-8 bytes) is
 * the wire form. Delivery may be lossy and reordered; the protocol copes.
 *
 * <p>The message is JSON, opaque to the host. It crosses to the native side as UTF-8, so an
 * envelope keeps it that way and decodes the {@link #message()} text only when asked: a host
 * that only routes envelopes between state machines never pays for a {@code String}.
 */
public final class Envelope {
  private final Endpoint from;
  private final Endpoint to;
  private final byte[] utf8;
  // A String publishes safely through a data race, so the cache needs no lock.
  private String message;

  /**
   * @param message the message as JSON, e.g. {@code {"command":{"type":"getShardHome","shard":"7"}}}
   */
  public Envelope(Endpoint from, Endpoint to, String message) {
    this(from, to, Objects.requireNonNull(message, "message").getBytes(StandardCharsets.UTF_8));
    this.message = message;
  }

  /** The native side's envelope: {@code utf8} is the message, owned by this envelope. */
  Envelope(Endpoint from, Endpoint to, byte[] utf8) {
    this.from = Objects.requireNonNull(from, "from");
    this.to = Objects.requireNonNull(to, "to");
    this.utf8 = utf8;
  }

  public Endpoint from() {
    return from;
  }

  public Endpoint to() {
    return to;
  }

  /** The message as JSON text. */
  public String message() {
    String m = message;
    if (m == null) message = m = new String(utf8, StandardCharsets.UTF_8);
    return m;
  }

  /** The message as UTF-8, as it crosses to the native side; never modified. */
  byte[] utf8() {
    return utf8;
  }

  public String toJson() {
    return "{\"from\":" + from.json() + ",\"to\":" + to.json() + ",\"message\":" + message() + "}";
  }

  public byte[] toBytes() {
    return toJson().getBytes(StandardCharsets.UTF_8);
  }

  /** Parses and validates an envelope written by {@link #toJson()} in any language binding. */
  public static Envelope fromJson(String json) {
    String[] f = Shardline.nParseEnvelope(json);
    return new Envelope(Endpoint.of(f[0]), Endpoint.of(f[1]), f[2]);
  }

  public static Envelope fromBytes(byte[] bytes) {
    return fromJson(new String(bytes, StandardCharsets.UTF_8));
  }

  /** Same endpoints and the same message text. */
  @Override
  public boolean equals(Object o) {
    return o instanceof Envelope e
        && from.equals(e.from)
        && to.equals(e.to)
        && Arrays.equals(utf8, e.utf8);
  }

  @Override
  public int hashCode() {
    return Objects.hash(from, to, Arrays.hashCode(utf8));
  }

  @Override
  public String toString() {
    return "Envelope[from=" + from + ", to=" + to + ", message=" + message() + "]";
  }
}
