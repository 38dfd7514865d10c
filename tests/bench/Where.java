import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Holds a JVM still so that a tool's placement can be looked at from
 * outside (numapin check): starts N worker threads named "Bench-K", as
 * ThreadBench names its threads, prints
 *
 *   where-ready pid=PID
 *
 * once all run, and exits when the file GO exists (after at most 60 s).
 *
 *   java Where N GO
 */
public final class Where {
    private Where() {}

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Path go = Path.of(args[1]);
        CountDownLatch started = new CountDownLatch(n);
        CountDownLatch end = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> {
                started.countDown();
                try {
                    end.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "Bench-" + i);
            t.start();
            workers.add(t);
        }
        started.await();
        System.out.println("where-ready pid=" + ProcessHandle.current().pid());
        System.out.flush();
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!Files.exists(go) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        end.countDown();
        for (Thread t : workers) {
            t.join();
        }
    }
}
