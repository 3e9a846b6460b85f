package org.shardline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Runs {@link JniWorkload} in a child JVM with {@code -Xcheck:jni}: HotSpot then reports every
 * JNI misuse, including local references piling up past a frame's capacity (what loops of
 * callbacks without their own local frames do) and JNI calls made with an exception pending.
 * Any such report fails the test.
 */
class JniHygieneTest {
  @Test
  void theJvmFindsNothingToReportUnderXcheckJni() throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process p =
        new ProcessBuilder(
                java.toString(),
                "-Xcheck:jni",
                "-Dshardline.vectors.dir=" + Vectors.dir(),
                "-cp",
                System.getProperty("java.class.path"),
                JniWorkload.class.getName())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    int code = p.waitFor();
    assertEquals(0, code, out);
    assertTrue(out.contains("workload done"), out);
    List<String> complaints =
        out.lines().filter(l -> l.contains("JNI") || l.contains("FATAL")).toList();
    assertFalse(!complaints.isEmpty(), "-Xcheck:jni reported:\n" + String.join("\n", complaints.subList(0, Math.min(20, complaints.size()))));
  }
}
