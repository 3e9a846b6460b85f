package org.shardline;

import java.util.Optional;

/**
 * The coordinator state store on etcd (from {@link Etcd#store}): every write and every load is
 * one transaction guarded by the fencing token. Give it to one driver.
 */
public final class EtcdStore extends NativeHandle implements Store {
  EtcdStore(long handle) {
    super(handle, EtcdStore::nFree, "EtcdStore");
  }

  @Override
  public WriteOutcome append(long token, String record) {
    return InMemoryStore.outcome(op(EtcdStore::nOp, "append", token, record));
  }

  @Override
  public WriteOutcome saveSnapshot(long token, String snapshot) {
    return InMemoryStore.outcome(op(EtcdStore::nOp, "save_snapshot", token, snapshot));
  }

  @Override
  public Optional<String> load(long token) {
    return Optional.ofNullable(op(EtcdStore::nOp, "load", token)).map(Json::write);
  }

  private static native Object nOp(long h, String op, Object[] args);

  private static native void nFree(long h);
}
