package numapin.child;

import java.util.concurrent.CountDownLatch;

/**
 * Many short threads, one after another (start, join), then two that stay:
 * thread churn while numapin's rescan thread lists the JVM's threads.
 *
 * <pre>
 *   Starts N
 * </pre>
 * Starts "Short-1" .. "Short-N" one at a time, each joined before the next;
 * then "Long-1" and "Long-2", alive at once, each reading its CPUs.
 * Output:
 * <pre>
 *   starts-short count=N
 *   starts-long name="NAME" tid=N cpus=LIST
 * </pre>
 */
public final class Starts {
    private Starts() {}

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        for (int i = 1; i <= n; i++) {
            Thread t = new Thread(() -> {}, "Short-" + i);
            t.start();
            t.join();
        }
        Self.out("starts-short count=" + n);
        CountDownLatch read = new CountDownLatch(2);
        CountDownLatch end = new CountDownLatch(1);
        Thread[] longs = new Thread[2];
        for (int i = 0; i < 2; i++) {
            longs[i] = new Thread(() -> {
                Self.Where w = Self.cpus();
                Self.out("starts-long name=" + Self.q(Thread.currentThread().getName()) + " tid=" + w.tid()
                        + " cpus=" + w.cpus());
                read.countDown();
                try {
                    end.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "Long-" + (i + 1));
            longs[i].start();
        }
        read.await();
        end.countDown();
        for (Thread t : longs) {
            t.join();
        }
        System.exit(0);
    }
}
