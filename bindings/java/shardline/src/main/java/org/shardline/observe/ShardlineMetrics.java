package org.shardline.observe;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.shardline.Metric;
import org.shardline.ShardlineException;
import org.shardline.Status;
import org.shardline.Wire;

/**
 * A Micrometer {@link MeterBinder} of one source's {@code metrics()}: a coordinator, a region or
 * one of their drivers. Each metric becomes a meter of the same dotted name ({@code
 * shardline.coordinator.shards}, {@code shardline.region.buffered}; a registry's naming
 * convention turns them into its own, e.g. Prometheus's {@code
 * shardline_coordinator_shards}), its attributes tags ({@code shardline.region}) next to the
 * tags given here. Counters are {@link FunctionCounter}s, the rest {@link Gauge}s.
 *
 * <pre>{@code
 * new ShardlineMetrics(driver::metrics, Tags.of("node", "a")).bindTo(registry);
 * }</pre>
 *
 * <p>The set follows the source: a region that registers gets its {@code
 * shardline.coordinator.shards} meter at the next read, one that is gone loses it, and a source
 * that answers no more (closed) loses them all. Tag sources bound to one registry apart: two
 * meters with the same name and tags are one meter.
 *
 * <p>Needs {@code micrometer-core} on the class path; nothing else in the library loads this
 * class.
 */
public final class ShardlineMetrics implements MeterBinder {
  /**
   * How long one reading of the source serves: a scrape reads its meters well within that, so it
   * costs one {@code metrics()} call however many regions there are, and no value is older.
   */
  public static final Duration DEFAULT_MAX_AGE = Duration.ofMillis(100);

  private record Key(String name, Map<String, String> attributes) {}

  private final Supplier<List<Metric>> source;
  private final Tags tags;
  private final long maxAgeNanos;
  private final Map<MeterRegistry, Map<Key, Meter>> bound = new LinkedHashMap<>();
  private Map<Key, Metric> reading = Map.of();
  private long readAt;
  private boolean read;

  public ShardlineMetrics(Supplier<List<Metric>> source, Iterable<Tag> tags) {
    this(source, tags, DEFAULT_MAX_AGE);
  }

  /** {@code maxAge}: how old a reading of the source a meter may show (zero: read every time). */
  public ShardlineMetrics(Supplier<List<Metric>> source, Iterable<Tag> tags, Duration maxAge) {
    this.source = Objects.requireNonNull(source, "source");
    this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
    if (Objects.requireNonNull(maxAge, "maxAge").isNegative()) throw new IllegalArgumentException("maxAge must not be negative, got " + maxAge);
    this.maxAgeNanos = maxAge.toNanos();
  }

  @Override
  public synchronized void bindTo(MeterRegistry registry) {
    bound.putIfAbsent(Objects.requireNonNull(registry, "registry"), new HashMap<>());
    read = false;
    refresh();
  }

  private synchronized double value(Key key) {
    refresh();
    Metric m = reading.get(key);
    return m == null ? Double.NaN : m.value();
  }

  /** Reads the source unless the last reading is fresh enough, and registers what is new. */
  private void refresh() {
    long now = System.nanoTime();
    if (read && now - readAt < maxAgeNanos) return;
    List<Metric> metrics;
    try {
      metrics = source.get();
    } catch (ShardlineException e) {
      if (e.status() != Status.INVALID_STATE) throw e;
      metrics = List.of(); // closed: it reports nothing any more
    }
    Map<Key, Metric> next = new LinkedHashMap<>();
    for (Metric m : metrics) next.put(new Key(m.name(), m.attributes()), m);
    reading = next;
    readAt = now;
    read = true;
    bound.forEach(this::sync);
  }

  private void sync(MeterRegistry registry, Map<Key, Meter> meters) {
    for (Key gone : new ArrayList<>(meters.keySet())) {
      if (!reading.containsKey(gone)) registry.remove(meters.remove(gone));
    }
    reading.forEach((key, m) -> meters.computeIfAbsent(key, k -> register(registry, m, k)));
  }

  private Meter register(MeterRegistry registry, Metric m, Key key) {
    Tags all = tags;
    for (Map.Entry<String, String> a : m.attributes().entrySet()) all = all.and(a.getKey(), a.getValue());
    if (m.kind().equals(Wire.MetricKind.COUNTER)) {
      // A function counter holds this binder weakly; the gauges below hold it strongly, and
      // every source has gauges, so the registry keeps it as long as it keeps them.
      return FunctionCounter.builder(m.name(), this, b -> b.value(key))
          .description(m.description())
          .tags(all)
          .register(registry);
    }
    return Gauge.builder(m.name(), this, b -> b.value(key))
        .description(m.description())
        .tags(all)
        .strongReference(true)
        .register(registry);
  }
}
