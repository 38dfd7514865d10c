import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ForkJoinPool;
import sun.misc.Unsafe;

/**
 * Runs inside the QEMU guest under numapin with scope=jvm and checks, from
 * the kernel's point of view, that the whole JVM lives on its group: every
 * thread of the process (GC, JIT, VM threads included) may run only on the
 * group's CPUs, main has the group's memory policy, and the pages of a
 * large Java array that main allocates and touches are on the group's node.
 *
 * Arguments are key=value:
 *   cpus=LIST   the group's CPUs (required)
 *   nodes=LIST  the group's node(s) (required)
 *   policy=P    main's memory policy as numa_maps shows it, e.g. bind:1 (required)
 *   mib=N       size of the array (default 24)
 *
 * The array's address comes from its compressed reference (the guest's
 * 64 MiB heap sits below 4 GiB, where a compressed reference is the address
 * itself, or the address shifted by 3); it is checked against the array's
 * contents, read through that address, before any page is counted. Pages are
 * counted through /proc/self/pagemap, as NumaProbe does.
 *
 * Result lines start with "probe:"; the last is "probe: PASS" or
 * "probe: FAIL (N failed checks)"; exit status 0 or 1.
 */
public final class JvmScopeProbe {
    private static final long PAGE = 4096;
    private static final List<String> failures = new ArrayList<>();

    private static void check(boolean ok, String what) {
        if (!ok) {
            failures.add(what);
        }
        out((ok ? "ok   " : "FAIL ") + what);
    }

    private static void out(String line) {
        System.out.println("probe: " + line);
        System.out.flush();
    }

    static Unsafe unsafe() throws ReflectiveOperationException {
        Field f = Unsafe.class.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        return (Unsafe) f.get(null);
    }

    /** True when [addr, addr+len) lies in one mapping of /proc/self/maps. */
    static boolean mapped(long addr, long len) throws IOException {
        for (String line : Files.readAllLines(Paths.get("/proc/self/maps"))) {
            String range = line.substring(0, line.indexOf(' '));
            long lo = Long.parseUnsignedLong(range.substring(0, range.indexOf('-')), 16);
            long hi = Long.parseUnsignedLong(range.substring(range.indexOf('-') + 1), 16);
            if (Long.compareUnsigned(lo, addr) <= 0 && Long.compareUnsigned(addr + len, hi) <= 0) {
                return true;
            }
        }
        return false;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new TreeMap<>();
        for (String s : args) {
            a.put(s.substring(0, s.indexOf('=')), s.substring(s.indexOf('=') + 1));
        }
        BitSet wantCpus = NumaProbe.parseList(a.get("cpus"));
        BitSet wantNodes = NumaProbe.parseList(a.get("nodes"));
        String wantPolicy = a.get("policy");
        int mib = Integer.parseInt(a.getOrDefault("mib", "24"));
        NumaProbe.loadTopology();

        // a fork-join worker, so that numapin has a thread to place too
        ForkJoinPool pool = new ForkJoinPool(1);
        String workerCpus = pool.submit(() -> NumaProbe.statusField(NumaProbe.read("/proc/thread-self/status"),
                "Cpus_allowed_list")).get();
        out("worker allowed=" + workerCpus);

        // main's array: allocated (zeroed) and written by main
        int len = mib << 20;
        byte[] array = new byte[len];
        for (int i = 0; i < len; i += (int) PAGE) {
            array[i] = (byte) (i / PAGE * 31 + 7);
        }
        Unsafe u = unsafe();
        Object[] holder = {array};
        long base = u.arrayBaseOffset(byte[].class);
        long addr = -1;
        for (int attempt = 0; attempt < 2 && addr < 0; attempt++) {
            long ref = u.addressSize() == 8 && u.arrayIndexScale(Object[].class) == 8
                    ? u.getLong(holder, (long) u.arrayBaseOffset(Object[].class))
                    : Integer.toUnsignedLong(u.getInt(holder, (long) u.arrayBaseOffset(Object[].class)));
            for (long cand : new long[] {ref, ref << 3}) {
                long data = cand + base;
                if (cand == 0 || !mapped(cand, base + len)) {
                    continue;
                }
                boolean same = true;
                for (int i = 0; i < len && same; i += 64 * (int) PAGE) {
                    same = u.getByte(data + i) == array[i];
                }
                if (same) {
                    addr = data;
                    break;
                }
            }
        }
        check(addr >= 0, "found the array's address through its reference");
        if (addr >= 0) {
            long start = (addr + PAGE - 1) & ~(PAGE - 1);
            long bytes = ((addr + len) & ~(PAGE - 1)) - start;
            TreeMap<Integer, Integer> pages = NumaProbe.pageNodes(start, bytes);
            long n = bytes / PAGE;
            long in = 0;
            for (Map.Entry<Integer, Integer> e : pages.entrySet()) {
                if (e.getKey() >= 0 && wantNodes.get(e.getKey())) {
                    in += e.getValue();
                }
            }
            out("array address=0x" + Long.toHexString(addr) + " pages=" + n + " on-nodes="
                    + NumaProbe.histString(pages));
            check(in * 100 >= n * 99, "main's array: " + in + "/" + n + " pages on node(s) "
                    + NumaProbe.formatList(wantNodes) + " (>= 99%)");
            check(holder[0] == array, "the array did not move");
        }

        String policy = NumaProbe.taskPolicy();
        check(policy.equals(wantPolicy), "main's memory policy " + policy + " == " + wantPolicy);

        // every thread of the process
        int count = 0;
        List<String> outside = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Paths.get("/proc/self/task"))) {
            for (Path task : ds) {
                String st;
                try {
                    st = NumaProbe.read(task + "/status");
                } catch (IOException gone) {
                    continue;
                }
                count++;
                String name = NumaProbe.statusField(st, "Name");
                String allowed = NumaProbe.statusField(st, "Cpus_allowed_list");
                out("thread " + name + " tid=" + task.getFileName() + " allowed=" + allowed);
                if (!NumaProbe.parseList(allowed).equals(wantCpus)) {
                    outside.add(name + "=" + allowed);
                }
            }
        }
        check(count >= 8, count + " threads listed (VM, GC, JIT and the rest)");
        check(outside.isEmpty(), "every thread may run only on " + NumaProbe.formatList(wantCpus)
                + (outside.isEmpty() ? "" : ", not: " + outside));
        pool.shutdown();
        if (failures.isEmpty()) {
            out("PASS");
            System.exit(0);
        }
        out("FAIL (" + failures.size() + " failed checks)");
        System.exit(1);
    }
}
