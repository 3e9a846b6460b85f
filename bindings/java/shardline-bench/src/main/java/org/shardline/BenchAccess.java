package org.shardline;

/**
 * The bench module's way to the native handles of {@link Strategy} and {@link AllocationState}
 * (package-private in the binding). It lives in the binding's package but ships only in
 * shardline-bench, so the public API stays as it is.
 */
public final class BenchAccess {
  private BenchAccess() {}

  /** A native call that takes the strategy's and the state's handles. */
  @FunctionalInterface
  public interface HandleCall {
    long apply(long strategy, long state);
  }

  /** Runs {@code call} with both handles held (neither can be freed until it returns). */
  public static long withHandles(Strategy strategy, AllocationState state, HandleCall call) {
    return strategy.callLong(h -> state.callLong(s -> call.apply(h, s)));
  }

  public static void loadNative() {
    NativeLibrary.load();
  }
}
