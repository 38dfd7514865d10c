import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import numapin.tierbench.PageNodes;
import sun.misc.Unsafe;

/**
 * Runs inside the QEMU guest under the numapin agent and checks, from the
 * kernel's own point of view, where fork-join workers run and where the
 * memory they first touch lands.
 *
 * Arguments are key=value:
 *   cpus=LIST        exact CPU list every fork-join worker must be allowed (required)
 *   nodes=LIST       the group's NUMA nodes (required)
 *   mem=MODE         preferred|bind|interleave|local|none: what to expect of the
 *                    workers' memory policy and of their pages
 *   workers=N        tasks (and so workers) in a custom pool (default 4)
 *   common=N         tasks in the common pool (default its parallelism; 0 skips)
 *   mib=N            MiB each worker first-touches (default 8)
 *   rendezvous=DIR:N write DIR/PID once all workers run, then wait until DIR
 *                    holds N files before the workers go on (two JVMs at once)
 *   out=FILE         write "allowed=LIST ran=LIST" of the workers to FILE
 *   spawned=judge    also judge the thread a worker starts ("spawned-by-worker"):
 *                    as for any non-matching thread (default: only print its facts)
 *   scope=jvm|threads what numapin places (default threads): with threads, every
 *                    thread but the workers keeps all CPUs and the default memory
 *                    policy; with jvm (the whole JVM on its group), every thread
 *                    of the process may run only on cpus= and has the workers'
 *                    memory policy
 *
 * Every result line starts with "probe:"; the last one is "probe: PASS" or
 * "probe: FAIL (N failed checks)", and the exit status is 0 or 1.
 */
public final class NumaProbe {
    private static final long PAGE = 4096;
    private static final String WORKER_RE =
            "ForkJoinPool-\\d+-worker-\\d+|ForkJoinPool\\.commonPool-worker-\\d+";

    private static final List<String> failures = new ArrayList<>();

    private static void check(boolean ok, String what) {
        if (!ok) {
            failures.add(what);
        }
        out((ok ? "ok   " : "FAIL ") + what);
    }

    private static synchronized void out(String line) {
        System.out.println("probe: " + line);
        System.out.flush();
    }

    // ---- small helpers over /proc and /sys -------------------------------

    static String read(String path) throws IOException {
        return PageNodes.read(path);
    }

    static BitSet parseList(String s) {
        return PageNodes.parseList(s);
    }

    static String formatList(BitSet b) {
        return PageNodes.formatList(b);
    }

    /** Value of a "Key:\tvalue" line of a /proc status file. */
    static String statusField(String status, String key) {
        for (String line : status.split("\n")) {
            if (line.startsWith(key + ":")) {
                return line.substring(key.length() + 1).trim();
            }
        }
        return "";
    }

    /** Field 39 (processor) of a /proc stat line: the CPU the thread last ran on. */
    static int lastCpu(String stat) {
        String rest = stat.substring(stat.lastIndexOf(')') + 2);
        String[] f = rest.trim().split("\\s+");
        // rest starts at field 3 (state); field 39 is index 36
        return Integer.parseInt(f[36]);
    }

    static int currentTid() throws IOException {
        // /proc/thread-self -> "<pid>/task/<tid>"
        String link = Files.readSymbolicLink(Paths.get("/proc/thread-self")).toString();
        return Integer.parseInt(link.substring(link.lastIndexOf('/') + 1));
    }

    // ---- NUMA topology of the (emulated) machine -------------------------
    // The page counting is shared with TierBench --locality: numapin.tierbench.PageNodes.

    static PageNodes topo;

    static void loadTopology() throws IOException {
        topo = PageNodes.load();
    }

    static int nodeOfCpu(int cpu) {
        return topo.nodeOfCpu(cpu);
    }

    /** Node of every page of [addr, addr+len): see PageNodes.count. */
    static TreeMap<Integer, Integer> pageNodes(long addr, long len) throws IOException {
        return topo.count(addr, len);
    }

    /** Policy column of the numa_maps line of the mapping holding addr. */
    static String policyAt(String numaMaps, long addr) {
        String best = null;
        long bestStart = 0;
        for (String line : numaMaps.split("\n")) {
            int sp = line.indexOf(' ');
            if (sp <= 0) {
                continue;
            }
            long start = Long.parseUnsignedLong(line.substring(0, sp), 16);
            if (Long.compareUnsigned(start, addr) <= 0
                    && (best == null || Long.compareUnsigned(start, bestStart) > 0)) {
                bestStart = start;
                best = line;
            }
        }
        if (best == null) {
            return "?";
        }
        return policyColumn(best);
    }

