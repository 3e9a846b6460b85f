import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

/**
 * Generates core/tests/data/javasort.json: inputs sorted with java.util.Arrays.sort(T[], Comparator)
 * (java.util.TimSort) under consistent and inconsistent comparators, and the order the JDK produced
 * (or the fact that it threw "Comparison method violates its general contract!").
 *
 * Usage: javac -d /tmp/javasort-fixture GenFixture.java && java -cp /tmp/javasort-fixture GenFixture OUT.json
 *
 * Every comparator is mirrored in core/tests/javasort.rs; keep the two in step.
 */
public final class GenFixture {

    /** One element: id is its position in the input; a, b, c are the fields comparators look at. */
    static final class Rec {
        final int id, a, b, c;
        Rec(int id, int a, int b, int c) { this.id = id; this.a = a; this.b = b; this.c = c; }
    }

    /** splitmix64 finalizer; mirrored bit for bit in the Rust test. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** Symmetric hash of an unordered pair of ids under a seed. */
    static long pairHash(int x, int y, long seed) {
        long lo = Math.min(x, y), hi = Math.max(x, y);
        return mix(seed * 0x9E3779B97F4A7C15L + lo * 1_000_003L + hi);
    }

    static boolean leaving(int status) {
        // Pekko MemberStatus: 0 Joining, 1 WeaklyUp, 2 Up, 3 Leaving, 4 Exiting, 5 Down, 6 Removed.
        return status == 3 || status == 4 || status == 5;
    }

    static Comparator<Rec> comparator(String kind, long seed, int[] counter) {
        Comparator<Rec> base;
        switch (kind) {
            case "key":
                // Consistent, many ties: stability matters.
                base = (x, y) -> Integer.compare(x.a, y.a);
                break;
            case "key_b_desc":
                // Consistent: a ascending, then b descending; ties on c.
                base = (x, y) -> x.a != y.a ? Integer.compare(x.a, y.a) : Integer.compare(y.b, x.b);
                break;
            case "pekko":
                // Pekko ShardSuitabilityOrdering shape: a = member status, b = app version,
                // c = allocated shard count. Different statuses compare only on "leaving",
                // so e.g. Up and WeaklyUp compare equal whatever their versions: not transitive.
                base = (x, y) -> {
                    if (x.a != y.a) return Boolean.compare(leaving(x.a), leaving(y.a));
                    if (x.b != y.b) return Integer.compare(y.b, x.b);
                    return Integer.compare(x.c, y.c);
                };
                break;
            case "random":
                // Antisymmetric but otherwise arbitrary: -1, 0 or 1 from a hash of the id pair.
                base = (x, y) -> {
                    if (x.id == y.id) return 0;
                    int r = (int) Long.remainderUnsigned(pairHash(x.id, y.id, seed), 3) - 1;
                    return x.id < y.id ? r : -r;
                };
                break;
            case "noisy":
                // Mostly Integer.compare(a, a'), but about one pair in 13 gets the opposite
                // answer (ties are broken by id order instead). Antisymmetric.
                base = (x, y) -> {
                    int r = Integer.compare(x.a, y.a);
                    if (x.id != y.id && Long.remainderUnsigned(pairHash(x.id, y.id, seed), 13) == 0) {
                        if (r != 0) return -r;
                        return x.id < y.id ? 1 : -1;
                    }
                    return r;
                };
                break;
            default:
                throw new IllegalArgumentException(kind);
        }
        return (x, y) -> { counter[0]++; return base.compare(x, y); };
    }

