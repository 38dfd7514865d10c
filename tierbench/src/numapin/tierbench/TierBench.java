package numapin.tierbench;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * TierBench: a small server-side Java workload in the shape of a MultiJVM
 * benchmark backend.
 *
 * <p>Each request flows through three tiers of fork-join pools (threads named
 * Tier1-worker-N, Tier2-worker-N, Tier3-worker-N, so numapin's threads= can
 * select tiers) and reads and writes a per-JVM working set at random, large
 * enough by default to leave the caches. An injector issues requests at a
 * target rate on a fixed schedule; a request's response time runs from its
 * scheduled start, so a stalled system is not hidden by a stalled injector.
 *
 * <p>The run climbs through injection-rate steps up to the measured capacity.
 * Per step it records achieved throughput and response-time percentiles;
 * for each response-time limit (10, 25, 50, 75, 100 ms) the SLA throughput is
 * the best throughput of a step whose 99th percentile met the limit, and the
 * SLA metric is their geometric mean, as in the published MultiJVM study.
 *
 * <p>Output: a step table, where every tier thread ran, and one machine-readable
 * line: {@code result throughput=... p50_ms=... sla_geomean=...}.
 *
 * <p>With {@code --locality}, each tier thread also allocates a private
 * off-heap scratch buffer the first time it works, and is the first to touch
 * every page of it. At the end one more line tells on which NUMA nodes the
 * kernel put those pages (read through /proc/self/pagemap, so only as root):
 * {@code locality nodes=... first_node=... total_pages=... own_node_pages=... share=...}.
 */
public final class TierBench {
    static final int[] SLA_MS = {10, 25, 50, 75, 100};

    final Config cfg;
    final long[] workingSet;
    final ForkJoinPool[] tiers = new ForkJoinPool[3];
    /** Where each tier thread ran: name -> "tid=... cpus=...". */
    final Map<String, String> placement = new ConcurrentHashMap<>();
    /** With --locality: tier thread name -> page-aligned address of its scratch buffer. */
    final Map<String, Long> scratch = new ConcurrentHashMap<>();
    /** Bytes of each tier thread's scratch buffer (--locality). */
    static final long SCRATCH_BYTES = 1L << 20;

    TierBench(Config cfg) {
        this.cfg = cfg;
        this.workingSet = new long[(int) Math.min(Integer.MAX_VALUE - 8, cfg.workingSetMb * (1L << 20) / 8)];
        // Touch it all once, so that the first steps do not pay for page faults.
        for (int i = 0; i < workingSet.length; i += 512) {
            workingSet[i] = i;
        }
        for (int t = 0; t < 3; t++) {
            tiers[t] = new ForkJoinPool(cfg.tierThreads[t], factory("Tier" + (t + 1)), null, true);
        }
    }

    static ForkJoinPool.ForkJoinWorkerThreadFactory factory(String tier) {
        AtomicInteger n = new AtomicInteger();
        return pool -> {
            ForkJoinWorkerThread w = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
            // Named before it starts, so the agent sees this name at ThreadStart.
            w.setName(tier + "-worker-" + n.incrementAndGet());
            return w;
        };
    }

    /** One tier's work: random reads and writes of the working set. */
    long work(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        long[] ws = workingSet;
        long acc = seed;
        for (int i = 0; i < cfg.accessesPerTier; i++) {
            int at = r.nextInt(ws.length);
            acc += ws[at];
            if ((i & 7) == 0) {
                ws[at] = acc;
            }
        }
        notePlacement();
        return acc;
    }

    void notePlacement() {
        String name = Thread.currentThread().getName();
        if (placement.containsKey(name)) {
            return;
        }
        placement.put(name, describeSelf());
        if (cfg.locality) {
            scratch.put(name, firstTouchScratch());
        }
    }

