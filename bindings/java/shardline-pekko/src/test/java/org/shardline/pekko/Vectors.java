package org.shardline.pekko;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import scala.collection.SeqOps;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Vector;
import scala.collection.immutable.VectorBuilder;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Vector's own operations, as Pekko's coordinator calls them. Java sees two {@code appended}
 * (Vector's and a bridge of AbstractSeq's) and cannot pick; through {@code SeqOps} there is one.
 */
@SuppressWarnings("unchecked")
final class Vectors {
  private Vectors() {}

  /** A vector of its own (shares no array with any other), as VectorBuilder makes it. */
  static Vector<String> fresh(List<String> items) {
    VectorBuilder<String> b = new VectorBuilder<>();
    for (String s : items) b.addOne(s);
    return b.result();
  }

  static List<String> list(IndexedSeq<String> v) {
    return new ArrayList<>(CollectionConverters.asJava(v));
  }

  private static SeqOps<String, ?, ?> ops(IndexedSeq<String> v) {
    return (SeqOps<String, ?, ?>) v;
  }

  /** {@code v :+ s} */
  static Vector<String> appended(IndexedSeq<String> v, String s) {
    return (Vector<String>) ops(v).appended(s);
  }

  /** {@code v ++ more} */
  static Vector<String> appendedAll(IndexedSeq<String> v, IndexedSeq<String> more) {
    return (Vector<String>) ops(v).appendedAll(more);
  }

  /** {@code s +: v} */
  static Vector<String> prepended(IndexedSeq<String> v, String s) {
    return (Vector<String>) ops(v).prepended(s);
  }

  static Vector<String> updated(IndexedSeq<String> v, int i, String s) {
    return (Vector<String>) ops(v).updated(i, s);
  }

  /** {@code v.filterNot(gone)}, as the coordinator takes a handed-off shard out */
  static Vector<String> filterNot(IndexedSeq<String> v, Predicate<String> gone) {
    return (Vector<String>) v.filterNot(gone::test);
  }
}
