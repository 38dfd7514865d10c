package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The start-up advice, each triggered and not triggered, in real
 * JVMs. Advice lines read {@code [...][warning][numapin] advice: ...}
 * ("UseNUMA is off" at info level).
 *
 * <p>Most cases run on the fake 2-node machine (HWLOC_SYNTHETIC, see
 * README): group 0 is CPU 0 on node 0, group 1 CPU 1 on node 1. This
 * machine's kernel has one NUMA node, so UseNUMA can only be seen off here;
 * "on" is for the multi-node QEMU tests.
 */
@ExtendWith(RunLogs.class)
class AdviceTest {
    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
    }

    /** numapin's advice lines at the given level containing `text`. */
    private static List<String> advice(ChildResult r, String level, String text) {
        return r.levelLines(level).stream().filter(l -> l.contains("][numapin] advice: ") && l.contains(text))
                .collect(Collectors.toList());
    }

    /** All advice lines, any level, containing `text`. */
    private static List<String> anyAdvice(ChildResult r, String text) {
        List<String> all = new ArrayList<>();
        for (String level : List.of("error", "warning", "info", "debug", "trace")) {
            all.addAll(advice(r, level, text));
        }
        return all;
    }

    private static String one(ChildResult r, String level, String text) {
        List<String> found = advice(r, level, text);
        assertEquals(1, found.size(), "[" + level + "] advice lines with \"" + text + "\"\n" + r.describe());
        return found.get(0);
    }

    private static void none(ChildResult r, String text) {
        assertEquals(List.of(), anyAdvice(r, text), "advice with \"" + text + "\" where none is due\n" + r.describe());
    }

    // ---- 1. group count not dividing evenly onto the nodes ----

    @Test
    void unevenGroupCountIsAdvised() {
        for (int group : new int[] {0, 2}) {
            ChildResult r = Launch.probe("default:1").fakeTwoNodes().options("group=" + group + ",groups=3").run()
                    .assertExit(0);
            String line = one(r, "warning", "do not divide evenly");
            assertTrue(line.contains("advice: 3 groups on 2 nodes do not divide evenly"), line);
            assertTrue(line.contains("groups=2 or groups=4 divide evenly"), "the fix names the counts that fit: " + line);
        }
    }

    @Test
    void evenGroupCountIsNotAdvised() {
        for (String options : List.of("group=0,groups=2", "group=1,groups=2", "group=3,groups=4", "group=0,groups=1")) {
            ChildResult r = Launch.probe("default:1").fakeTwoNodes().options(options).run().assertExit(0);
            none(r, "do not divide evenly");
        }
    }

    // ---- 2. CPU and memory bindings on different nodes at start-up ----

    /** The probe on the fake 2-node machine behind a command prefix (numactl, taskset). */
    private static ChildResult runUnder(List<String> prefix, String options, String... steps) {
        return Launch.probe(steps).fakeTwoNodes().options(options).prefix(prefix.toArray(new String[0])).run();
    }

    private static final String MISALIGNED = "the JVM was started with CPUs";

    @Test
    void cpuOnOneNodeMemoryOnAnotherIsAdvised() {
        // CPU 1 is node 1 of the fake machine; the memory is bound to node 0.
        ChildResult r = runUnder(List.of("numactl", "--membind=0", "taskset", "-c", "1"), "mem=none", "default:1")
                .assertExit(0);
        r.assertCpus("1", r.probes("main"), "main thread under taskset -c 1");
        String line = one(r, "warning", MISALIGNED);
        assertTrue(line.contains("advice: the JVM was started with CPUs 1 (node 1) but memory policy bind:0"),
                "the advice names both masks: " + line);
        assertTrue(line.contains("numactl --cpunodebind=1 --membind=1"), "the advice gives the fix: " + line);
    }

    @Test
    void cpuAndMemoryOnTheSameNodeIsNotAdvised() {
        ChildResult r = runUnder(List.of("numactl", "--membind=0", "taskset", "-c", "0"), "mem=none", "default:1")
                .assertExit(0);
        r.assertCpus("0", r.probes("main"), "main thread under taskset -c 0");
        none(r, MISALIGNED);
        // And with no start-up binding at all.
        ChildResult plain = Launch.probe("default:1").fakeTwoNodes().options("group=1").run().assertExit(0);
        none(plain, MISALIGNED);
    }

    // ---- 3. UseNUMA, as the JVM decided it ----

    /** bool, intx and uint flags from -XX:+PrintFlagsFinal output. */
    private static Map<String, String> finalFlags(ChildResult r) {
        Pattern p = Pattern.compile("^\\s*\\S+\\s+(\\w+)\\s+:?=\\s+(\\S+)\\s+\\{.*$");
        Map<String, String> flags = new LinkedHashMap<>();
        for (String l : r.stdoutLines()) {
            Matcher m = p.matcher(l);
            if (m.matches()) {
                flags.put(m.group(1), m.group(2));
            }
        }
        assertTrue(flags.containsKey("UseNUMA"), "no -XX:+PrintFlagsFinal table\n" + r.describe());
        return flags;
    }

    @Test
    void useNumaIsReportedAsTheJvmDecidedIt() {
        // Asked for on the command line; on a one-node kernel HotSpot turns it
        // off, and numapin must report what the JVM decided.
        ChildResult r = Launch.probe("default:1").fakeTwoNodes().options("group=1,scope=threads")
                .jvmArg("-XX:+UseNUMA").jvmArg("-XX:+PrintFlagsFinal").run().assertExit(0);
        boolean on = Boolean.parseBoolean(finalFlags(r).get("UseNUMA"));
        if (Machine.nodesWithCpus().size() == 1) {
            assertTrue(!on, "HotSpot keeps UseNUMA on with one NUMA node?\n" + r.describe());
        }
        if (on) {
            assertEquals(1, anyAdvice(r, "UseNUMA is on in this JVM").size(), r.describe());
            none(r, "UseNUMA is off");
        } else {
            String line = one(r, "info", "UseNUMA is off in this JVM");
            assertTrue(line.contains("placed threads: node 1"), "names the group's node: " + line);
            none(r, "UseNUMA is on");
        }
    }

    // ---- 4. GC and JIT threads sized for the whole machine ----

    /** HotSpot's ergonomics for n CPUs (G1, tiered; see test_advise.c). */
    static long parallelGcThreadsFor(int n) {
        return n <= 8 ? n : 8 + (long) (n - 8) * 5 / 8;
    }

    static long concGcThreadsFor(int n) {
        return Math.max(1, (parallelGcThreadsFor(n) + 2) / 4);
    }

    static int log2(int n) {
        return 31 - Integer.numberOfLeadingZeros(n);
    }

    static long compilerCountFor(int n) {
        int l = log2(n);
        int ll = log2(Math.max(l, 1));
        return Math.max(2, (long) l * ll * 3 / 2);
    }

    private static final String THREADS = "GC and JIT threads are sized for";

    /** The advice the JVM's own flag values call for on a group of `cpus`. */
    private static void assertThreadAdvice(ChildResult r, int cpus, String seen) {
        Map<String, String> flags = finalFlags(r);
        String[][] table = {
            {"ParallelGCThreads", Long.toString(parallelGcThreadsFor(cpus))},
            {"ConcGCThreads", Long.toString(concGcThreadsFor(cpus))},
            {"CICompilerCount", Long.toString(compilerCountFor(cpus))},
        };
        List<String> now = new ArrayList<>();
        List<String> fix = new ArrayList<>();
        for (String[] f : table) {
            long jvm = Long.parseLong(flags.get(f[0]));
            if (jvm > Long.parseLong(f[1])) {
                now.add(f[0] + "=" + jvm);
                fix.add("-XX:" + f[0] + "=" + f[1]);
            }
        }
        assertTrue(!fix.isEmpty(), "the JVM's flags already fit " + cpus + " CPUs: " + flags.get("ParallelGCThreads")
                + "/" + flags.get("ConcGCThreads") + "/" + flags.get("CICompilerCount") + "\n" + r.describe());
        String line = one(r, "warning", THREADS);
        String want = "advice: GC and JIT threads are sized for the " + seen + " CPUs the JVM saw ("
                + String.join(", ", now) + "), but this group has " + cpus + " CPUs: " + String.join(" ", fix)
                + " fit the group";
        assertTrue(line.contains(want), "advice\n got: " + line + "\nwant: ..." + want);
    }

    @Test
    void gcAndJitThreadsSizedForTheMachineAreAdvised() {
        // Default GC (G1 here: 2 CPUs and plenty of memory; named to be sure):
        // ParallelGCThreads=2 for a 1-CPU group.
        ChildResult r = Launch.probe("default:1").fakeTwoNodes().options("group=0")
                .jvmArg("-XX:-UseSerialGC").jvmArg("-XX:+UseG1GC").jvmArg("-XX:+PrintFlagsFinal").run()
                .assertExit(0);
        assertEquals("2", finalFlags(r).get("ParallelGCThreads"), r.describe());
        assertThreadAdvice(r, 1, "2");
        assertTrue(one(r, "warning", THREADS).contains("-XX:ParallelGCThreads=1"), r.describe());

        // A JVM sized for 16 CPUs: all three flags, each at HotSpot's value
        // for one CPU.
        ChildResult big = Launch.probe("default:1").fakeTwoNodes().options("group=0")
                .jvmArg("-XX:-UseSerialGC").jvmArg("-XX:+UseG1GC").jvmArg("-XX:ActiveProcessorCount=16")
                .jvmArg("-XX:+PrintFlagsFinal").run().assertExit(0);
        assertThreadAdvice(big, 1, "16");
        assertTrue(one(big, "warning", THREADS)
                .contains(": -XX:ParallelGCThreads=1 -XX:ConcGCThreads=1 -XX:CICompilerCount=2 fit the group"),
                big.describe());
    }

    @Test
    void gcAndJitThreadsThatFitTheGroupAreNotAdvised() {
        ChildResult r = Launch.probe("default:1").fakeTwoNodes().options("group=0")
                .jvmArg("-XX:-UseSerialGC").jvmArg("-XX:+UseG1GC")
                .jvmArg("-XX:ParallelGCThreads=1").jvmArg("-XX:ConcGCThreads=1").jvmArg("-XX:CICompilerCount=2")
                .run().assertExit(0);
        none(r, THREADS);
        // A group with every CPU the JVM sized itself for.
        ChildResult whole = Launch.probe("default:1").fakeTwoNodes().options("group=0,groups=1")
                .jvmArg("-XX:-UseSerialGC").jvmArg("-XX:+UseG1GC").run().assertExit(0);
        none(whole, THREADS);
    }

    // ---- 5. kernel automatic NUMA balancing ----

    @Test
    void numaBalancingIsAdvisedExactlyWhenTheKernelHasItOn() throws IOException {
        // This machine reads 0 (off): the not-triggered case. A kernel with
        // bit 0 set (1 or 3) must give the advice; 2 (tiering only) not.
        // The whole JVM under the default mem=preferred: information only,
        // since the kernel neither samples nor migrates its memory.
        Path sysctl = Path.of("/proc/sys/kernel/numa_balancing");
        int mode = -1;
        if (Files.isReadable(sysctl)) {
            mode = Integer.parseInt(Files.readString(sysctl).trim());
        }
        ChildResult r = Launch.probe("default:1").fakeTwoNodes().options("group=0").run().assertExit(0);
        if (mode > 0 && (mode & 1) != 0) {
            String line = one(r, "info", "kernel automatic NUMA balancing is on");
            assertTrue(line.contains("kernel.numa_balancing=" + mode), line);
            assertTrue(line.contains("under mem=preferred it neither samples nor migrates"), line);
        } else {
            none(r, "NUMA balancing");
        }
        // Under dryrun nothing is bound, so there is nothing to advise.
        ChildResult dry = Launch.probe("default:1").fakeTwoNodes().options("group=0,dryrun").run().assertExit(0);
        none(dry, "NUMA balancing");
    }

    // ---- 6. more placed threads than the group has CPUs ----

    private static final String OVERSUBSCRIBED = "placed threads are live on this group's";

    @Test
    void oversubscriptionIsAdvisedOnce() {
        // cpus=node sees a thread's end at its exit, after join() returns, so
        // the count a thread start sees is confirmed later: at the periodic
        // check or at exit, with what is live then (the four workers stay).
        ChildResult r = Launch.probe("default:4").fakeTwoNodes().options("group=0").run().assertExit(0);
        assertEquals(4, r.placed().size(), r.describe());
        String line = one(r, "warning", OVERSUBSCRIBED);
        Matcher m = Pattern.compile("advice: (\\d+) placed threads are live on this group's 1 CPUs").matcher(line);
        assertTrue(m.find(), line);
        int n = Integer.parseInt(m.group(1));
        assertTrue(n >= 2 && n <= 4, "the workers live when the count was confirmed: " + line);
        assertTrue(line.contains("new ForkJoinPool(1)"), "the fix sizes the pool to the group: " + line);
        ChildResult debug = Launch.probe("default:4").fakeTwoNodes().options("group=0,log=debug").run()
                .assertExit(0);
        one(debug, "warning", OVERSUBSCRIBED);
        // cpus=core frees a core at ThreadEnd, before join() returns: the
        // count is right at each start, so the advice comes with the second
        // worker, and the later ones go to debug.
        ChildResult core = Launch.probe("default:4").fakeTwoNodes().options("group=0,cpus=core,log=debug").run()
                .assertExit(0);
        line = one(core, "warning", OVERSUBSCRIBED);
        assertTrue(line.contains("advice: 2 placed threads are live on this group's 1 CPUs"),
                "the first thread beyond the group's one CPU is the second: " + line);
        assertTrue(advice(core, "debug", OVERSUBSCRIBED).size() >= 2,
                "the 3rd and 4th workers are noted at debug level\n" + core.describe());
    }

    /**
     * A loop that starts and joins one thread at a time on a one-CPU group
     * meets, now and then, the thread before still exiting after its join():
     * not oversubscription.
     */
    @Test
    void aStartJoinLoopIsNotAdvised() {
        List<String> steps = new ArrayList<>();
        for (int i = 0; i < 600; i++) {
            steps.add("plain:Loop-" + i);
            steps.add("end:Loop-" + i);
        }
        ChildResult r = Launch.probe(steps.toArray(new String[0])).fakeTwoNodes()
                .options("group=0,threads=Loop-*,log=warning").run().assertExit(0);
        none(r, OVERSUBSCRIBED);
        assertEquals(600, r.probes("plain").size(), r.describe());
    }

    @Test
    void oneThreadPerCpuIsNotAdvised() {
        ChildResult r = Launch.probe("default:1").fakeTwoNodes().options("group=0").run().assertExit(0);
        assertEquals(1, r.placed().size(), r.describe());
        none(r, OVERSUBSCRIBED);
        // Two workers on a 2-CPU group.
        ChildResult two = Launch.probe("default:2").fakeTwoNodes().options("group=0,groups=1").run().assertExit(0);
        assertEquals(2, two.placed().size(), two.describe());
        none(two, OVERSUBSCRIBED);
    }

    /** Every advice line has the unified-logging shape and says what to do. */
    @Test
    void adviceLinesAreWellFormed() {
        ChildResult r = Launch.probe("default:4").fakeTwoNodes().options("group=0,groups=3")
                .jvmArg("-XX:-UseSerialGC").jvmArg("-XX:+UseG1GC").run().assertExit(0);
        List<String> lines = anyAdvice(r, "");
        assertTrue(lines.size() >= 4, "uneven, shared CPUs, GC threads, oversubscription, UseNUMA\n" + r.describe());
        for (String l : lines) {
            assertTrue(ChildResult.LOG_LINE.matcher(l).matches(), "not a unified-logging line: " + l);
            assertTrue(l.contains("][warning][numapin] advice: ") || l.contains("][info][numapin] advice: UseNUMA is "),
                    "advice is a warning (UseNUMA's state: info): " + l);
        }
    }
}
