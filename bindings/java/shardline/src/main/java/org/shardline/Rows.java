package org.shardline;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads the outputs of one drain, which the native side writes as rows of one buffer behind
 * their length (the layout is described in bind/src/rows.rs): one native call per drain, and no
 * Java object made from native code.
 */
final class Rows {
  private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

  /**
   * A thread's memory shared with the native side, so a step's byte argument and its rows cross
   * without any JNI array call: a direct buffer whose address the native side writes to and reads
   * from during a call, and the array its rows are copied into to be read. A call's argument is
   * read, and a drain's rows copied out, before the thread's next call.
   */
  static final class Scratch {
    private static final int SIZE = 16 * 1024;
    private final ByteBuffer direct = ByteBuffer.allocateDirect(SIZE);
    final long address = Shardline.nAddress(direct);
    final int capacity = SIZE;
    private byte[] rows = new byte[4096];

    /**
     * Copies {@code bytes} into the scratch behind their length and answers its address, or 0
     * when they are null or do not fit (the array then crosses itself).
     */
    long put(byte[] bytes) {
      if (bytes == null || bytes.length > SIZE - 4) return 0;
      direct.putInt(0, bytes.length).put(4, bytes);
      return address;
    }

    /** A drain's rows: the array it answered, or (null) the rows it wrote into the scratch. */
    byte[] rows(byte[] answered) {
      if (answered != null) return answered;
      int n = 4 + direct.getInt(0);
      if (rows.length < n) rows = new byte[Math.max(n, 2 * rows.length)];
      direct.get(0, rows, 0, n);
      return rows;
    }
  }

  private static final VarHandle INT =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle LONG =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private final byte[] bytes;
  private final int end;
  private int at = 4;
  int tag;
  long token;
  String a;
  String b;
  byte[] c;
  String[] list;
  byte[] payload;

  private Rows(byte[] bytes) {
    this.bytes = bytes;
    this.end = 4 + (int) INT.get(bytes, 0);
  }

  private int getInt() {
    int v = (int) INT.get(bytes, at);
    at += 4;
    return v;
  }

  static Scratch scratch() {
    return SCRATCH.get();
  }

  private boolean next() {
    if (at >= end) return false;
    tag = bytes[at];
    token = (long) LONG.get(bytes, at + 1);
    at += 9;
    a = text();
    b = text();
    c = bytes();
    int n = getInt();
    list = n < 0 ? null : new String[n];
    for (int i = 0; i < n; i++) list[i] = text();
    payload = bytes();
    return true;
  }

  private String text() {
    int n = getInt();
    if (n < 0) return null;
    at += n;
    return new String(bytes, at - n, n, StandardCharsets.UTF_8);
  }

  private byte[] bytes() {
    int n = getInt();
    if (n < 0) return null;
    at += n;
    return Arrays.copyOfRange(bytes, at - n, at);
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
