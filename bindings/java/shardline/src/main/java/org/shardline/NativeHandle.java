package org.shardline;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;
import java.util.function.LongPredicate;
import java.util.function.LongToIntFunction;
import java.util.function.LongUnaryOperator;

/**
 * A Java object that owns a native one. {@link #close()} frees it (idempotent); a {@link
 * Cleaner} frees it if the object becomes unreachable without being closed.
 *
 * <p>Calls in flight are counted, so closing (from another thread, or from a callback running
 * inside a call on this very object) never frees the native object under a running call: the
 * last call to return frees it. Counting also keeps this object reachable for the duration of
 * each call, so the Cleaner cannot run early.
 */
public abstract class NativeHandle implements AutoCloseable {
  private static final Cleaner CLEANER = Cleaner.create();

  private final Resource resource;
  private final Cleaner.Cleanable cleanable;

  NativeHandle(long handle, LongConsumer free, String what) {
    if (handle == 0) throw new ShardlineException(Status.INTERNAL, "no native " + what);
    this.resource = new Resource(handle, free, what);
    this.cleanable = CLEANER.register(this, resource);
  }

  /** Holds no reference to the handle object, as a Cleaner action must not. */
  private static final class Resource implements Runnable {
    final long handle;
    final LongConsumer free;
    final String what;
    final AtomicInteger calls = new AtomicInteger();
    final AtomicBoolean freed = new AtomicBoolean();
    volatile String closedBecause;

    Resource(long handle, LongConsumer free, String what) {
      this.handle = handle;
      this.free = free;
      this.what = what;
    }

    @Override
    public void run() {
      if (closedBecause == null) closedBecause = "closed";
      if (calls.get() == 0) freeOnce();
    }

    void freeOnce() {
      if (freed.compareAndSet(false, true)) free.accept(handle);
    }

    long acquire() {
      calls.incrementAndGet();
      String why = closedBecause;
      if (why != null) {
        release();
        throw new ShardlineException(Status.INVALID_STATE, "this " + what + " is " + why);
      }
      return handle;
    }

    void release() {
      if (calls.decrementAndGet() == 0 && closedBecause != null) freeOnce();
    }
  }

  /**
   * The handle for one call, counted as in flight until {@link #exit()}, which the caller runs
   * in a {@code finally}: what {@link #run} does, for a hot call that should not capture its
   * arguments in a lambda.
   */
  final long enter() {
    return resource.acquire();
  }

  final void exit() {
    resource.release();
    Reference.reachabilityFence(this);
  }

  final <T> T call(LongFunction<T> f) {
    long h = resource.acquire();
    try {
      return f.apply(h);
    } finally {
      resource.release();
      Reference.reachabilityFence(this);
    }
  }

  /**
   * A native method answering operations by name ({@code nOp}, see the native ops.rs): the
   * handle, the operation's name, its arguments.
   */
  @FunctionalInterface
  interface Ops {
    Object apply(long handle, String op, Object[] args);
  }

  /**
   * Operation {@code name} of this object through {@code ops}. Arguments and answers are plain
   * objects: null, String, Boolean, Long, Double, byte[], List and Map with String keys (an
   * Integer, Short, Byte or Float argument reads as its Long or Double); the caller gives the
   * answer its type.
   */
  @SuppressWarnings("unchecked")
  final <T> T op(Ops ops, String name, Object... args) {
    return (T) call(h -> ops.apply(h, name, args));
  }

  final long callLong(LongUnaryOperator f) {
    long h = resource.acquire();
    try {
      return f.applyAsLong(h);
    } finally {
      resource.release();
      Reference.reachabilityFence(this);
    }
  }

  final int callInt(LongToIntFunction f) {
    long h = resource.acquire();
    try {
      return f.applyAsInt(h);
    } finally {
      resource.release();
      Reference.reachabilityFence(this);
    }
  }

  final boolean callBoolean(LongPredicate f) {
    long h = resource.acquire();
    try {
      return f.test(h);
    } finally {
      resource.release();
      Reference.reachabilityFence(this);
    }
  }

  final void run(LongConsumer f) {
    long h = resource.acquire();
    try {
      f.accept(h);
    } finally {
      resource.release();
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Ends this object's life with a reason other than "closed" (its native value was handed to
   * another object, or a lent view expired); the native shell is freed as for close.
   */
  final void retire(String reason) {
    resource.closedBecause = reason;
    cleanable.clean();
  }

  /** Waits until no call is in flight (other threads may still be inside one). */
  final void awaitIdle() {
    while (resource.calls.get() != 0) Thread.onSpinWait();
  }

  public final boolean isClosed() {
    return resource.closedBecause != null;
  }

  /** Frees the native object; later calls throw {@code ShardlineException(INVALID_STATE)}. */
  @Override
  public final void close() {
    cleanable.clean();
  }
}
