package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import numapin.tests.ChildResult.Cpus;
import numapin.tests.ChildResult.Placed;

/**
 * Hostile environments (docs/lifecycle.md#hostile-environments): each is
 * one warning and the JVM goes on, or a start-up failure under strict.
 * Workers read their CPUs and memory policy themselves from /proc.
 *
 * <p>EPERM comes from tests/jvm/tools/seccomp-deny.c, a launcher that
 * installs a seccomp filter (as a container runtime does) and execs java.
 * mk/lifecycle.mk builds it next to the agent (build/tools/); when it is
 * not there, the test compiles it with cc.
 */
@ExtendWith(RunLogs.class)
class HostileTest {
    static String all;
    static String seccomp;

    @BeforeAll
    static void machine() throws IOException, InterruptedException {
        Machine.requireCpus0And1();
        all = Machine.allowedCpus();
        seccomp = seccompLauncher();
    }

    static String seccompLauncher() throws IOException, InterruptedException {
        Path agentDir = Path.of(ChildJvm.agent()).toAbsolutePath().getParent();
        Path built = agentDir.resolve("tools/seccomp-deny");
        if (Files.isExecutable(built)) {
            return built.toString();
        }
        Path src = null;
        Path tests = Path.of(HostileTest.class.getProtectionDomain().getCodeSource().getLocation().getPath());
        for (Path start : List.of(agentDir, Path.of(ChildJvm.probeClassPath()).toAbsolutePath(), tests,
                Path.of("").toAbsolutePath())) {
            for (Path p = start; p != null && src == null; p = p.getParent()) {
                Path c = p.resolve("tests/jvm/tools/seccomp-deny.c");
                if (Files.exists(c)) {
                    src = c;
                }
            }
        }
        if (src == null) {
            fail("no " + built + " and no tests/jvm/tools/seccomp-deny.c to build it from (make builds it)");
        }
        Path out = RunLogs.root().resolve("tools");
        Files.createDirectories(out);
        Path bin = out.resolve("seccomp-deny");
        Process p = new ProcessBuilder("cc", "-O2", "-o", bin.toString(), src.toString()).inheritIO().start();
        assertEquals(0, p.waitFor(), "cc " + src);
        return bin.toString();
    }

    static Launch workers(int n, String options) {
        return Launch.program("Workers", String.valueOf(n)).options(options);
    }

    static List<Map<String, String>> workerLines(ChildResult r, int n) {
        List<Map<String, String>> w = Lines.of(r, "worker");
        assertEquals(n, w.size(), "worker lines\n" + r.describe());
        return w;
    }

    /** The warnings that are not advice, each matching its pattern, in order. */
    static void assertWarnings(ChildResult r, String... patterns) {
        List<String> w = r.failureWarnings();
        assertEquals(patterns.length, w.size(), "warnings (advice aside)\n" + r.describe());
        for (int i = 0; i < patterns.length; i++) {
            assertTrue(Pattern.compile(patterns[i]).matcher(w.get(i)).find(), "warning '" + w.get(i) + "' does not match "
                    + patterns[i] + "\n" + r.describe());
        }
    }

    static void assertStrictStop(ChildResult r, String pattern) {
        String ctx = r.describe();
        assertTrue(r.exitCode != 0 && r.exitCode < 128, "strict: the JVM must not start (nor crash)\n" + ctx);
        assertEquals(List.of(), Lines.of(r, "worker"), "the program ran\n" + ctx);
        List<String> errors = r.stderrLogLines().stream().filter(l -> l.contains("][error][numapin] ")).toList();
        assertEquals(1, errors.size(), "error lines on stderr\n" + ctx);
        assertTrue(Pattern.compile(pattern).matcher(errors.get(0)).find(), errors.get(0) + " vs. " + pattern);
        assertEquals(List.of(), r.hsErrFiles(), "hs_err files: the JVM crashed\n" + ctx);
    }

    // ---- seccomp: EPERM ------------------------------------------------------------------------

    /** groups=1,cpus=pu on one node of two cores: each worker gets CPU 0 or 1 and prefers node 0. */
    static final String PU = "groups=1,cpus=pu,log=debug";

    @Test
    void underAFilterThatDeniesNothingEverythingIsPlaced() {
        ChildResult r = workers(3, PU).fakeTwoCores().prefix(seccomp, "none", "--").run().assertExit(0);
        for (Map<String, String> w : workerLines(r, 3)) {
            assertEquals(1, Cpus.parse(w.get("cpus")).size(), "cpus=pu: one CPU\n" + r.describe());
            assertEquals("prefer:0", w.get("policy"), r.describe());
        }
        assertEquals(3, r.placed().size(), r.describe());
        assertWarnings(r);
    }

