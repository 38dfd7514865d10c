package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import numapin.tests.ChildResult.Placed;
import numapin.tests.ChildResult.ProbeLine;

/**
 * The memory policy of placed threads (mem=): each policy applies on a real
 * node and the placed line names it as read back; a policy the kernel
 * refuses is one warning, the later ones at debug level, and the CPU
 * placement holds; under strict the JVM does not start. On the fake 2-node
 * machine node 1 exists only in hwloc's mind: this kernel has node 0
 * alone, so a policy on node 1 fails (EINVAL).
 */
@ExtendWith(RunLogs.class)
class MemoryPolicyTest {
    static final String DEFAULT_THREADS = PlacementTest.DEFAULT_THREADS;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        assumeTrue(!Machine.nodesWithCpus().contains(1), "node 1 must not exist in this kernel");
    }

    private static boolean aboutMemory(String line) {
        String l = line.toLowerCase(Locale.ROOT);
        return l.contains("mem") || l.contains("policy") || l.contains("mbind");
    }

    /** The warning for the first thread whose bind:1 the kernel refuses. */
    static final String EINVAL_WARNING = "cannot set memory policy bind:1 for \"ForkJoinPool-\\d+-worker-\\d+\" "
            + "tid=\\d+: Invalid argument \\(EINVAL\\)";

    /**
     * bind:1 on a node the kernel lacks: one warning for six workers of two
     * pools failing the same way, each placed line saying mem_error=EINVAL,
     * the CPU placement holding.
     */
    @Test
    void memoryFailureWarnsOnceAndCpuPinningHolds() {
        ChildResult r = Launch.probe("default:4", "default:2").fakeTwoNodes().options("group=1,mem=bind,scope=threads").run()
                .assertRan();
        List<ProbeLine> workers = r.probes("default");
        assertEquals(6, workers.size(), r.describe());
        r.assertCpus("1", workers, "worker whose memory policy failed");
        r.assertCpus(Machine.allowedCpus(), r.probes("main"), "main thread");

        r.assertWarnings(EINVAL_WARNING);
        assertTrue(aboutMemory(r.failureWarnings().get(0)), "the warning is not about memory policy: "
                + r.failureWarnings().get(0));
        assertEquals(List.of(), r.levelLines("error"), r.describe());

        for (Placed p : r.assertPlacementLinesMatchProbe(r.logLines(), DEFAULT_THREADS, "placed", true).values()) {
            assertTrue(p.line().endsWith(" mem_error=EINVAL"), "placed line without mem_error=EINVAL: " + p.line());
        }
        ChildResult.Summary s = r.summary();
        assertEquals(6, s.placed(), "CPU placement succeeded for all 6 workers\n" + r.describe());
        assertEquals(6, s.memFailed(), "memory policy failed for all 6 workers\n" + r.describe());
    }

    /** The later failures of the same policy go to debug; each worker keeps CPU 1 and the default policy. */
    @Test
    void repeatedMemoryFailuresGoToDebug() {
        ChildResult r = Launch.program("Workers", "4").fakeTwoNodes()
                .options("group=1,mem=bind,scope=threads,log=debug").run()
                .assertRan();
        String ctx = r.describe();
        for (Map<String, String> w : Lines.exactly(r, "worker", 4)) {
            assertEquals("1", w.get("cpus"), "worker whose memory policy failed\n" + ctx);
            assertEquals("default", w.get("policy"), ctx);
        }
        r.assertWarnings(EINVAL_WARNING);
        assertEquals(3, r.levelLines("debug").stream().filter(l -> l.contains("] cannot set memory policy bind:1"))
                .count(), "the 3 later memory failures of 4 workers at debug level\n" + ctx);
        List<String> debugMem = r.levelLines("debug").stream().filter(MemoryPolicyTest::aboutMemory)
                .filter(l -> !l.contains("] skipped \"")).collect(Collectors.toList());
        assertTrue(debugMem.size() >= 3, "the 3 later memory failures of 4 workers are not at debug level\n" + ctx);
        Map<String, String> s = Lines.summary(r);
        assertEquals("4", s.get("placed"), ctx);
        assertEquals("4", s.get("mem_failed"), ctx);
    }

    @Test
    void strictStopsTheJvmWhenThePlanCannotApply() {
        ChildResult r = Launch.probe("default:2").fakeTwoNodes().options("strict,group=1,mem=bind").run();
        r.assertStrictStop("scope=jvm: cannot set memory policy bind:1 for the JVM: Invalid argument \\(EINVAL\\) \\(strict");
        assertEquals(1, r.levelLines("error").size(), "error lines\n" + r.describe());
    }

    @Test
    void strictRunsWhenThePlanApplies() {
        ChildResult r = Launch.probe("default:2").fakeTwoNodes().options("strict,group=0,mem=bind").run()
                .assertExit(0);
        r.assertCpus("0", r.probes("default"), "default-pool worker under strict");
        for (Placed p : r.assertPlacementLinesMatchProbe(r.logLines(), DEFAULT_THREADS, "placed", true).values()) {
            assertEquals("bind:0", p.mem(), p.line());
        }
        assertEquals(List.of(), r.failureWarnings(), r.describe());
    }

    /**
     * On the real machine (node 0) every policy applies; the placed line names
     * the policy read back from the kernel (docs/logging.md): under mem=none
     * the thread keeps the process default, "default".
     */
    @ParameterizedTest(name = "mem={0}")
    @CsvSource({"preferred,preferred:0", "bind,bind:0", "interleave,interleave:0", "local,local",
            "none,default"})
    void everyPolicyAppliesOnARealNode(String mem, String logged) {
        ChildResult r = Launch.probe("default:2").options("mem=" + mem).run().assertExit(0);
        Map<String, Placed> placed = r.assertPlacementLinesMatchProbe(r.logLines(), DEFAULT_THREADS, "placed", true);
        List<String> mems = new ArrayList<>();
        placed.values().forEach(p -> mems.add(p.mem()));
        assertEquals(List.of(logged, logged), mems, "mem= read back in the placed lines under mem=" + mem + "\n"
                + r.describe());
        assertEquals(List.of(), r.failureWarnings(), r.describe());
        assertEquals(0, r.summary().memFailed(), r.describe());
    }
}
