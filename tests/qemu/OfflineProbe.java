import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;

/**
 * Starts, says so, and waits for a go file before it starts fork-join
 * workers: the scenario takes a CPU offline in between.
 *
 *   OfflineProbe READY_FILE GO_FILE N
 *
 * Output: "probe: worker name=NAME allowed=LIST" for each of N workers,
 * each read by the worker from /proc/thread-self/status.
 */
public final class OfflineProbe {
    public static void main(String[] args) throws Exception {
        Files.write(Paths.get(args[0]), new byte[0]);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!Files.exists(Paths.get(args[1]))) {
            if (System.nanoTime() > deadline) {
                System.out.println("probe: no go file");
                System.exit(3);
            }
            Thread.sleep(50);
        }
        int n = Integer.parseInt(args[2]);
        ForkJoinPool pool = new ForkJoinPool(n);
        CountDownLatch all = new CountDownLatch(n);
        CountDownLatch done = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            pool.execute(() -> {
                try {
                    all.countDown();
                    all.await(120, TimeUnit.SECONDS);
                    String allowed = NumaProbe.statusField(NumaProbe.read("/proc/thread-self/status"),
                            "Cpus_allowed_list");
                    synchronized (OfflineProbe.class) {
                        System.out.println("probe: worker name=" + Thread.currentThread().getName() + " allowed="
                                + allowed);
                    }
                } catch (Exception e) {
                    System.out.println("probe: worker error " + e);
                } finally {
                    done.countDown();
                }
            });
        }
        done.await(120, TimeUnit.SECONDS);
        pool.shutdown();
        System.exit(0);
    }
}
