package numapin.child;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A task that stays on the fork-join worker that runs it, so a test
 * decides when each worker is busy, reads where it runs, and may end.
 * It waits with a plain park (no managed blocking), so the pool adds no
 * compensating workers.
 */
public final class Resident implements Runnable {
    static final long LIMIT_MS = 30_000;

    final String pool;
    final CountDownLatch started;
    volatile Thread thread;
    volatile Self.Where first;
    volatile Self.Where last;
    private volatile CountDownLatch request;
    private volatile boolean leave;

    Resident(String pool, CountDownLatch started) {
        this.pool = pool;
        this.started = started;
    }

    @Override
    public void run() {
        thread = Thread.currentThread();
        first = Self.where();
        last = first;
        started.countDown();
        CountDownLatch handled = null;
        while (!leave) {
            CountDownLatch r = request;
            if (r != null && r != handled) {
                last = Self.cpus();
                handled = r;
                r.countDown();
            }
            LockSupport.parkNanos(this, 50_000_000L);
        }
    }

    String name() {
        return thread.getName();
    }

    /** Lets the task end; its worker goes idle (and may retire). */
    void release() {
        leave = true;
        LockSupport.unpark(thread);
    }

    /**
     * Puts n residents in the pool and waits until each runs on a worker
     * of its own. Returns them, or throws when they did not all start.
     */
    static List<Resident> fill(ForkJoinPool pool, String label, int n) throws InterruptedException {
        CountDownLatch started = new CountDownLatch(n);
        List<Resident> r = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Resident t = new Resident(label, started);
            r.add(t);
            pool.execute(t);
        }
        if (!started.await(LIMIT_MS, TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException(label + ": " + (n - started.getCount()) + " of " + n
                    + " residents started in time");
        }
        Set<Thread> distinct = new HashSet<>();
        for (Resident t : r) {
            distinct.add(t.thread);
        }
        if (distinct.size() != n) {
            throw new IllegalStateException(label + ": " + n + " residents on " + distinct.size() + " workers");
        }
        return r;
    }

    /** Every resident reads its CPUs again, now; waits for all of them. */
    static void reread(List<Resident> all) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(all.size());
        for (Resident t : all) {
            t.request = done;
            LockSupport.unpark(t.thread);
        }
        if (!done.await(LIMIT_MS, TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException((all.size() - done.getCount()) + " of " + all.size()
                    + " residents answered in time");
        }
    }
}
