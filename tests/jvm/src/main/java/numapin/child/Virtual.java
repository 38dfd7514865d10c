package numapin.child;

import java.lang.reflect.Method;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Virtual threads (JDK 21 and later; called through reflection, since the
 * tests compile for release 17). Each reads /proc/thread-self/status, which
 * is its carrier's, a few times, yielding in between so that it may move to
 * another carrier.
 *
 * <pre>
 *   Virtual N
 * </pre>
 * Output:
 * <pre>
 *   vthread i=K cpus=LIST carrier="DESCRIPTION"       3 readings per virtual thread
 *   carrier tid=N comm="COMM" cpus=LIST               OS threads named ForkJoinPool-* afterwards
 *   virtual-done
 * </pre>
 * Exit status 4 when this JDK has no virtual threads.
 */
public final class Virtual {
    private Virtual() {}

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Method ofVirtual;
        Method start;
        try {
            ofVirtual = Thread.class.getMethod("ofVirtual");
            start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
        } catch (ReflectiveOperationException e) {
            Self.out("virtual-unsupported " + e);
            System.exit(4);
            return;
        }
        CountDownLatch all = new CountDownLatch(n);
        CountDownLatch done = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            int k = i;
            Runnable r = () -> {
                all.countDown();
                try {
                    all.await(30, TimeUnit.SECONDS);
                    for (int j = 0; j < 3; j++) {
                        Self.Where w = Self.cpus();
                        Self.out("vthread i=" + k + " cpus=" + w.cpus() + " carrier="
                                + Self.q(Thread.currentThread().toString()));
                        Thread.yield();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    done.countDown();
                }
            };
            start.invoke(ofVirtual.invoke(null), r);
        }
        if (!done.await(60, TimeUnit.SECONDS)) {
            Self.out("virtual-error not all virtual threads ended");
            System.exit(3);
        }
        for (Self.Task t : Self.tasks()) {
            if (t.comm().startsWith("ForkJoinPool")) {
                Self.out("carrier tid=" + t.tid() + " comm=" + Self.q(t.comm()) + " cpus=" + t.cpus());
            }
        }
        Self.out("virtual-done");
        System.exit(0);
    }
}
