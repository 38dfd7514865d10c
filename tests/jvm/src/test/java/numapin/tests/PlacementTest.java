package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import numapin.tests.ChildResult.Cpus;
import numapin.tests.ChildResult.Placed;
import numapin.tests.ChildResult.ProbeLine;

/**
 * Where threads end up, read back by the threads themselves from
 * /proc/thread-self/status. Most cases run on a fake 2-node machine
 * (HWLOC_SYNTHETIC) whose node 0 holds CPU 0 and node 1 holds CPU 1.
 */
@ExtendWith(RunLogs.class)
class PlacementTest {
    static final String DEFAULT_THREADS = "ForkJoinPool-*-worker-*|ForkJoinPool.commonPool-worker-*";

    /** Pools of every kind and a plain thread: 2 workers in a custom-named
     *  pool, 2 in a default pool, 2 in the common pool, 1 plain thread. */
    static final String[] MIX = {"custom:Tier1:2", "default:2", "common", "plain:Side"};

    static String all;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        all = Machine.allowedCpus();
    }

    /** With the default threads=, what a MIX run must show. */
    private static void assertDefaultPoolsOn(ChildResult r, String cpus) {
        assertEquals(2, r.probes("default").size(), "default-pool workers reported\n" + r.describe());
        assertEquals(2, r.probes("common").size(), "common-pool workers reported\n" + r.describe());
        r.assertCpus(cpus, r.probes("default"), "default-pool worker");
        r.assertCpus(cpus, r.probes("common"), "common-pool worker");
        r.assertCpus(all, r.probes("custom"), "worker of a pool whose names the default threads= does not match");
        r.assertCpus(all, r.probes("main"), "main thread (started before VMInit)");
        r.assertCpus(all, r.probes("plain"), "plain thread");
    }

    @Test
    void group0PutsEveryForkJoinWorkerOnCpu0() {
        ChildResult r = Launch.probe(MIX).fakeTwoNodes().options("group=0,scope=threads").run().assertExit(0);
        assertDefaultPoolsOn(r, "0");
        Map<String, Placed> placed = r.assertPlacementLinesMatchProbe(r.logLines(), DEFAULT_THREADS, "placed", true);
        for (Placed p : placed.values()) {
            assertEquals(0, p.group(), p.line());
            assertEquals(Set.of(0), Cpus.parse(p.node()), "node of group 0 on the fake machine: " + p.line());
        }
    }

    @Test
    void group1PutsEveryForkJoinWorkerOnCpu1() {
        ChildResult r = Launch.probe(MIX).fakeTwoNodes().options("group=1,scope=threads").run().assertExit(0);
        assertDefaultPoolsOn(r, "1");
        Map<String, Placed> placed = r.assertPlacementLinesMatchProbe(r.logLines(), DEFAULT_THREADS, "placed", true);
        for (Placed p : placed.values()) {
            assertEquals(1, p.group(), p.line());
            assertEquals(Set.of(1), Cpus.parse(p.node()), "node of group 1 on the fake machine: " + p.line());
        }
    }

    @Test
    void customThreadGlobsPlaceOnlyThosePools() {
        String threads = "Tier1-*|Tier2-*";
        ChildResult r = Launch.probe("custom:Tier1:2", "custom:Tier2:2", "custom:Tier3:1", "default:2", "common",
                        "plain:Side")
                .fakeTwoNodes().options("group=1,mem=none,scope=threads,threads=" + threads).run().assertExit(0);
        List<ProbeLine> tier12 = r.probes("custom").stream()
                .filter(p -> p.pool().equals("Tier1") || p.pool().equals("Tier2")).collect(Collectors.toList());
        assertEquals(4, tier12.size(), "Tier1/Tier2 workers reported\n" + r.describe());
        r.assertCpus("1", tier12, "Tier1/Tier2 worker");
        r.assertCpus(all, r.probes("custom").stream().filter(p -> p.pool().equals("Tier3"))
                .collect(Collectors.toList()), "Tier3 worker (not in threads=)");
        r.assertCpus(all, r.probes("default"), "default-pool worker (not in threads=)");
        r.assertCpus(all, r.probes("common"), "common-pool worker (not in threads=)");
        r.assertCpus(all, r.probes("plain"), "plain thread");
        r.assertCpus(all, r.probes("main"), "main thread");
        r.assertPlacementLinesMatchProbe(r.logLines(), threads, "placed", true);
    }

    @Test
    void globsMatchCharacterClassesAndAnyThread() {
        // fnmatch globs: [..] and ?; and a plain (non-pool) thread by its exact name.
        String threads = "Tier[13]-worker-?|Solo";
        ChildResult r = Launch.probe("custom:Tier1:2", "custom:Tier2:1", "custom:Tier3:1", "plain:Solo",
                        "plain:Solo2")
                .fakeTwoNodes().options("group=0,scope=threads,threads=" + threads).run().assertExit(0);
        Map<String, String> cpus = new TreeMap<>();
        for (ProbeLine p : r.probes()) {
            cpus.put(p.name(), p.cpus());
        }
        List<ProbeLine> in = new ArrayList<>();
        List<ProbeLine> out = new ArrayList<>();
        for (ProbeLine p : r.probes()) {
            (ChildResult.matches(threads, p.name()) && !p.kind().equals("main") ? in : out).add(p);
        }
        assertEquals(Set.of("Tier1-worker-1", "Tier1-worker-2", "Tier3-worker-1", "Solo"),
                in.stream().map(ProbeLine::name).collect(Collectors.toSet()), "threads the glob matches");
        r.assertCpus("0", in, "thread matching " + threads);
        r.assertCpus(all, out, "thread not matching " + threads);
        r.assertPlacementLinesMatchProbe(r.logLines(), threads, "placed", true);
    }

    @Test
    void dryrunBindsNothingButSaysWhatItWouldDo() {
        ChildResult r = Launch.probe(MIX).fakeTwoNodes().options("group=1,dryrun").run().assertExit(0);
        // Nothing moved: every thread keeps all CPUs.
        r.assertCpus(all, r.probes(), "thread under dryrun");
        assertEquals(List.of(), r.placed(), "dryrun printed 'placed' lines\n" + r.describe());
        Map<String, Placed> would = r.assertPlacementLinesMatchProbe(r.logLines(), DEFAULT_THREADS, "would-place",
                false);
        for (Placed p : would.values()) {
            assertEquals(Set.of(1), Cpus.parse(p.cpus()), "group 1 would be CPU 1: " + p.line());
            assertEquals(1, p.group(), p.line());
        }
    }

    @Test
    void dryrunTrueIsDryrun() {
        ChildResult r = Launch.probe("default:2").fakeTwoNodes().options("group=1,dryrun=true").run().assertExit(0);
        r.assertCpus(all, r.probes(), "thread under dryrun=true");
        assertTrue(!r.wouldPlace().isEmpty(), "no would-place lines\n" + r.describe());
    }

    /**
     * A thread numapin does not place keeps the JVM's CPUs even when a placed
     * thread starts it: a pool that threads= leaves out stays unplaced when a
     * placed worker submits to it (its workers are then created by that
     * worker, and Linux threads inherit their creator's CPU affinity).
     */
    @Test
    void threadsStartedByAPlacedThreadStayUnplaced() {
        String threads = "Tier1-*";
        ChildResult r = Launch.probe("custom:Tier1:2", "plainfrom:Nested", "defaultfrom:2")
                .fakeTwoNodes().options("group=1,mem=none,scope=threads,threads=" + threads).run().assertExit(0);
        r.assertCpus("1", r.probes("custom"), "Tier1 worker");
        r.assertPlacementLinesMatchProbe(r.logLines(), threads, "placed", true);
        assertAll(
                () -> r.assertCpus(all, r.probes("default"),
                        "default-pool worker (not in threads=) of a pool a placed Tier1 worker submitted to"),
                () -> r.assertCpus(all, r.probes("plain"),
                        "plain thread (not in threads=) started by a placed Tier1 worker"));
    }

    /** The real topology of this machine: one node, CPUs 0-1, sliced into groups. */
    @Test
    void realTopologySlicesTheNodeIntoGroups() {
        assumeTrue(Machine.isOneNodeTwoCpus(), "needs a 1-node machine with CPUs 0-1");
        ChildResult whole = Launch.probe(MIX).options(null).run().assertExit(0);
        assertDefaultPoolsOn(whole, "0-1");
        for (Placed p : whole.assertPlacementLinesMatchProbe(whole.logLines(), DEFAULT_THREADS, "placed", true)
                .values()) {
            assertEquals("0", p.node(), p.line());
            assertEquals(Set.of(0, 1), Cpus.parse(p.cpus()), p.line());
        }
        for (int g = 0; g < 2; g++) {
            ChildResult r = Launch.probe(MIX).options("groups=2,group=" + g + ",scope=threads").run().assertExit(0);
            assertDefaultPoolsOn(r, String.valueOf(g));
            for (Placed p : r.assertPlacementLinesMatchProbe(r.logLines(), DEFAULT_THREADS, "placed", true)
                    .values()) {
                assertEquals("0", p.node(), "both groups live on node 0: " + p.line());
            }
        }
    }

    /** Groups never share a CPU: the union of what each group got is disjoint. */
    @Test
    void realTopologyGroupsGetDisjointCpus() {
        assumeTrue(Machine.isOneNodeTwoCpus(), "needs a 1-node machine with CPUs 0-1");
        Set<Integer> g0 = new TreeSet<>();
        Set<Integer> g1 = new TreeSet<>();
        ChildResult r0 = Launch.probe("default:2").options("groups=2,group=0,cpus=pu").run().assertExit(0);
        ChildResult r1 = Launch.probe("default:2").options("groups=2,group=1,cpus=pu").run().assertExit(0);
        r0.probes("default").forEach(p -> g0.addAll(Cpus.parse(p.cpus())));
        r1.probes("default").forEach(p -> g1.addAll(Cpus.parse(p.cpus())));
        assertEquals(Set.of(0), g0, r0.describe());
        assertEquals(Set.of(1), g1, r1.describe());
    }
}
