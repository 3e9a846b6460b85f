package org.shardline.pekko;

import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Vector;

/**
 * How far two versions of a region's shard list agree from the front and from the back.
 *
 * <p>Pekko's coordinator derives a region's new list from the old one ({@code shards :+ shard}
 * when it allocates, {@code filterNot} when a shard is handed off), and Scala 2.13's {@code
 * Vector} is a tree of arrays of up to 32 that a derived vector shares with its origin wherever
 * nothing changed. Two such versions are compared array by array: an array both hold at the same
 * position is skipped by reference, unread, so an append costs O(log n) and only the arrays that
 * differ are compared element by element. The tree comes from {@code vectorSlice}, which Scala
 * declares {@code private[immutable]} and compiles public (2.13.2 on, the versions Pekko 1.x
 * runs on); lists of any other kind, a library without it, or a vector whose slices do not add
 * up as expected are compared element by element through {@code apply}. Either way the answer
 * is exact: sharing only saves reads.
 *
 * <p>Not thread-safe (the cursors are reused): the mirror's lock covers it.
 */
final class ShardLists {
  private static final boolean SLICES = slicesReadable();

  private final Cursor a = new Cursor();
  private final Cursor b = new Cursor();
  /** Shards read so far (what the shared arrays save, for the tests). */
  long compared;

  /** The length of the longest common prefix of {@code x} and {@code y}, at most {@code limit}. */
  int commonPrefix(IndexedSeq<String> x, IndexedSeq<String> y, int limit) {
    return common(x, y, limit, true);
  }

  /** The length of the longest common suffix of {@code x} and {@code y}, at most {@code limit}. */
  int commonSuffix(IndexedSeq<String> x, IndexedSeq<String> y, int limit) {
    return common(x, y, limit, false);
  }

  private int common(IndexedSeq<String> x, IndexedSeq<String> y, int limit, boolean forward) {
    if (limit <= 0) return 0;
    if (x == y) return limit;
    boolean vectors = SLICES && x instanceof Vector && y instanceof Vector;
    if (vectors && a.start((Vector<?>) x, forward) && b.start((Vector<?>) y, forward)) return walk(limit, forward);
    return byIndex(x, y, limit, forward);
  }

  private int byIndex(IndexedSeq<String> x, IndexedSeq<String> y, int limit, boolean forward) {
    int nx = x.length(), ny = y.length();
    for (int i = 0; i < limit; i++) {
      if (!same(x.apply(forward ? i : nx - 1 - i), y.apply(forward ? i : ny - 1 - i))) {
        compared += i + 1;
        return i;
      }
    }
    compared += limit;
    return limit;
  }

  private static boolean same(Object p, Object q) {
    return p == q || p.equals(q);
  }

  /** Both cursors stand at the same element offset {@code n} throughout. */
  private int walk(int limit, boolean forward) {
    int n = 0;
    while (n < limit && !a.done() && !b.done()) {
      Object[] x = a.node, y = b.node;
      int dx = a.dim, dy = b.dim;
      if (x == y && a.elem == 0 && b.elem == 0 && n + a.size() <= limit) {
        n += a.size();
        a.next();
        b.next();
      } else if (dx > 1 || dy > 1) {
        if (dx >= dy) a.descend();
        if (dy >= dx) b.descend();
        if (dx == dy) n += skipShared(limit - n);
      } else {
        int i = a.elem, j = b.elem;
        int k = Math.min(Math.min(x.length - i, y.length - j), limit - n);
        for (int t = 0; t < k; t++) {
          Object p = forward ? x[i + t] : x[x.length - 1 - i - t];
          Object q = forward ? y[j + t] : y[y.length - 1 - j - t];
          if (!same(p, q)) {
            compared += t + 1;
            return n + t;
          }
        }
        compared += k;
        n += k;
        a.skip(k);
        b.skip(k);
      }
    }
    return n;
  }

