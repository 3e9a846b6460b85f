// Run by scripts/test-install.sh against jars Maven resolved from the local repository in
// dist/maven, with the native library taken from inside the jar.
//
//   java -cp CLASSPATH Smoke.java VECTORS.json ETCD_ENDPOINT
//
// Prints the lines the harness checks: DECIDE (decisions of the vectors, JSON), PHASES (a
// coordinator's phase after start and after its lease is granted), ETCD (a coordinator driver
// that took its lease and restored its state from a real etcd), and LOADED (that the Pekko
// adapter's classes resolve too).
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.shardline.Coordinator;
import org.shardline.CoordinatorDriver;
import org.shardline.Etcd;
import org.shardline.ManualClock;
import org.shardline.Shardline;
import org.shardline.Strategy;

public class Smoke {
  public static void main(String[] args) throws Exception {
    System.out.println("DECIDE " + Shardline.decide(Files.readString(Path.of(args[0]))));
    try (Coordinator c = new Coordinator(Strategy.fromJson("{\"kind\":\"least-shard\"}"), "pekko://app@10.0.0.1:2552")) {
      c.start(0);
      String started = c.phase().name();
      c.leaseGranted(0, 1, 60_000);
      System.out.println("PHASES " + started + " " + c.phase().name());
    }
    try (Etcd etcd = new Etcd(List.of(args[1]), "shardline-install-test/" + UUID.randomUUID());
        CoordinatorDriver d = new CoordinatorDriver(
            new Coordinator(Strategy.fromJson("{\"kind\":\"least-shard\"}"), "pekko://app@10.0.0.1:2552"),
            envelope -> {},
            new ManualClock(0),
            etcd.lease("coordinator", "install-test", 10_000),
            etcd.store("state", "coordinator"))) {
      d.start();
      System.out.println("ETCD " + d.token().orElse(0) + " " + (d.isActive() ? "active" : d.phase().name()));
    }
    System.out.println("LOADED " + Class.forName("org.shardline.pekko.ShardlineAllocationStrategy").getSimpleName());
  }
}
