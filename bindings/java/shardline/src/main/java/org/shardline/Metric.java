package org.shardline;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One value a host exports, named after OpenTelemetry's conventions ({@code
 * shardline.coordinator.shards}, {@code shardline.region.buffered}, ...). Bridge them to
 * Micrometer or another registry by name, kind and attributes.
 *
 * @param name the metric's name
 * @param kind {@link Wire.MetricKind#GAUGE} (a value now) or {@link Wire.MetricKind#COUNTER} (a
 *     total since the state machine was created)
 * @param value the value
 * @param description one line for people
 * @param attributes what the value is about, e.g. {@code shardline.region -> r1}
 */
public record Metric(
    String name, String kind, long value, String description, Map<String, String> attributes) {

  /** Metrics as the native operations answer them: {name, kind, value, description, attributes?}. */
  static List<Metric> fromMaps(List<Map<String, Object>> items) {
    List<Metric> out = new ArrayList<>(items.size());
    for (Map<String, Object> m : items) {
      Map<String, String> attributes = new TreeMap<>();
      Object a = m.get("attributes");
      if (a != null) {
        ((Map<?, ?>) a).forEach((k, v) -> attributes.put((String) k, (String) v));
      }
      out.add(
          new Metric(
              (String) m.get("name"),
              (String) m.get("kind"),
              (Long) m.get("value"),
              (String) m.get("description"),
              Collections.unmodifiableMap(attributes)));
    }
    return Collections.unmodifiableList(out);
  }

  /** The flat rows the native side writes: name, kind, value, description, n, then n pairs. */
  static List<Metric> fromRows(String[] rows) {
    List<Metric> out = new ArrayList<>();
    int i = 0;
    while (i < rows.length) {
      String name = rows[i];
      String kind = rows[i + 1];
      long value = Long.parseUnsignedLong(rows[i + 2]);
      String description = rows[i + 3];
      int n = Integer.parseInt(rows[i + 4]);
      i += 5;
      Map<String, String> attributes = new TreeMap<>();
      for (int k = 0; k < n; k++, i += 2) {
        attributes.put(rows[i], rows[i + 1]);
      }
      out.add(new Metric(name, kind, value, description, Collections.unmodifiableMap(attributes)));
    }
    return Collections.unmodifiableList(out);
  }
}