    /** Second column of a numa_maps line; "prefer (many):0-1" holds a space. */
    static String policyColumn(String line) {
        String[] f = line.split(" ");
        if (f.length < 2) {
            return "?";
        }
        if (f.length > 2 && f[2].startsWith("(many)")) {
            return f[1] + " " + f[2];
        }
        return f[1];
    }

    /** Task policy: policy column of any mapping that has no policy of its own (the first one). */
    static String taskPolicy() throws IOException {
        String maps = read("/proc/thread-self/numa_maps");
        return policyColumn(maps.substring(0, maps.indexOf('\n')));
    }

    // ---- what a worker measures -------------------------------------------

    static final class Report {
        String name;
        int tid;
        BitSet allowed;
        BitSet ran = new BitSet();
        String mems;
        String policy;
        TreeMap<Integer, Integer> pages;
        long pageCount;
        String error;
    }

    static Unsafe unsafe() throws ReflectiveOperationException {
        Field f = Unsafe.class.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        return (Unsafe) f.get(null);
    }

    static void spin(int rounds) {
        long x = 0;
        for (int i = 0; i < rounds; i++) {
            x += i ^ (x >>> 3);
        }
        if (x == 42) {
            System.out.print("");
        }
    }

    /** Facts of a thread that a placed worker starts: set by the first worker to get here. */
    static final AtomicReference<String[]> spawned = new AtomicReference<>();

    static Report measure(CountDownLatch started, CountDownLatch go, long bytes) {
        Report r = new Report();
        r.name = Thread.currentThread().getName();
        try {
            r.tid = currentTid();
            started.countDown();
            if (!go.await(120, TimeUnit.SECONDS)) {
                r.error = "timed out waiting for the other workers";
                return r;
            }
            // A thread started by a placed worker is not a worker either.
            if (spawned.compareAndSet(null, new String[] {"?", "?"})) {
                Thread s = new Thread(() -> spawned.set(plainFactsQuiet()), "spawned-by-worker");
                s.start();
                s.join();
            }
            // Where does this thread run? Sample while busy.
            for (int i = 0; i < 20; i++) {
                spin(2000);
                r.ran.set(lastCpu(read("/proc/thread-self/stat")));
            }
            // First-touch a fresh buffer of its own, one write per page.
            Unsafe u = unsafe();
            long addr = u.allocateMemory(bytes + PAGE);
            long start = (addr + PAGE - 1) & ~(PAGE - 1);
            for (long p = start; p < start + bytes; p += PAGE) {
                u.putByte(p, (byte) 1);
                if (((p - start) / PAGE) % 256 == 0) {
                    r.ran.set(lastCpu(read("/proc/thread-self/stat")));
                }
            }
            String status = read("/proc/thread-self/status");
            r.allowed = parseList(statusField(status, "Cpus_allowed_list"));
            r.mems = statusField(status, "Mems_allowed_list");
            r.policy = policyAt(read("/proc/thread-self/numa_maps"), start);
            r.pages = pageNodes(start, bytes);
            r.pageCount = bytes / PAGE;
            r.ran.set(lastCpu(read("/proc/thread-self/stat")));
            // the buffer is deliberately not freed: no later allocation may reuse it
        } catch (Throwable t) {
            r.error = t.toString();
        }
        return r;
    }

