package org.shardline;

import java.util.Map;
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
    return outcome(op(InMemoryStore::nOp, "append", token, record));
  }

  @Override
  public WriteOutcome saveSnapshot(long token, String snapshot) {
    return outcome(op(InMemoryStore::nOp, "save_snapshot", token, snapshot));
  }

  @Override
  public Optional<String> load(long token) {
    return Optional.ofNullable(op(InMemoryStore::nOp, "load", token)).map(Json::write);
  }

  /** What a load would return now, without fencing anyone. */
  public String contents() {
    return Json.write(op(InMemoryStore::nOp, "contents"));
  }

  public long highestToken() {
    return op(InMemoryStore::nOp, "highest_token");
  }

  /** {@code {outcome: "written"}} or {@code {outcome: "fenced", highest}}. */
  static WriteOutcome outcome(Map<String, Object> o) {
    return "written".equals(o.get("outcome")) ? WriteOutcome.written() : WriteOutcome.fenced((Long) o.get("highest"));
  }

  private static native long nNew(String storedStateJson);

  private static native Object nOp(long h, String op, Object[] args);

  private static native void nFree(long h);
}
