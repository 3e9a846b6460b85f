package org.shardline.observe;

import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.shardline.Notice;
import org.shardline.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * Logs notices (decision events included, with their explanations) through SLF4J 2, one event
 * each: {@code shardline allocated node=a {"type":"allocated","shard":"7",...}}. The notice's
 * type and the context given here are also the event's key-value pairs ({@code
 * shardline.notice}, {@code node}), for structured appenders.
 *
 * <pre>{@code
 * driver.onNotice(new NoticeLogger(Map.of("node", "a")));      // AsyncCoordinatorDriver
 * regionDriver.takeNotices().forEach(new NoticeLogger());      // any other source
 * }</pre>
 *
 * <p>Needs {@code slf4j-api} 2 on the class path; nothing else in the library loads this class.
 */
public final class NoticeLogger implements Consumer<Notice> {
  /**
   * Notices that report something refused, failed or lost: logged at WARN, the rest at INFO. The
   * core marks them in the wire schema ({@link Wire#WARNING_NOTICES}), so every language's bridge
   * logs the same ones as warnings.
   */
  public static final Set<String> WARNING_NOTICES = Wire.WARNING_NOTICES;

  private final Logger logger;
  private final Map<String, String> context;
  private final String where;

  /** Logs to the logger named {@code shardline}. */
  public NoticeLogger() {
    this(Map.of());
  }

  /** {@code context} (e.g. {@code node -> a}) goes into every message and event. */
  public NoticeLogger(Map<String, String> context) {
    this(LoggerFactory.getLogger("shardline"), context);
  }

  public NoticeLogger(Logger logger, Map<String, String> context) {
    this.logger = Objects.requireNonNull(logger, "logger");
    this.context = new TreeMap<>(Objects.requireNonNull(context, "context"));
    StringBuilder b = new StringBuilder();
    this.context.forEach((k, v) -> b.append(' ').append(k).append('=').append(v));
    this.where = b.toString();
  }

  /** WARN for {@link #WARNING_NOTICES}, INFO otherwise. */
  public static Level level(Notice notice) {
    return WARNING_NOTICES.contains(notice.type()) ? Level.WARN : Level.INFO;
  }

  @Override
  public void accept(Notice notice) {
    Level level = level(notice);
    if (!logger.isEnabledForLevel(level)) return;
    LoggingEventBuilder event = logger.atLevel(level);
    context.forEach(event::addKeyValue);
    event.addKeyValue("shardline.notice", notice.type()).log("shardline {}{} {}", notice.type(), where, notice.json());
  }
}
