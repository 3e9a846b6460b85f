package org.shardline.pekko;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Vector;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@link ShardLists} against the obvious element-by-element answer, on vectors derived from one
 * another the ways Pekko and other code derive them (so their arrays are shared, partly shared,
 * or not at all), at sizes that give trees of every depth up to 4.
 */
class ShardListsTest {
  private final ShardLists lists = new ShardLists();

  private static List<String> items(int n, int from) {
    List<String> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) out.add("s" + (from + i));
    return out;
  }

  private static int prefix(List<String> x, List<String> y, int limit) {
    int i = 0;
    while (i < limit && x.get(i).equals(y.get(i))) i++;
    return i;
  }

  private static int suffix(List<String> x, List<String> y, int limit) {
    int i = 0;
    while (i < limit && x.get(x.size() - 1 - i).equals(y.get(y.size() - 1 - i))) i++;
    return i;
  }

  /** A vector of {@code n} shards built by appending, prepending or in one go. */
  private static Vector<String> base(Random rnd, int n) {
    switch (rnd.nextInt(3)) {
      case 0:
        return Vectors.fresh(items(n, 0));
      case 1: {
        Vector<String> v = Vectors.fresh(List.of());
        for (String s : items(n, 0)) v = Vectors.appended(v, s);
        return v;
      }
      default: {
        Vector<String> v = Vectors.fresh(List.of());
        List<String> all = items(n, 0);
        for (int i = n - 1; i >= 0; i--) v = Vectors.prepended(v, all.get(i));
        return v;
      }
    }
  }

  /** {@code v} changed one way; returns the change's name in {@code name[0]}. */
  private static Vector<String> derive(Random rnd, Vector<String> v, String[] name) {
    int n = v.length();
    int at = n == 0 ? 0 : rnd.nextInt(n);
    switch (rnd.nextInt(10)) {
      case 0:
        name[0] = "append";
        Vector<String> a = v;
        for (int k = 1 + rnd.nextInt(40); k > 0; k--) a = Vectors.appended(a, "new" + k);
        return a;
      case 1:
        name[0] = "prepend";
        return Vectors.prepended(v, "new");
      case 2: {
        name[0] = "filterNot";
        if (n == 0) return v;
        String gone = v.apply(at);
        return Vectors.filterNot(v, s -> s.equals(gone));
      }
      case 3:
        name[0] = "updated";
        return n == 0 ? v : Vectors.updated(v, at, "changed");
      case 4:
        name[0] = "drop";
        return v.drop(Math.min(n, 1 + rnd.nextInt(70)));
      case 5:
        name[0] = "dropRight";
        return v.dropRight(Math.min(n, 1 + rnd.nextInt(70)));
      case 6:
        name[0] = "rebuilt";
        return Vectors.fresh(Vectors.list(v));
      case 7: {
        name[0] = "equal copies";
        List<String> copies = new ArrayList<>();
        for (String s : Vectors.list(v)) copies.add(new String(s));
        return Vectors.fresh(copies);
      }
      case 8:
        name[0] = "concat";
        return Vectors.appendedAll(v, Vectors.fresh(items(rnd.nextInt(2000), 1_000_000)));
      default:
        name[0] = "same";
        return v;
    }
  }

  @Test
  void agreesWithReadingEveryElement() {
    long seed = Long.getLong("shardline.seed", System.nanoTime());
    Random rnd = new Random(seed);
    int[] sizes = {0, 1, 31, 32, 33, 1000, 1024, 1057, 33_000, 40_000};
    for (int round = 0; round < 400; round++) {
      int n = rnd.nextBoolean() ? sizes[rnd.nextInt(sizes.length)] : rnd.nextInt(5000);
      Vector<String> x = base(rnd, n);
      String[] name = new String[1];
      Vector<String> y = derive(rnd, x, name);
      if (rnd.nextBoolean()) y = derive(rnd, y, name);
      List<String> lx = Vectors.list(x), ly = Vectors.list(y);
      int most = Math.min(lx.size(), ly.size());
      for (int limit : new int[] {most, rnd.nextInt(most + 1)}) {
        String what = name[0] + " n=" + n + " limit=" + limit + " (seed " + seed + ")";
        int p = lists.commonPrefix(x, y, limit);
        assertEquals(prefix(lx, ly, limit), p, "prefix, " + what);
        assertEquals(suffix(lx, ly, limit - p), lists.commonSuffix(x, y, limit - p), "suffix, " + what);
        assertEquals(suffix(lx, ly, limit), lists.commonSuffix(y, x, limit), "suffix swapped, " + what);
      }
    }
  }

  @Test
  void sharedArraysAreNotRead() {
    Vector<String> v = Vectors.fresh(items(100_000, 0));
    Vector<String> grown = Vectors.appended(v, "new");
    lists.compared = 0;
    assertEquals(100_000, lists.commonPrefix(v, grown, 100_000));
    assertTrue(lists.compared < 100, "an append reads " + lists.compared + " shards");

    lists.compared = 0;
    assertEquals(0, lists.commonSuffix(v, grown, 100_000));
    assertEquals(1, lists.compared);

    // the same shards in arrays of its own: every one is read
    Vector<String> copy = Vectors.fresh(items(100_000, 0));
    lists.compared = 0;
    assertEquals(100_000, lists.commonPrefix(v, copy, 100_000));
    assertEquals(100_000, lists.compared);
  }

  @Test
  void otherSequencesAreComparedByIndex() {
    IndexedSeq<String> array = scala.collection.immutable.ArraySeq$.MODULE$.<String>from(CollectionConverters.asScala(items(50, 0)), scala.reflect.ClassTag$.MODULE$.apply(String.class));
    Vector<String> v = Vectors.updated(Vectors.fresh(items(50, 0)), 40, "x");
    assertEquals(40, lists.commonPrefix(array, v, 50));
    assertEquals(9, lists.commonSuffix(v, array, 10));
  }
}
