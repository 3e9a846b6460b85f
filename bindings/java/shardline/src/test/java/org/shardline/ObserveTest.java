package org.shardline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.shardline.CoordinatorStepTest.Host;
import org.shardline.observe.NoticeLogger;
import org.shardline.observe.ShardlineMetrics;
import org.slf4j.LoggerFactory;

/** The bridges: notices to SLF4J, metrics to a Micrometer registry. */
class ObserveTest {
  static ListAppender<ILoggingEvent> capture(String loggerName, Level level) {
    ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(loggerName);
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    logger.addAppender(appender);
    logger.setLevel(level);
    logger.setAdditive(false);
    return appender;
  }

  static Map<String, Object> keyValues(ILoggingEvent e) {
    return e.getKeyValuePairs().stream().collect(Collectors.toMap(kv -> kv.key, kv -> kv.value));
  }

  @Test
  void noticesBecomeLogEventsWithTheirExplanations() {
    ListAppender<ILoggingEvent> log = capture("shardline", Level.INFO);
    try (Host h = Host.allocating()) {
      NoticeLogger logger = new NoticeLogger(Map.of("node", "n0"));
      h.notices.forEach(logger);
      logger.accept(new Notice(Wire.CoordinatorNotice.HAND_OFF_TIMED_OUT, "{\"type\":\"handOffTimedOut\",\"shard\":\"3\"}"));
    }
    List<ILoggingEvent> allocated =
        log.list.stream().filter(e -> e.getFormattedMessage().startsWith("shardline allocated ")).toList();
    assertEquals(1, allocated.size(), log.list.toString());
    ILoggingEvent a = allocated.get(0);
    assertEquals(Level.INFO, a.getLevel());
    String message = a.getFormattedMessage();
    assertTrue(message.startsWith("shardline allocated node=n0 {\"type\":\"allocated\""), message);
    assertTrue(message.contains("\"explanation\":{") && message.contains("\"op\":\"allocate\""), message);
    assertEquals(Map.of("node", "n0", "shardline.notice", "allocated"), keyValues(a));
    assertTrue(log.list.stream().anyMatch(e -> e.getFormattedMessage().startsWith("shardline active node=n0 ")));
    ILoggingEvent timedOut = log.list.get(log.list.size() - 1);
    assertEquals(Level.WARN, timedOut.getLevel());
    assertEquals("shardline handOffTimedOut node=n0 {\"type\":\"handOffTimedOut\",\"shard\":\"3\"}", timedOut.getFormattedMessage());
  }

  @Test
  void belowTheLoggersLevelNothingIsLoggedAndWarningsStillAre() {
    String name = "shardline.test.quiet";
    ListAppender<ILoggingEvent> log = capture(name, Level.WARN);
    NoticeLogger logger = new NoticeLogger(LoggerFactory.getLogger(name), Map.of());
    logger.accept(new Notice(Wire.CoordinatorNotice.ACTIVE, "{\"type\":\"active\",\"token\":1}"));
    logger.accept(new Notice(Wire.RegionNotice.DIRECTIVE_REFUSED, "{\"type\":\"directiveRefused\"}"));
    assertEquals(List.of("shardline directiveRefused {\"type\":\"directiveRefused\"}"),
        log.list.stream().map(ILoggingEvent::getFormattedMessage).toList());
    assertEquals(Map.of("shardline.notice", "directiveRefused"), keyValues(log.list.get(0)));
    assertEquals(org.slf4j.event.Level.WARN, NoticeLogger.level(new Notice("allocationFailed", "{}")));
    assertEquals(org.slf4j.event.Level.INFO, NoticeLogger.level(new Notice("rebalanceRound", "{}")));
    // The core marks a refused input or command as a warning too (the wire schema's severity).
    assertEquals(org.slf4j.event.Level.WARN, NoticeLogger.level(new Notice("inputRefused", "{}")));
    assertEquals(org.slf4j.event.Level.WARN, NoticeLogger.level(new Notice("commandRefused", "{}")));
  }

