package numapin.child;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.locks.LockSupport;

/**
 * The JVM numapin is attached to: fork-join workers and a plain thread
 * running before the attach, which read where they run before and after
 * it, and new workers started after it.
 *
 * <pre>
 *   AttachTarget GO_FILE
 * </pre>
 * Output:
 * <pre>
 *   attach-before name="NAME" tid=N cpus=LIST     two workers of pool A, and the plain thread "Side"
 *   attach-ready pid=PID                           then waits (up to 90 s) until GO_FILE exists
 *   attach-after name="NAME" tid=N cpus=LIST      the same threads, read again
 *   attach-new name="NAME" tid=N cpus=LIST        two workers of a pool B created now
 *   attach-main tid=N cpus=LIST
 *   attach-done
 * </pre>
 */
public final class AttachTarget {
    private AttachTarget() {}

    private static volatile boolean sideReread;
    private static volatile Self.Where sideAfter;

    public static void main(String[] args) throws Exception {
        ForkJoinPool a = new ForkJoinPool(2);
        List<Resident> before = Resident.fill(a, "A", 2);
        CountDownLatch sideStarted = new CountDownLatch(1);
        CountDownLatch sideDone = new CountDownLatch(1);
        Self.Where[] sideFirst = new Self.Where[1];
        Thread side = new Thread(() -> {
            sideFirst[0] = Self.cpus();
            sideStarted.countDown();
            while (!sideReread) {
                LockSupport.parkNanos(20_000_000L);
            }
            sideAfter = Self.cpus();
            sideDone.countDown();
        }, "Side");
        side.setDaemon(true);
        side.start();
        sideStarted.await();
        for (Resident t : before) {
            Self.out("attach-before name=" + Self.q(t.name()) + " tid=" + t.first.tid() + " cpus=" + t.first.cpus());
        }
        Self.out("attach-before name=\"Side\" tid=" + sideFirst[0].tid() + " cpus=" + sideFirst[0].cpus());
        Self.out("attach-ready pid=" + ProcessHandle.current().pid());
        if (!Self.awaitFile(Path.of(args[0]), 90_000)) {
            Self.out("attach-error no go file");
            System.exit(3);
        }
        Resident.reread(before);
        for (Resident t : before) {
            Self.out("attach-after name=" + Self.q(t.name()) + " tid=" + t.last.tid() + " cpus=" + t.last.cpus());
        }
        sideReread = true;
        sideDone.await();
        Self.out("attach-after name=\"Side\" tid=" + sideAfter.tid() + " cpus=" + sideAfter.cpus());
        ForkJoinPool b = new ForkJoinPool(2);
        List<Resident> after = Resident.fill(b, "B", 2);
        for (Resident t : after) {
            Self.out("attach-new name=" + Self.q(t.name()) + " tid=" + t.first.tid() + " cpus=" + t.first.cpus());
        }
        Self.Where m = Self.cpus();
        Self.out("attach-main tid=" + m.tid() + " cpus=" + m.cpus());
        Self.out("attach-done");
        for (Resident t : before) {
            t.release();
        }
        for (Resident t : after) {
            t.release();
        }
        a.shutdown();
        b.shutdown();
        System.exit(0);
    }
}