  /**
   * Right after both cursors went down into arrays of the same dimension at the same offset:
   * passes the leading children both arrays hold, in one loop rather than a cursor step each (a
   * vector rebuilt around the same arrays shares the leaves but not the arrays above them);
   * returns the elements passed, at most {@code room}.
   */
  private int skipShared(int room) {
    Object[] x = a.parent(), y = b.parent();
    int per = 1 << (5 * a.dim);
    int most = Math.min(Math.min(x.length, y.length), room / per);
    int k = 0;
    // one loop per direction: this is the hot loop of a list rebuilt around shared leaves
    if (a.forward) {
      while (k < most && x[k] == y[k]) k++;
    } else {
      int ex = x.length - 1, ey = y.length - 1;
      while (k < most && x[ex - k] == y[ey - k]) k++;
    }
    if (k > 0) {
      a.pass(k);
      b.pass(k);
    }
    return k * per;
  }

  private static boolean slicesReadable() {
    try {
      Vector.class.getMethod("vectorSliceCount");
      Vector.class.getMethod("vectorSlice", int.class);
      Vector.class.getMethod("vectorSlicePrefixLength", int.class);
      return true;
    } catch (NoSuchMethodException e) {
      return false;
    }
  }

  /**
   * A position in one vector's tree, walked front to back or back to front: the node under it
   * is an array of dimension {@code dim()} (1: elements; d: arrays of dimension d - 1, each full,
   * i.e. 32^(d-1) elements), and within a leaf {@code elem} elements are already passed.
   */
  private static final class Cursor {
    /** Vector's deepest tree (Vector6) has slices of dimension 6. */
    private static final int MAX_DIM = 6;

    private final Object[][] stack = new Object[MAX_DIM][];
    private final int[] at = new int[MAX_DIM];
    private Vector<?> v;
    boolean forward;
    private int slices;
    /** Slices passed, in walk order. */
    private int slice;
    private int depth;
    /** The node under the cursor and its dimension, kept rather than found again per step. */
    Object[] node;
    int dim;
    int elem;

    /** False when the vector's slices are not what this walk expects. */
    boolean start(Vector<?> vector, boolean forward) {
      this.v = vector;
      this.forward = forward;
      this.slices = vector.vectorSliceCount();
      if (slices > 2 * MAX_DIM - 1) return false;
      int before = 0;
      for (int i = 0; i < slices; i++) {
        int end = vector.vectorSlicePrefixLength(i);
        long size = (long) vector.vectorSlice(i).length << (5 * (sliceDim(i) - 1));
        if (end - before != size) return false;
        before = end;
      }
      if (before != vector.length()) return false;
      slice = -1;
      depth = 0;
      elem = 0;
      nextSlice();
      return true;
    }

    /** Slices of a tree of depth d have dimensions 1, 2, .., d, .., 2, 1. */
    private int sliceDim(int i) {
      return Math.min(i + 1, slices - i);
    }

    private void nextSlice() {
      while (++slice < slices) {
        int i = forward ? slice : slices - 1 - slice;
        node = v.vectorSlice(i);
        dim = sliceDim(i);
        if (node.length > 0) return;
      }
    }

    boolean done() {
      return slice >= slices;
    }

    Object child(Object[] arr, int i) {
      return arr[forward ? i : arr.length - 1 - i];
    }

    /** Elements under the node not yet passed. */
    int size() {
      return (node.length << (5 * (dim - 1))) - elem;
    }

    void descend() {
      stack[depth] = node;
      at[depth] = 0;
      depth++;
      dim--;
      node = (Object[]) child(stack[depth - 1], 0);
    }

    /** The array the node under the cursor is a child of (below the slices only). */
    Object[] parent() {
      return stack[depth - 1];
    }

    /** Past the node under the cursor and the {@code k - 1} siblings after it. */
    void pass(int k) {
      at[depth - 1] += k - 1;
      next();
    }

    /** Past the node under the cursor. */
    void next() {
      elem = 0;
      while (depth > 0) {
        Object[] up = stack[depth - 1];
        if (++at[depth - 1] < up.length) {
          node = (Object[]) child(up, at[depth - 1]);
          return;
        }
        depth--;
        dim++;
      }
      nextSlice();
    }

    /** Past {@code k} more elements of the leaf under the cursor. */
    void skip(int k) {
      elem += k;
      if (elem == node.length) next();
    }
  }
}
