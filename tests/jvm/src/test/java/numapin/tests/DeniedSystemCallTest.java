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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import numapin.tests.ChildResult.Cpus;
import numapin.tests.ChildResult.Placed;

/**
 * System calls refused with EPERM, as a container's seccomp profile refuses
 * them (docs/lifecycle.md#hostile-environments): a refused CPU binding or
 * memory policy is one warning, the later ones at debug level, and the JVM
 * goes on; a refused binding leaves the thread as it was (it sets no memory
 * policy either), a refused policy leaves the binding; the summary counts
 * them. Under strict the JVM does not start. Each worker reads its CPUs and
 * memory policy itself from /proc.
 *
 * <p>The EPERM comes from {@link Build#seccompLauncher}, which installs a
 * seccomp filter refusing the system calls named and execs java.
 */
@ExtendWith(RunLogs.class)
class DeniedSystemCallTest {
    static String all;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        all = Machine.allowedCpus();
    }

    /** n workers on one node of two cores (groups=1: CPUs 0 and 1, node 0), these calls refused. */
    static Launch workers(int n, String denied, String options) {
        return Launch.program("Workers", String.valueOf(n)).fakeTwoCores().options(options)
                .prefix(Build.seccompLauncher(), denied, "--");
    }

    /** cpus=pu: each worker gets CPU 0 or 1 and prefers node 0. */
    static final String PU = "groups=1,cpus=pu,log=debug";

    @Test
    void underAFilterThatDeniesNothingEverythingIsPlaced() {
        ChildResult r = workers(3, "none", PU).run().assertRan();
        for (Map<String, String> w : Lines.exactly(r, "worker", 3)) {
            assertEquals(1, Cpus.parse(w.get("cpus")).size(), "cpus=pu: one CPU\n" + r.describe());
            assertEquals("prefer:0", w.get("policy"), r.describe());
        }
        assertEquals(3, r.placed().size(), r.describe());
        r.assertWarnings();
    }

    /** With the memory policy refused too, or not: the refused binding is what the user hears of. */
    @ParameterizedTest(name = "{0} denied, cpus={1}")
    @CsvSource({"sched_setaffinity,pu", "'sched_setaffinity,set_mempolicy',core"})
    void deniedCpuBindingIsOneWarningAndThreadsAreLeftAsTheyWere(String denied, String mode) {
        ChildResult r = workers(3, denied, "groups=1,cpus=" + mode + ",log=debug").run().assertRan();
        String ctx = r.describe();
        for (Map<String, String> w : Lines.exactly(r, "worker", 3)) {
            assertEquals(Cpus.parse(all), Cpus.parse(w.get("cpus")), "worker whose binding was refused\n" + ctx);
            assertEquals("default", w.get("policy"), "a refused CPU binding sets no memory policy either\n" + ctx);
        }
        r.assertWarnings("\\]\\[warning\\]\\[numapin\\] cannot bind \"ForkJoinPool-1-worker-\\d\" tid=\\d+ "
                + "to cpus=[01]: Operation not permitted \\(EPERM\\)");
        long repeats = r.levelLines("debug").stream().filter(l -> l.contains("] cannot bind \"ForkJoinPool-1-worker-"))
                .count();
        assertEquals(2, repeats, "the 2 later refusals are at debug level\n" + ctx);
        assertEquals(List.of(), r.placed(), ctx);
        // Every worker counted as failed; a failed binding gives its core or CPU back.
        Map<String, String> s = Lines.summary(r);
        assertEquals("0", s.get("placed"), ctx);
        assertEquals("3", s.get("failed"), ctx);
        assertEquals("none", s.get("cpus"), "cpus= of the summary: no thread went anywhere\n" + ctx);
        assertEquals(List.of(), r.levelLines("error"), ctx);
    }

    @Test
    void deniedCpuBindingUnderStrictStopsTheJvm() {
        workers(1, "sched_setaffinity", PU + ",strict").run()
                .assertStrictStop("cannot bind threads to cpus=0-1: Operation not permitted \\(EPERM\\) \\(strict");
    }

    /** Placed with mem_error=EPERM, one warning; each worker keeps its CPU and the default policy. */
    @Test
    void deniedMemoryPolicyIsOneWarningAndCpusHold() {
        ChildResult r = workers(3, "set_mempolicy", PU).run().assertRan();
        String ctx = r.describe();
        Map<String, Placed> placed = r.placed().stream().collect(Collectors.toMap(Placed::name, p -> p));
        Set<String> cpus = new TreeSet<>();
        for (Map<String, String> w : Lines.exactly(r, "worker", 3)) {
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
        // The fix is named: under a container runtime's default seccomp
        // profile, the capability that lets set_mempolicy through.
        r.assertWarnings("cannot set memory policy preferred:0 for \"ForkJoinPool-1-worker-\\d\" tid=\\d+: "
                + "Operation not permitted \\(EPERM\\); a seccomp filter refuses set_mempolicy: .*"
                + "CAP_SYS_NICE \\(docker run --cap-add SYS_NICE");
        Map<String, String> s = Lines.summary(r);
        assertEquals("3", s.get("placed"), ctx);
        assertEquals("3", s.get("mem_failed"), ctx);
        assertEquals("0", s.get("failed"), ctx);
    }

    @Test
    void deniedMemoryPolicyUnderStrictStopsTheJvm() {
        workers(1, "set_mempolicy", PU + ",strict").run().assertStrictStop(
                "cannot set memory policy preferred:0: Operation not permitted \\(EPERM\\); a seccomp filter "
                        + "refuses set_mempolicy: .*CAP_SYS_NICE.* \\(strict");
    }
}
