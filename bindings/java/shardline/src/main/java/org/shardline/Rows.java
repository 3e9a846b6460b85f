package org.shardline;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the outputs of one drain, which the native side writes as rows of one {@code byte[]}
 * behind their length (the layout is described in outputs.rs): one native call per drain, and
 * no Java object made from native code.
 */
final class Rows {
  /**
   * The array a drain on this thread writes into when its rows fit (else it answers a new one),
   * so a step allocates none; each drain's rows are read before the thread's next drain.
   */
  private static final ThreadLocal<byte[]> BUFFER = ThreadLocal.withInitial(() -> new byte[4096]);

  private final ByteBuffer in;
  private final byte[] bytes;
  int tag;
  long token;
  String a;
  String b;
  byte[] c;
  String[] list;
  byte[] payload;

  private Rows(byte[] bytes) {
    this.bytes = bytes;
    this.in = ByteBuffer.wrap(bytes);
    in.limit(4 + in.getInt());
  }

  static byte[] buffer() {
    return BUFFER.get();
  }

  private boolean next() {
    if (!in.hasRemaining()) return false;
    tag = in.get();
    token = in.getLong();
    a = text();
    b = text();
    c = bytes();
    int n = in.getInt();
    list = n < 0 ? null : new String[n];
    for (int i = 0; i < n; i++) list[i] = text();
    payload = bytes();
    return true;
  }

  private String text() {
    int n = in.getInt();
    if (n < 0) return null;
    String s = new String(bytes, in.position(), n, StandardCharsets.UTF_8);
    in.position(in.position() + n);
    return s;
  }

  private byte[] bytes() {
    int n = in.getInt();
    if (n < 0) return null;
    byte[] out = new byte[n];
    in.get(out);
    return out;
  }

  String cText() {
    return new String(c, StandardCharsets.UTF_8);
  }

  Notice notice() {
    return new Notice(a, cText());
  }

  static List<CoordinatorOutput> coordinatorOutputs(byte[] bytes) {
    Rows r = new Rows(bytes);
    if (!r.next()) return List.of();
    CoordinatorOutput first = CoordinatorOutput.of(r);
    // A step usually has one output: no list to copy
    if (!r.next()) return List.of(first);
    List<CoordinatorOutput> out = new ArrayList<>();
    out.add(first);
    do out.add(CoordinatorOutput.of(r));
    while (r.next());
    return List.copyOf(out);
  }

  static List<RegionOutput> regionOutputs(byte[] bytes) {
    List<RegionOutput> out = new ArrayList<>();
    for (Rows r = new Rows(bytes); r.next(); ) out.add(RegionOutput.of(r));
    return List.copyOf(out);
  }

  static List<Notice> notices(byte[] bytes) {
    List<Notice> out = new ArrayList<>();
    for (Rows r = new Rows(bytes); r.next(); ) out.add(r.notice());
    return List.copyOf(out);
  }
}
