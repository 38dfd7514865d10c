import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where the Java heap is, page by page: runs inside the QEMU guest, builds
 * long-lived data the way a server does, and counts the resident pages of
 * the mapping that holds the Java heap on each NUMA node.
 *
 * Four fork-join workers (the threads numapin places by default) each build
 * a quarter of MIB MiB of long-lived 64 KiB arrays, with two garbage arrays
 * of the same size between kept ones, so young collections run and promote
 * the kept arrays to the old generation; then two System.gc(). The heap's
 * range comes from HotSpot itself: the JVM runs with
 * -Xlog:gc+heap+coops=debug:file=LOG, whose "Heap address: 0x..., size: N MB"
 * line names it; every page of that range is looked up in
 * /proc/self/pagemap (PageNodes, as NumaProbe does), except the files
 * mapped into it (the CDS archive's heap objects, the page cache's pages,
 * shared with every JVM using the archive: counted apart, as file_pages).
 *
 * Arguments are key=value:
 *   coops=FILE   the -Xlog file holding the heap's address (required)
 *   nodes=LIST   the node(s) the heap should be on, for the share (required)
 *   mib=N        long-lived data to build (default 24)
 *   ready=FILE   after the first count, create FILE and wait for
 *   go=FILE      FILE to exist (at most 120 s), then count again: the
 *                heap before and after something else acted (a late attach)
 *
 * Prints "heap phase=P pages=N on_nodes=M share=S by_node=N0=..,N1=.. file_pages=F" for
 * each count (P is "end", or "before" and "after"), and "heap: PASS" unless
 * the heap's range could not be found or holds no resident page. The share
 * is judged by the scenario, not here: the probe also runs without numapin.
 */
public final class HeapProbe {
    static final int ARRAY = 64 << 10;
    static final Pattern HEAP = Pattern.compile("Heap address: 0x([0-9a-f]+), size: (\\d+) MB");

    /** Kept alive to the end: what a server's caches are. */
    static final List<byte[]> kept = new ArrayList<>();
    static volatile Object sink;

    static String arg(Map<String, String> a, String k) {
        String v = a.get(k);
        if (v == null) {
            throw new IllegalArgumentException("missing " + k + "=");
        }
        return v;
    }

    /** Builds `bytes` of kept arrays, with garbage between them; returns them. */
    static List<byte[]> build(long bytes) {
        List<byte[]> mine = new ArrayList<>();
        for (long done = 0; done < bytes; done += ARRAY) {
            byte[] b = new byte[ARRAY];
            for (int i = 0; i < ARRAY; i += 4096) {
                b[i] = (byte) i;
            }
            mine.add(b);
            sink = new byte[ARRAY];
            sink = new byte[ARRAY];
        }
        return mine;
    }

    static long[] heapRange(Path coops) throws IOException {
        for (String l : Files.readAllLines(coops)) {
            Matcher m = HEAP.matcher(l);
            if (m.find()) {
                return new long[] {Long.parseUnsignedLong(m.group(1), 16), Long.parseLong(m.group(2)) << 20};
            }
        }
        return null;
    }

    /**
     * The parts of [lo, lo+len) that the heap's own memory maps: not the
     * files mapped into it (the CDS archive's heap objects, whose pages are
     * the page cache's, shared with every JVM using the archive).
     * Returns {start, length} pairs; adds the file pages' count to files[0].
     */
    static List<long[]> ownParts(long lo, long len, long[] files) throws IOException {
        List<long[]> parts = new ArrayList<>();
        long hi = lo + len;
        for (String line : Files.readAllLines(Paths.get("/proc/self/maps"))) {
            String[] f = line.trim().split("\\s+");
            long a = Long.parseUnsignedLong(f[0].substring(0, f[0].indexOf('-')), 16);
            long b = Long.parseUnsignedLong(f[0].substring(f[0].indexOf('-') + 1), 16);
            long s = Math.max(a, lo);
            long e = Math.min(b, hi);
            if (s >= e) {
                continue;
            }
            if (f.length > 5 && f[5].startsWith("/")) {
                for (Map.Entry<Integer, Integer> n : NumaProbe.pageNodes(s, e - s).entrySet()) {
                    files[0] += n.getKey() >= 0 ? n.getValue() : 0;
                }
            } else {
                parts.add(new long[] {s, e - s});
            }
        }
        return parts;
    }

    static void count(String phase, long[] range, BitSet want) throws IOException {
        long[] files = {0};
        TreeMap<Integer, Integer> pages = new TreeMap<>();
        for (long[] part : ownParts(range[0], range[1], files)) {
            NumaProbe.pageNodes(part[0], part[1]).forEach((n, c) -> pages.merge(n, c, Integer::sum));
        }
        long resident = 0;
        long on = 0;
        StringBuilder by = new StringBuilder();
        for (Map.Entry<Integer, Integer> e : pages.entrySet()) {
            if (e.getKey() < 0) {
                continue;
            }
            resident += e.getValue();
            if (want.get(e.getKey())) {
                on += e.getValue();
            }
            by.append(by.length() == 0 ? "" : ",").append('N').append(e.getKey()).append('=').append(e.getValue());
        }
        System.out.printf("heap phase=%s pages=%d on_nodes=%d share=%.4f by_node=%s file_pages=%d%n", phase, resident,
                on, resident > 0 ? (double) on / resident : 0.0, by.length() == 0 ? "none" : by, files[0]);
        System.out.flush();
        if (resident == 0) {
            throw new IllegalStateException("no resident page in the heap's range");
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new TreeMap<>();
        for (String s : args) {
            a.put(s.substring(0, s.indexOf('=')), s.substring(s.indexOf('=') + 1));
        }
        BitSet want = NumaProbe.parseList(arg(a, "nodes"));
        long bytes = Long.parseLong(a.getOrDefault("mib", "24")) << 20;
        NumaProbe.loadTopology();

        ForkJoinPool pool = new ForkJoinPool(4);
        List<java.util.concurrent.Future<List<byte[]>>> parts = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            parts.add(pool.submit(() -> build(bytes / 4)));
        }
        for (java.util.concurrent.Future<List<byte[]>> f : parts) {
            kept.addAll(f.get());
        }
        pool.shutdown();
        sink = null;
        System.gc();
        System.gc();

        long[] range = heapRange(Paths.get(arg(a, "coops")));
        if (range == null) {
            System.out.println("heap: FAIL (no \"Heap address\" line in " + a.get("coops") + ")");
            System.exit(1);
        }
        System.out.printf("heap range=0x%x+%d MiB kept=%d arrays%n", range[0], range[1] >> 20, kept.size());
        if (a.containsKey("ready")) {
            count("before", range, want);
            Files.write(Paths.get(a.get("ready")), new byte[0]);
            Path go = Paths.get(arg(a, "go"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!Files.exists(go) && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            count("after", range, want);
        } else {
            count("end", range, want);
        }
        System.out.println("heap: PASS");
    }
}
