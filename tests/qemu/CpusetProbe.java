import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Tier threads that stay alive while the scenario changes the JVM's cgroup
 * cpuset around them, until a hold file appears; the scenario reads their
 * CPUs from /proc by their ids.
 *
 *   CpusetProbe HOLD_FILE N
 *
 * Output: "probe: thread name=Tier1-worker-I tid=TID" for each of N
 * threads, then "probe: ready"; "probe: done" at the end (exit 0), or
 * "probe: no hold file" (exit 3) after 240 s.
 */
public final class CpusetProbe {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[1]);
        CountDownLatch started = new CountDownLatch(n);
        Thread[] threads = new Thread[n];
        for (int i = 0; i < n; i++) {
            threads[i] = new Thread(() -> {
                try {
                    String stat = NumaProbe.read("/proc/thread-self/stat");
                    synchronized (CpusetProbe.class) {
                        System.out.println("probe: thread name=" + Thread.currentThread().getName() + " tid="
                                + stat.substring(0, stat.indexOf(' ')));
                    }
                    started.countDown();
                    while (!Files.exists(Paths.get(args[0]))) {
                        Thread.sleep(50);
                    }
                } catch (Exception e) {
                    System.out.println("probe: thread error " + e);
                }
            }, "Tier1-worker-" + i);
            threads[i].start();
        }
        started.await(120, TimeUnit.SECONDS);
        System.out.println("probe: ready");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(240);
        while (!Files.exists(Paths.get(args[0]))) {
            if (System.nanoTime() > deadline) {
                System.out.println("probe: no hold file");
                System.exit(3);
            }
            Thread.sleep(50);
        }
        for (Thread t : threads) {
            t.join();
        }
        System.out.println("probe: done");
        System.exit(0);
    }
}
