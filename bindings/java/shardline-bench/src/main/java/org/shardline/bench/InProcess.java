package org.shardline.bench;

import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.shardline.AllocationState;
import org.shardline.BenchAccess;
import org.shardline.Strategy;

/**
 * The Rust core deciding inside this JVM without crossing JNI per decision (native side:
 * bindings/java/shardline-bench/native/inprocess.rs, built with the library's {@code bench}
 * feature). One call runs {@code iterations} decisions in a Rust loop, with the strategy and
 * the state looked up and locked once, and returns the elapsed nanoseconds (measured in the
 * binding) and the last decision. Per decision this is what the core costs a
 * host that keeps its allocation state in Rust; the JNI rows add one native call with its
 * argument and result conversions per decision on top.
 */
public final class InProcess {
  static {
    BenchAccess.loadNative();
  }

  /** Decisions per native call in the benchmarks (JMH's operations per invocation). */
  public static final int BATCH = 100;

  private InProcess() {}

  /** {@code elapsedNs} for all iterations; {@code decision} is the last one. */
  public record Timed<T>(long elapsedNs, T decision) {}

  /** {@code iterations} x {@code strategy.allocate(state, requester, shard)}. */
  public static Timed<Optional<String>> allocate(
      Strategy strategy, AllocationState state, String requester, String shard, int iterations) {
    Objects.requireNonNull(strategy, "strategy");
    Objects.requireNonNull(state, "state");
    Object[] out = new Object[1];
    long ns = BenchAccess.withHandles(strategy, state, (h, s) -> nAllocate(h, s, requester, shard, iterations, out));
    return new Timed<>(ns, Optional.ofNullable((String) out[0]));
  }

  /** {@code iterations} x {@code strategy.rebalance(state, inProgress)}. */
  public static Timed<List<String>> rebalance(
      Strategy strategy, AllocationState state, Collection<String> inProgress, int iterations) {
    Objects.requireNonNull(strategy, "strategy");
    Objects.requireNonNull(state, "state");
    String[] ip = inProgress.toArray(new String[0]);
    Object[] out = new Object[1];
    long ns = BenchAccess.withHandles(strategy, state, (h, s) -> nRebalance(h, s, ip, iterations, out));
    return new Timed<>(ns, List.of((String[]) out[0]));
  }

  /** A native call that does nothing: the JVM's own cost of a JNI transition. */
  public static int noop() {
    return nNoop();
  }

  private static native long nAllocate(
      long strategy, long state, String requester, String shard, int iterations, Object[] out);

  private static native long nRebalance(
      long strategy, long state, String[] inProgress, int iterations, Object[] out);

  private static native int nNoop();
}
