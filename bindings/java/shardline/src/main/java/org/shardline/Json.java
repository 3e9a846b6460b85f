package org.shardline;

import java.util.Base64;
import java.util.List;
import java.util.Map;

/** The little JSON this package writes itself (configuration objects, envelopes). */
final class Json {
  private Json() {}

  static String quote(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"':
          b.append("\\\"");
          break;
        case '\\':
          b.append("\\\\");
          break;
        case '\n':
          b.append("\\n");
          break;
        case '\r':
          b.append("\\r");
          break;
        case '\t':
          b.append("\\t");
          break;
        default:
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
      }
    }
    return b.append('"').toString();
  }

  static String number(double d, String what) {
    if (Double.isNaN(d) || Double.isInfinite(d)) {
      throw new ShardlineException(Status.INVALID_ARGUMENT, what + " must be a finite number, got " + d);
    }
    return Double.toString(d);
  }

  static String object(Map<String, String> stringValues) {
    StringBuilder b = new StringBuilder("{");
    for (Map.Entry<String, String> e : stringValues.entrySet()) {
      if (b.length() > 1) b.append(',');
      b.append(quote(e.getKey())).append(':').append(quote(e.getValue()));
    }
    return b.append('}').toString();
  }

  /** An answer of {@link NativeHandle#op} as JSON text (bytes as base64, the payload form). */
  static String write(Object value) {
    StringBuilder b = new StringBuilder();
    write(b, value);
    return b.toString();
  }

  private static void write(StringBuilder b, Object v) {
    if (v == null) {
      b.append("null");
    } else if (v instanceof String s) {
      b.append(quote(s));
    } else if (v instanceof byte[] bytes) {
      b.append(quote(Base64.getEncoder().encodeToString(bytes)));
    } else if (v instanceof Map<?, ?> m) {
      b.append('{');
      String sep = "";
      for (Map.Entry<?, ?> e : m.entrySet()) {
        b.append(sep).append(quote((String) e.getKey())).append(':');
        write(b, e.getValue());
        sep = ",";
      }
      b.append('}');
    } else if (v instanceof List<?> l) {
      b.append('[');
      String sep = "";
      for (Object item : l) {
        b.append(sep);
        write(b, item);
        sep = ",";
      }
      b.append(']');
    } else {
      b.append(v); // Boolean, Long, Double
    }
  }
}
