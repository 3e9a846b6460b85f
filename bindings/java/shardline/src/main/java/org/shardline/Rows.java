package org.shardline;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the outputs of one drain, which the native side writes as rows of one {@code byte[]}
 * (the layout is described in outputs.rs): one native call per drain, and no Java object made
 * from native code.
 */
final class Rows {
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
    List<CoordinatorOutput> out = new ArrayList<>(1);
    for (Rows r = new Rows(bytes); r.next(); ) out.add(CoordinatorOutput.of(r));
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
