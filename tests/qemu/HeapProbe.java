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
import numapin.tierbench.PageNodes;

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
 * ZGC has no such line: with heap=memfd the heap is every mapping of its
 * memfd, /memfd:java_heap (JDK 17 maps it three times: each page is
 * counted once, by its frame).
 *
 * Arguments are key=value:
 *   coops=FILE   the -Xlog file holding the heap's address (required
 *                unless heap=memfd)
 *   heap=memfd   the heap is ZGC's memfd
 *   settle=1     count until two counts agree (below), for comparing the
 *                last with what numapin's summary says at exit
 *   nodes=LIST   the node(s) the heap should be on, for the share (required)
 *   mib=N        long-lived data to build (default 24)
 *   ready=FILE   after the first count, create FILE and wait for
 *   go=FILE      FILE to exist (at most 120 s), then count again: the
 *                heap before and after something else acted (a late attach)
 *   hold=1       while waiting for go, two fork-join workers of a second
 *                pool read the kept arrays over and over: placed threads
 *                that live and touch the heap while the JVM is looked at
 *   spin=MS      before the first count (with ready=), the main thread
 *                spins until it has used MS ms more CPU time (in the
 *                kernel's clock ticks): a cost known in advance, the
 *                control of a comparison of CPU times
 *
 * Prints "heap phase=P pages=N on_nodes=M share=S by_node=N0=..,N1=.. file_pages=F" for
 * each count (P is "end", or "before" and "after"), then "own phase=P
 * pages=N by_node=.. huge_pages=H huge_by_node=.." for all the process's
 * own memory as numapin counts it (anonymous, memfd, hugetlbfs, SysV shared
 * memory, shared anonymous), H of it in hugetlbfs pages, every page once, in 4 KiB pages,
 * and thp_kib=T, the transparent huge pages among it (smaps' AnonHugePages);
 * the kernel's zero pages, which a read of memory never written maps (a
 * 2 MiB one under THP always), are nobody's and left out, as numa_maps
 * leaves them: zero_pages=Z says how many;
 * and "heap: PASS" unless
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

    /** One mapping of /proc/self/smaps: its range, file, page size and transparent huge pages. */
    static final class Mapping {
        final long start;
        final long end;
        final String path;
        final boolean none; // PROT_NONE: a reservation, no page can be present
        long pageKib = 4;
        long thpKib;

        Mapping(long start, long end, String perms, String path) {
            this.start = start;
            this.end = end;
            this.none = perms.startsWith("---");
            this.path = path;
        }

        /**
         * The process's own memory, as numapin counts it: no file, or the
         * kernel's names for anonymous huge pages, memfds (ZGC's heap), SysV
         * shared memory and shared anonymous memory (/dev/zero); not a file
         * of a file system.
         */
        boolean own() {
            return path.isEmpty() || path.startsWith("[heap]") || path.startsWith("[stack") || path.startsWith("[anon:")
                    || path.startsWith("/anon_hugepage") || path.startsWith("/memfd:") || path.startsWith("/SYSV")
                    || path.startsWith("/dev/zero");
        }
    }

    static long kib(String smapsLine) {
        return Long.parseLong(smapsLine.replaceAll("[^0-9]", ""));
    }

    static List<Mapping> mappings() throws IOException {
        List<Mapping> out = new ArrayList<>();
        Mapping m = null;
        for (String line : Files.readAllLines(Paths.get("/proc/self/smaps"))) {
            int dash = line.indexOf('-');
            int sp = line.indexOf(' ');
            if (dash > 0 && sp > dash && line.substring(0, dash).matches("[0-9a-f]+")) {
                String[] f = line.trim().split("\\s+", 6);
                m = new Mapping(Long.parseUnsignedLong(line.substring(0, dash), 16),
                        Long.parseUnsignedLong(line.substring(dash + 1, sp), 16), f[1], f.length > 5 ? f[5] : "");
                out.add(m);
            } else if (m != null && line.startsWith("KernelPageSize:")) {
                m.pageKib = kib(line);
            } else if (m != null && line.startsWith("AnonHugePages:")) {
                m.thpKib = kib(line);
            }
        }
        return out;
    }

    /**
     * Frames gathered, each counted once however many times it is mapped;
     * the kernel's zero pages left out (PageNodes.zeroFrames).
     */
    static final class Frames {
        long[] pfn = new long[1 << 16];
        int n;
        boolean hidden;
        long zero; /* zero-page frames left out by the last byNode() */

        void add(long f) {
            if (f == 0) {
                hidden = true;
                return;
            }
            if (n == pfn.length) {
                pfn = java.util.Arrays.copyOf(pfn, n * 2);
            }
            pfn[n++] = f;
        }

        void addRange(long lo, long hi) throws IOException {
            if (hi > lo) {
                PageNodes.frames(lo, hi - lo, this::add);
            }
        }

        /** Node -> distinct pages. */
        TreeMap<Integer, Integer> byNode() throws IOException {
            if (hidden) {
                throw new IllegalStateException("page frames are hidden: the probe must run as root");
            }
            long[] a = java.util.Arrays.copyOf(pfn, n);
            java.util.Arrays.sort(a);
            int k = 0;
            for (int i = 0; i < a.length; i++) {
                if (i == 0 || a[i] != a[i - 1]) {
                    a[k++] = a[i];
                }
            }
            a = java.util.Arrays.copyOf(a, k);
            BitSet zeroes = PageNodes.zeroFrames(a);
            zero = zeroes.cardinality();
            TreeMap<Integer, Integer> h = new TreeMap<>();
            for (int i = 0; i < a.length; i++) {
                if (!zeroes.get(i)) {
                    h.merge(NumaProbe.topo.nodeOfFrame(a[i]), 1, Integer::sum);
                }
            }
            return h;
        }
    }

    static String byNode(Map<Integer, Integer> h) {
        StringBuilder by = new StringBuilder();
        h.forEach((k, v) -> by.append(by.length() == 0 ? "" : ",").append(k >= 0 ? "N" + k : "unknown").append('=').append(v));
        return by.length() == 0 ? "none" : by.toString();
    }

    static long total(Map<Integer, Integer> h) {
        long t = 0;
        for (int v : h.values()) {
            t += v;
        }
        return t;
    }

    /**
     * The heap's pages: with range, the process's own memory inside it (the
     * files mapped into it, the CDS archive's heap objects, counted apart in
     * files); without, every mapping of ZGC's heap memfd (/memfd:java_heap,
     * which JDK 17 maps three times over).
     */
    static Frames heapFrames(List<Mapping> maps, long[] range, Frames files) throws IOException {
        Frames heap = new Frames();
        for (Mapping m : maps) {
            if (range == null) {
                if (m.path.startsWith("/memfd:java_heap")) {
                    heap.addRange(m.start, m.end);
                }
                continue;
            }
            long s = Math.max(m.start, range[0]);
            long e = Math.min(m.end, range[0] + range[1]);
            if (s < e) {
                (m.own() ? heap : files).addRange(s, e);
            }
        }
        return heap;
    }

    /** Prints the heap's count and the process's own; returns the latter's pages. */
    static long count(String phase, long[] range, BitSet want) throws IOException {
        List<Mapping> maps = mappings();
        Frames files = new Frames();
        TreeMap<Integer, Integer> pages = heapFrames(maps, range, files).byNode();
        long resident = total(pages);
        long on = 0;
        for (Map.Entry<Integer, Integer> e : pages.entrySet()) {
            if (e.getKey() >= 0 && want.get(e.getKey())) {
                on += e.getValue();
            }
        }
        System.out.printf("heap phase=%s pages=%d on_nodes=%d share=%.4f by_node=%s file_pages=%d%n", phase, resident,
                on, resident > 0 ? (double) on / resident : 0.0, byNode(pages), total(files.byNode()));
        // Everything numapin counts as the process's own memory, and the
        // part of it in huge pages (hugetlbfs), for comparing with numapin's
        // own figures.
        Frames own = new Frames();
        Frames huge = new Frames();
        long thp = 0;
        for (Mapping m : maps) {
            if (m.own() && !m.none) {
                own.addRange(m.start, m.end);
                if (m.pageKib > 4) {
                    huge.addRange(m.start, m.end);
                }
                thp += m.thpKib;
            }
        }
        TreeMap<Integer, Integer> o = own.byNode();
        TreeMap<Integer, Integer> h = huge.byNode();
        System.out.printf("own phase=%s pages=%d by_node=%s huge_pages=%d huge_by_node=%s thp_kib=%d zero_pages=%d%n",
                phase, total(o), byNode(o), total(h), byNode(h), thp, own.zero);
        System.out.flush();
        if (resident == 0) {
            throw new IllegalStateException("no resident page in the heap");
        }
        return total(o);
    }

    /** This thread's CPU time (user and system) in clock ticks, from /proc. */
    static long cpuTicks() throws java.io.IOException {
        String stat = new String(Files.readAllBytes(Paths.get("/proc/thread-self/stat")),
                java.nio.charset.StandardCharsets.US_ASCII);
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime: fields 14 and 15
    }

    /** Spins until this thread has used ms more milliseconds of CPU (100 ticks a second). */
    static void spin(long ms) throws java.io.IOException {
        if (ms <= 0) {
            return;
        }
        long until = cpuTicks() + (ms + 9) / 10;
        long x = 0;
        while (cpuTicks() < until) {
            for (int i = 0; i < 100_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        sink = x;
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

        boolean memfd = "memfd".equals(a.get("heap"));
        long[] range = memfd ? null : heapRange(Paths.get(arg(a, "coops")));
        if (memfd) {
            System.out.println("heap: the mappings of /memfd:java_heap");
        } else if (range == null) {
            System.out.println("heap: FAIL (no \"Heap address\" line in " + a.get("coops") + ")");
            System.exit(1);
        }
        if (range != null) {
            System.out.printf("heap range=0x%x+%d MiB kept=%d arrays%n", range[0], range[1] >> 20, kept.size());
        }
        if (a.containsKey("ready")) {
            spin(Long.parseLong(a.getOrDefault("spin", "0")));
            count("before", range, want);
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            ForkJoinPool readers = null;
            if ("1".equals(a.get("hold"))) {
                readers = new ForkJoinPool(2);
                for (int w = 0; w < 2; w++) {
                    readers.execute(() -> {
                        long sum = 0;
                        while (!stop.get()) {
                            for (byte[] b : kept) {
                                for (int i = 0; i < b.length; i += 4096) {
                                    sum += b[i];
                                }
                            }
                        }
                        sink = sum;
                    });
                }
            }
            Files.write(Paths.get(a.get("ready")), new byte[0]);
            Path go = Paths.get(arg(a, "go"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!Files.exists(go) && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            stop.set(true);
            if (readers != null) {
                readers.shutdown();
                readers.awaitTermination(60, TimeUnit.SECONDS);
            }
            count("after", range, want);
        } else if (!"1".equals(a.get("settle"))) {
            count("end", range, want);
        } else {
            // Counting allocates (the maps it reads, the frames it sorts):
            // a count touches heap pages that the next count's garbage
            // reuses after a collection (the young generation; ZGC's page
            // cache), so counts repeat until one holds what the one before
            // it did (within 0.1%, at most 4): that is what the process
            // holds until it exits.
            long last = count("warm", range, want);
            for (int i = 0; i < 3; i++) {
                System.gc();
                long now = count("warm", range, want);
                boolean settled = Math.abs(now - last) * 1000 <= last;
                last = now;
                if (settled) {
                    break;
                }
            }
            System.gc();
            count("end", range, want);
        }
        System.out.println("heap: PASS");
    }
}
