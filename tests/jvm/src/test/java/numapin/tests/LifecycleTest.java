package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import numapin.tests.ChildResult.Cpus;
import numapin.tests.ChildResult.Placed;

/**
 * Threads over the life of a JVM (docs/lifecycle.md): pools that shrink and
 * grow again under cpus=core|pu, scope=jvm, renamed threads and the rescan,
 * virtual threads. Every placement is read back by the threads themselves
 * from /proc; numapin's log is checked against what they read.
 */
@ExtendWith(RunLogs.class)
class LifecycleTest {
    static String all;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        all = Machine.allowedCpus();
    }

    static String key(String name, Object tid) {
        return name + "/" + tid;
    }

    /** Placed lines by NAME/TID; fails on two lines for one thread. */
    static Map<String, Placed> placedByThread(ChildResult r) {
        Map<String, Placed> m = new LinkedHashMap<>();
        for (Placed p : r.placed()) {
            assertTrue(m.put(key(p.name(), p.tid()), p) == null,
                    "two 'placed' lines for \"" + p.name() + "\" tid=" + p.tid() + "\n" + r.describe());
        }
        assertEquals(ChildResult.placedLike(r.logLines(), "placed"), r.placed().size(),
                "'placed' lines that do not parse\n" + r.describe());
        return m;
    }

    // ---- churn -----------------------------------------------------------------------------

    /**
     * Ten rounds of shrink and regrowth on one group of two cores (CPUs 0 and
     * 1). The shrink ends workers unevenly (all single-worker pools on the
     * fuller CPU, a keep-alive pool whose workers retire by themselves), so
     * only ThreadEnd bookkeeping can bring the regrown pools back to within
     * one live worker per CPU.
     */
    @ParameterizedTest(name = "cpus={0}")
    @ValueSource(strings = {"core", "pu"})
    void churnKeepsLiveWorkersPerCpuWithinOne(String mode) {
        int rounds = 10;
        ChildResult r = Launch.program("Churn", String.valueOf(rounds)).fakeTwoCores()
                .options("groups=1,cpus=" + mode).run().assertExit(0);
        String ctx = r.describe();

        Map<String, String> startCpus = new HashMap<>();
        Set<String> liveNow = new LinkedHashSet<>();
        // (round, phase) -> the live workers' readings, in output order
        Map<String, List<Map<String, String>>> states = new LinkedHashMap<>();
        // (round, phase) -> the workers started and not ended when it was read
        Map<String, Set<String>> expectedAt = new HashMap<>();
        for (String l : r.stdoutLines()) {
            Map<String, String> f = Lines.fields(l);
            if (l.startsWith("churn-start ")) {
                String k = key(f.get("name"), f.get("tid"));
                assertTrue(startCpus.put(k, f.get("cpus")) == null, "worker started twice: " + l);
                liveNow.add(k);
            } else if (l.startsWith("churn-end ")) {
                assertTrue(liveNow.remove(key(f.get("name"), f.get("tid"))), "unknown worker ended: " + l + "\n" + ctx);
            } else if (l.startsWith("churn-live ")) {
                String state = f.get("round") + "/" + f.get("phase");
                states.computeIfAbsent(state, s -> new ArrayList<>()).add(f);
                expectedAt.computeIfAbsent(state, s -> new TreeSet<>(liveNow));
            }
        }
        Map<String, String> done = Lines.one(r, "churn-done");
        int started = Integer.parseInt(done.get("started"));
        assertEquals(started, startCpus.size(), ctx);
        assertTrue(Integer.parseInt(done.get("retired")) > 0,
                "no keep-alive worker retired by itself: the churn did not exercise retirement\n" + ctx);

        int skewedShrinks = 0;
        for (int round = 0; round <= rounds; round++) {
            for (String phase : round == 0 ? List.of("grown") : List.of("shrunk", "regrown")) {
                String state = round + "/" + phase;
                List<Map<String, String>> live = states.get(state);
                assertNotNull(live, "no state " + state + "\n" + ctx);
                Set<String> expected = expectedAt.get(state);
                Set<String> got = live.stream().map(m -> key(m.get("name"), m.get("tid")))
                        .collect(Collectors.toCollection(TreeSet::new));
                assertEquals(expected, got, "live workers at " + state + " vs. started minus ended\n" + ctx);
                Map<String, Integer> perCpu = new TreeMap<>(Map.of("0", 0, "1", 0));
                for (Map<String, String> w : live) {
                    String k = key(w.get("name"), w.get("tid"));
                    assertTrue(Set.of("0", "1").contains(w.get("cpus")),
                            "cpus=" + mode + " gives one CPU of 0-1: " + k + " reads " + w.get("cpus") + "\n" + ctx);
                    assertEquals(startCpus.get(k), w.get("cpus"), k + " moved since it started\n" + ctx);
                    perCpu.merge(w.get("cpus"), 1, Integer::sum);
                }
                int diff = Math.abs(perCpu.get("0") - perCpu.get("1"));
                if (phase.equals("shrunk")) {
                    skewedShrinks += diff >= 2 ? 1 : 0;
                } else {
                    assertTrue(diff <= 1, "at " + state + " the live workers per CPU are " + perCpu
                            + ": they differ by more than one\n" + ctx);
                }
            }
        }
        assertTrue(skewedShrinks >= rounds / 2, "only " + skewedShrinks + " of " + rounds
                + " shrinks left the CPUs 2 or more workers apart: the test would not see lost ThreadEnds\n" + ctx);

        // numapin's account: one placement per worker, on the CPU it read
        Map<String, Placed> placed = placedByThread(r);
        assertEquals(new TreeSet<>(startCpus.keySet()), new TreeSet<>(placed.keySet()),
                "placed lines vs. workers started\n" + ctx);
        for (Map.Entry<String, String> e : startCpus.entrySet()) {
            Placed p = placed.get(e.getKey());
            assertEquals(e.getValue(), p.cpus(), "cpus in numapin's line vs. the worker's reading: " + p.line());
            assertTrue(!p.line().contains(" how="), "placed from outside: " + p.line());
        }
        Map<String, String> s = Lines.summary(r);
        assertEquals(String.valueOf(started), s.get("placed"), "summary placed=\n" + ctx);
        assertEquals("0", s.get("failed"), ctx);
        assertEquals("0", s.get("mem_failed"), ctx);
        assertEquals("0-1", s.get("cpus"), ctx);
        assertEquals(List.of(), r.failureWarnings(), ctx);
        assertEquals(List.of(), r.levelLines("error"), ctx);
    }

    // ---- scope=jvm -------------------------------------------------------------------------

    private static ChildResult jvmThreads(String options) {
        return Launch.program("JvmThreads").fakeTwoNodes().gc("-XX:+UseG1GC").options(options).run().assertExit(0);
    }

    @Test
    void scopeJvmPutsEveryThreadOfTheJvmOnTheGroup() {
        ChildResult r = jvmThreads("group=1,scope=jvm,mem=none");
        String ctx = r.describe();
        List<Map<String, String>> tasks = Lines.of(r, "task");
        assertEquals(Lines.one(r, "tasks-done").get("count"), String.valueOf(tasks.size()), ctx);
        Set<String> comms = tasks.stream().map(t -> t.get("comm")).collect(Collectors.toCollection(TreeSet::new));
        for (String want : List.of("VM Thread", "C1 CompilerThre", "C2 CompilerThre", "GC Thread#0", "Reference Handl",
                "Signal Dispatch")) {
            assertTrue(comms.contains(want), "no thread \"" + want + "\" listed: " + comms + "\n" + ctx);
        }
        for (Map<String, String> t : tasks) {
            assertEquals(Set.of(1), Cpus.parse(t.get("cpus")),
                    "under scope=jvm, thread " + t.get("comm") + " tid=" + t.get("tid") + " runs on " + t.get("cpus")
                            + ", not group 1's CPU 1\n" + ctx);
        }
        List<String> jvm = r.logLines().stream().filter(l -> l.contains("][info][numapin] jvm ")).toList();
        assertEquals(1, jvm.size(), "the 'jvm' line\n" + ctx);
        Map<String, String> f = Lines.fields(jvm.get(0).substring(jvm.get(0).indexOf(" jvm ") + 4));
        assertEquals("1", f.get("group"), jvm.get(0));
        assertEquals("1", f.get("cpus"), jvm.get(0));
        // the workers still get their own placement
        for (Map<String, String> w : Lines.of(r, "worker")) {
            assertEquals("1", w.get("cpus"), ctx);
            assertNotNull(placedByThread(r).get(key(w.get("name"), w.get("tid"))), "no placed line for " + w + "\n" + ctx);
        }
        assertEquals(List.of(), r.failureWarnings(), ctx);
    }

    /**
     * HotSpot sized its GC threads for the CPUs it saw before scope=jvm bound
     * the process; the advice names that count (docs/lifecycle.md#scopejvm),
     * not the group's, and does not present numapin's own binding as the one
     * the JVM was started with.
     */
    @Test
    void scopeJvmAdviceDescribesTheJvmAsItStarted() {
        ChildResult r = Launch.program("Workers", "1").fakeTwoNodes().gc("-XX:+UseG1GC")
                .options("group=1,scope=jvm,mem=none").run().assertExit(0);
        String ctx = r.describe();
        int seen = Cpus.parse(all).size();
        List<String> gc = r.levelLines("warning").stream().filter(l -> l.contains("advice: GC and JIT threads")).toList();
        assertEquals(1, gc.size(), ctx);
        assertTrue(gc.get(0).contains("sized for the " + seen + " CPUs the JVM saw"),
                "HotSpot saw " + seen + " CPUs when it sized its threads: " + gc.get(0));
        assertTrue(r.levelLines("warning").stream().noneMatch(l -> l.contains("advice: the JVM was started with")), ctx);
    }

    @Test
    void withoutScopeJvmTheJvmsOwnThreadsKeepEveryCpu() {
        ChildResult r = jvmThreads("group=1,scope=threads,mem=none");
        String ctx = r.describe();
        Set<String> workers = Lines.of(r, "worker").stream().map(w -> w.get("tid")).collect(Collectors.toSet());
        assertEquals(2, workers.size(), ctx);
        List<Map<String, String>> tasks = Lines.of(r, "task");
        assertTrue(tasks.stream().anyMatch(t -> t.get("comm").equals("VM Thread")), ctx);
        for (Map<String, String> t : tasks) {
            String want = workers.contains(t.get("tid")) ? "1" : all;
            assertEquals(Cpus.parse(want), Cpus.parse(t.get("cpus")),
                    "thread " + t.get("comm") + " tid=" + t.get("tid") + " runs on " + t.get("cpus") + "\n" + ctx);
        }
        assertTrue(r.logLines().stream().noneMatch(l -> l.contains("][numapin] jvm ")), ctx);
    }

    // ---- renamed threads ---------------------------------------------------------------------

    private static ChildResult rename(String rescan, long waitMs) {
        return Launch.program("Rename", String.valueOf(waitMs)).fakeTwoNodes()
                .options("group=1,mem=none,scope=threads,threads=Renamed-*" + (rescan == null ? "" : ",rescan=" + rescan)).run()
                .assertExit(0);
    }

    private static Map<String, String> line(ChildResult r, String word, String name) {
        List<Map<String, String>> l = Lines.of(r, word).stream().filter(m -> name.equals(m.get("name"))).toList();
        assertEquals(1, l.size(), word + " lines for " + name + "\n" + r.describe());
        return l.get(0);
    }

    /** rescan=100 and the default (1000): placed once renamed, within a few seconds, by the rescan. */
    @ParameterizedTest(name = "rescan={0}")
    @ValueSource(strings = {"100", "default"})
    void renamedThreadIsPlacedByTheRescan(String rescan) {
        ChildResult r = rename(rescan.equals("default") ? null : rescan, 15_000);
        String ctx = r.describe();
        Map<String, String> start = line(r, "rename-start", "plain");
        Map<String, String> end = line(r, "rename-end", "Renamed-1");
        assertEquals(Cpus.parse(all), Cpus.parse(start.get("cpus")), "before the rename: not placed\n" + ctx);
        assertEquals("1", end.get("cpus"), "after the rename (waited " + end.get("waited_ms") + " ms)\n" + ctx);
        List<Placed> renamed = r.placed().stream().filter(p -> p.name().equals("Renamed-1")).toList();
        assertEquals(1, renamed.size(), ctx);
        Placed p = renamed.get(0);
        assertEquals(end.get("tid"), String.valueOf(p.tid()), p.line());
        assertEquals("1", p.cpus(), p.line());
        assertEquals("unchanged", p.mem(), p.line());
        assertTrue(p.line().endsWith(" how=rescan"), p.line());

        // renamed away from a matching name: keeps its placement
        assertEquals("1", line(r, "rename-start", "Renamed-2").get("cpus"), ctx);
        assertEquals("1", line(r, "rename-end", "plain-2").get("cpus"), ctx);
        assertEquals(2, r.placed().size(), "placed lines: Renamed-2 at its start, Renamed-1 after its rename\n" + ctx);
        assertEquals(List.of(), r.failureWarnings(), ctx);
    }

    @Test
    void renamedThreadStaysUnplacedWithoutRescan() {
        ChildResult r = rename("0", 1_500);
        String ctx = r.describe();
        Map<String, String> end = line(r, "rename-end", "Renamed-1");
        assertEquals(Cpus.parse(all), Cpus.parse(end.get("cpus")), "rescan=0: a renamed thread is not placed\n" + ctx);
        assertEquals("false", end.get("changed"), ctx);
        assertTrue(r.logLines().stream().noneMatch(l -> l.contains(" how=rescan")), ctx);
        assertEquals("1", line(r, "rename-end", "plain-2").get("cpus"), ctx);
    }

    /**
     * The rescan runs while threads start and end all the time (10000 short
     * threads, rescan every 10 ms): a thread it sees before its ThreadStart
     * has run, or after its ThreadEnd, is not placed a second time, and
     * cpus=core slots are not lost. Two threads alive together afterwards
     * get one CPU each.
     */
    @Test
    void rescanLeavesStartingAndEndingThreadsAlone() {
        int n = 10_000;
        ChildResult r = Launch.program("Starts", String.valueOf(n)).fakeTwoCores()
                .options("groups=1,cpus=core,mem=none,rescan=10,threads=Short-*|Long-*").run().assertExit(0);
        String ctx = r.describe();
        List<String> rescanned = r.logLines().stream().filter(l -> l.contains(" how=rescan")).toList();
        assertEquals(List.of(), rescanned, "threads whose names matched from their start, placed again by the rescan\n"
                + ctx);
        Map<String, String> s = Lines.summary(r);
        assertEquals(String.valueOf(n + 2), s.get("placed"), "summary placed= for " + n + " + 2 threads\n" + ctx);
        assertEquals("0", s.get("failed"), ctx);
        assertEquals(List.of(), r.failureWarnings(), ctx);
        assertTrue(r.levelLines("warning").stream().noneMatch(l -> l.contains("placed threads are live")),
                "at most two threads were ever live at once\n" + ctx);
        Set<String> longCpus = Lines.of(r, "starts-long").stream().map(m -> m.get("cpus")).collect(Collectors.toSet());
        assertEquals(Set.of("0", "1"), longCpus, "two live threads under cpus=core on two cores\n" + ctx);
    }

    // ---- virtual threads -------------------------------------------------------------------

    private static ChildResult virtualThreads(String options) {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21 or later");
        return Launch.program("Virtual", "8").fakeTwoNodes().options(options).run().assertExit(0);
    }

    @Test
    void virtualThreadsRunOnPlacedCarriersByDefault() {
        ChildResult r = virtualThreads("group=1,mem=none");
        String ctx = r.describe();
        List<Map<String, String>> v = Lines.of(r, "vthread");
        assertEquals(24, v.size(), ctx);
        Map<String, Placed> placed = new HashMap<>();
        for (Placed p : r.placed()) {
            placed.put(p.name(), p);
        }
        assertTrue(!placed.isEmpty(), "no carrier was placed\n" + ctx);
        for (Map<String, String> m : v) {
            assertEquals("1", m.get("cpus"), "a virtual thread's carrier runs on " + m.get("cpus") + "\n" + ctx);
            String carrier = m.get("carrier").substring(m.get("carrier").indexOf('@') + 1);
            assertTrue(carrier.matches("ForkJoinPool-\\d+-worker-\\d+"), "carrier " + carrier + "\n" + ctx);
            assertTrue(placed.containsKey(carrier), "no placed line for carrier " + carrier + "\n" + ctx);
        }
        for (Placed p : placed.values()) {
            assertTrue(p.name().matches("ForkJoinPool-\\d+-worker-\\d+"), p.line());
            assertEquals("1", p.cpus(), p.line());
        }
    }

    @Test
    void carriersStayOnEveryCpuWhenThreadsNamesOnlyOtherPools() {
        ChildResult r = virtualThreads("group=1,mem=none,scope=threads,threads=Custom-*");
        String ctx = r.describe();
        List<Map<String, String>> v = Lines.of(r, "vthread");
        assertEquals(24, v.size(), ctx);
        for (Map<String, String> m : v) {
            assertEquals(Cpus.parse(all), Cpus.parse(m.get("cpus")), "a virtual thread's carrier is placed\n" + ctx);
        }
        assertEquals(List.of(), r.placed(), ctx);
        assertTrue(!Lines.of(r, "carrier").isEmpty(), ctx);
        for (Map<String, String> c : Lines.of(r, "carrier")) {
            assertEquals(Cpus.parse(all), Cpus.parse(c.get("cpus")), "carrier thread " + c + "\n" + ctx);
        }
    }
}
