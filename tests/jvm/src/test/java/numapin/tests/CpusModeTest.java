package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import numapin.tests.ChildResult.ProbeLine;

/**
 * cpus=node|core|pu: which of its group's CPUs a placed thread gets. node:
 * all of them; core and pu: the one core or hardware thread holding the
 * fewest live placed threads, so that threads which end free their slot,
 * through pools that shrink and grow again. Each thread reads back where it
 * runs from /proc; numapin's log is checked against what it read.
 */
@ExtendWith(RunLogs.class)
class CpusModeTest {
    static String all;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        all = Machine.allowedCpus();
    }

    /** cpus=pu or cpus=core: each worker gets one CPU, the least loaded one. */
    private void assertSpreadOnePerCpu(String mode) {
        // groups=1 on the fake machine: the group is both nodes, CPUs 0 and 1.
        ChildResult two = Launch.probe("default:2").fakeTwoNodes().options("groups=1,cpus=" + mode).run()
                .assertExit(0);
        List<ProbeLine> w = two.probes("default");
        assertEquals(2, w.size(), two.describe());
        Set<Set<Integer>> got = w.stream().map(p -> (Set<Integer>) Cpus.parse(p.cpus())).collect(Collectors.toSet());
        assertEquals(Set.of(Set.of(0), Set.of(1)), got,
                "cpus=" + mode + " with 2 workers on CPUs 0-1: one on each\n" + two.describe());
        two.assertCpus(all, two.probes("main"), "main thread");
        two.assertPlacementLinesMatchProbe(two.logLines(), PlacementTest.DEFAULT_THREADS, "placed", true);

        // Four live workers from two pools: two on each CPU.
        ChildResult four = Launch.probe("default:2", "common").fakeTwoNodes().options("groups=1,cpus=" + mode).run()
                .assertExit(0);
        List<ProbeLine> all4 = new ArrayList<>(four.probes("default"));
        all4.addAll(four.probes("common"));
        assertEquals(4, all4.size(), four.describe());
        Map<String, Integer> perCpu = new TreeMap<>();
        for (ProbeLine p : all4) {
            assertEquals(1, Cpus.parse(p.cpus()).size(), "cpus=" + mode + " gives one CPU: " + p + "\n"
                    + four.describe());
            perCpu.merge(p.cpus(), 1, Integer::sum);
        }
        assertEquals(Map.of("0", 2, "1", 2), perCpu, "cpus=" + mode + ": 4 workers spread over CPUs 0 and 1\n"
                + four.describe());
        four.assertPlacementLinesMatchProbe(four.logLines(), PlacementTest.DEFAULT_THREADS, "placed", true);
    }

    @Test
    void cpusPuSpreadsWorkersOnePerCpu() {
        assertSpreadOnePerCpu("pu");
    }

    @Test
    void cpusCoreSpreadsWorkersOnePerCore() {
        assertSpreadOnePerCpu("core");
    }

    /**
     * cpus=pu counts live threads: threads that ended free their CPU. Four
     * threads, two per CPU; the two on Solo1's CPU end; the next two threads
     * both go there (with ended threads still counted, they would split).
     */
    @Test
    void cpusPuCountsOnlyLiveThreads() {
        ChildResult r = Launch.probe("plain:Solo1", "plain:Solo2", "plain:Solo3", "plain:Solo4", "endwith:Solo1",
                        "plain:Solo5", "plain:Solo6")
                .fakeTwoNodes().options("groups=1,cpus=pu,threads=Solo*").run().assertExit(0);
        Map<String, Integer> perCpu = new TreeMap<>();
        for (int i = 1; i <= 4; i++) {
            String c = r.probe("Solo" + i).cpus();
            assertEquals(1, Cpus.parse(c).size(), "cpus=pu gives one CPU\n" + r.describe());
            perCpu.merge(c, 1, Integer::sum);
        }
        assertEquals(Map.of("0", 2, "1", 2), perCpu, "4 live threads over CPUs 0 and 1\n" + r.describe());
        String freed = r.probe("Solo1").cpus();
        assertEquals(freed, r.probe("Solo5").cpus(), "the CPU whose threads ended holds no live thread\n"
                + r.describe());
        assertEquals(freed, r.probe("Solo6").cpus(), "the CPU whose threads ended still holds fewer live threads\n"
                + r.describe());
    }

    @Test
    void cpusNodeGivesTheWholeGroup() {
        ChildResult r = Launch.probe("default:2").fakeTwoNodes().options("groups=1,cpus=node").run().assertExit(0);
        r.assertCpus("0-1", r.probes("default"), "default-pool worker with groups=1 on the fake 2-node machine");
        for (Placed p : r.assertPlacementLinesMatchProbe(r.logLines(), PlacementTest.DEFAULT_THREADS, "placed", true)
                .values()) {
            assertEquals(Set.of(0, 1), Cpus.parse(p.node()), "groups=1 spans both nodes: " + p.line());
        }
    }

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
                String k = ChildResult.threadKey(f.get("name"), f.get("tid"));
                assertTrue(startCpus.put(k, f.get("cpus")) == null, "worker started twice: " + l);
                liveNow.add(k);
            } else if (l.startsWith("churn-end ")) {
                assertTrue(liveNow.remove(ChildResult.threadKey(f.get("name"), f.get("tid"))), "unknown worker ended: " + l + "\n" + ctx);
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
                Set<String> got = live.stream().map(m -> ChildResult.threadKey(m.get("name"), m.get("tid")))
                        .collect(Collectors.toCollection(TreeSet::new));
                assertEquals(expected, got, "live workers at " + state + " vs. started minus ended\n" + ctx);
                Map<String, Integer> perCpu = new TreeMap<>(Map.of("0", 0, "1", 0));
                for (Map<String, String> w : live) {
                    String k = ChildResult.threadKey(w.get("name"), w.get("tid"));
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
        Map<String, Placed> placed = r.placedByThread();
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
}
