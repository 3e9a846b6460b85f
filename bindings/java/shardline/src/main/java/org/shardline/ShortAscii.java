package org.shardline;

/**
 * Shard ids of up to 16 ASCII characters cross to the native side packed in two longs (a byte
 * each, the first in the lowest), which it reads without a JNI call; any other id it reads from
 * the String (native convert::text_packed). Hot calls pass both.
 */
final class ShortAscii {
  private ShortAscii() {}

  /** The length to pass with the packed words: {@code s}'s, or -1 when it does not pack. */
  static int length(String s) {
    if (s == null) return -1;
    int n = s.length();
    if (n > 16) return -1;
    for (int i = 0; i < n; i++) if (s.charAt(i) >= 0x80) return -1;
    return n;
  }

  /** Characters {@code from} to {@code from + 8} (at most {@code n}) of {@code s}, packed; 0 for n = -1. */
  static long word(String s, int from, int n) {
    long p = 0;
    for (int i = from, end = Math.min(from + 8, n); i < end; i++) p |= (long) s.charAt(i) << (8 * (i - from));
    return p;
  }
}