    /**
     * A fresh off-heap buffer of SCRATCH_BYTES (page-aligned start), every
     * page written once by this thread, so that the kernel places each page
     * when this thread first touches it. It is never freed. Unsafe through
     * reflection: javac cannot silence its warning for a direct use.
     */
    static long firstTouchScratch() {
        try {
            Class<?> uc = Class.forName("sun.misc.Unsafe");
            Field f = uc.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            Object u = f.get(null);
            Method alloc = uc.getMethod("allocateMemory", long.class);
            Method put = uc.getMethod("putByte", long.class, byte.class);
            long page = PageNodes.PAGE;
            long addr = (Long) alloc.invoke(u, SCRATCH_BYTES + page);
            long start = (addr + page - 1) & ~(page - 1);
            for (long p = start; p < start + SCRATCH_BYTES; p += page) {
                put.invoke(u, p, (byte) 1);
            }
            return start;
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("--locality: cannot allocate a scratch buffer: " + e, e);
        }
    }

    /**
     * The locality line: the nodes of the CPUs the tier threads were allowed
     * (the group's nodes), and how many of their scratch pages the kernel put
     * on the first of those nodes and on any of them.
     */
    String localityLine() {
        try {
            PageNodes pn = PageNodes.load();
            BitSet cpus = new BitSet();
            for (Map.Entry<String, Long> e : scratch.entrySet()) {
                String d = placement.getOrDefault(e.getKey(), "");
                int at = d.indexOf("cpus=");
                if (at >= 0 && !d.startsWith("?", at + 5)) {
                    cpus.or(PageNodes.parseList(d.substring(at + 5)));
                }
            }
            BitSet nodes = pn.nodesOfCpus(cpus);
            int first = nodes.nextSetBit(0);
            TreeMap<Integer, Integer> hist = new TreeMap<>();
            for (long start : scratch.values()) {
                for (Map.Entry<Integer, Integer> e : pn.count(start, SCRATCH_BYTES).entrySet()) {
                    hist.merge(e.getKey(), e.getValue(), Integer::sum);
                }
            }
            long total = (long) scratch.size() * (SCRATCH_BYTES / PageNodes.PAGE);
            long own = first >= 0 ? hist.getOrDefault(first, 0) : 0;
            long onNodes = 0;
            for (int n = nodes.nextSetBit(0); n >= 0; n = nodes.nextSetBit(n + 1)) {
                onNodes += hist.getOrDefault(n, 0);
            }
            return String.format(Locale.ROOT, "locality nodes=%s first_node=%d threads=%d total_pages=%d"
                    + " own_node_pages=%d share=%.4f nodes_pages=%d nodes_share=%.4f by_node=%s",
                    nodes.isEmpty() ? "?" : PageNodes.formatList(nodes), first, scratch.size(), total,
                    own, total == 0 ? 0.0 : (double) own / total, onNodes,
                    total == 0 ? 0.0 : (double) onNodes / total, PageNodes.histString(hist));
        } catch (IOException | RuntimeException e) {
            return "locality error=\"" + e + "\"";
        }
    }

