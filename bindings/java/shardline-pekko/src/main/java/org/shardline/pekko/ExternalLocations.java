package org.shardline.pekko;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.AbstractActor;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Props;
import org.apache.pekko.cluster.ddata.DistributedData;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.LWWMapKey;
import org.apache.pekko.cluster.ddata.Replicator;
import org.apache.pekko.cluster.sharding.external.ExternalShardAllocationStrategy$;
import org.shardline.ShardLocations;

/**
 * The desired shard locations Pekko's {@code ExternalShardAllocation} client writes (a DData
 * {@code LWWMap} under Pekko's own key for the entity type), kept in memory by a subscriber
 * actor. Like Pekko's state actor it only ever adds entries, and it knows nothing until the first
 * change notification arrives.
 */
final class ExternalLocations implements ShardLocations {
  private static final AtomicInteger INSTANCES = new AtomicInteger();

  private final String typeName;
  private final Map<String, String> known = new ConcurrentHashMap<>();
  private ActorRef subscriber;

  ExternalLocations(String typeName) {
    this.typeName = typeName;
  }

  synchronized void start(ActorSystem system) {
    if (subscriber != null) return; // a restarted coordinator keeps the same strategy object
    LWWMapKey<String, String> key = ExternalShardAllocationStrategy$.MODULE$.ddataKey(typeName);
    String name =
        "shardline-external-" + URLEncoder.encode(typeName, StandardCharsets.UTF_8) + "-" + INSTANCES.incrementAndGet();
    subscriber = ((ExtendedActorSystem) system).systemActorOf(Props.create(Subscriber.class, () -> new Subscriber(key, known)), name);
  }

  @Override
  public Optional<String> location(String shard) {
    return Optional.ofNullable(known.get(shard));
  }

  @Override
  public Map<String, String> locations() {
    return Map.copyOf(known);
  }

  static final class Subscriber extends AbstractActor {
    private final LWWMapKey<String, String> key;
    private final Map<String, String> known;

    Subscriber(LWWMapKey<String, String> key, Map<String, String> known) {
      this.key = key;
      this.known = known;
    }

    @Override
    public void preStart() {
      DistributedData.get(getContext().getSystem()).replicator().tell(new Replicator.Subscribe<>(key, getSelf()), getSelf());
    }

    @Override
    public Receive createReceive() {
      return receiveBuilder()
          .match(
              Replicator.Changed.class,
              c -> {
                @SuppressWarnings("unchecked")
                LWWMap<String, String> data = (LWWMap<String, String>) c.dataValue();
                known.putAll(data.getEntries());
              })
          .build();
    }
  }
}
