package numapin.child;

import java.util.List;
import java.util.concurrent.ForkJoinPool;

/**
 * Lists every thread of the JVM with its allowed CPUs, after making the JVM
 * start what it starts lazily (GC workers, compiler threads): the child of
 * the scope=jvm test.
 *
 * <p>Output:
 * <pre>
 *   worker name="NAME" tid=N cpus=LIST policy=P   two fork-join workers
 *   task tid=N comm="COMM" cpus=LIST              every thread of the process
 *   tasks-done count=N
 * </pre>
 */
public final class JvmThreads {
    private JvmThreads() {}

    static volatile long sink;

    static long work(long x) {
        for (int i = 0; i < 1000; i++) {
            x = x * 31 + i ^ (x >>> 7);
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        ForkJoinPool pool = new ForkJoinPool(2);
        List<Resident> r = Resident.fill(pool, "w", 2);
        for (Resident t : r) {
            Self.out("worker name=" + Self.q(t.name()) + " " + t.first.fields());
        }
        // Hot code for the JIT compilers, garbage for the collector.
        long x = 0;
        for (int i = 0; i < 20_000; i++) {
            x += work(i);
            if (i % 1000 == 0) {
                sink += new byte[1 << 16].length;
            }
        }
        sink += x;
        System.gc();
        List<Self.Task> tasks = Self.tasks();
        for (Self.Task t : tasks) {
            Self.out("task tid=" + t.tid() + " comm=" + Self.q(t.comm()) + " cpus=" + t.cpus());
        }
        Self.out("tasks-done count=" + tasks.size());
        for (Resident t : r) {
            t.release();
        }
        pool.shutdown();
        System.exit(0);
    }
}
