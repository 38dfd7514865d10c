package numapin.child;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Keeps N MiB of the Java heap live, written to, through two collections,
 * then ends: the child of the tests of the memory numapin counts. With
 * {@code pages}, it also counts, in a shutdown hook, the distinct pages
 * resident in its own memory as numapin defines it (anonymous mappings,
 * memfds such as ZGC's heap, SysV segments, shared anonymous memory; not
 * the files it maps): the distinct page frames /proc/self/pagemap gives
 * for them, so that a page mapped at several addresses (JDK 17 ZGC's heap
 * views) counts once. Only root sees page frame numbers; to others the
 * count is -1.
 *
 * <pre>
 *   heap kept=N                      after the collections
 *   pages distinct=P                 with pages, in the shutdown hook
 * </pre>
 */
public final class Heap {
    private Heap() {}

    public static void main(String[] args) throws IOException {
        byte[][] keep = new byte[Integer.parseInt(args[0])][];
        for (int i = 0; i < keep.length; i++) {
            keep[i] = new byte[1 << 20];
            Arrays.fill(keep[i], (byte) 1);
        }
        System.gc();
        System.gc();
        long kept = 0;
        for (byte[] b : keep) {
            kept += b[b.length - 1];
        }
        if (args.length > 1 && args[1].equals("pages")) {
            // As late as Java code runs: numapin's summary reads at VMDeath, just after.
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    Self.out("pages distinct=" + distinctPages());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }));
        }
        Self.out("heap kept=" + kept);
    }

    /** Whether a line of /proc/self/maps is a mapping of the process's own memory that may hold pages. */
    private static boolean own(String[] f) {
        if (f[1].startsWith("---")) {
            return false; // reserved address space (ZGC, G1, the class space reserve far more than they use)
        }
        String name = f.length > 5 ? f[5] : "";
        return name.isEmpty() || name.equals("[heap]") || name.startsWith("[stack") || name.startsWith("/memfd:")
                || name.startsWith("/SYSV") || name.startsWith("/dev/zero") || name.startsWith("/anon_hugepage");
    }

    /**
     * The distinct page frames resident in the process's own mappings; -1
     * when the kernel hides them. Its memory is allocated before the
     * mappings are read, so that counting adds no page while it counts.
     */
    static long distinctPages() throws IOException {
        List<long[]> ranges = new ArrayList<>();
        long bound = 0;
        for (String line : Files.readAllLines(Path.of("/proc/self/maps"), StandardCharsets.ISO_8859_1)) {
            String[] f = line.trim().split("\\s+", 6);
            if (own(f)) {
                String[] range = f[0].split("-");
                long lo = Long.parseUnsignedLong(range[0], 16) / 4096, hi = Long.parseUnsignedLong(range[1], 16) / 4096;
                ranges.add(new long[] {lo, hi});
                bound += hi - lo;
            }
        }
        long[] frames = new long[(int) Math.min(bound, Integer.MAX_VALUE - 8)];
        int n = 0;
        boolean hidden = false;
        byte[] buf = new byte[8 * 4096];
        ByteBuffer b = ByteBuffer.wrap(buf).order(ByteOrder.nativeOrder());
        try (RandomAccessFile pagemap = new RandomAccessFile("/proc/self/pagemap", "r")) {
            for (long[] r : ranges) {
                for (long p = r[0]; p < r[1]; ) {
                    int k = (int) Math.min(r[1] - p, 4096);
                    pagemap.seek(p * 8);
                    pagemap.readFully(buf, 0, k * 8);
                    for (int i = 0; i < k; i++) {
                        long e = b.getLong(i * 8);
                        if (e < 0 && n < frames.length) { // bit 63: present
                            long pfn = e & ((1L << 55) - 1);
                            hidden |= pfn == 0;
                            frames[n++] = pfn;
                        }
                    }
                    p += k;
                }
            }
        }
        Arrays.sort(frames, 0, n);
        long distinct = 0;
        for (int i = 0; i < n; i++) {
            distinct += i == 0 || frames[i] != frames[i - 1] ? 1 : 0;
        }
        return hidden ? -1 : distinct;
    }
}