  @Test
  void metricsBecomeMetersThatFollowTheSource() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (Host h = Host.allocating()) {
      Region a = h.regions.get("a");
      new ShardlineMetrics(h.coordinator::metrics, Tags.of("node", "n0"), Duration.ZERO).bindTo(registry);
      new ShardlineMetrics(a::metrics, Tags.of("node", "n1"), Duration.ZERO).bindTo(registry);

      // One meter per metric, under its own name with its attributes as tags; counters count.
      for (Metric m : h.coordinator.metrics()) {
        Tags tags = Tags.of("node", "n0");
        for (Map.Entry<String, String> t : m.attributes().entrySet()) tags = tags.and(t.getKey(), t.getValue());
        Meter meter = registry.get(m.name()).tags(tags).meter();
        assertEquals(m.description(), meter.getId().getDescription());
        if (m.kind().equals(Wire.MetricKind.COUNTER)) {
          assertEquals(m.value(), assertInstanceOf(FunctionCounter.class, meter).count(), m.name());
        } else {
          assertEquals(m.value(), assertInstanceOf(Gauge.class, meter).value(), m.name());
        }
      }
      assertEquals(1.0, registry.get("shardline.coordinator.allocations").tag("node", "n0").functionCounter().count());
      assertEquals(1.0, registry.get("shardline.coordinator.shards").tags("node", "n0", "shardline.region", "a").gauge().value());
      assertEquals(1.0, registry.get("shardline.region.registered").tags("node", "n1", "shardline.region", "a").gauge().value());
      assertNotNull(registry.get("shardline.region.rejected").tag("shardline.reason", "buffer_full").functionCounter());

      h.route("a", "user-2"); // another shard
      assertEquals(2.0, registry.get("shardline.coordinator.allocations").functionCounter().count());
      assertEquals(2.0, registry.get("shardline.coordinator.shards").tag("shardline.region", "a").gauge().value());
      assertEquals(2.0, registry.get("shardline.region.delivered").functionCounter().count());

      // A region that registers gets its meter at the next read; one that is gone loses it.
      h.region("b", CoordinatorStepTest.N2);
      h.settle();
      registry.get("shardline.coordinator.active").gauge().value();
      assertEquals(0.0, registry.get("shardline.coordinator.shards").tag("shardline.region", "b").gauge().value());
      h.coordinator.regionTerminated(h.now, "b");
      h.settle();
      registry.get("shardline.coordinator.active").gauge().value();
      assertNull(registry.find("shardline.coordinator.shards").tag("shardline.region", "b").gauge());

      // A closed source reports nothing more: its meters go.
      a.close();
      assertTrue(Double.isNaN(registry.get("shardline.region.registered").gauge().value()));
      assertNull(registry.find("shardline.region.delivered").meter());
      assertEquals(1.0, registry.get("shardline.coordinator.active").gauge().value(), "the other source's stay");
    }
  }

  @Test
  void aScrapeReadsTheSourceOnce() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    AtomicInteger reads = new AtomicInteger();
    try (Host h = Host.allocating()) {
      new ShardlineMetrics(() -> {
            reads.incrementAndGet();
            return h.coordinator.metrics();
          }, Tags.empty(), Duration.ofMinutes(1))
          .bindTo(registry);
      assertEquals(1, reads.get(), "bound with one reading");
      for (Meter m : registry.getMeters()) m.measure().forEach(x -> assertTrue(x.getValue() >= 0));
      assertTrue(registry.getMeters().size() > 10);
      assertEquals(1, reads.get(), "every meter of a scrape from that reading");
      assertThrows(IllegalArgumentException.class, () -> new ShardlineMetrics(List::of, Tags.empty(), Duration.ofMillis(-1)));
    }
  }

  /**
   * The library without SLF4J, Micrometer or a logging backend on the class path (they are
   * optional dependencies): a child JVM runs a coordinator and a region, reads their metrics and
   * notices, and finds neither library.
   */
  @Test
  void theLibraryWorksWithoutSlf4jOrMicrometer() throws Exception {
    String[] all = System.getProperty("java.class.path").split(java.io.File.pathSeparator);
    String without =
        Arrays.stream(all)
            .filter(e -> !e.contains("/org/slf4j/") && !e.contains("/ch/qos/logback/") && !e.contains("/io/micrometer/"))
            .collect(Collectors.joining(java.io.File.pathSeparator));
    assertTrue(without.length() < String.join(java.io.File.pathSeparator, all).length(), "the bridges' libraries were on the class path");
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process p =
        new ProcessBuilder(java.toString(), "-cp", without, WithoutBridges.class.getName())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), out);
    assertTrue(out.contains("absent org.slf4j.Logger"), out);
    assertTrue(out.contains("absent io.micrometer.core.instrument.MeterRegistry"), out);
    assertTrue(out.contains("allocations 1, decision events 1"), out);
  }
}
