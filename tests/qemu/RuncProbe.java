import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;

/**
 * The JVM of n3-runc, run in a container made by runc: a fork-join pool of
 * N workers (ForkJoinPool-1-worker-M, numapin's default threads= globs),
 * each kept alive on a task that waits. When MOVE_FILE appears (the
 * scenario has moved the container to another node with `runc update`), a
 * second pool of N workers starts; each allocates an 8 MiB buffer and
 * touches every page. Ends when STOP_FILE appears or MAX_S seconds pass.
 *
 *   RuncProbe N STOP_FILE MOVE_FILE MAX_S
 *
 * Prints for each worker of pool 1 "worker name="..." tid=TID cpus=LIST
 * policy=P" (its thread id in the container's PID namespace, its allowed
 * CPUs, its task memory policy), then "ready pid=PID"; for each worker of
 * pool 2 the same with the policy column and the per-node page counts of
 * its buffer's numa_maps line, then "moved-ready"; "done" at the end.
 */
public final class RuncProbe {
    private RuncProbe() {}

    static volatile boolean released;

    static String line(String extra) throws Exception {
        String s = NumaProbe.read("/proc/thread-self/status");
        return "worker name=\"" + Thread.currentThread().getName() + "\" tid=" + NumaProbe.statusField(s, "Pid")
                + " cpus=" + NumaProbe.statusField(s, "Cpus_allowed_list") + extra;
    }

    /** The N<node>=<pages> fields of the numa_maps line of the mapping holding addr. */
    static String nodeCounts(String numaMaps, long addr) {
        String best = null;
        long bestStart = 0;
        for (String l : numaMaps.split("\n")) {
            int sp = l.indexOf(' ');
            if (sp <= 0) {
                continue;
            }
            long start = Long.parseUnsignedLong(l.substring(0, sp), 16);
            if (Long.compareUnsigned(start, addr) <= 0 && (best == null || Long.compareUnsigned(start, bestStart) > 0)) {
                bestStart = start;
                best = l;
            }
        }
        StringBuilder b = new StringBuilder();
        if (best != null) {
            for (String f : best.split(" ")) {
                if (f.matches("N[0-9]+=[0-9]+")) {
                    b.append(b.length() == 0 ? "" : ",").append(f);
                }
            }
        }
        return b.length() == 0 ? "none" : b.toString();
    }

    static ForkJoinPool pool(int n, boolean touch, CountDownLatch started) {
        ForkJoinPool pool = new ForkJoinPool(n);
        for (int i = 0; i < n; i++) {
            pool.execute(() -> {
                try {
                    String l;
                    if (touch) {
                        long len = 8L << 20;
                        long addr = NumaProbe.unsafe().allocateMemory(len);
                        for (long p = 0; p < len; p += 4096) {
                            NumaProbe.unsafe().putByte(addr + p, (byte) 1);
                        }
                        String maps = NumaProbe.read("/proc/thread-self/numa_maps");
                        l = line(" policy=" + NumaProbe.policyAt(maps, addr) + " pages=" + nodeCounts(maps, addr));
                    } else {
                        l = line(" policy=" + NumaProbe.taskPolicy());
                    }
                    synchronized (RuncProbe.class) {
                        System.out.println(l);
                        System.out.flush();
                    }
                    started.countDown();
                    while (!released) {
                        Thread.sleep(20); // parks without the pool adding a worker
                    }
                } catch (Exception e) {
                    System.out.println("error " + e);
                    started.countDown();
                }
            });
        }
        return pool;
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Path stop = Path.of(args[1]);
        Path move = Path.of(args[2]);
        long deadline = System.nanoTime() + Long.parseLong(args[3]) * 1_000_000_000L;
        CountDownLatch started = new CountDownLatch(n);
        ForkJoinPool one = pool(n, false, started);
        started.await();
        System.out.println("ready pid=" + ProcessHandle.current().pid() + " workers=" + n);
        System.out.flush();
        ForkJoinPool two = null;
        while (!Files.exists(stop) && System.nanoTime() < deadline) {
            if (two == null && Files.exists(move)) {
                CountDownLatch moved = new CountDownLatch(n);
                two = pool(n, true, moved);
                moved.await();
                System.out.println("moved-ready");
                System.out.flush();
            }
            Thread.sleep(50);
        }
        released = true;
        one.shutdown();
        if (two != null) {
            two.shutdown();
        }
        System.out.println("done");
    }
}
