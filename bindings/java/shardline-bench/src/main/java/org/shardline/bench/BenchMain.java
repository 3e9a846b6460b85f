package org.shardline.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the JVM benchmarks with JMH and writes the result fragment scripts/bench/merge.py reads:
 *
 * <pre>
 *   BenchMain [--quick] [--full] [--out FILE]
 * </pre>
 *
 * <ul>
 *   <li>figures {@code jvm.<strategy>.<op>.<impl>.R<r>_S<s>} (ns per decision; impl pekko,
 *       adapter, adapter-changed, jni, inprocess) and {@code overhead.jvm.*} (ns per call);
 *   <li>ratios {@code "<op> <strategy> R<r> S<s> (<impl>)"}: Pekko's time over the
 *       implementation's, measured in the same run; targets (100 for allocate, 10 for
 *       rebalance) on the headline size R=1000, S=100k.
 * </ul>
 *
 * Sizes: R in {10, 100, 1000, 10000} x S in {1k, 100k}, S=1M too with --full; --quick runs
 * R=1000, S=100k only, one short fork each.
 */
public final class BenchMain {
  private static final String[] IMPLS = {"pekko", "adapter", "adapterChanged", "jni", "inprocess"};

  private BenchMain() {}

  public static void main(String[] args) throws RunnerException, IOException {
    boolean quick = false;
    boolean full = false;
    Path out = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick":
          quick = true;
          break;
        case "--full":
          full = true;
          break;
        case "--out":
          if (i + 1 >= args.length) usage("--out needs a file name");
          out = Path.of(args[++i]);
          break;
        default:
          usage("unknown argument " + args[i]);
      }
    }
    if (quick && full) usage("--quick and --full exclude each other");

    String[] regions = quick ? new String[] {"1000"} : new String[] {"10", "100", "1000", "10000"};
    String[] shards =
        quick ? new String[] {"100000"} : full ? new String[] {"1000", "100000", "1000000"} : new String[] {"1000", "100000"};
    ChainedOptionsBuilder o =
        new OptionsBuilder()
            .include(StrategyBench.class.getName() + "\\.")
            .include(OverheadBench.class.getName() + "\\.")
            .param("regions", regions)
            .param("shards", shards)
            .forks(1)
            .shouldFailOnError(true)
            .jvmArgsAppend("-Xms1g", "-Xmx" + (full ? "6g" : "3g"));
    if (quick) {
      o.warmupIterations(3).warmupTime(TimeValue.milliseconds(200)).measurementIterations(3).measurementTime(TimeValue.milliseconds(200));
    } else {
      o.warmupIterations(3).warmupTime(TimeValue.milliseconds(500)).measurementIterations(5).measurementTime(TimeValue.milliseconds(500));
    }
    Collection<RunResult> results = new Runner(o.build()).run();

    Map<String, Double> ns = new LinkedHashMap<>();
    for (RunResult r : results) {
      String method = r.getParams().getBenchmark();
      method = method.substring(method.lastIndexOf('.') + 1);
      double score = r.getPrimaryResult().getScore();
      if (r.getParams().getBenchmark().startsWith(OverheadBench.class.getName())) {
        ns.put("overhead.jvm." + kebab(method), score);
      } else {
        ns.put(figure(r.getParams().getParam("strategy"), r.getParams().getParam("op"), kebab(method), r.getParams().getParam("regions"), r.getParams().getParam("shards")), score);
      }
    }

    List<String> figures = new ArrayList<>();
    for (Map.Entry<String, Double> e : ns.entrySet()) {
      figures.add(String.format(Locale.ROOT, "{\"name\":\"%s\",\"value\":%.1f,\"unit\":\"ns\"}", e.getKey(), e.getValue()));
    }
    List<String> ratios = new ArrayList<>();
    StringBuilder table = new StringBuilder();
    int expected = 6; // OverheadBench methods
    for (String strategy : new String[] {"least-shard", "least-shard-legacy"}) {
      for (String op : new String[] {"allocate", "rebalance"}) {
        for (String r : regions) {
          for (String s : shards) {
            expected += IMPLS.length;
            Double pekko = ns.get(figure(strategy, op, "pekko", r, s));
            if (pekko == null) continue;
            table.append(String.format(Locale.ROOT, "%-9s %-18s R%-5s S%-7s pekko %12.0f ns", op, strategy, r, s, pekko));
            for (String impl : new String[] {"adapter", "adapter-changed", "jni", "inprocess"}) {
              Double v = ns.get(figure(strategy, op, impl, r, s));
              if (v == null) continue;
              boolean headline = r.equals("1000") && s.equals("100000");
              String target = headline ? (op.equals("allocate") ? "100" : "10") : "null";
              ratios.add(
                  String.format(
                      Locale.ROOT,
                      "{\"name\":\"%s %s R%s S%s (%s)\",\"peer\":\"pekko 1.7.0 %s\",\"speedup\":%.2f,\"target\":%s}",
                      op, strategy, r, s, impl, strategy, pekko / v, target));
              table.append(String.format(Locale.ROOT, " | %s %.0f ns %.1fx", impl, v, pekko / v));
            }
            table.append('\n');
          }
        }
      }
    }
    System.out.println();
    System.out.print(table);
    for (Map.Entry<String, Double> e : ns.entrySet()) {
      if (e.getKey().startsWith("overhead.")) System.out.printf(Locale.ROOT, "%-36s %10.1f ns%n", e.getKey(), e.getValue());
    }
    if (ns.size() != expected) {
      throw new IllegalStateException("expected " + expected + " benchmark results, got " + ns.size());
    }
    if (out != null) {
      String json = "{\"figures\":[\n " + String.join(",\n ", figures) + "\n],\"ratios\":[\n " + String.join(",\n ", ratios) + "\n]}\n";
      Files.writeString(out, json, StandardCharsets.UTF_8);
      System.out.println("wrote " + out);
    }
  }

  static String figure(String strategy, String op, String impl, String regions, String shards) {
    return "jvm." + strategy + "." + op + "." + impl + ".R" + regions + "_S" + shards;
  }

  /** adapterChanged -> adapter-changed */
  static String kebab(String method) {
    return method.replaceAll("([a-z])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
  }

  private static void usage(String why) {
    System.err.println("BenchMain: " + why + "\nusage: BenchMain [--quick] [--full] [--out FILE]");
    System.exit(2);
  }
}
