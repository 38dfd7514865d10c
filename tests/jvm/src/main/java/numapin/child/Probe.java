package numapin.child;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import numapin.child.Self.Where;

/**
 * A child JVM for the numapin tests: it starts fork-join workers and plain
 * threads, and each of them reports, from inside its own run(), where it
 * is allowed to run. numapin places a thread in JVMTI ThreadStart, on the
 * thread itself, before run(): so what a thread reads here is the result
 * of its placement.
 *
 * <p>Arguments, run in order; each step waits until all of its threads have
 * reported, and its threads stay alive until the program ends:
 * <pre>
 *   custom:NAME:N   a pool of parallelism N whose factory names its workers
 *                   NAME-worker-1 .. NAME-worker-N
 *   default:N       new ForkJoinPool(N) (workers ForkJoinPool-K-worker-M)
 *   common[:N]      N tasks (default: its parallelism) in the common pool
 *   plain:NAME      a plain Thread named NAME
 *   plainfrom:NAME  a plain Thread named NAME, started from inside a worker
 *                   of the pool of the previous step
 *   end:NAME        ends the plain thread NAME and waits until it is gone
 *   endwith:NAME    ends every plain thread that read the same CPUs as the
 *                   plain thread NAME (NAME too), and waits until they are gone
 *   customfrom:NAME:N, defaultfrom:N
 *                   like custom and default, but the pool is created and its
 *                   tasks submitted from inside a worker of the previous
 *                   step's pool (so that worker creates its threads)
 * </pre>
 *
 * <p>Output on stdout, one line each, written with a single write(2) so that
 * it never interleaves with numapin's own log lines:
 * <pre>
 *   probe name="NAME" tid=TID cpus=LIST kind=main|custom|default|common|plain pool=LABEL
 *   probe-live name="NAME"      (every live thread at the end)
 *   probe-done reported=N
 * </pre>
 * Exit status 0, or 3 when a step's threads do not all start in time.
 */
public final class Probe {
    private static final long STEP_TIMEOUT_MS = 30_000;
    private static final AtomicInteger reported = new AtomicInteger();

    private Probe() {}

    /** Writes one line to stdout with a single write(2) ({@link Self#out}). */
    public static void out(String line) {
        Self.out(line);
    }

    static Where report(String kind, String pool) {
        Where w = Self.cpus();
        out("probe name=\"" + Thread.currentThread().getName() + "\" tid=" + w.tid()
                + " cpus=" + w.cpus() + " kind=" + kind + " pool=" + pool);
        reported.incrementAndGet();
        return w;
    }

    /** A factory naming its workers PREFIX-worker-1, -2, ... before they start. */
    public static ForkJoinPool.ForkJoinWorkerThreadFactory namedFactory(String prefix) {
        AtomicInteger next = new AtomicInteger();
        return pool -> {
            ForkJoinWorkerThread t = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
            t.setName(prefix + "-worker-" + next.incrementAndGet());
            return t;
        };
    }

