package org.shardline.pekko;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.ClusterEvent.CurrentClusterState;
import org.apache.pekko.cluster.Member;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.shardline.AllocationState;
import org.shardline.RegionInfo;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Vector;
import scala.concurrent.Await;
import scala.concurrent.duration.Duration;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The mirror's copy after every sync equals the map it was given (regions in map order, each
 * one's shards in list order), through long runs of the changes Pekko's coordinator makes to
 * its map: shards appended with {@code :+} and removed with {@code filterNot}, several regions at
 * once, plus lists rebuilt without shared arrays, and regions that come and go. Changes to the
 * shard lists alone must be found without visiting every region.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class StateMirrorTest {
  private static ActorSystem system;

  @BeforeAll
  static void start() {
    system = ActorSystem.create("mirror", PekkoFixtures.config(0));
  }

  @AfterAll
  static void stop() throws Exception {
    system.terminate();
    Await.ready(system.whenTerminated(), Duration.create(30, TimeUnit.SECONDS));
  }

  private static void assertMirrors(AllocationState state, scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> map, String what) {
    List<String> ids = new ArrayList<>();
    List<List<String>> shards = new ArrayList<>();
    map.foreachEntry(
        (ref, v) -> {
          ids.add(StateMirror.regionId(ref));
          shards.add(Vectors.list(v));
          return null;
        });
    List<RegionInfo> regions = state.regions();
    assertEquals(ids, regions.stream().map(RegionInfo::id).toList(), "regions, " + what);
    for (int i = 0; i < ids.size(); i++) assertEquals(shards.get(i), regions.get(i).shards(), "shards of " + ids.get(i) + ", " + what);
  }

  @Test
  void pekkoStyleChangesKeepAnExactCopy() {
    long seed = Long.getLong("shardline.seed", System.nanoTime());
    System.out.println("StateMirrorTest seed " + seed + " (replay with -Dshardline.seed=" + seed + ")");
    Random rnd = new Random(seed);
    List<Member> members = new ArrayList<>();
    List<Address> nodes = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      Address a = new Address("pekko", "ClusterSystem", "10.1.0." + i, 2552);
      nodes.add(a);
      members.add(PekkoFixtures.member(a, "Up", "1.0.0", "default"));
    }
    CurrentClusterState view = PekkoFixtures.state(members, List.of());
    Member self = members.get(0);
    int[] next = {0};
    List<ActorRef> refs = new ArrayList<>();
    scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> map = scala.collection.immutable.Map$.MODULE$.empty();
    for (int i = 0; i < 12; i++) {
      ActorRef r = PekkoFixtures.region(system, nodes.get(i), "r" + i);
      refs.add(r);
      List<String> shards = new ArrayList<>();
      for (int k = rnd.nextInt(3000); k > 0; k--) shards.add("s" + next[0]++);
      map = AdapterSequenceTest.updated(map, r, Vectors.fresh(shards));
    }
    StateMirror mirror = new StateMirror();
    assertMirrors(mirror.sync(map, view, self), map, "start");
    int listOnly = 0;
    for (int step = 0; step < 400; step++) {
      boolean regionsChange = false;
      String what = "";
      for (int c = 1 + rnd.nextInt(4); c > 0; c--) {
        ActorRef r = refs.get(rnd.nextInt(refs.size()));
        @SuppressWarnings("unchecked")
        Vector<String> v = (Vector<String>) map.apply(r);
        int op = rnd.nextInt(10);
        if (op < 4) {
          v = Vectors.appended(v, "s" + next[0]++);
          what += " append";
        } else if (op < 7 && v.length() > 0) {
          String gone = v.apply(rnd.nextInt(v.length()));
          v = Vectors.filterNot(v, s -> s.equals(gone));
          what += " remove";
        } else if (op == 7) {
          List<String> l = Vectors.list(v);
          if (rnd.nextBoolean()) Collections.shuffle(l, rnd);
          v = Vectors.fresh(l);
          what += " rebuilt";
        } else if (op == 8 && refs.size() < nodes.size()) {
          ActorRef added = PekkoFixtures.region(system, nodes.get(refs.size()), "r" + next[0]++);
          refs.add(added);
          map = AdapterSequenceTest.updated(map, added, Vectors.fresh(List.of("s" + next[0]++)));
          regionsChange = true;
          what += " region added";
          continue;
        } else if (op == 9 && refs.size() > 5) {
          refs.remove(r);
          map = AdapterSequenceTest.removed(map, r);
          regionsChange = true;
          what += " region removed";
          continue;
        }
        map = AdapterSequenceTest.updated(map, r, v);
      }
      long walks = mirror.walks;
      AllocationState state = mirror.sync(map, view, self);
      assertMirrors(state, map, "step " + step + ":" + what + " (seed " + seed + ")");
      if (!regionsChange) {
        assertEquals(walks, mirror.walks, "step " + step + ":" + what + " visited every region");
        listOnly++;
      }
    }
    assertTrue(listOnly > 100, listOnly + " steps changed shard lists only");
    mirror.discard();
  }
}
