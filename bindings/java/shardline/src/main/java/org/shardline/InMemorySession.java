package org.shardline;

/**
 * One contender's session on an {@link InMemoryRegistry}. Closing it ends the session and its
 * claims with it (as a crashed process's session would end on expiry). Handing it to {@link
 * WorkerIdHolder#acquire} moves it there.
 */
public final class InMemorySession extends NativeHandle {
  static {
    NativeLibrary.load();
  }

  InMemorySession(long handle) {
    super(handle, InMemorySession::nFree, "InMemorySession");
  }

  public boolean isLive() {
    return callBoolean(InMemorySession::nIsLive);
  }

  private static native boolean nIsLive(long h);

  private static native void nFree(long h);
}
