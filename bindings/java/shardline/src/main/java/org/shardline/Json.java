package org.shardline;

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
}
