package numapin.child;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ForkJoinPool;

/**
 * A pool of fork-join workers (default names) that report where they run
 * and with which memory policy, then optionally wait for a file before the
 * program ends.
 *
 * <pre>
 *   Workers N [HOLD_FILE]
 * </pre>
 * Output:
 * <pre>
 *   worker name="NAME" tid=N cpus=LIST policy=P
 *   main tid=N cpus=LIST policy=P
 *   workers-ready pid=PID
 *   workers-done
 * </pre>
 * With HOLD_FILE, it waits (up to 90 s) between ready and done until that
 * file exists. Exit status 0, or 3 when the file never came.
 */
public final class Workers {
    private Workers() {}

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        ForkJoinPool pool = new ForkJoinPool(n);
        List<Resident> r = Resident.fill(pool, "w", n);
        for (Resident t : r) {
            Self.out("worker name=" + Self.q(t.name()) + " " + t.first.fields());
        }
        Self.out("main " + Self.where().fields());
        Self.out("workers-ready pid=" + ProcessHandle.current().pid());
        boolean ok = args.length < 2 || Self.awaitFile(Path.of(args[1]), 90_000);
        Self.out("workers-done");
        for (Resident t : r) {
            t.release();
        }
        pool.shutdown();
        System.exit(ok ? 0 : 3);
    }
}
