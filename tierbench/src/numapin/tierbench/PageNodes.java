package numapin.tierbench;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * On which NUMA node each page of a range of this process's memory sits, as
 * the kernel says: the physical frame of each page from /proc/self/pagemap
 * (frame numbers are visible to root only; to others they read 0), and the
 * node of each frame from the memory blocks under
 * /sys/devices/system/node/nodeN/memoryM. This counts exactly the pages of
 * one buffer, which numa_maps cannot do once mappings merge.
 *
 * <p>Used by TierBench's --locality and by the QEMU tests' NumaProbe.
 */
public final class PageNodes {
    public static final long PAGE = 4096;
    /** Key of pages not present (never touched, or swapped). */
    public static final int ABSENT = -1;
    /** Key of present pages whose node is unknown (frame hidden: not root; or no memory block). */
    public static final int UNKNOWN = -2;

    private final TreeMap<Integer, BitSet> nodeCpus;
    private final Map<Long, Integer> blockNode;
    private final long blockBytes;

    private PageNodes(TreeMap<Integer, BitSet> nodeCpus, Map<Long, Integer> blockNode, long blockBytes) {
        this.nodeCpus = nodeCpus;
        this.blockNode = blockNode;
        this.blockBytes = blockBytes;
    }

    /** Reads the nodes, their CPUs and their memory blocks from sysfs. */
    public static PageNodes load() throws IOException {
        long blockBytes = Long.parseLong(read("/sys/devices/system/memory/block_size_bytes").trim(), 16);
        TreeMap<Integer, BitSet> nodeCpus = new TreeMap<>();
        Map<Long, Integer> blockNode = new HashMap<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(
                Paths.get("/sys/devices/system/node"), "node[0-9]*")) {
            for (Path node : ds) {
                int n = Integer.parseInt(node.getFileName().toString().substring(4));
                nodeCpus.put(n, parseList(read(node + "/cpulist")));
                try (DirectoryStream<Path> mem = Files.newDirectoryStream(node, "memory[0-9]*")) {
                    for (Path m : mem) {
                        blockNode.put(Long.parseLong(m.getFileName().toString().substring(6)), n);
                    }
                }
            }
        }
        return new PageNodes(nodeCpus, blockNode, blockBytes);
    }

    /** Node -> its CPUs. */
    public SortedMap<Integer, BitSet> nodeCpus() {
        return Collections.unmodifiableSortedMap(nodeCpus);
    }

    public long blockBytes() {
        return blockBytes;
    }

    /** The node of a CPU, or -1. */
    public int nodeOfCpu(int cpu) {
        for (Map.Entry<Integer, BitSet> e : nodeCpus.entrySet()) {
            if (e.getValue().get(cpu)) {
                return e.getKey();
            }
        }
        return -1;
    }

    /** The nodes of a set of CPUs. */
    public BitSet nodesOfCpus(BitSet cpus) {
        BitSet nodes = new BitSet();
        for (int c = cpus.nextSetBit(0); c >= 0; c = cpus.nextSetBit(c + 1)) {
            int n = nodeOfCpu(c);
            if (n >= 0) {
                nodes.set(n);
            }
        }
        return nodes;
    }

    /**
     * Node -> pages of [addr, addr+len), whole pages. Key {@link #ABSENT}
     * counts pages not present, {@link #UNKNOWN} present pages of no known
     * node (a frame number of 0, as non-root processes read them).
     */
    public TreeMap<Integer, Integer> count(long addr, long len) throws IOException {
        TreeMap<Integer, Integer> hist = new TreeMap<>();
        entries(addr, len, e -> hist.merge((e & (1L << 63)) == 0 ? ABSENT : nodeOfFrame(e & ((1L << 55) - 1)), 1,
                Integer::sum));
        return hist;
    }

    /** Pages read from pagemap at a time: 512 KiB of entries. */
    private static final int CHUNK = 1 << 16;

    /** Each /proc/self/pagemap entry of the pages of [addr, addr+len), in order. */
    private static void entries(long addr, long len, java.util.function.LongConsumer out) throws IOException {
        long first = addr / PAGE;
        long end = (addr + len + PAGE - 1) / PAGE;
        byte[] buf = new byte[(int) Math.min(CHUNK, Math.max(0, end - first)) * 8];
        try (RandomAccessFile f = new RandomAccessFile("/proc/self/pagemap", "r")) {
            for (long at = first; at < end; at += CHUNK) {
                int n = (int) Math.min(CHUNK, end - at);
                f.seek(at * 8);
                f.readFully(buf, 0, n * 8);
                for (int i = 0; i < n; i++) {
                    long e = 0;
                    for (int b = 7; b >= 0; b--) {
                        e = (e << 8) | (buf[i * 8 + b] & 0xff);
                    }
                    out.accept(e);
                }
            }
        }
    }

    /**
     * The frame numbers of the present pages of [addr, addr+len), added to
     * {@code out} (0 for a present page whose frame is hidden: not root).
     * A page mapped at several addresses has the same frame at each.
     */
    public static void frames(long addr, long len, java.util.function.LongConsumer out) throws IOException {
        entries(addr, len, e -> {
            if ((e & (1L << 63)) != 0) {
                out.accept(e & ((1L << 55) - 1));
            }
        });
    }

    /**
     * Which of the frames {@code pfn} (sorted, distinct) are the kernel's
     * zero pages, the 4 KiB one or those of the huge zero page (a read of
     * anonymous memory never written maps them, under THP {@code always}
     * a 2 MiB one): nobody's memory, which numa_maps leaves out. From
     * /proc/kpageflags (KPF_ZERO_PAGE, bit 24; root only), read 8 KiB at
     * a time.
     */
    public static BitSet zeroFrames(long[] pfn) throws IOException {
        BitSet zero = new BitSet(pfn.length);
        final int per = 1024;
        byte[] buf = new byte[per * 8];
        long first = -1;
        int got = 0;
        try (RandomAccessFile f = new RandomAccessFile("/proc/kpageflags", "r")) {
            for (int i = 0; i < pfn.length; i++) {
                if (first < 0 || pfn[i] < first || pfn[i] >= first + got) {
                    first = pfn[i];
                    f.seek(first * 8);
                    int n = f.read(buf, 0, buf.length);
                    got = n > 0 ? n / 8 : 0;
                    if (got == 0) {
                        continue;
                    }
                }
                int at = (int) (pfn[i] - first) * 8;
                long flags = 0;
                for (int b = 7; b >= 0; b--) {
                    flags = (flags << 8) | (buf[at + b] & 0xff);
                }
                if ((flags & (1L << 24)) != 0) {
                    zero.set(i);
                }
            }
        }
        return zero;
    }

    /** The node holding frame {@code pfn}, or {@link #UNKNOWN}. */
    public int nodeOfFrame(long pfn) {
        Integer nd = pfn == 0 ? null : blockNode.get(pfn * PAGE / blockBytes);
        return nd == null ? UNKNOWN : nd;
    }

    /** "N0=12,N1=3,absent=1" */
    public static String histString(Map<Integer, Integer> h) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<Integer, Integer> e : h.entrySet()) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            String k = e.getKey() == ABSENT ? "absent" : e.getKey() == UNKNOWN ? "unknown" : "N" + e.getKey();
            sb.append(k).append('=').append(e.getValue());
        }
        return sb.toString();
    }

    public static String read(String path) throws IOException {
        return new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.US_ASCII);
    }

    /** "0-2,5" -> {0,1,2,5} */
    public static BitSet parseList(String s) {
        BitSet b = new BitSet();
        s = s.trim();
        if (s.isEmpty()) {
            return b;
        }
        for (String part : s.split(",")) {
            int dash = part.indexOf('-');
            if (dash < 0) {
                b.set(Integer.parseInt(part.trim()));
            } else {
                int lo = Integer.parseInt(part.substring(0, dash).trim());
                int hi = Integer.parseInt(part.substring(dash + 1).trim());
                b.set(lo, hi + 1);
            }
        }
        return b;
    }

    /** {0,1,2,5} -> "0-2,5" */
    public static String formatList(BitSet b) {
        StringBuilder sb = new StringBuilder();
        int i = b.nextSetBit(0);
        while (i >= 0) {
            int j = b.nextClearBit(i) - 1;
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(i);
            if (j > i) {
                sb.append('-').append(j);
            }
            i = b.nextSetBit(j + 1);
        }
        return sb.toString();
    }
}