    @Test
    void deniedCpuBindingIsOneWarningAndThreadsAreLeftAsTheyWere() {
        ChildResult r = workers(3, PU).fakeTwoCores().prefix(seccomp, "sched_setaffinity", "--").run().assertExit(0);
        String ctx = r.describe();
        for (Map<String, String> w : workerLines(r, 3)) {
            assertEquals(Cpus.parse(all), Cpus.parse(w.get("cpus")), "worker whose binding was refused\n" + ctx);
            assertEquals("default", w.get("policy"), "a refused CPU binding sets no memory policy either\n" + ctx);
        }
        assertWarnings(r, "\\]\\[warning\\]\\[numapin\\] cannot bind \"ForkJoinPool-1-worker-\\d\" tid=\\d+ to cpus=[01]: "
                + "Operation not permitted \\(EPERM\\)");
        long repeats = r.levelLines("debug").stream().filter(l -> l.contains("] cannot bind \"ForkJoinPool-1-worker-"))
                .count();
        assertEquals(2, repeats, "the 2 later refusals are at debug level\n" + ctx);
        assertEquals(List.of(), r.placed(), ctx);
        Map<String, String> s = Lines.summary(r);
        assertEquals("0", s.get("placed"), ctx);
        assertEquals("3", s.get("failed"), ctx);
        assertEquals("none", s.get("cpus"), ctx);
        assertEquals(List.of(), r.levelLines("error"), ctx);
    }

    @Test
    void deniedCpuBindingUnderStrictStopsTheJvm() {
        assertStrictStop(workers(1, PU + ",strict").fakeTwoCores().prefix(seccomp, "sched_setaffinity", "--").run(),
                "cannot bind threads to cpus=0-1: Operation not permitted \\(EPERM\\) \\(strict");
    }

    @Test
    void deniedMemoryPolicyIsOneWarningAndCpusHold() {
        ChildResult r = workers(3, PU).fakeTwoCores().prefix(seccomp, "set_mempolicy", "--").run().assertExit(0);
        String ctx = r.describe();
        Map<String, Placed> placed = r.placed().stream().collect(Collectors.toMap(Placed::name, p -> p));
        Set<String> cpus = new TreeSet<>();
        for (Map<String, String> w : workerLines(r, 3)) {
            assertEquals(1, Cpus.parse(w.get("cpus")).size(), "the CPU placement holds\n" + ctx);
            cpus.add(w.get("cpus"));
            assertEquals("default", w.get("policy"), ctx);
            Placed p = placed.get(w.get("name"));
            assertTrue(p != null, ctx);
            assertEquals(w.get("cpus"), p.cpus(), p.line());
            assertEquals("default", p.mem(), p.line());
            assertTrue(p.line().endsWith(" mem_error=EPERM"), p.line());
        }
        assertEquals(Set.of("0", "1"), cpus, ctx);
        assertWarnings(r, "cannot set memory policy preferred:0 for \"ForkJoinPool-1-worker-\\d\" tid=\\d+: "
                + "Operation not permitted \\(EPERM\\)");
        Map<String, String> s = Lines.summary(r);
        assertEquals("3", s.get("placed"), ctx);
        assertEquals("3", s.get("mem_failed"), ctx);
        assertEquals("0", s.get("failed"), ctx);
    }

    @Test
    void deniedMemoryPolicyUnderStrictStopsTheJvm() {
        assertStrictStop(workers(1, PU + ",strict").fakeTwoCores().prefix(seccomp, "set_mempolicy", "--").run(),
                "cannot set memory policy preferred:0: Operation not permitted \\(EPERM\\) \\(strict");
    }

    // ---- topology --------------------------------------------------------------------------

    static Path topologyFile(String content) throws IOException {
        Path f = RunLogs.newRunDir().resolve("topology.xml");
        if (content != null) {
            Files.writeString(f, content);
        }
        return f;
    }

    private static void assertNothingPlacedForTopology(ChildResult r, Path xml) {
        String ctx = r.describe();
        assertWarnings(r, "cannot load the topology \\(xml " + Pattern.quote(xml.toString()) + "\\).*numapin places no thread");
        assertEquals(List.of(), r.placed(), ctx);
        assertEquals(Cpus.parse(all), Cpus.parse(Lines.one(r, "worker").get("cpus")), ctx);
        assertTrue(r.logLines().stream().noneMatch(l -> l.contains("][numapin] plan ")), ctx);
    }

