package numapin.demo;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ForkJoinPool;

import numapin.probe.Probe;

/**
 * The demo's JVM: three tiers of fork-join pools named by their factories
 * (Tier1, Tier2, Tier3) plus the common pool, all busy at once. Each worker
 * reads back where it may run; the table goes to stdout as lines
 *
 * <pre>  demo name="Tier1-worker-1" tid=1234 cpus=0</pre>
 *
 * which demo.sh sets next to numapin's own log lines.
 */
public final class Demo {
    private Demo() {}

    public static void main(String[] args) throws Exception {
        Map<String, Probe.Where> seen = new ConcurrentHashMap<>();
        Runnable record = () -> seen.put(Thread.currentThread().getName(), Probe.where());
        ForkJoinPool tier1 = new ForkJoinPool(2, Probe.namedFactory("Tier1"), null, false);
        ForkJoinPool tier2 = new ForkJoinPool(2, Probe.namedFactory("Tier2"), null, false);
        ForkJoinPool tier3 = new ForkJoinPool(1, Probe.namedFactory("Tier3"), null, false);
        boolean ok = Probe.occupy(tier1, 2, record)
                & Probe.occupy(tier2, 2, record)
                & Probe.occupy(tier3, 1, record)
                & Probe.occupy(ForkJoinPool.commonPool(), ForkJoinPool.getCommonPoolParallelism(), record);
        record.run(); // main, for contrast: it exists before numapin can see it
        new TreeMap<>(seen).forEach((name, w) ->
                Probe.out("demo name=\"" + name + "\" tid=" + w.tid() + " cpus=" + w.cpus()));
        tier1.shutdown();
        tier2.shutdown();
        tier3.shutdown();
        System.exit(ok ? 0 : 3);
    }
}
