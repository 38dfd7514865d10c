package numapin.child;

import java.util.concurrent.TimeUnit;

/**
 * Threads that change their names after they start (Thread.setName in
 * run(), as thread factories and frameworks do).
 *
 * <pre>
 *   Rename WAIT_MS
 * </pre>
 * <ul>
 * <li>"plain" renames itself "Renamed-1", then reads its allowed CPUs every
 * 20 ms until they change or WAIT_MS pass;</li>
 * <li>"Renamed-2" (a matching name from the start) renames itself "plain-2",
 * waits WAIT_MS / 2, and reads its CPUs again.</li>
 * </ul>
 * Output:
 * <pre>
 *   rename-start name="NAME" tid=N cpus=LIST
 *   rename-end name="NAME" tid=N cpus=LIST waited_ms=N changed=true|false
 * </pre>
 */
public final class Rename {
    private Rename() {}

    public static void main(String[] args) throws Exception {
        long waitMs = Long.parseLong(args[0]);
        Thread t1 = new Thread(() -> {
            Self.Where w = Self.cpus();
            Self.out("rename-start name=\"plain\" " + "tid=" + w.tid() + " cpus=" + w.cpus());
            Thread.currentThread().setName("Renamed-1");
            long t0 = System.nanoTime();
            long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(waitMs);
            Self.Where now = w;
            while (now.cpus().equals(w.cpus()) && System.nanoTime() < deadline) {
                sleep(20);
                now = Self.cpus();
            }
            Self.out("rename-end name=\"Renamed-1\" tid=" + now.tid() + " cpus=" + now.cpus() + " waited_ms="
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " changed="
                    + !now.cpus().equals(w.cpus()));
        }, "plain");
        Thread t2 = new Thread(() -> {
            Self.Where w = Self.cpus();
            Self.out("rename-start name=\"Renamed-2\" " + "tid=" + w.tid() + " cpus=" + w.cpus());
            Thread.currentThread().setName("plain-2");
            sleep(waitMs / 2);
            Self.Where now = Self.cpus();
            Self.out("rename-end name=\"plain-2\" tid=" + now.tid() + " cpus=" + now.cpus() + " waited_ms="
                    + waitMs / 2 + " changed=" + !now.cpus().equals(w.cpus()));
        }, "Renamed-2");
        t1.start();
        t2.start();
        t1.join();
        t2.join();
        System.exit(0);
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
