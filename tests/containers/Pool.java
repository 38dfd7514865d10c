import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;

/**
 * The JVM the container tests place: a fork-join pool of N workers (named
 * ForkJoinPool-1-worker-M, numapin's default threads= globs), each kept
 * alive on a task that waits, until STOPFILE exists or MAX_S seconds pass;
 * then it exits normally, so that numapin writes its summary.
 *
 *   java Pool N STOPFILE MAX_S
 *
 * Prints, as each worker starts its task, its name, its thread id in the
 * container's PID namespace and the CPUs it may use (its own
 * /proc/thread-self/status), then "ready pid=PID workers=N".
 */
public final class Pool {
    private Pool() {}

    static volatile boolean released;

    static String field(String status, String key) {
        for (String l : status.split("\n")) {
            if (l.startsWith(key + ":")) {
                return l.substring(key.length() + 1).trim();
            }
        }
        return "?";
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Path stop = Path.of(args[1]);
        long deadline = System.nanoTime() + Long.parseLong(args[2]) * 1_000_000_000L;
        ForkJoinPool pool = new ForkJoinPool(n);
        CountDownLatch started = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            pool.execute(() -> {
                try {
                    String s = Files.readString(Path.of("/proc/thread-self/status"));
                    synchronized (Pool.class) {
                        System.out.println("worker name=\"" + Thread.currentThread().getName() + "\" tid="
                                + field(s, "Pid") + " cpus=" + field(s, "Cpus_allowed_list"));
                    }
                    started.countDown();
                    while (!released) {
                        Thread.sleep(20); // parks without the pool adding a worker
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
        }
        started.await();
        System.out.println("ready pid=" + ProcessHandle.current().pid() + " workers=" + n);
        System.out.flush();
        while (!Files.exists(stop) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        released = true;
        pool.shutdown();
        System.out.println("done");
    }
}