    /**
     * Runs n tasks in the pool, each holding its worker until all n have
     * started, so that n distinct workers run them. Each task first calls
     * onStart. Returns false when they did not all start in time.
     */
    public static boolean occupy(ForkJoinPool pool, int n, Runnable onStart) throws InterruptedException {
        AtomicInteger arrived = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(n);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STEP_TIMEOUT_MS);
        for (int i = 0; i < n; i++) {
            pool.execute(() -> {
                try {
                    onStart.run();
                    arrived.incrementAndGet();
                    // A plain park: no managed blocking, so the pool adds no
                    // compensating workers beyond its parallelism.
                    while (arrived.get() < n && System.nanoTime() < deadline) {
                        LockSupport.parkNanos(1_000_000);
                    }
                } finally {
                    done.countDown();
                }
            });
        }
        return done.await(STEP_TIMEOUT_MS + 5_000, TimeUnit.MILLISECONDS) && arrived.get() == n;
    }

    public static void main(String[] args) throws Exception {
        report("main", "-");
        List<ForkJoinPool> pools = new ArrayList<>();
        List<Thread> plains = new ArrayList<>();
        ForkJoinPool last = null;
        boolean ok = true;
        for (String arg : args) {
            String[] p = arg.split(":", -1);
            switch (p[0]) {
                case "custom": {
                    int n = Integer.parseInt(p[2]);
                    ForkJoinPool pool = new ForkJoinPool(n, namedFactory(p[1]), null, false);
                    pools.add(pool);
                    last = pool;
                    ok &= step(arg, occupy(pool, n, () -> report("custom", p[1])));
                    break;
                }
                case "default": {
                    int n = Integer.parseInt(p[1]);
                    ForkJoinPool pool = new ForkJoinPool(n);
                    pools.add(pool);
                    last = pool;
                    ok &= step(arg, occupy(pool, n, () -> report("default", "default")));
                    break;
                }
                case "common": {
                    int n = p.length > 1 ? Integer.parseInt(p[1]) : ForkJoinPool.getCommonPoolParallelism();
                    last = ForkJoinPool.commonPool();
                    ok &= step(arg, occupy(last, n, () -> report("common", "common")));
                    break;
                }
                case "customfrom":
                case "defaultfrom": {
                    if (last == null) {
                        throw new IllegalArgumentException(p[0] + " needs a pool step before it");
                    }
                    boolean custom = p[0].equals("customfrom");
                    int n = Integer.parseInt(custom ? p[2] : p[1]);
                    String kind = custom ? "custom" : "default";
                    String label = custom ? p[1] : "default";
                    ForkJoinPool[] inner = new ForkJoinPool[1];
                    boolean[] innerOk = new boolean[1];
                    ok &= step(arg, occupy(last, 1, () -> {
                        inner[0] = custom ? new ForkJoinPool(n, namedFactory(p[1]), null, false) : new ForkJoinPool(n);
                        try {
                            innerOk[0] = occupy(inner[0], n, () -> report(kind, label));
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }) && innerOk[0]);
                    pools.add(inner[0]);
                    last = inner[0];
                    break;
                }
                case "plain": {
                    Thread t = plain(p[1]);
                    plains.add(t);
                    ok &= step(arg, awaitStarted(t));
                    break;
                }
                case "end": {
                    Thread t = plains.stream().filter(x -> x.getName().equals(p[1])).findFirst()
                            .orElseThrow(() -> new IllegalArgumentException("no plain thread " + p[1]));
                    plains.remove(t);
                    t.interrupt();
                    t.join(STEP_TIMEOUT_MS);
                    ok &= step(arg, !t.isAlive());
                    break;
                }
                case "endwith": {
                    String cpus = plainCpus.get(p[1]);
                    if (cpus == null) {
                        throw new IllegalArgumentException("no plain thread " + p[1]);
                    }
                    List<Thread> ending = new ArrayList<>();
                    for (Thread t : plains) {
                        if (cpus.equals(plainCpus.get(t.getName()))) {
                            ending.add(t);
                        }
                    }
                    plains.removeAll(ending);
                    for (Thread t : ending) {
                        t.interrupt();
                        t.join(STEP_TIMEOUT_MS);
                        ok &= step(arg, !t.isAlive());
                    }
                    break;
                }
                case "plainfrom": {
                    if (last == null) {
                        throw new IllegalArgumentException("plainfrom needs a pool step before it");
                    }
                    Thread[] holder = new Thread[1];
                    ok &= step(arg, occupy(last, 1, () -> holder[0] = plain(p[1])));
                    plains.add(holder[0]);
                    ok &= step(arg, awaitStarted(holder[0]));
                    break;
                }
                default:
                    throw new IllegalArgumentException("unknown probe step: " + arg);
            }
        }
        Map<String, Integer> live = new TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            live.merge(t.getName(), 1, Integer::sum);
        }
        live.forEach((name, count) -> {
            for (int i = 0; i < count; i++) {
                out("probe-live name=\"" + name + "\"");
            }
        });
        out("probe-done reported=" + reported.get());
        for (Thread t : plains) {
            t.interrupt();
            t.join(STEP_TIMEOUT_MS);
        }
        for (ForkJoinPool pool : pools) {
            pool.shutdownNow();
        }
        System.exit(ok ? 0 : 3);
    }

    /** What each plain thread read, by name. */
    private static final Map<String, String> plainCpus = new java.util.concurrent.ConcurrentHashMap<>();

    private static final Map<Thread, CountDownLatch> started = new java.util.concurrent.ConcurrentHashMap<>();

    /** A plain thread that reports, then waits until interrupted. */
    private static Thread plain(String name) {
        CountDownLatch latch = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            plainCpus.put(name, report("plain", "-").cpus());
            latch.countDown();
            try {
                Thread.sleep(Long.MAX_VALUE);
            } catch (InterruptedException e) {
                // end
            }
        }, name);
        t.setDaemon(true);
        started.put(t, latch);
        t.start();
        return t;
    }

    private static boolean awaitStarted(Thread t) throws InterruptedException {
        return started.get(t).await(STEP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    private static boolean step(String arg, boolean ok) {
        if (!ok) {
            out("probe-error step=" + arg + " did not start all its threads in time");
        }
        return ok;
    }
}
