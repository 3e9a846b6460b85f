// A Pekko cluster-sharding app whose shards shardline places: one node, a few entities, a
// clean exit. Run it with scripts/test-java.sh, or by hand after `mvn verify` in bindings/java:
//
//   java -cp "bindings/java/shardline/target/shardline-0.1.0.jar:bindings/java/shardline-pekko/target/shardline-pekko-0.1.0.jar:$(cat bindings/java/shardline-pekko/target/classpath.txt)" \
//     examples/java/GettingStarted.java

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.AbstractActor;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.PoisonPill;
import org.apache.pekko.actor.Props;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.sharding.ClusterSharding;
import org.apache.pekko.cluster.sharding.ClusterShardingSettings;
import org.apache.pekko.cluster.sharding.ShardRegion;
import org.apache.pekko.pattern.Patterns;
import org.shardline.Shardline;
import org.shardline.pekko.ShardlineAllocationStrategy;

public class GettingStarted {
  /** An entity that greets whoever messages it. */
  public static class Greeter extends AbstractActor {
    @Override
    public Receive createReceive() {
      return receiveBuilder()
          .match(String.class, name -> getSender().tell("hello " + name + " from " + getSelf().path().name(), getSelf()))
          .build();
    }
  }

  public static void main(String[] args) throws Exception {
    Config config =
        ConfigFactory.parseString(
                "pekko.actor.provider = cluster\n"
                    + "pekko.remote.artery.canonical.hostname = 127.0.0.1\n"
                    + "pekko.remote.artery.canonical.port = 0\n"
                    + "pekko.loglevel = WARNING\n"
                    + "pekko.cluster.jmx.enabled = off\n")
            .withFallback(ConfigFactory.load());
    ActorSystem system = ActorSystem.create("Example", config);
    Cluster cluster = Cluster.get(system);
    cluster.join(cluster.selfAddress());

    // The drop-in part: Pekko's own choice of least-shard strategy, decided by shardline.
    ShardlineAllocationStrategy strategy = ShardlineAllocationStrategy.fromConfig(system.settings().config());
    ActorRef region =
        ClusterSharding.get(system)
            .start(
                "greeter",
                Props.create(Greeter.class),
                ClusterShardingSettings.create(system),
                new ShardRegion.HashCodeMessageExtractor(10) {
                  @Override
                  public String entityId(Object message) {
                    return (String) message;
                  }
                },
                strategy,
                PoisonPill.getInstance());

    System.out.println(Shardline.version() + ", strategy " + strategy.name());
    for (String user : new String[] {"ada", "grace", "linus"}) {
      Object reply = Patterns.ask(region, user, Duration.ofSeconds(30)).toCompletableFuture().get(30, TimeUnit.SECONDS);
      System.out.println(reply + " (shard " + Shardline.pekkoShardId(user, 10) + ")");
    }

    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    System.out.println("done");
  }
}
