package org.shardline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Random vectors decided on the JVM and by the {@code shardline decide} CLI must agree exactly,
 * explanations included. The seed is printed; set {@code -Dshardline.seed} to replay one.
 */
class RandomizedCliComparisonTest {
  private static final int COUNT = 1500;

  @Test
  void theJvmDecidesLikeTheCli() throws IOException, InterruptedException {
    Path cli = Path.of(System.getProperty("shardline.cli", "target/tools/shardline"));
    assertTrue(Files.isExecutable(cli), "the shardline CLI is built by the native step: " + cli);
    long seed = Long.getLong("shardline.seed", System.nanoTime());
    System.out.println("RandomizedCliComparisonTest seed " + seed + " (replay with -Dshardline.seed=" + seed + ")");
    RandomVectors gen = new RandomVectors(seed);
    ArrayNode vectors = Vectors.JSON.createArrayNode();
    for (int i = 0; i < COUNT; i++) vectors.add(gen.next("random-" + seed + "-" + i));
    String input = vectors.toString();

    JsonNode jvm = Vectors.parse(Shardline.decide(input, true));

    Process p = new ProcessBuilder(cli.toString(), "decide", "--explain").redirectErrorStream(false).start();
    try (OutputStream in = p.getOutputStream()) {
      in.write(input.getBytes(StandardCharsets.UTF_8));
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), "shardline decide failed: " + err);
    JsonNode native_ = Vectors.parse(out);

    assertEquals(COUNT, jvm.size());
    assertEquals(COUNT, native_.size());
    int regions = 0, shardMoves = 0;
    for (int i = 0; i < COUNT; i++) {
      assertEquals(native_.get(i), jvm.get(i), "vector " + vectors.get(i));
      if (jvm.get(i).has("region")) regions++;
      if (jvm.get(i).path("shards").size() > 0) shardMoves++;
    }
    // The generator must produce real decisions, not only empty answers.
    assertTrue(regions > COUNT / 10 && shardMoves > COUNT / 20, regions + " allocations, " + shardMoves + " non-empty rebalances");
  }
}