    /** Input shapes. */
    static int[] keys(String pattern, int n, int range, Random rnd) {
        int[] k = new int[n];
        switch (pattern) {
            case "random":
                for (int i = 0; i < n; i++) k[i] = rnd.nextInt(range);
                break;
            case "ascending":
                for (int i = 0; i < n; i++) k[i] = (int) ((long) i * range / Math.max(1, n));
                break;
            case "descending":
                for (int i = 0; i < n; i++) k[i] = range - 1 - (int) ((long) i * range / Math.max(1, n));
                break;
            case "blocks": {
                // Concatenated sorted blocks of random lengths (exercises galloping).
                int i = 0;
                while (i < n) {
                    int len = 1 + rnd.nextInt(Math.max(1, n / 3));
                    int[] blk = new int[Math.min(len, n - i)];
                    for (int j = 0; j < blk.length; j++) blk[j] = rnd.nextInt(range);
                    Arrays.sort(blk);
                    if (rnd.nextInt(3) == 0) {
                        for (int j = 0; j < blk.length / 2; j++) {
                            int t = blk[j]; blk[j] = blk[blk.length - 1 - j]; blk[blk.length - 1 - j] = t;
                        }
                    }
                    System.arraycopy(blk, 0, k, i, blk.length);
                    i += blk.length;
                }
                break;
            }
            case "nearly": {
                for (int i = 0; i < n; i++) k[i] = (int) ((long) i * range / Math.max(1, n));
                for (int s = 0; s < 1 + n / 20; s++) {
                    if (n < 2) break;
                    int p = rnd.nextInt(n), q = rnd.nextInt(n);
                    int t = k[p]; k[p] = k[q]; k[q] = t;
                }
                break;
            }
            case "halves": {
                // Two interleaving sorted halves: long galloping stretches.
                int h = n / 2;
                for (int i = 0; i < h; i++) k[i] = (int) ((long) i * range / Math.max(1, h));
                for (int i = h; i < n; i++) k[i] = (int) ((long) (i - h) * range / Math.max(1, n - h));
                break;
            }
            case "constant":
                for (int i = 0; i < n; i++) k[i] = range / 2;
                break;
            default:
                if (pattern.startsWith("runs:")) {
                    // Natural ascending runs of the given lengths ("runs:104-80-20"): each run
                    // starts at 0 and ends at range - 1, so runs meet at a strict descent.
                    int i = 0;
                    for (String part : pattern.substring(5).split("-")) {
                        int len = Integer.parseInt(part);
                        int[] blk = new int[len];
                        for (int j = 0; j < len; j++) blk[j] = rnd.nextInt(range);
                        Arrays.sort(blk);
                        blk[0] = 0;
                        blk[len - 1] = range - 1;
                        System.arraycopy(blk, 0, k, i, len);
                        i += len;
                    }
                    if (i != n) throw new IllegalArgumentException(pattern + " does not sum to " + n);
                    break;
                }
                throw new IllegalArgumentException(pattern);
        }
        return k;
    }

    static final String[] PATTERNS = {"random", "ascending", "descending", "blocks", "nearly", "halves", "constant"};
    static final int[] SIZES = {
        0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 30, 31, 32, 33, 34, 35, 40, 47, 48, 49, 63, 64, 65, 66,
        70, 96, 99, 100, 101, 127, 128, 129, 150, 192, 200, 255, 256, 257, 258, 280, 300,
    };

    final StringBuilder json = new StringBuilder();
    int cases = 0, violations = 0;
    final Random rnd = new Random(0x5EEDL);

    void emit(String kind, long seed, String pattern, Rec[] input) {
        Rec[] arr = input.clone();
        int[] counter = new int[1];
        boolean violation = false;
        try {
            Arrays.sort(arr, comparator(kind, seed, counter));
        } catch (IllegalArgumentException e) {
            if (!"Comparison method violates its general contract!".equals(e.getMessage())) throw e;
            violation = true;
            violations++;
        }
        if (cases > 0) json.append(",\n");
        json.append("{\"cmp\":\"").append(kind).append("\",\"seed\":").append(seed)
            .append(",\"pattern\":\"").append(pattern).append("\",\"input\":[");
        for (int i = 0; i < input.length; i++) {
            if (i > 0) json.append(',');
            json.append('[').append(input[i].a).append(',').append(input[i].b).append(',').append(input[i].c).append(']');
        }
        json.append("],\"violation\":").append(violation).append(",\"compares\":").append(counter[0]).append(",\"output\":[");
        // On a violation this is the array as the JDK left it when it threw.
        for (int i = 0; i < arr.length; i++) {
            if (i > 0) json.append(',');
            json.append(arr[i].id);
        }
        json.append("]}");
        cases++;
    }

