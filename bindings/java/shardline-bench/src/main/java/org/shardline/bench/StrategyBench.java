package org.shardline.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Pekko's allocate / rebalance next to shardline's on the same input ({@link Workload}). Every
 * trial first checks that all implementations decide as Pekko does, so each timed row is
 * completion-verified. One method per implementation; the parameters pick the strategy, the
 * operation and the size. Run by scripts/bench/jvm.sh through {@link BenchMain}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class StrategyBench {
  @Param({"least-shard", "least-shard-legacy"})
  public String strategy;

  @Param({"allocate", "rebalance"})
  public String op;

  @Param({"1000"})
  public int regions;

  @Param({"100000"})
  public int shards;

  private Workload w;

  @Setup(Level.Trial)
  public void setUp() {
    w = Workload.create(strategy, op, regions, shards);
    w.verify();
  }

  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    w.close();
    Workload.shutdownSystem();
  }

  @Benchmark
  public Object pekko() {
    return w.pekko();
  }

  @Benchmark
  public Object adapter() {
    return w.adapter();
  }

  @Benchmark
  public Object adapterChanged() {
    return w.adapterChanged();
  }

  @Benchmark
  public Object jni() {
    return w.jni();
  }

  @Benchmark
  @OperationsPerInvocation(InProcess.BATCH)
  public Object inprocess() {
    return w.inprocess(InProcess.BATCH);
  }
}
