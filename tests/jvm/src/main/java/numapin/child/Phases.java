package numapin.child;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ForkJoinPool;

/**
 * Fork-join pools started one after another, each when the test says so:
 * the child of the JFR tests, which start and stop recordings between the
 * pools.
 *
 * <pre>
 *   Phases DIR N1 N2 ...
 * </pre>
 * Phase k starts a pool of Nk workers (default names, so pool k's are
 * "ForkJoinPool-k-worker-*"), each kept busy on a task of its own, then
 * prints
 * <pre>
 *   phase-worker k name="NAME" tid=N cpus=LIST
 *   phase-ready k pid=PID
 * </pre>
 * and waits (up to 90 s) until DIR/go-k exists. After the last phase every
 * worker is let go and it prints {@code phases-done}. Exit status 0, or 3
 * when a go file never came.
 */
public final class Phases {
    private Phases() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        List<ForkJoinPool> pools = new ArrayList<>();
        List<Resident> all = new ArrayList<>();
        boolean ok = true;
        for (int k = 1; ok && k < args.length; k++) {
            ForkJoinPool pool = new ForkJoinPool(Integer.parseInt(args[k]));
            pools.add(pool);
            List<Resident> r = Resident.fill(pool, "P" + k, Integer.parseInt(args[k]));
            all.addAll(r);
            for (Resident t : r) {
                Self.out("phase-worker " + k + " name=" + Self.q(t.name()) + " tid=" + t.first.tid() + " cpus="
                        + t.first.cpus());
            }
            Self.out("phase-ready " + k + " pid=" + ProcessHandle.current().pid());
            ok = Self.awaitFile(dir.resolve("go-" + k), 90_000);
        }
        for (Resident t : all) {
            t.release();
        }
        for (ForkJoinPool p : pools) {
            p.shutdown();
        }
        Self.out("phases-done");
        System.exit(ok ? 0 : 3);
    }
}
