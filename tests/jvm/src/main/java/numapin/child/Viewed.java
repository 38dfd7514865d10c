package numapin.child;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The JVM the view tests look at (numapin check --svg, --watch): tier
 * threads by name, one of them with a name full of markup and quotes, and a
 * plain thread, all alive and busy now and then until GO_FILE exists.
 *
 * <pre>
 *   Viewed GO_FILE NAME...
 * </pre>
 * Output:
 * <pre>
 *   viewed name="NAME" tid=N cpus=LIST     each thread, from inside it, once started
 *   viewed-ready pid=PID                   then waits (up to 120 s) for GO_FILE
 *   viewed-done
 * </pre>
 */
public final class Viewed {
    private Viewed() {}

    private static volatile boolean done;
    /** Memory the main thread touched, so that the process has some per node. */
    static byte[] heap;

    public static void main(String[] args) throws Exception {
        heap = new byte[16 << 20];
        for (int i = 0; i < heap.length; i += 4096) {
            heap[i] = 1;
        }
        List<Thread> threads = new ArrayList<>();
        CountDownLatch started = new CountDownLatch(args.length - 1);
        for (int i = 1; i < args.length; i++) {
            String name = args[i];
            Thread t = new Thread(() -> {
                Self.Where w = Self.cpus();
                Self.out("viewed name=" + Self.q(name) + " tid=" + w.tid() + " cpus=" + w.cpus());
                started.countDown();
                long x = 0;
                while (!done) {
                    for (int k = 0; k < 200_000; k++) {
                        x += k ^ (x >>> 3);
                    }
                    try {
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (x == 42) {
                    Self.out("unlikely");
                }
            }, name);
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        started.await();
        Self.out("viewed-ready pid=" + ProcessHandle.current().pid());
        if (!Self.awaitFile(Path.of(args[0]), 120_000)) {
            Self.out("viewed-error no go file");
            System.exit(3);
        }
        done = true;
        for (Thread t : threads) {
            t.join();
        }
        Self.out("viewed-done");
    }
}