    // ---- main ---------------------------------------------------------------

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (String s : args) {
            int eq = s.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("expected key=value: " + s);
            }
            a.put(s.substring(0, eq), s.substring(eq + 1));
        }
        BitSet wantCpus = parseList(a.get("cpus"));
        BitSet wantNodes = parseList(a.get("nodes"));
        String mem = a.getOrDefault("mem", "preferred");
        int workers = Integer.parseInt(a.getOrDefault("workers", "4"));
        int common = Integer.parseInt(a.getOrDefault("common",
                String.valueOf(ForkJoinPool.getCommonPoolParallelism())));
        long bytes = Long.parseLong(a.getOrDefault("mib", "8")) << 20;

        loadTopology();
        BitSet online = parseList(read("/sys/devices/system/cpu/online"));
        out("machine nodes=" + formatList(toBits(topo.nodeCpus().keySet())) + " cpus=" + formatList(online)
                + " memory-block=" + topo.blockBytes() + " expect cpus=" + formatList(wantCpus)
                + " nodes=" + formatList(wantNodes) + " mem=" + mem);

        // Threads numapin does not place itself: main, a plain thread, a thread a worker starts.
        Map<String, String[]> plain = new TreeMap<>();
        plain.put("main", plainFacts());
        String[][] holder = new String[1][];
        Thread t = new Thread(() -> holder[0] = plainFactsQuiet(), "plain-thread");
        t.start();
        t.join();
        plain.put("plain-thread", holder[0]);

        int total = workers + common;
        CountDownLatch started = new CountDownLatch(total);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Report>> futures = new ArrayList<>();
        ForkJoinPool pool = workers > 0 ? new ForkJoinPool(workers) : null;
        for (int i = 0; i < workers; i++) {
            futures.add(pool.submit(() -> measure(started, go, bytes)));
        }
        for (int i = 0; i < common; i++) {
            futures.add(ForkJoinPool.commonPool().submit(() -> measure(started, go, bytes)));
        }
        boolean allStarted = started.await(120, TimeUnit.SECONDS);
        check(allStarted, "all " + total + " tasks run at once on distinct workers ("
                + (total - started.getCount()) + " started)");

        String rv = a.get("rendezvous");
        if (rv != null) {
            rendezvous(rv);
        }
        go.countDown();

        List<Report> reports = new ArrayList<>();
        for (Future<Report> f : futures) {
            reports.add(f.get(300, TimeUnit.SECONDS));
        }
        if (spawned.get() != null) {
            plain.put("spawned-by-worker", spawned.get());
        }

        // ---- judge ----
        Set<Integer> workerTids = new HashSet<>();
        BitSet allAllowed = new BitSet();
        BitSet allRan = new BitSet();
        Set<String> names = new HashSet<>();
        for (Report r : reports) {
            if (r.error != null) {
                check(false, "worker " + r.name + ": " + r.error);
                continue;
            }
            workerTids.add(r.tid);
            names.add(r.name);
            allAllowed.or(r.allowed);
            allRan.or(r.ran);
            out("worker name=" + r.name + " tid=" + r.tid + " allowed=" + formatList(r.allowed)
                    + " ran=" + formatList(r.ran) + " mems_allowed=" + r.mems + " policy=" + r.policy
                    + " pages=" + r.pageCount + " on-nodes=" + histString(r.pages));
            check(r.name.matches(WORKER_RE), r.name + " is a fork-join worker name");
            check(r.allowed.equals(wantCpus), r.name + " allowed CPUs " + formatList(r.allowed)
                    + " == " + formatList(wantCpus));
            BitSet outside = (BitSet) r.ran.clone();
            outside.andNot(wantCpus);
            check(outside.isEmpty(), r.name + " ran only on " + formatList(wantCpus)
                    + " (seen on " + formatList(r.ran) + ")");
            judgeMemory(r, mem, wantNodes);
        }
        check(names.size() == total, total + " distinct workers measured (" + names.size() + ")");

        boolean jvm = "jvm".equals(a.getOrDefault("scope", "threads"));
        BitSet all = jvm ? wantCpus : online;
        String wantPolicy = jvm && !reports.isEmpty() && reports.get(0).policy != null ? reports.get(0).policy
                : "default";
        boolean judgeSpawned = "judge".equals(a.get("spawned"));
        for (Map.Entry<String, String[]> e : plain.entrySet()) {
            String[] f = e.getValue();
            out("non-worker name=" + e.getKey() + " allowed=" + f[0] + " policy=" + f[1]);
            if (e.getKey().equals("spawned-by-worker") && !judgeSpawned) {
                continue;
            }
            check(parseList(f[0]).equals(all), e.getKey() + (jvm ? " is on the group's CPUs " : " keeps all CPUs ")
                    + formatList(all) + " (has " + f[0] + ")");
            check(f[1].equals(wantPolicy), e.getKey() + (jvm ? " has the JVM's memory policy " : " keeps the memory policy ")
                    + wantPolicy + " (has " + f[1] + ")");
        }
        if (judgeSpawned && !plain.containsKey("spawned-by-worker")) {
            check(false, "a worker started a thread");
        }
        // Every other thread of the process (JVM threads, GC, ...): all CPUs, or the group's.
        int others = 0;
        List<String> pinnedOthers = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Paths.get("/proc/self/task"))) {
            for (Path task : ds) {
                int tid = Integer.parseInt(task.getFileName().toString());
                if (workerTids.contains(tid)) {
                    continue;
                }
                String st;
                try {
                    st = read(task + "/status");
                } catch (IOException gone) {
                    continue;
                }
                others++;
                String allowed = statusField(st, "Cpus_allowed_list");
                if (!parseList(allowed).equals(all)) {
                    pinnedOthers.add(statusField(st, "Name") + "(" + tid + ")=" + allowed);
                }
            }
        }
        check(pinnedOthers.isEmpty(), "all " + others + " other threads " + (jvm ? "are on the group's CPUs "
                : "keep all CPUs ") + formatList(all) + (pinnedOthers.isEmpty() ? "" : ", not: " + pinnedOthers));

        String outFile = a.get("out");
        if (outFile != null) {
            Files.write(Paths.get(outFile), ("allowed=" + formatList(allAllowed) + " ran="
                    + formatList(allRan) + "\n").getBytes(StandardCharsets.US_ASCII));
        }
        out("workers allowed=" + formatList(allAllowed) + " ran=" + formatList(allRan));
        if (failures.isEmpty()) {
            out("PASS");
            System.exit(0);
        }
        out("FAIL (" + failures.size() + " failed checks)");
        System.exit(1);
    }

    static void judgeMemory(Report r, String mem, BitSet wantNodes) {
        long n = r.pageCount;
        long in = 0;
        for (Map.Entry<Integer, Integer> e : r.pages.entrySet()) {
            if (e.getKey() >= 0 && wantNodes.get(e.getKey())) {
                in += e.getValue();
            }
        }
        String nodes = formatList(wantNodes);
        boolean multi = wantNodes.cardinality() > 1;
        switch (mem) {
            case "preferred":
                check(r.policy.startsWith("prefer"), r.name + " policy " + r.policy + " is preferred");
                check(in * 100 >= n * 99, r.name + " " + in + "/" + n + " pages on node(s) " + nodes + " (>= 99%)");
                break;
            case "bind":
                check(r.policy.equals("bind:" + nodes), r.name + " policy " + r.policy + " == bind:" + nodes);
                check(in * 100 >= n * 99, r.name + " " + in + "/" + n + " pages on node(s) " + nodes + " (>= 99%)");
                break;
            case "interleave":
                check(r.policy.equals("interleave:" + nodes), r.name + " policy " + r.policy + " == interleave:" + nodes);
                check(in * 100 >= n * 99, r.name + " " + in + "/" + n + " pages on node(s) " + nodes + " (>= 99%)");
                if (multi) {
                    long share = n / (2L * wantNodes.cardinality());
                    for (int nd = wantNodes.nextSetBit(0); nd >= 0; nd = wantNodes.nextSetBit(nd + 1)) {
                        int c = r.pages.getOrDefault(nd, 0);
                        check(c >= share, r.name + " interleave puts " + c + " pages on node " + nd
                                + " (>= " + share + ")");
                    }
                }
                break;
            case "local":
                check(r.policy.equals("local"), r.name + " policy " + r.policy + " == local");
                check(in * 100 >= n * 99, r.name + " " + in + "/" + n + " pages on node(s) " + nodes + " (>= 99%)");
                break;
            case "none": {
                check(r.policy.equals("default"), r.name + " policy " + r.policy + " == default");
                // first touch: the pages follow the CPUs the thread ran on
                BitSet ranNodes = new BitSet();
                for (int c = r.ran.nextSetBit(0); c >= 0; c = r.ran.nextSetBit(c + 1)) {
                    ranNodes.set(nodeOfCpu(c));
                }
                long onRan = 0;
                for (Map.Entry<Integer, Integer> e : r.pages.entrySet()) {
                    if (e.getKey() >= 0 && ranNodes.get(e.getKey())) {
                        onRan += e.getValue();
                    }
                }
                check(onRan * 100 >= n * 99, r.name + " first touch: " + onRan + "/" + n
                        + " pages on node(s) " + formatList(ranNodes) + " it ran on (>= 99%)");
                break;
            }
            default:
                out("memory not judged for mem=" + mem);
        }
    }

    static void rendezvous(String spec) throws Exception {
        int colon = spec.lastIndexOf(':');
        Path dir = Paths.get(spec.substring(0, colon));
        int want = Integer.parseInt(spec.substring(colon + 1));
        Files.createDirectories(dir);
        Files.write(dir.resolve(String.valueOf(ProcessHandle.current().pid())), new byte[0]);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        int seen = 0;
        while (System.nanoTime() < deadline) {
            try (java.util.stream.Stream<Path> s = Files.list(dir)) {
                seen = (int) s.count();
            }
            if (seen >= want) {
                break;
            }
            Thread.sleep(50);
        }
        check(seen >= want, "rendezvous: " + seen + " of " + want + " JVMs have their workers running");
    }

    static BitSet toBits(Set<Integer> s) {
        BitSet b = new BitSet();
        for (int i : s) {
            b.set(i);
        }
        return b;
    }

    static String histString(TreeMap<Integer, Integer> h) {
        return PageNodes.histString(h);
    }

    static String[] plainFacts() throws IOException {
        String st = read("/proc/thread-self/status");
        return new String[] {statusField(st, "Cpus_allowed_list"), taskPolicy()};
    }

    static String[] plainFactsQuiet() {
        try {
            return plainFacts();
        } catch (IOException e) {
            return new String[] {"?", "? " + e};
        }
    }
}
