package org.shardline;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A protocol message between regions and the coordinator. Hosts carry envelopes to {@link
 * #to()} without looking inside: {@link #toJson()} / {@link #fromJson} (or the UTF-8 bytes) is
 * the wire form. Delivery may be lossy and reordered; the protocol copes.
 *
 * @param message the message as JSON, opaque to the host
 */
public record Envelope(Endpoint from, Endpoint to, String message) {
  public Envelope {
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    Objects.requireNonNull(message, "message");
  }

  public String toJson() {
    return "{\"from\":" + from.json() + ",\"to\":" + to.json() + ",\"message\":" + message + "}";
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
}
