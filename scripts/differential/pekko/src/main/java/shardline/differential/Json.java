package shardline.differential;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;

/** A minimal JSON writer for Maps (key order kept), Lists, Strings, numbers, booleans and null. */
final class Json {
  private Json() {}

  static String write(Object value) {
    StringBuilder b = new StringBuilder();
    write(b, value, 0, true);
    return b.toString();
  }

  /** {@code pretty}: one vector per line block; nested arrays of scalars stay on one line. */
  private static void write(StringBuilder b, Object v, int depth, boolean pretty) {
    if (v == null) {
      b.append("null");
    } else if (v instanceof String) {
      string(b, (String) v);
    } else if (v instanceof Boolean) {
      b.append(v.toString());
    } else if (v instanceof Integer || v instanceof Long) {
      b.append(v.toString());
    } else if (v instanceof Double) {
      b.append(number((Double) v));
    } else if (v instanceof Map) {
      Map<?, ?> m = (Map<?, ?>) v;
      b.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (!first) b.append(',');
        first = false;
        if (pretty && depth < 1) b.append('\n').append("  ".repeat(depth + 1));
        string(b, (String) e.getKey());
        b.append(':');
        write(b, e.getValue(), depth + 1, pretty);
      }
      if (pretty && depth < 1 && !m.isEmpty()) b.append('\n').append("  ".repeat(depth));
      b.append('}');
    } else if (v instanceof List) {
      List<?> l = (List<?>) v;
      b.append('[');
      boolean first = true;
      for (Object o : l) {
        if (!first) b.append(',');
        first = false;
        if (pretty && depth < 1) b.append('\n').append("  ".repeat(depth + 1));
        write(b, o, depth + 1, pretty);
      }
      if (pretty && depth < 1 && !l.isEmpty()) b.append('\n').append("  ".repeat(depth));
      b.append(']');
    } else {
      throw new IllegalArgumentException("not JSON: " + v.getClass());
    }
  }

  /** A text that parses back to exactly the same double. */
  static String number(double d) {
    if (Double.isNaN(d) || Double.isInfinite(d)) throw new IllegalArgumentException("not JSON: " + d);
    String s = Double.toString(d);
    if (Double.parseDouble(s) == d) return s;
    return new BigDecimal(d).toString();
  }

  /** Non-ASCII is written as UTF-16 \\u escapes, so surrogate pairs survive exactly. */
  static void string(StringBuilder b, String s) {
    b.append('"');
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
          if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
          else b.append(c);
      }
    }
    b.append('"');
  }
}
