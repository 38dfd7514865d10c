package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import numapin.tests.ChildResult.Cpus;
import numapin.tests.ChildResult.Placed;

/**
 * The default with more than one group: the whole JVM on its group
 * (docs/placement.md): every thread of the process on the group's CPUs, the
 * JVM's memory policy the group's, the plan line saying which scope and
 * why; numapin groups and numapin plan --java-flags sizing the JVM to its
 * group; a late attach placing the whole JVM and moving its memory; where
 * the memory is at exit (summary, report) and seen from outside (check).
 * Most cases run on the fake 2-node machine (node 0 is CPU 0, node 1 CPU 1;
 * the kernel has node 0 only, so a memory policy on node 1 is refused).
 */
@ExtendWith(RunLogs.class)
class WholeJvmTest {
    static String all;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        all = Machine.allowedCpus();
    }

    static String planLine(ChildResult r) {
        List<String> plans = r.logLines().stream().filter(l -> l.contains("][info][numapin] plan ")).toList();
        assertEquals(1, plans.size(), r.describe());
        return plans.get(0);
    }

    /** The nodes this process may take memory from, as the kernel lists them ("0", "0-2"). */
    static String memsAllowed() throws IOException {
        for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (l.startsWith("Mems_allowed_list:")) {
                return l.substring(l.indexOf(':') + 1).trim();
            }
        }
        throw new AssertionError("no Mems_allowed_list in /proc/self/status");
    }

    /**
     * The memory the launcher and the loader touched before Agent_OnLoad is
     * moved to the group's node at load, once, when the whole JVM gets its
     * memory policy; not under mem=none, nor under dryrun, which places
     * nothing. Where the group's node is the only one the process may use,
     * nothing can be elsewhere, and numapin says so instead of walking the
     * mappings. (Where it lands is measured on the multi-node kernels
     * under QEMU: make test-numa's heap scenarios.)
     */
    @Test
    void theMemoryTouchedBeforeLoadIsMovedOnce() throws IOException {
        ChildResult r = Launch.program("JvmThreads").gc("-XX:+UseSerialGC").options("groups=2,group=1").run()
                .assertExit(0);
        String mems = memsAllowed();
        if (mems.matches("\\d+")) {
            List<String> none = r.logLines().stream()
                    .filter(l -> l.contains("][info][numapin] load: the memory touched before numapin loaded is on node "
                            + mems + " already, the only memory this process may use: nothing to move"))
                    .collect(Collectors.toList());
            assertEquals(1, none.size(), "one node allowed (" + mems + ")\n" + r.describe());
            assertTrue(r.logLines().stream().noneMatch(l -> l.contains("] load: the memory touched before numapin "
                    + "loaded moved")), r.describe());
            return;
        }
        List<String> moved = r.logLines().stream()
                .filter(l -> l.contains("][info][numapin] load: the memory touched before numapin loaded moved to node "))
                .collect(Collectors.toList());
        assertEquals(1, moved.size(), r.describe());
        Matcher m = Pattern.compile(" \\(mappings=(\\d+) refused=(\\d+) ms=[0-9.]+\\)$").matcher(moved.get(0));
        assertTrue(m.find(), moved.get(0));
        assertTrue(Integer.parseInt(m.group(1)) > 0, "no mapping given the policy: " + moved.get(0));
        assertEquals("0", m.group(2), moved.get(0));
        for (String opts : List.of("groups=2,group=1,mem=none", "groups=2,group=1,dryrun")) {
            ChildResult n = Launch.program("JvmThreads").gc("-XX:+UseSerialGC").options(opts).run().assertExit(0);
            assertTrue(n.logLines().stream().noneMatch(l -> l.contains("] load: the memory touched before")),
                    opts + "\n" + n.describe());
        }
    }

    /** Every thread of the JVM (GC, JIT, VM threads included) on group 1's CPU, the workers placed. */
    @Test
    void byDefaultTheWholeJvmLivesOnItsGroup() {
        ChildResult r = Launch.program("JvmThreads").fakeTwoNodes().gc("-XX:+UseG1GC").options("group=1,mem=none")
                .run().assertExit(0);
        String ctx = r.describe();
        assertTrue(planLine(r).endsWith(" scope=jvm (the default with more than one group)"), planLine(r));
        List<Map<String, String>> tasks = Lines.of(r, "task");
        Set<String> comms = tasks.stream().map(t -> t.get("comm")).collect(Collectors.toCollection(TreeSet::new));
        for (String want : List.of("VM Thread", "C2 CompilerThre", "GC Thread#0", "Reference Handl", "java")) {
            assertTrue(comms.contains(want), "no thread \"" + want + "\" listed: " + comms + "\n" + ctx);
        }
        for (Map<String, String> t : tasks) {
            assertEquals(Set.of(1), Cpus.parse(t.get("cpus")), "thread " + t.get("comm") + " tid=" + t.get("tid")
                    + " runs on " + t.get("cpus") + ", not group 1's CPU 1\n" + ctx);
        }
        assertEquals(1, r.logLines().stream().filter(l -> l.contains("][info][numapin] jvm group=1 node=1 cpus=1 "))
                .count(), ctx);
        List<Placed> placed = r.placed();
        assertEquals(2, placed.size(), ctx);
        for (Placed p : placed) {
            assertEquals("1", p.cpus(), p.line());
        }
        Map<String, String> s = Lines.summary(r);
        assertTrue(s.get("mem_pages").matches("(\\d+:\\d+)(,\\d+:\\d+)*"), "mem_pages=" + s.get("mem_pages"));
        // The fake node 1 has no memory of its own: the memory is on node 0.
        assertEquals("0.0%", s.get("mem_local"), ctx);
        assertEquals(List.of(), r.failureWarnings(), ctx);
    }

    /** One group is the whole machine: the named threads only, as scope=threads. */
    @Test
    void oneGroupPlacesOnlyTheNamedThreads() {
        ChildResult r = Launch.program("Workers", "2").fakeTwoNodes().options("groups=1,mem=none").run()
                .assertExit(0);
        assertTrue(planLine(r).endsWith(" scope=threads (the default with one group)"), planLine(r));
        assertEquals(Cpus.parse(all), Cpus.parse(Lines.one(r, "main").get("cpus")), r.describe());
        assertTrue(r.logLines().stream().noneMatch(l -> l.contains("][numapin] jvm ")), r.describe());
        ChildResult given = Launch.program("Workers", "2").fakeTwoNodes().options("group=1,scope=threads,mem=none")
                .run().assertExit(0);
        assertTrue(planLine(given).endsWith(" scope=threads (given)"), planLine(given));
        assertEquals(Cpus.parse(all), Cpus.parse(Lines.one(given, "main").get("cpus")), given.describe());
    }

    /** The group's memory policy refused (fake node 1): one warning, for the JVM; its threads' at debug. */
    @Test
    void aRefusedMemoryPolicyIsOneWarningForTheWholeJvm() {
        ChildResult r = Launch.program("Workers", "3").fakeTwoNodes().options("group=1,log=debug").run()
                .assertExit(0);
        String ctx = r.describe();
        List<String> w = r.failureWarnings();
        assertEquals(1, w.size(), ctx);
        assertTrue(w.get(0).contains("scope=jvm: cannot set memory policy preferred:1 for the JVM: Invalid argument "
                + "(EINVAL); it runs on the group's CPUs, its memory where the kernel puts it"), w.get(0));
        assertEquals(3, r.levelLines("debug").stream().filter(l -> l.contains("] cannot set memory policy preferred:1"))
                .count(), ctx);
        assertEquals("1", Lines.one(r, "main").get("cpus"), ctx);
        assertEquals("3", Lines.summary(r).get("mem_failed"), ctx);
    }

    /** CPU binding refused (seccomp): one warning, nothing placed; under strict the JVM does not start. */
    @Test
    void aRefusedCpuBindingIsOneWarningOrUnderStrictNoStart() {
        String launcher = Build.seccompLauncher();
        ChildResult r = Launch.program("Workers", "2").fakeTwoNodes().options("group=0,log=debug")
                .prefix(launcher, "sched_setaffinity", "--").run().assertExit(0);
        String ctx = r.describe();
        List<String> w = r.failureWarnings();
        assertEquals(1, w.size(), ctx);
        assertTrue(w.get(0).contains("scope=jvm: cannot bind the JVM to cpus=0: Operation not permitted (EPERM)"),
                w.get(0));
        assertEquals("0", Lines.summary(r).get("placed"), ctx);
        assertEquals(Cpus.parse(all), Cpus.parse(Lines.one(r, "main").get("cpus")), ctx);

        ChildResult s = Launch.program("Workers", "2").fakeTwoNodes().options("group=0,strict")
                .prefix(launcher, "sched_setaffinity", "--").run();
        assertNotEquals(0, s.exitCode, s.describe());
        List<String> errors = s.stderrLogLines();
        assertEquals(1, errors.size(), s.describe());
        assertTrue(errors.get(0).contains("[error][numapin] scope=jvm: cannot bind the JVM to cpus=0: Operation not "
                + "permitted (EPERM) (strict: the JVM does not start)"), errors.get(0));
    }

    /**
     * numapin groups on this machine (1 node, 2 CPUs: a CPU a group): each
     * JVM gets -XX:ActiveProcessorCount=1, so availableProcessors() and
     * ParallelGCThreads fit its group; --no-java-flags leaves HotSpot's own
     * sizing for the 2 CPUs it sees.
     */
    @Test
    void numapinGroupsSizesEachJvmToItsGroup() {
        assumeTrue(Machine.isOneNodeTwoCpus(), "needs a 1-node machine with CPUs 0-1");
        for (boolean flags : List.of(true, false)) {
            Path logs = RunLogs.newRunDir().resolve("logs");
            List<String> cmd = new ArrayList<>(List.of(Build.numapin().toString(), "groups", "--groups", "2"));
            if (!flags) {
                cmd.add("--no-java-flags");
            }
            cmd.addAll(List.of("--logs", logs.toString(), "--", Build.java(), "-XX:+UseG1GC",
                    "-XX:+PrintFlagsFinal", "-cp", Build.childClassPath(), "numapin.child.Sized"));
            ChildResult r = Launch.command(cmd).run().assertExit(0);
            for (int g = 0; g < 2; g++) {
                String log = read(logs.resolve("group-" + g + ".log"));
                String ctx = "group " + g + (flags ? "" : " (--no-java-flags)") + "\n" + log + "\n" + r.describe();
                assertEquals(flags, log.contains("Picked up JAVA_TOOL_OPTIONS: -XX:ActiveProcessorCount=1 -agentpath:"),
                        ctx);
                Matcher m = Pattern.compile("(?m)^sized available=(\\d+) cpus=(\\S+)$").matcher(log);
                assertTrue(m.find(), ctx);
                assertEquals("1", m.group(1), "Runtime.availableProcessors()\n" + ctx);
                assertEquals(String.valueOf(g), m.group(2), "the whole JVM on its group's CPU\n" + ctx);
                assertEquals(flags ? "1" : "2", flag(log, "ParallelGCThreads"), "ParallelGCThreads\n" + ctx);
                assertEquals(flags ? "1" : "-1", flag(log, "ActiveProcessorCount"), ctx);
            }
        }
        String[] line = Launch.tool(Build.numapin().toString(), "plan", "--groups", "2",
                "--group", "1", "--java-flags");
        assertEquals("0", line[0], line[1]);
        assertEquals("-XX:ActiveProcessorCount=1\n", line[1]);
    }

    static String flag(String printFlagsFinal, String name) {
        Matcher m = Pattern.compile("(?m)^\\s*\\S+\\s+" + name + "\\s+:?=\\s+(\\S+)").matcher(printFlagsFinal);
        assertTrue(m.find(), "no " + name + " in -XX:+PrintFlagsFinal");
        return m.group(1);
    }

    static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A late attach with the default scope: every running thread (the plain
     * one, main) on group 0's CPU, the memory already allocated moved (all
     * on node 0 here, this kernel's only node: nothing to move), and
     * threads started after the attach on the group too.
     */
    @Test
    void aLateAttachPlacesTheWholeJvmAndMovesItsMemory() throws IOException {
        Path go = RunLogs.newRunDir().resolve("go");
        Launch target = Launch.program("AttachTarget", go.toString()).noAgent().fakeTwoNodes();
        if (Runtime.version().feature() >= 21) {
            target.jvmArg("-XX:+EnableDynamicAgentLoading");
        }
        Launch.Running run = target.start();
        try {
            run.awaitLine(Pattern.compile("attach-ready pid=(\\d+)"));
            String[] out = Launch.tool(Build.jdkTool("jcmd"), String.valueOf(run.pid()),
                    "JVMTI.agent_load", Build.agent(), "\"group=0,groups=2\"");
            assertEquals("0", out[0], out[1]);
            assertTrue(out[1].contains("return code: 0"), out[1]);
            Files.createFile(go);
        } finally {
            if (!Files.exists(go)) {
                run.kill();
            }
        }
        ChildResult r = run.finish().assertExit(0);
        String ctx = r.describe();
        for (Map<String, String> b : Lines.of(r, "attach-before")) {
            assertEquals(Cpus.parse(all), Cpus.parse(b.get("cpus")), "before the attach: " + b + "\n" + ctx);
        }
        for (String word : List.of("attach-after", "attach-new")) {
            for (Map<String, String> a : Lines.of(r, word)) {
                assertEquals("0", a.get("cpus"), word + " " + a + "\n" + ctx);
            }
        }
        assertEquals("0", Lines.one(r, "attach-main").get("cpus"), ctx);
        List<String> moved = r.logLines().stream().filter(l -> l.contains("][info][numapin] attach: moved memory "))
                .toList();
        assertEquals(1, moved.size(), ctx);
        Map<String, String> f = Lines.fields(moved.get(0));
        assertEquals("0", f.get("pages"), "one node in this kernel: every page is there already\n" + moved.get(0));
        assertEquals("0", f.get("node"), moved.get(0));
        assertTrue(Long.parseLong(f.get("resident")) > 1000, moved.get(0));
        assertEquals(f.get("resident"), f.get("after"), "all of the JVM's own memory on node 0\n" + moved.get(0));
        assertEquals("0", f.get("left"), moved.get(0));
        assertTrue(Integer.parseInt(f.get("mappings")) > 10, moved.get(0));
        assertEquals(List.of(), r.failureWarnings(), ctx);
    }

    /** Where the memory is: numapin check from outside, the report at exit; here all of it on node 0. */
    @Test
    void checkAndTheReportGiveTheMemoryOnTheGroupsNode() throws Exception {
        Path dir = RunLogs.newRunDir();
        Path go = dir.resolve("go");
        Launch.Running run = Launch.program("Workers", "2", go.toString()).fakeTwoNodes()
                .options("group=0,groups=2,report=" + dir + "/report.json").start();
        String[] text, json;
        try {
            String pid = run.awaitLine(Pattern.compile("workers-ready pid=(\\d+)")).group(1);
            text = Launch.tool(Build.numapin().toString(), "check", pid, "--kernel-names");
            json = Launch.tool(Build.numapin().toString(), "check", pid, "--kernel-names", "--json");
            Files.createFile(go);
        } finally {
            if (!Files.exists(go)) {
                run.kill();
            }
        }
        ChildResult r = run.finish().assertExit(0);
        String ctx = r.describe() + "\ncheck:\n" + text[1];
        assertEquals("0", text[0], ctx);
        List<String> local = ChildResult.lines(text[1]).stream().filter(l -> l.startsWith("memory_local ")).toList();
        assertEquals(1, local.size(), ctx);
        Map<String, String> m = Lines.fields(local.get(0));
        assertEquals("0", m.get("nodes"), "the nodes of the CPUs its threads may use: group 0's\n" + ctx);
        assertTrue(m.get("mem_pages").matches("0:\\d+"), ctx);
        assertEquals("100.0%", m.get("mem_local"), ctx);
        Path jf = dir.resolve("check.json");
        Files.writeString(jf, json[1]);
        assertEquals(List.of("0 100"), ReportTest.jq("\"\\(.memory.nodes) \\(.memory.mem_local)\"", jf), json[1]);

        Map<String, String> s = Lines.summary(r);
        assertTrue(s.get("mem_pages").matches("0:\\d+"), ctx);
        assertEquals("100.0%", s.get("mem_local"), ctx);
        Path report = dir.resolve("report.json");
        assertEquals(List.of("jvm 0 4 100"), ReportTest.jq("\"\\(.plan.scope) \\(.memory.nodes) \\(.memory.page_kib) "
                + "\\(.memory.mem_local)\"", report), ctx);
        assertEquals(List.of(s.get("mem_pages").substring(2)), ReportTest.jq(".memory.mem_pages[\"0\"]", report), ctx);
    }

    /**
     * The summary counts the heap under every collector: 96 MiB kept live
     * are at least 96 MiB of the process's own pages, ZGC's heap (a memfd,
     * /memfd:java_heap) as much as G1's, Parallel's and Shenandoah's
     * (anonymous memory), and each page once: the summary's pages agree
     * within 1% with the distinct page frames the child counts in its own
     * memory in its shutdown hook (/proc/self/pagemap, root only), also
     * under JDK 17's ZGC, which maps its heap three times. The child runs
     * interpreted (-Xint): a compiler thread's arenas would otherwise grow
     * by 1-2% of these pages between that count and the summary's. Under `make
     * test-asan` the sanitizer runtime in the JVM holds the address ranges
     * ZGC reserves its heap in, so ZGC is left out there.
     */
    @Test
    void theSummaryCountsTheHeapUnderEveryCollector() throws Exception {
        String preload = System.getenv("LD_PRELOAD");
        boolean asan = preload != null && preload.contains("libasan");
        for (String gc : List.of("-XX:+UseG1GC", "-XX:+UseParallelGC", "-XX:+UseZGC", "-XX:+UseShenandoahGC")) {
            if (asan && gc.equals("-XX:+UseZGC")) {
                continue;
            }
            // The distinct pages are counted from the child's pagemap, over
            // every mapping of its own: under the sanitizer runtime those
            // include its shadow memory, terabytes of reserved address
            // space, too much to read; the summary's lower bound stays.
            ChildResult r = Launch.program("Heap", "96", asan ? "nopages" : "pages").gc(gc).jvmArg("-Xms256m", "-Xmx256m", "-Xint")
                    .options("group=0,groups=1").run().assertExit(0);
            String ctx = gc + "\n" + r.describe();
            long pages = 0;
            for (String n : Lines.summary(r).get("mem_pages").split(",")) {
                pages += Long.parseLong(n.substring(n.indexOf(':') + 1));
            }
            assertTrue(pages * 4 >= 96 * 1024, pages + " pages of 4 KiB for 96 MiB kept live\n" + ctx);
            if (asan) {
                continue;
            }
            long distinct = Long.parseLong(Lines.exactly(r, "pages", 1).get(0).get("distinct"));
            assumeTrue(distinct >= 0, "page frames are hidden from this user");
            assertTrue(Math.abs(pages - distinct) * 100 <= distinct,
                    "the summary counts " + pages + " pages, the JVM holds " + distinct + " distinct ones\n" + ctx);
        }
    }
}
