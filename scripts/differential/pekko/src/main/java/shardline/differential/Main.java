package shardline.differential;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import scala.concurrent.Await;
import scala.concurrent.duration.Duration;

/**
 * {@code java -cp target/classes:target/lib/* shardline.differential.Main --seed S --count N [--out F]}
 *
 * <p>Writes a JSON array of N conformance vectors whose {@code expect} is Apache Pekko's own
 * answer. The same seed gives the same vectors.
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    long seed = System.nanoTime();
    int count = 500;
    String out = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--seed":
          seed = Long.parseLong(args[++i]);
          break;
        case "--count":
          count = Integer.parseInt(args[++i]);
          break;
        case "--out":
          out = args[++i];
          break;
        default:
          System.err.println("usage: Main [--seed S] [--count N] [--out FILE]");
          System.exit(2);
      }
    }

    CaseGenerator gen = new CaseGenerator(seed);
    List<Object> vectors = new ArrayList<>();
    List<PekkoRunner.Pending> pending = new ArrayList<>();
    Map<String, Integer> kinds = new TreeMap<>();
    String version;
    try (PekkoRunner runner = new PekkoRunner()) {
      version = runner.pekkoVersion;
      String source = "differential: pekko " + version + " seed " + seed;
      for (int i = 0; i < count; i++) {
        CaseSpec c = gen.next();
        Object r = runner.run(c, "pekko-diff-" + seed + "-" + i, source);
        if (r instanceof PekkoRunner.Pending) {
          PekkoRunner.Pending p = (PekkoRunner.Pending) r;
          pending.add(p);
          vectors.add(p.vector);
        } else {
          vectors.add(r);
        }
        kinds.merge(c.kind + " " + c.op, 1, Integer::sum);
      }
      // Pekko's allocate retries every 50 ms while no region maps to a known member: give the
      // retries ample time, then whatever is still open stays pending for good.
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(600);
      for (PekkoRunner.Pending p : pending) {
        long left = Math.max(0, deadline - System.nanoTime());
        boolean timedOut = false;
        try {
          Await.ready(p.future, Duration.fromNanos(left));
        } catch (java.util.concurrent.TimeoutException e) {
          timedOut = true;
        }
        PekkoRunner.complete(p, timedOut);
      }
    }
    String json = Json.write(vectors) + "\n";
    if (out == null) {
      PrintStream o = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, "UTF-8");
      o.print(json);
      o.flush();
    } else {
      Files.writeString(Path.of(out), json, StandardCharsets.UTF_8);
    }
    System.err.println(
        "pekko " + version + " seed " + seed + ": " + count + " vectors " + kinds + ", " + pending.size()
            + " pending");
  }
}
