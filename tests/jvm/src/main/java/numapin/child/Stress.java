package numapin.child;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Many short-lived threads from many
 * pools, at most a few alive at once, so that ThreadStart and ThreadEnd of
 * different threads overlap all the time and thread ids are reused.
 *
 * <pre>
 *   Stress POOLS THREADS LIVE [EXPECTED_CPUS]
 * </pre>
 *
 * POOLS thread factories; the first half name their threads
 * {@code Hot-P-N}, the others {@code Cold-P-N}. THREADS threads in all,
 * taken from the factories in turn, at most LIVE alive at a time; each
 * does a little work and ends. Every 50th Hot thread reads its own allowed
 * CPUs from /proc and, when EXPECTED_CPUS is given, counts it as misplaced
 * when they differ. Prints, each with one write(2):
 *
 * <pre>
 *   stress-done started=N hot=H cold=C checked=K misplaced=M
 * </pre>
 *
 * Exit status 0, or 3 when a thread did not end in time.
 */
public final class Stress {
    private Stress() {}

    /** This thread's allowed CPUs; "unreadable" when /proc does not say. */
    static String cpus() {
        try {
            return Self.cpus().cpus();
        } catch (IllegalStateException e) {
            return "unreadable";
        }
    }

    static ThreadFactory pool(String kind, int p) {
        AtomicInteger n = new AtomicInteger();
        return r -> new Thread(r, kind + "-" + p + "-" + n.incrementAndGet());
    }

    public static void main(String[] args) throws InterruptedException {
        int pools = Integer.parseInt(args[0]);
        int threads = Integer.parseInt(args[1]);
        int live = Integer.parseInt(args[2]);
        String expected = args.length > 3 ? args[3] : null;
        List<ThreadFactory> factories = new ArrayList<>();
        for (int p = 0; p < pools; p++) {
            factories.add(pool(p < pools / 2 ? "Hot" : "Cold", p));
        }
        Semaphore slots = new Semaphore(live);
        AtomicInteger checked = new AtomicInteger();
        AtomicInteger misplaced = new AtomicInteger();
        AtomicInteger sink = new AtomicInteger();
        int hot = 0;
        for (int i = 0; i < threads; i++) {
            int p = i % pools;
            boolean isHot = p < pools / 2;
            hot += isHot ? 1 : 0;
            boolean check = isHot && (i / pools) % 50 == 0;
            slots.acquire();
            Thread t = factories.get(p).newThread(() -> {
                try {
                    int x = 0;
                    for (int k = 0; k < 200; k++) {
                        x += k * k;
                    }
                    sink.addAndGet(x);
                    if (check) {
                        checked.incrementAndGet();
                        if (expected != null && !expected.equals(cpus())) {
                            misplaced.incrementAndGet();
                        }
                    }
                } finally {
                    slots.release();
                }
            });
            t.start();
        }
        // Every thread has released its slot once all slots are free again.
        if (!slots.tryAcquire(live, 120, TimeUnit.SECONDS)) {
            Self.out("stress-timeout");
            System.exit(3);
        }
        Self.out("stress-done started=" + threads + " hot=" + hot + " cold=" + (threads - hot) + " checked="
                + checked.get() + " misplaced=" + misplaced.get());
    }
}
