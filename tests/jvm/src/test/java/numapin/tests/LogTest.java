package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import numapin.tests.ChildResult.Cpus;
import numapin.tests.ChildResult.Placed;
import numapin.tests.ChildResult.ProbeLine;
import numapin.tests.ChildResult.Summary;

/** numapin's log: its shape, its facts checked against /proc, its levels. (Its file: {@link LogFileTest}.) */
@ExtendWith(RunLogs.class)
class LogTest {
    static final String DEFAULT_THREADS = PlacementTest.DEFAULT_THREADS;
    static String all;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        all = Machine.allowedCpus();
    }

    private static int firstIndex(List<String> lines, String contains) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(contains)) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void logLinesParseAndAgreeWithProc() {
        ChildResult r = Launch.probe(PlacementTest.MIX).fakeTwoNodes().options("group=0,log=debug").run()
                .assertExit(0);
        List<String> log = r.logLines();
        assertEquals(List.of(), r.stderrLogLines(), "numapin lines on stderr in a run with nothing wrong\n"
                + r.describe());
        // Every line shaped like unified logging; placed lines agree with the
        // tid and CPUs each thread read itself.
        Map<String, Placed> placed = r.assertPlacementLinesMatchProbe(log, DEFAULT_THREADS, "placed", true);

        // topology and plan come first.
        int topology = firstIndex(log, "[info][numapin] topology ");
        int plan = firstIndex(log, "[info][numapin] plan ");
        int firstPlaced = firstIndex(log, "[numapin] placed \"");
        assertTrue(topology >= 0, "no info line starting 'topology '\n" + r.describe());
        assertTrue(plan >= 0, "no info line starting 'plan '\n" + r.describe());
        assertTrue(topology < firstPlaced && plan < firstPlaced, "topology/plan lines after placements\n"
                + r.describe());

        // Threads that do not match: a debug 'skipped' line with their tid.
        Map<String, Long> skipped = ChildResult.skipped(log);
        for (ProbeLine p : r.probes()) {
            if (p.kind().equals("main")) {
                assertTrue(!placed.containsKey("main"), "main was placed\n" + r.describe());
            } else if (!ChildResult.matches(DEFAULT_THREADS, p.name())) {
                assertEquals(p.tid(), skipped.get(p.name()), "skipped line for \"" + p.name() + "\"\n"
                        + r.describe());
            } else {
                assertTrue(!skipped.containsKey(p.name()), "a matching thread was skipped: " + p.name()
                        + " (was its name final at ThreadStart?)\n" + r.describe());
            }
        }
        long skippedLike = log.stream().filter(l -> l.contains("[numapin] skipped \"")).count();
        assertEquals(skippedLike, ChildResult.skipped(log).size(),
                "'skipped' lines that do not parse as [debug] skipped \"NAME\" tid=N\n" + r.describe());

        // One summary, at the end, counting what the probe started.
        Summary s = r.summary();
        assertTrue(log.get(log.size() - 1).contains("[numapin] summary "), "summary is not the last line\n"
                + r.describe());
        assertEquals(placed.size(), s.placed(), "summary placed= vs. matching threads the probe started\n"
                + r.describe());
        assertEquals(4, s.placed(), "2 default-pool + 2 common-pool workers\n" + r.describe());
        assertEquals(0, s.failed(), r.describe());
        assertEquals(0, s.memFailed(), r.describe());
        long nonMatching = r.probes().stream().filter(p -> !p.kind().equals("main")
                && !ChildResult.matches(DEFAULT_THREADS, p.name())).count();
        assertTrue(s.skipped() >= nonMatching, "summary skipped=" + s.skipped() + " but the probe alone started "
                + nonMatching + " non-matching threads\n" + r.describe());
        Set<Integer> used = new TreeSet<>();
        placed.keySet().forEach(n -> used.addAll(Cpus.parse(r.probe(n).cpus())));
        assertEquals(used, Cpus.parse(s.cpus()), "summary cpus= vs. the CPUs placed threads read\n" + r.describe());
    }

    @Test
    void defaultLevelIsInfo() {
        ChildResult r = Launch.probe(PlacementTest.MIX).fakeTwoNodes().options("group=0").run().assertExit(0);
        List<String> log = r.logLines();
        assertEquals(List.of(), log.stream().filter(l -> l.contains("[debug][numapin]") || l.contains("[trace][numapin]"))
                .collect(Collectors.toList()), "debug/trace lines at the default level\n" + r.describe());
        Map<String, Placed> placed = r.assertPlacementLinesMatchProbe(log, DEFAULT_THREADS, "placed", true);
        assertEquals(placed.size(), r.summary().placed(), r.describe());
        for (Placed p : placed.values()) {
            assertEquals("preferred:0", p.mem(), "default mem= on group 0: " + p.line());
        }
    }

    @Test
    void logOffPrintsNothingAndStillPlaces() {
        ChildResult r = Launch.probe("default:2").fakeTwoNodes().options("group=0,log=off").run().assertExit(0);
        assertEquals(List.of(), r.logLines(), r.describe());
        assertEquals(List.of(), r.stderrLogLines(), r.describe());
        r.assertCpus("0", r.probes("default"), "default-pool worker under log=off");
    }

    @Test
    void logWarningHidesInfo() {
        ChildResult r = Launch.probe("default:2").fakeTwoNodes().options("group=0,log=warning").run().assertExit(0);
        assertEquals(List.of(), r.levelLines("info"), r.describe());
        r.assertCpus("0", r.probes("default"), "default-pool worker under log=warning");
    }
}