    @Test
    void corruptTopologyFileIsOneWarningAndNothingIsPlaced() throws IOException {
        Path xml = topologyFile("<?xml version=\"1.0\"?>\n<topology><object type=\"Machine\"");
        ChildResult r = workers(1, "groups=2,group=1").env("HWLOC_XMLFILE", xml.toString()).run().assertExit(0);
        assertNothingPlacedForTopology(r, xml);
    }

    @Test
    void corruptTopologyFileUnderStrictStopsTheJvm() throws IOException {
        Path xml = topologyFile("not xml at all\n");
        assertStrictStop(workers(1, "groups=2,group=1,strict").env("HWLOC_XMLFILE", xml.toString()).run(),
                "cannot load the topology \\(xml .*strict");
    }

    /**
     * hwloc itself falls back to this machine when HWLOC_XMLFILE names a
     * file that is not there; numapin was asked for that file's topology and
     * must not place threads on another one while its log says source=xml.
     */
    @Test
    void missingTopologyFileIsOneWarningAndNothingIsPlaced() throws IOException {
        Path xml = topologyFile(null);
        ChildResult r = workers(1, "groups=2,group=1").env("HWLOC_XMLFILE", xml.toString()).run().assertExit(0);
        assertNothingPlacedForTopology(r, xml);
    }

    // ---- a cpuset narrower than the machine ---------------------------------------------

    @Test
    void tasksetNarrowerThanTheMachinePlansOnTheCpusLeft() {
        ChildResult r = workers(2, "groups=1,cpus=pu").prefix("taskset", "-c", "1").run().assertExit(0);
        String ctx = r.describe();
        for (Map<String, String> w : workerLines(r, 2)) {
            assertEquals("1", w.get("cpus"), "the only CPU this JVM may use\n" + ctx);
        }
        assertEquals("1", Lines.one(r, "main").get("cpus"), ctx);
        String topo = r.logLines().stream().filter(l -> l.contains("][numapin] topology ")).findFirst().orElse("");
        assertEquals("1", Lines.fields(topo).get("allowed"), topo + "\n" + ctx);
        String plan = r.logLines().stream().filter(l -> l.contains("][numapin] plan ")).findFirst().orElse("");
        assertEquals("1", Lines.fields(plan).get("cpus"), plan);
        assertEquals("1", Lines.fields(plan).get("slots"), plan);
        for (Placed p : r.placed()) {
            assertEquals("1", p.cpus(), p.line());
        }
        assertEquals(2, r.placed().size(), ctx);
        assertEquals(List.of(), r.levelLines("error"), ctx);
        assertTrue(r.failureWarnings().stream().noneMatch(l -> l.contains("cannot bind")), ctx);
    }

    // ---- a node without memory --------------------------------------------------------------

    /** Fake node 1 exists for hwloc only: bind:1 is refused with EINVAL, warned once; CPU 1 holds. */
    @Test
    void nodeTheKernelLacksIsOneWarningAndCpusHold() {
        ChildResult r = workers(4, "group=1,mem=bind,scope=threads,log=debug").fakeTwoNodes().run().assertExit(0);
        String ctx = r.describe();
        for (Map<String, String> w : workerLines(r, 4)) {
            assertEquals("1", w.get("cpus"), ctx);
            assertEquals("default", w.get("policy"), ctx);
        }
        assertWarnings(r, "cannot set memory policy bind:1 for \"ForkJoinPool-1-worker-\\d\" tid=\\d+: "
                + "Invalid argument \\(EINVAL\\)");
        assertEquals(3, r.levelLines("debug").stream().filter(l -> l.contains("] cannot set memory policy bind:1"))
                .count(), ctx);
        Map<String, String> s = Lines.summary(r);
        assertEquals("4", s.get("placed"), ctx);
        assertEquals("4", s.get("mem_failed"), ctx);
    }

    @Test
    void nodeTheKernelLacksUnderScopeJvmWarnsOnceForTheJvmAndTheJvmRuns() {
        ChildResult r = workers(2, "group=1,scope=jvm,mem=bind").fakeTwoNodes().run().assertExit(0);
        String ctx = r.describe();
        for (Map<String, String> w : workerLines(r, 2)) {
            assertEquals("1", w.get("cpus"), ctx);
        }
        assertEquals("1", Lines.one(r, "main").get("cpus"), "scope=jvm binds the whole JVM\n" + ctx);
        // The workers are refused the same policy: the JVM's warning is theirs too.
        assertWarnings(r, "scope=jvm: cannot set memory policy bind:1 for the JVM: Invalid argument \\(EINVAL\\)");
    }
}
