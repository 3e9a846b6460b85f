package org.shardline.bench;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.shardline.Allocation;
import org.shardline.AllocationState;
import org.shardline.Coordinator;
import org.shardline.CoordinatorOutput;
import org.shardline.Endpoint;
import org.shardline.Envelope;
import org.shardline.Member;
import org.shardline.Strategy;

/**
 * The cost of a call through the JNI binding on the standard overhead workload, identical in
 * every language: allocate on a 10-region x 1000-shard least-shard state, and one coordinator
 * step (GetShardHome for an allocated shard, outputs drained). {@code allocateInprocess} is the
 * same allocate looped in Rust inside this JVM, the Rust figure next to it.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class OverheadBench {
  private Strategy strategy;
  private AllocationState state;
  private Coordinator coordinator;
  private Envelope ask;
  private static final String ASK = "{\"command\":{\"type\":\"getShardHome\",\"shard\":\"7\"}}";

  static String node(int i) {
    return "pekko://sys@10.0.0." + i + ":2552";
  }

  @Setup(Level.Trial)
  public void setUp() {
    strategy = Strategy.fromJson("{\"kind\":\"least-shard\"}");
    state = new AllocationState(node(0));
    for (int i = 0; i < 10; i++) {
      state.upsertMember(Member.up(node(i)));
      state.addRegion("r" + i, node(i));
    }
    for (int s = 0; s < 1000; s++) {
      String shard = Integer.toString(s);
      state.addShard(strategy.allocate(state, null, shard).regionId().orElseThrow(), shard);
    }
    if (allocate().isPending()) throw new IllegalStateException("allocate left the new shard pending");

    coordinator = new Coordinator(Strategy.fromJson("{\"kind\":\"least-shard\"}"), node(0));
    coordinator.start(0);
    coordinator.leaseGranted(0, 1, Long.MAX_VALUE);
    coordinator.stateLoaded(0, "{\"snapshot\":null,\"events\":[]}");
    coordinator.member(0, Member.up(node(1)));
    coordinator.receive(
        0,
        new Envelope(
            Endpoint.region("r1"), Endpoint.coordinator(), "{\"command\":{\"type\":\"register\",\"node\":\"" + node(1) + "\"}}"));
    ask = new Envelope(Endpoint.region("r1"), Endpoint.coordinator(), ASK);
    coordinator.receive(0, ask);
    coordinator.drainOutputs();
    List<CoordinatorOutput> step = coordinatorStep();
    if (step.size() != 1
        || !(step.get(0) instanceof CoordinatorOutput.Send)
        || !((CoordinatorOutput.Send) step.get(0)).envelope().message().contains("\"shardHome\"")) {
      throw new IllegalStateException("expected exactly one ShardHome, got " + step);
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    coordinator.close();
    state.close();
    strategy.close();
  }

  /** overhead.jvm.allocate */
  @Benchmark
  public Allocation allocate() {
    return strategy.allocate(state, null, "new");
  }

  /** The same decision without a JNI call per decision (the Rust side of the comparison). */
  @Benchmark
  @OperationsPerInvocation(InProcess.BATCH)
  public Object allocateInprocess() {
    return InProcess.allocate(strategy, state, null, "new", InProcess.BATCH);
  }

  /** overhead.jvm.coordinator-step */
  @Benchmark
  public List<CoordinatorOutput> coordinatorStep() {
    coordinator.receive(0, ask);
    return coordinator.drainOutputs();
  }

  /**
   * The same step with an envelope made from JSON each time, as one received from the wire is:
   * its message is read natively on the crossing (the step above reuses an envelope, which
   * reads it once).
   */
  @Benchmark
  public List<CoordinatorOutput> coordinatorStepFromJson() {
    coordinator.receive(0, new Envelope(ask.from(), ask.to(), ASK));
    return coordinator.drainOutputs();
  }

  /**
   * overhead.jvm.cheapest-call: the binding's cheapest call, a static native taking one handle
   * and answering an integer (handle count, boundary, lock), which issue 18 bounds allocate's
   * extra cost by.
   */
  @Benchmark
  public int cheapestCall() {
    return state.regionCount();
  }

  /** A bare native method: the JVM's own JNI transition, no binding code at all. */
  @Benchmark
  public int bareJniCall() {
    return InProcess.noop();
  }
}