    static String describeSelf() {
        try {
            String tid = Files.readSymbolicLink(Paths.get("/proc/thread-self")).getFileName().toString();
            String cpus = "?";
            for (String line : Files.readAllLines(Paths.get("/proc/thread-self/status"))) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    cpus = line.substring(line.indexOf(':') + 1).trim();
                }
            }
            return "tid=" + tid + " cpus=" + cpus;
        } catch (IOException | RuntimeException e) {
            return "tid=? cpus=?";
        }
    }

    CompletableFuture<Long> request(long seed) {
        return CompletableFuture.supplyAsync(() -> work(seed), tiers[0])
                .thenApplyAsync(this::work, tiers[1])
                .thenApplyAsync(this::work, tiers[2]);
    }

    /** Closed-loop burst: how many requests a second this JVM completes flat out. */
    double capacity() throws InterruptedException {
        int inFlight = 4 * (cfg.tierThreads[0] + cfg.tierThreads[1] + cfg.tierThreads[2]);
        AtomicLong done = new AtomicLong();
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(cfg.calibrateMs);
        List<Thread> loops = new ArrayList<>();
        for (int i = 0; i < inFlight; i++) {
            final long seed = i;
            Thread t = new Thread(() -> {
                long s = seed;
                while (System.nanoTime() < end) {
                    request(s++).join();
                    done.incrementAndGet();
                }
            }, "Injector-calibrate-" + i);
            t.setDaemon(true);
            t.start();
            loops.add(t);
        }
        for (Thread t : loops) {
            t.join();
        }
        return done.get() * 1000.0 / cfg.calibrateMs;
    }

    static final class Step {
        double rate;
        double throughput;
        Histogram hist;
    }

    /** Open loop at `rate` requests a second for `ms`; response times from the schedule. */
    Step step(double rate, long ms, Histogram overall) throws InterruptedException {
        Recorder rec = new Recorder(3);
        AtomicLong completed = new AtomicLong();
        long start = System.nanoTime();
        long end = start + TimeUnit.MILLISECONDS.toNanos(ms);
        double intervalNs = 1e9 / rate;
        List<CompletableFuture<Long>> pending = new ArrayList<>();
        for (long i = 0;; i++) {
            long due = start + (long) (i * intervalNs);
            if (due >= end) {
                break;
            }
            long now;
            while ((now = System.nanoTime()) < due) {
                LockSupport.parkNanos(Math.min(due - now, 200_000));
            }
            CompletableFuture<Long> f = request(i);
            f.thenRun(() -> {
                long rt = System.nanoTime() - due;
                rec.recordValue(Math.max(1, rt / 1000)); // microseconds
                completed.incrementAndGet();
            });
            pending.add(f);
            if (pending.size() > 100_000) {
                pending.removeIf(CompletableFuture::isDone);
            }
        }
        for (CompletableFuture<Long> f : pending) {
            try {
                f.get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("a request did not complete", e);
            }
        }
        long elapsed = System.nanoTime() - start;
        Step s = new Step();
        s.rate = rate;
        s.hist = rec.getIntervalHistogram();
        s.throughput = completed.get() * 1e9 / elapsed;
        overall.add(s.hist);
        return s;
    }

    void run() throws InterruptedException {
        System.out.printf(Locale.ROOT, "TierBench: tiers %d/%d/%d threads, working set %d MiB, %d accesses per tier%n",
                cfg.tierThreads[0], cfg.tierThreads[1], cfg.tierThreads[2], cfg.workingSetMb, cfg.accessesPerTier);
        double cap = cfg.maxRate > 0 ? cfg.maxRate : capacity();
        if (!(cap >= 1)) {
            // A rate of 0 or NaN would make the injector's schedule never end.
            throw new IllegalStateException(String.format(Locale.ROOT, "measured a capacity of %.0f requests/s in"
                    + " %d ms: raise --calibrate-ms or give --max-rate", cap, cfg.calibrateMs));
        }
        System.out.printf(Locale.ROOT, "capacity: %.0f requests/s%n", cap);
        Histogram overall = new Histogram(3);
        List<Step> steps = new ArrayList<>();
        long stepMs = Math.max(200, cfg.durationMs / cfg.steps);
        System.out.printf(Locale.ROOT, "%8s %10s %9s %9s %9s%n", "rate", "achieved", "p50_ms", "p99_ms", "p99.9_ms");
        for (int i = 1; i <= cfg.steps; i++) {
            Step s = step(cap * i / cfg.steps, stepMs, overall);
            steps.add(s);
            System.out.printf(Locale.ROOT, "%8.0f %10.0f %9.2f %9.2f %9.2f%n", s.rate, s.throughput,
                    ms(s.hist, 50), ms(s.hist, 99), ms(s.hist, 99.9));
        }
        for (ForkJoinPool p : tiers) {
            p.shutdown();
            p.awaitTermination(10, TimeUnit.SECONDS);
        }

        double best = 0;
        StringBuilder sla = new StringBuilder();
        double logSum = 0;
        boolean anyZero = false;
        for (Step s : steps) {
            best = Math.max(best, s.throughput);
        }
        for (int limit : SLA_MS) {
            double t = 0;
            for (Step s : steps) {
                if (ms(s.hist, 99) <= limit) {
                    t = Math.max(t, s.throughput);
                }
            }
            sla.append(String.format(Locale.ROOT, " sla%d=%.0f", limit, t));
            anyZero |= t <= 0;
            logSum += Math.log(Math.max(t, 1e-9));
        }
        // The geometric mean is 0 when any SLA throughput is 0.
        double geomean = anyZero ? 0 : Math.exp(logSum / SLA_MS.length);

        System.out.println("placement:");
        for (Map.Entry<String, String> e : new TreeMap<>(placement).entrySet()) {
            System.out.printf("  %-20s %s%n", e.getKey(), e.getValue());
        }
        System.out.printf(Locale.ROOT, "result throughput=%.0f p50_ms=%.2f p99_ms=%.2f p999_ms=%.2f%s sla_geomean=%.0f%n",
                best, ms(overall, 50), ms(overall, 99), ms(overall, 99.9), sla, geomean);
        if (cfg.locality) {
            System.out.println(localityLine());
        }
    }

    static double ms(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(percentile) / 1000.0;
    }

    static final class Config {
        long durationMs = 20_000;
        int steps = 10;
        long calibrateMs = 2_000;
        double maxRate = 0;
        int workingSetMb = 256;
        int accessesPerTier = 2_000;
        int[] tierThreads;
        boolean locality;

        static Config parse(String[] args) {
            Config c = new Config();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                String v = i + 1 < args.length ? args[i + 1] : null;
                switch (a) {
                    case "--duration-s": c.durationMs = (long) (Double.parseDouble(need(a, v)) * 1000); i++; break;
                    case "--steps": c.steps = Integer.parseInt(need(a, v)); i++; break;
                    case "--calibrate-ms": c.calibrateMs = Long.parseLong(need(a, v)); i++; break;
                    case "--max-rate": c.maxRate = Double.parseDouble(need(a, v)); i++; break;
                    case "--working-set-mb": c.workingSetMb = Integer.parseInt(need(a, v)); i++; break;
                    case "--accesses": c.accessesPerTier = Integer.parseInt(need(a, v)); i++; break;
                    case "--locality": c.locality = true; break;
                    case "--tier-threads": {
                        String[] p = need(a, v).split(",");
                        if (p.length != 3) {
                            throw new IllegalArgumentException("--tier-threads takes three counts, e.g. 4,2,2");
                        }
                        c.tierThreads = new int[3];
                        for (int t = 0; t < 3; t++) {
                            c.tierThreads[t] = Integer.parseInt(p[t].trim());
                        }
                        i++;
                        break;
                    }
                    default:
                        throw new IllegalArgumentException("unknown argument " + a + "\n" + USAGE);
                }
            }
            if (c.tierThreads == null) {
                c.tierThreads = defaultTiers();
            }
            if (c.steps < 1 || c.durationMs < 1 || c.workingSetMb < 1 || c.accessesPerTier < 1 || c.calibrateMs < 1
                    || c.maxRate < 0 || c.tierThreads[0] < 1 || c.tierThreads[1] < 1 || c.tierThreads[2] < 1) {
                throw new IllegalArgumentException("durations, steps and sizes must be positive\n" + USAGE);
            }
            return c;
        }

        static String need(String key, String v) {
            if (v == null) {
                throw new IllegalArgumentException(key + " needs a value\n" + USAGE);
            }
            return v;
        }

        /**
         * In proportion to this group's CPUs: the JVM sees the whole machine,
         * so divide by the group count numapin-groups passes (NUMAPIN_GROUPS).
         */
        static int[] defaultTiers() {
            int groups = 1;
            try {
                groups = Math.max(1, Integer.parseInt(System.getenv().getOrDefault("NUMAPIN_GROUPS", "1")));
            } catch (NumberFormatException e) {
                groups = 1;
            }
            int cpus = Math.max(1, Runtime.getRuntime().availableProcessors() / groups);
            return new int[] {Math.max(1, cpus / 2), Math.max(1, cpus / 4), Math.max(1, cpus / 4)};
        }
    }

    static final String USAGE = "usage: TierBench [--duration-s S] [--steps N] [--calibrate-ms MS] [--max-rate R]\n"
            + "                 [--working-set-mb MB] [--accesses N] [--tier-threads T1,T2,T3] [--locality]";

    public static void main(String[] args) throws Exception {
        Config cfg;
        try {
            cfg = Config.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("TierBench: " + e.getMessage());
            System.exit(2);
            return;
        }
        try {
            new TierBench(cfg).run();
        } catch (IllegalStateException e) {
            System.err.println("TierBench: " + e.getMessage());
            System.exit(1);
        }
    }
}