    /** kind-specific field ranges: a's range comes from the pattern keys, b and c random. */
    Rec[] make(String kind, String pattern, int n) {
        int aRange, bRange, cRange;
        switch (kind) {
            case "key": aRange = 1 + rnd.nextInt(Math.max(1, n / 2) + 3); bRange = 1; cRange = 1; break;
            case "key_b_desc": aRange = 1 + rnd.nextInt(8); bRange = 1 + rnd.nextInt(4); cRange = 1; break;
            case "pekko": aRange = 7; bRange = 1 + rnd.nextInt(4); cRange = 1 + rnd.nextInt(12); break;
            case "random": aRange = 1; bRange = 1; cRange = 1; break;
            case "noisy": aRange = 1 + rnd.nextInt(n + 2); bRange = 1; cRange = 1; break;
            default: throw new IllegalArgumentException(kind);
        }
        if (pattern.startsWith("runs:")) {
            // Few ties, so the natural runs keep exactly the requested lengths.
            aRange = Math.max(aRange, 1000);
            cRange = Math.max(cRange, 1000);
        }
        int[] a = keys(pattern, n, aRange, rnd);
        int[] b, c;
        if (kind.equals("pekko")) {
            // Statuses: mostly Up / WeaklyUp / Joining, some leaving ones; patterns shape counts.
            int[] statusPool = {2, 2, 2, 1, 1, 0, 3, 4, 5};
            int[] st = new int[n];
            for (int i = 0; i < n; i++) st[i] = statusPool[rnd.nextInt(statusPool.length)];
            c = keys(pattern, n, cRange, rnd);
            b = new int[n];
            for (int i = 0; i < n; i++) b[i] = rnd.nextInt(bRange);
            a = st;
        } else {
            b = new int[n];
            c = new int[n];
            for (int i = 0; i < n; i++) { b[i] = rnd.nextInt(bRange); c[i] = rnd.nextInt(cRange); }
        }
        Rec[] recs = new Rec[n];
        for (int i = 0; i < n; i++) recs[i] = new Rec(i, a[i], b[i], c[i]);
        return recs;
    }

    void run(Path out) throws IOException {
        json.append("{\"generator\":\"scripts/javasort-fixture/GenFixture.java\",\"java\":\"")
            .append(System.getProperty("java.version")).append("\",\"cases\":[\n");
        String[][] plan = {
            // kind, how many cases
            {"key", "50"}, {"key_b_desc", "30"}, {"pekko", "100"}, {"random", "60"}, {"noisy", "60"},
        };
        for (String[] p : plan) {
            String kind = p[0];
            int count = Integer.parseInt(p[1]);
            for (int i = 0; i < count; i++) {
                int n = SIZES[(i * 11 + kind.length() * 3) % SIZES.length];
                // Inconsistent comparators only bite at n >= 32 (below that it is insertion sort).
                if ((kind.equals("random") || kind.equals("noisy")) && i % 5 != 0 && n < 32) n += 32 + rnd.nextInt(64);
                String pattern = PATTERNS[(i + i / PATTERNS.length) % PATTERNS.length];
                long seed = (kind.equals("random") || kind.equals("noisy")) ? 1 + i : 0;
                emit(kind, seed, pattern, make(kind, pattern, n));
            }
        }
        // Run-length sequences on which the corrected mergeCollapse (JDK 11+, checks the run
        // below the top three as well) merges differently from the original JDK 8 rule.
        String[] runShapes = {"104-80-20-18-26-19", "96-73-18-17-31-33", "110-85-19-17-21-17"};
        for (String shape : runShapes) {
            int n = 0;
            for (String part : shape.split("-")) n += Integer.parseInt(part);
            String pattern = "runs:" + shape;
            for (String kind : new String[] {"key", "key_b_desc", "pekko", "noisy", "noisy"}) {
                long seed = kind.equals("noisy") ? 100 + cases : 0;
                Rec[] recs = make(kind, pattern, n);
                if (kind.equals("pekko")) {
                    // Keep the runs intact: same status and version, except a few WeaklyUp.
                    for (int i = 0; i < n; i++) {
                        recs[i] = new Rec(i, rnd.nextInt(25) == 0 ? 1 : 2, 1, recs[i].c);
                    }
                }
                emit(kind, seed, pattern, recs);
            }
        }
        json.append("\n]}\n");
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out, StandardCharsets.UTF_8))) {
            w.print(json);
        }
        System.err.println("wrote " + cases + " cases (" + violations + " contract violations) to " + out);
    }

    public static void main(String[] args) throws IOException {
        Path out = Paths.get(args.length > 0 ? args[0] : "core/tests/data/javasort.json");
        new GenFixture().run(out);
    }
}
