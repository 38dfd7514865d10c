package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
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

/**
 * scope=jvm (docs/lifecycle.md#scopejvm): the whole JVM, its own threads
 * (GC, compilers, VM thread) too, on the group's CPUs and memory, and the
 * matching threads placed as always; without it, the JVM's own threads keep
 * every CPU. Every thread is read from /proc/self/task.
 */
@ExtendWith(RunLogs.class)
class ScopeJvmTest {
    static String all;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        all = Machine.allowedCpus();
    }

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
            assertNotNull(r.placedByThread().get(ChildResult.threadKey(w.get("name"), w.get("tid"))),
                    "no placed line for " + w + "\n" + ctx);
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

    /**
     * A memory policy the kernel refuses (bind:1 on the fake node 1): one
     * warning for the JVM, which is the workers' too (they are refused the
     * same policy), and the JVM runs, bound to the group's CPU.
     */
    @Test
    void aMemoryPolicyTheKernelRefusesIsOneWarningForTheJvmAndTheJvmRuns() {
        ChildResult r = Launch.program("Workers", "2").fakeTwoNodes().options("group=1,scope=jvm,mem=bind").run()
                .assertRan();
        String ctx = r.describe();
        for (Map<String, String> w : Lines.exactly(r, "worker", 2)) {
            assertEquals("1", w.get("cpus"), ctx);
        }
        assertEquals("1", Lines.one(r, "main").get("cpus"), "scope=jvm binds the whole JVM\n" + ctx);
        r.assertWarnings("scope=jvm: cannot set memory policy bind:1 for the JVM: Invalid argument \\(EINVAL\\)");
    }
}
