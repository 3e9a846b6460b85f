package org.shardline;

import java.util.Optional;

/**
 * The embedded coordinator store. A driver given this object shares its contents (so a second
 * coordinator can take over from it), and fences writes by token like any store must.
 */
public final class InMemoryStore extends NativeHandle implements Store {
  static {
    NativeLibrary.load();
  }

  public InMemoryStore() {
    super(nNew(null), InMemoryStore::nFree, "InMemoryStore");
  }

  private InMemoryStore(String storedStateJson) {
    super(nNew(storedStateJson), InMemoryStore::nFree, "InMemoryStore");
  }

  /** A store holding {@code storedStateJson} (e.g. another store's {@link #contents()}). */
  public static InMemoryStore fromState(String storedStateJson) {
    return new InMemoryStore(java.util.Objects.requireNonNull(storedStateJson, "storedStateJson"));
  }

  @Override
  public WriteOutcome append(long token, String record) {
    return outcome(callLong(h -> nAppend(h, token, record)));
  }

  @Override
  public WriteOutcome saveSnapshot(long token, String snapshot) {
    return outcome(callLong(h -> nSaveSnapshot(h, token, snapshot)));
  }

  @Override
  public Optional<String> load(long token) {
    return Optional.ofNullable(call(h -> nLoad(h, token)));
  }

  /** What a load would return now, without fencing anyone. */
  public String contents() {
    return call(InMemoryStore::nContents);
  }

  public long highestToken() {
    return callLong(InMemoryStore::nHighestToken);
  }

  private static WriteOutcome outcome(long v) {
    return v < 0 ? WriteOutcome.written() : WriteOutcome.fenced(v);
  }

  private static native long nNew(String storedStateJson);

  private static native long nAppend(long h, long token, String record);

  private static native long nSaveSnapshot(long h, long token, String snapshot);

  private static native String nLoad(long h, long token);

  private static native String nContents(long h);

  private static native long nHighestToken(long h);

  private static native void nFree(long h);
}
