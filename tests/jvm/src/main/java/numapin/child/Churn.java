package numapin.child;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;

/**
 * Pools that grow, shrink and grow again, for the cpus=core|pu bookkeeping
 * test on a machine of two CPUs.
 *
 * <pre>
 *   Churn ROUNDS
 * </pre>
 *
 * Round 0 grows: four single-worker pools and one pool of three. Then each
 * round r = 1..ROUNDS:
 * <ul>
 * <li>shrinks, unevenly on purpose: every single-worker pool whose worker
 * is on the CPU holding more workers is shut down, the keep-alive pool's
 * workers are let go and retire by themselves (keepAlive 50 ms), and the
 * oldest multi-worker pool goes when more than two are live; every ended
 * worker is joined, so its JVMTI ThreadEnd has run;</li>
 * <li>regrows: as many single-worker pools as the shrink left workers more
 * on one CPU than on the other, plus 1 + r % 3, a pool of two and a
 * keep-alive pool of two.</li>
 * </ul>
 * After the growth, and after each shrink and regrowth, every live worker
 * reads its allowed CPUs again from /proc/thread-self/status.
 *
 * <p>Output, one line each:
 * <pre>
 *   churn-start pool=LABEL name="NAME" tid=N cpus=LIST     a worker's first reading
 *   churn-end name="NAME" tid=N how=shutdown|keepalive      joined: it has ended
 *   churn-live round=R phase=grown|shrunk|regrown pool=LABEL name="NAME" tid=N cpus=LIST
 *   churn-done started=N ended=N retired=N
 * </pre>
 * Labels: sN (single), mN (multi), kN (keep-alive). Exit status 0, or 3 when
 * something did not happen in time.
 */
public final class Churn {
    private Churn() {}

    private static final class Pool {
        final String label;
        final ForkJoinPool pool;
        final List<Resident> residents;

        Pool(String label, ForkJoinPool pool, List<Resident> residents) {
            this.label = label;
            this.pool = pool;
            this.residents = residents;
        }
    }

    private static final List<Pool> live = new ArrayList<>();
    private static int nextPool;
    private static int started;
    private static int ended;
    private static int retired;

    /** Ten minutes: no worker of a plain pool retires while the test runs. */
    private static ForkJoinPool plain(int n) {
        return new ForkJoinPool(n, ForkJoinPool.defaultForkJoinWorkerThreadFactory, null, false, n, 256, 1,
                null, 10, TimeUnit.MINUTES);
    }

    private static ForkJoinPool keepAlive(int n) {
        return new ForkJoinPool(n, ForkJoinPool.defaultForkJoinWorkerThreadFactory, null, false, 0, 256, 1,
                null, 50, TimeUnit.MILLISECONDS);
    }

    private static void add(String kind, int n) throws InterruptedException {
        String label = kind + (++nextPool);
        ForkJoinPool pool = kind.equals("k") ? keepAlive(n) : plain(n);
        List<Resident> r = Resident.fill(pool, label, n);
        for (Resident t : r) {
            Self.out("churn-start pool=" + label + " name=" + Self.q(t.name()) + " tid=" + t.first.tid()
                    + " cpus=" + t.first.cpus());
            started++;
        }
        live.add(new Pool(label, pool, r));
    }

    private static void joined(Resident t, String how) {
        Self.out("churn-end name=" + Self.q(t.name()) + " tid=" + t.first.tid() + " how=" + how);
        ended++;
    }

    /** Shuts a pool down and waits until its workers have ended. */
    private static void end(Pool p) throws InterruptedException {
        for (Resident t : p.residents) {
            t.release();
        }
        p.pool.shutdown();
        for (Resident t : p.residents) {
            t.thread.join(Resident.LIMIT_MS);
            if (t.thread.isAlive()) {
                throw new IllegalStateException(t.name() + " did not end after its pool was shut down");
            }
            joined(t, "shutdown");
        }
        live.remove(p);
    }

    /** Lets a keep-alive pool's workers go idle and retire by themselves. */
    private static void retire(Pool p) throws InterruptedException {
        for (Resident t : p.residents) {
            t.release();
        }
        List<Resident> left = new ArrayList<>();
        for (Resident t : p.residents) {
            t.thread.join(5_000);
            if (t.thread.isAlive()) {
                left.add(t);
            } else {
                joined(t, "keepalive");
                retired++;
            }
        }
        p.pool.shutdown();
        for (Resident t : left) {
            t.thread.join(Resident.LIMIT_MS);
            if (t.thread.isAlive()) {
                throw new IllegalStateException(t.name() + " did not end");
            }
            joined(t, "shutdown");
        }
        live.remove(p);
    }

    private static List<Resident> residents() {
        List<Resident> r = new ArrayList<>();
        for (Pool p : live) {
            r.addAll(p.residents);
        }
        return r;
    }

    /** Every live worker reads its CPUs again; returns the workers per CPU 0 and 1. */
    private static int[] state(int round, String phase) throws InterruptedException {
        List<Resident> all = residents();
        Resident.reread(all);
        int[] perCpu = new int[2];
        for (Pool p : live) {
            for (Resident t : p.residents) {
                Self.out("churn-live round=" + round + " phase=" + phase + " pool=" + p.label + " name="
                        + Self.q(t.name()) + " tid=" + t.last.tid() + " cpus=" + t.last.cpus());
                if (t.last.cpus().equals("0")) {
                    perCpu[0]++;
                } else if (t.last.cpus().equals("1")) {
                    perCpu[1]++;
                }
            }
        }
        return perCpu;
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        for (int i = 0; i < 4; i++) {
            add("s", 1);
        }
        add("m", 3);
        int[] c = state(0, "grown");
        for (int r = 1; r <= rounds; r++) {
            // shrink
            int heavy = c[0] != c[1] ? (c[0] > c[1] ? 0 : 1) : r % 2;
            for (Pool p : new ArrayList<>(live)) {
                if (p.label.startsWith("s") && p.residents.get(0).last.cpus().equals(String.valueOf(heavy))) {
                    end(p);
                }
            }
            for (Pool p : new ArrayList<>(live)) {
                if (p.label.startsWith("k")) {
                    retire(p);
                }
            }
            List<Pool> multi = new ArrayList<>();
            for (Pool p : live) {
                if (p.label.startsWith("m")) {
                    multi.add(p);
                }
            }
            if (multi.size() > 2) {
                end(multi.get(0));
            }
            c = state(r, "shrunk");
            // regrow
            int singles = Math.abs(c[0] - c[1]) + 1 + r % 3;
            for (int i = 0; i < singles; i++) {
                add("s", 1);
            }
            add("m", 2);
            add("k", 2);
            c = state(r, "regrown");
        }
        Self.out("churn-done started=" + started + " ended=" + ended + " retired=" + retired);
        for (Pool p : new ArrayList<>(live)) {
            for (Resident t : p.residents) {
                t.release();
            }
            p.pool.shutdownNow();
        }
        System.exit(0);
    }
}
