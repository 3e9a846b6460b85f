package org.shardline.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ActorRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.shardline.ShardlineException;
import org.shardline.Status;

/**
 * Every benchmark input, set up as the benchmarks set it up: Pekko 1.7.0, the drop-in adapter,
 * the JNI wrappers and the in-process loop must all decide the same (Workload.verify throws
 * otherwise), and the inputs must give the decisions real work.
 */
// A guard against a hang, not a speed check: on a loaded 2-core machine the 100k-shard inputs
// alone took over 5 minutes to set up.
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class WorkloadTest {
  @AfterAll
  static void stop() throws Exception {
    Workload.shutdownSystem();
  }

  @Test
  void everyImplementationDecidesAsPekkoOnTheBenchmarkInputs() {
    for (String strategy : List.of("least-shard", "least-shard-legacy")) {
      for (int[] size : new int[][] {{10, 1000}, {100, 1000}, {1000, 100_000}, {10_000, 1000}}) {
        try (Workload alloc = Workload.create(strategy, "allocate", size[0], size[1]);
            Workload rebalance = Workload.create(strategy, "rebalance", size[0], size[1])) {
          Object region = alloc.verify();
          assertInstanceOf(ActorRef.class, region, alloc.toString());
          Object moved = rebalance.verify();
          assertInstanceOf(Set.class, moved, rebalance.toString());
          if (size[1] / size[0] >= 2) {
            // more than one shard per region: the joined node's empty region must get work
            assertFalse(((Set<?>) moved).isEmpty(), rebalance + " moved nothing");
          }
          if (size[0] == 1000 && size[1] == 100_000) {
            // the headline size: least-shard's absoluteLimit 20 caps a round at 20 shards; the
            // legacy strategy's threshold 1 lets one shard go per round
            assertEquals(strategy.equals("least-shard") ? 20 : 1, ((Set<?>) moved).size(), moved.toString());
          }
        }
      }
    }
  }

  @Test
  void theInProcessLoopReportsItsTimeAndRefusesBadCounts() {
    try (Workload w = Workload.create("least-shard", "allocate", 10, 1000)) {
      InProcess.Timed<?> t = (InProcess.Timed<?>) w.inprocess(10);
      assertTrue(t.elapsedNs() > 0);
      ShardlineException e = assertThrows(ShardlineException.class, () -> w.inprocess(0));
      assertEquals(Status.INVALID_ARGUMENT, e.status());
      assertTrue(e.getMessage().contains("iterations"), e.getMessage());
    }
    assertEquals(0, InProcess.noop());
  }
}
