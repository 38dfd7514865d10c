package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A JVM whose cgroup cpuset changes while it runs, as kubelet and NRI
 * plugins change a pod's (docs/harness/kubernetes.md): cgroup v1 cpusets of
 * the tests' own ({@link Cpuset}), rewritten with the same CPUs, narrowed,
 * widened; a cpuset that moves the group to the other node; two "pods",
 * each in its own cpuset and PID namespace. The workers' CPUs are read by
 * the test from /proc after each change; numapin notices a change within a
 * rescan period (100 ms here), and the test waits for the result however
 * long a loaded machine takes.
 */
@ExtendWith(RunLogs.class)
class CpusetTest {
    static final String OPTIONS = "mem=none,rescan=100";
    static final long LIMIT_S = 60;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        assumeTrue(Cpuset.available(), "needs a writable cgroup v1 cpuset hierarchy at " + Cpuset.ROOT + " (root)");
    }

    /** The fork-join workers of process pid (the kernel's names), by tid: their allowed CPUs. */
    static Map<Long, String> workerCpus(long pid) {
        Map<Long, String> m = new TreeMap<>();
        try (Stream<Path> s = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : (Iterable<Path>) s::iterator) {
                try {
                    if (!Files.readString(t.resolve("comm")).startsWith("ForkJoinPool-1-")) {
                        continue;
                    }
                    for (String l : Files.readAllLines(t.resolve("status"))) {
                        if (l.startsWith("Cpus_allowed_list:")) {
                            m.put(Long.parseLong(t.getFileName().toString()), l.substring(l.indexOf(':') + 1).trim());
                        }
                    }
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return m;
    }

    /** Waits until the workers' CPUs satisfy ok; fails with what they were. */
    static Map<Long, String> await(long pid, Predicate<Map<Long, String>> ok, String what, Launch.Running run)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LIMIT_S);
        Map<Long, String> now = workerCpus(pid);
        while (!ok.test(now)) {
            if (System.nanoTime() > deadline) {
                fail(what + ": the workers' CPUs are " + now + " after " + LIMIT_S + " s\n" + run.stdout());
            }
            Thread.sleep(20);
        }
        return now;
    }

    static Predicate<Map<Long, String>> all(int n, String cpus) {
        return m -> m.size() == n && m.values().stream().allMatch(cpus::equals);
    }

    /** One worker on each of CPUs 0 and 1 (cpus=core over two cores). */
    static Predicate<Map<Long, String>> oneEach() {
        return m -> m.size() == 2 && new java.util.TreeSet<>(m.values()).equals(java.util.Set.of("0", "1"));
    }

    static Pattern numapinLine(String level, String rest) {
        return Pattern.compile("^\\[\\d+\\.\\d{3}s\\]\\[" + level + "\\]\\[numapin\\] " + rest + "$");
    }

    /** Two workers (Workers 2 HOLD) in cpuset cs, behind the rest of the prefix. */
    static Launch inCpuset(Cpuset cs, Path hold, String... more) {
        List<String> prefix = new ArrayList<>(cs.prefix());
        prefix.addAll(List.of(more));
        return Launch.program("Workers", "2", hold.toString()).prefix(prefix.toArray(new String[0]));
    }

    static long readyPid(Launch.Running run) {
        return Long.parseLong(run.awaitLine(Pattern.compile("workers-ready pid=(\\d+)")).group(1));
    }

    /**
     * cpus=core on one node of two cores (CPUs 0 and 1): the cpuset is
     * rewritten with the same CPUs (kernels before 6.2 then reset every
     * thread to the cpuset and numapin puts the workers back; later ones
     * keep them), narrowed to CPU 1 (one slot: both workers there), widened
     * again (two slots: one worker each). Each re-plan logs one `placed ...
     * how=replan` line for each worker whose CPUs it changed.
     */
    @Test
    void rewrittenNarrowedAndWidenedTheWorkersEndOnTheirPlannedCpus() throws IOException, InterruptedException {
        Path hold = RunLogs.newRunDir().resolve("hold");
        ChildResult r;
        List<Map<Long, String>> seen = new ArrayList<>();
        try (Cpuset cs = new Cpuset("0-1")) {
            Launch.Running run = inCpuset(cs, hold).fakeTwoCores().options("groups=1,cpus=core," + OPTIONS).start();
            try {
                long pid = readyPid(run);
                seen.add(await(pid, oneEach(), "placed", run));
                cs.cpus("0-1");
                Thread.sleep(1000); // ten periods
                await(pid, oneEach(), "after the cpuset was rewritten with the same CPUs", run);
                cs.cpus("1");
                run.awaitLine(numapinLine("info", "replan group=0 groups=1 domain=node node=0 slice=1/1 cpus=1 "
                        + "cpus_mode=core cpukind=performance slots=1 mem=none allowed=1 was_node=0 was_cpus=0-1"));
                seen.add(await(pid, all(2, "1"), "after the cpuset was narrowed to CPU 1", run));
                cs.cpus("0-1");
                run.awaitLine(numapinLine("info", "replan group=0 groups=1 domain=node node=0 slice=1/1 cpus=0-1 "
                        + "cpus_mode=core cpukind=performance slots=2 mem=none allowed=0-1 was_node=0 was_cpus=1"));
                seen.add(await(pid, oneEach(), "after the cpuset was widened to CPUs 0-1 again", run));
            } finally {
                Files.createFile(hold);
            }
            r = run.finish().assertExit(0);
        }
        String ctx = r.describe();
        // Each re-plan: a `how=replan` line for each worker whose CPUs it
        // changed, whether the kernel or numapin moved it, and none for one
        // whose CPUs stayed (the kernel keeps a thread's own CPUs that the
        // cpuset still allows).
        for (int k = 1; k <= 2; k++) {
            assertEquals(changed(seen.get(k - 1), seen.get(k)), new ArrayList<>(replanLines(r.logLines(), k).keySet()),
                    "the workers with a how=replan line after re-plan " + k + " (CPUs " + seen.get(k - 1) + " then "
                            + seen.get(k) + ")\n" + ctx);
        }
        Map<String, String> s = Lines.summary(r);
        assertEquals("2", s.get("replans"), ctx);
        assertEquals("2", s.get("placed"), ctx);
        assertEquals("0", s.get("failed"), ctx);
        assertEquals(List.of(), r.failureWarnings(), ctx);
    }

    /**
     * The `how=replan` lines of a log after its n-th `replan` line (from 1)
     * and before the next, by tid.
     */
    static Map<Long, String> replanLines(List<String> log, int n) {
        Map<Long, String> m = new TreeMap<>();
        int seen = 0;
        for (String l : log) {
            if (l.contains("][numapin] replan ")) {
                seen++;
            } else if (seen == n && l.contains(" how=replan")) {
                Matcher t = Pattern.compile("\\] placed \"[^\"]*\" tid=(\\d+) ").matcher(l);
                if (t.find()) {
                    assertTrue(m.put(Long.parseLong(t.group(1)), l) == null, "two lines for one thread:\n" + l);
                }
            }
        }
        return m;
    }

    /** The workers whose CPUs differ between two reads of them. */
    static List<Long> changed(Map<Long, String> before, Map<Long, String> after) {
        List<Long> r = new ArrayList<>();
        before.forEach((tid, cpus) -> {
            if (!cpus.equals(after.get(tid))) {
                r.add(tid);
            }
        });
        return r;
    }

    /**
     * A JVM placed whole (scope=jvm) with cpus=core in a cpuset of CPU 1
     * (one core: both workers there), the cpuset then moved to CPU 0: the
     * kernel, and numapin's binding of the whole JVM, put the workers on
     * CPU 0 before numapin comes to them, and each still has its line
     * `placed ... how=replan`; the lines are those docs/lifecycle.md shows
     * (its sample has their shape).
     */
    @Test
    void aCpusetMovedLogsEachWorkerWhateverMovedIt() throws IOException, InterruptedException {
        Path hold = RunLogs.newRunDir().resolve("hold");
        ChildResult r;
        Map<Long, String> before;
        try (Cpuset cs = new Cpuset("1")) {
            Launch.Running run = inCpuset(cs, hold).fakeTwoCores().options("groups=1,scope=jvm,cpus=core,"
                    + OPTIONS).start();
            try {
                long pid = readyPid(run);
                before = await(pid, all(2, "1"), "placed", run);
                cs.cpus("0");
                run.awaitLine(numapinLine("info", "replan group=0 groups=1 domain=node node=0 slice=1/1 cpus=0 "
                        + "cpus_mode=core cpukind=performance slots=1 mem=none allowed=0 was_node=0 was_cpus=1"));
                await(pid, all(2, "0"), "after the cpuset moved to CPU 0", run);
                for (long tid : before.keySet()) {
                    run.awaitLine(numapinLine("info", "placed \"ForkJoinPool-1-worker-\\d+\" tid=" + tid
                            + " group=0 node=0 cpus=0 mem=unchanged how=replan was=0"));
                }
            } finally {
                Files.createFile(hold);
            }
            r = run.finish().assertExit(0);
        }
        String ctx = r.describe();
        assertEquals(before.keySet(), replanLines(r.logLines(), 1).keySet(), "a line for each worker\n" + ctx);
        List<String> real = r.logLines().stream().filter(l -> l.contains("][numapin] replan ")
                || l.contains(" how=replan")).collect(java.util.stream.Collectors.toList());
        DocSamples.assertSameShapes(DocSamples.sampleLines("docs/lifecycle.md", "replan"), real,
                "docs/lifecycle.md's re-plan lines");
        assertEquals("1", Lines.summary(r).get("replans"), ctx);
        assertEquals(List.of(), r.failureWarnings(), ctx);
    }

    /**
     * The fake 2-node machine in a cpuset of CPU 0 (node 0): one group, on
     * node 0. The cpuset moves to CPU 1: the group is node 1 now, the
     * workers are there, and one warning says their memory policy stays
     * node 0's.
     */
    @Test
    void aCpusetMovedToTheOtherNodeTakesTheGroupThere() throws IOException, InterruptedException {
        Path hold = RunLogs.newRunDir().resolve("hold");
        ChildResult r;
        try (Cpuset cs = new Cpuset("0")) {
            Launch.Running run = inCpuset(cs, hold).fakeTwoNodes().options("rescan=100").start();
            try {
                long pid = readyPid(run);
                await(pid, all(2, "0"), "placed on node 0", run);
                cs.cpus("1");
                run.awaitLine(numapinLine("info", "replan group=0 groups=1 domain=node node=1 slice=1/1 cpus=1 "
                        + "cpus_mode=node cpukind=performance slots=1 mem=preferred:1 allowed=1 was_node=0 was_cpus=0"));
                await(pid, all(2, "1"), "after the cpuset moved to node 1's CPU", run);
            } finally {
                Files.createFile(hold);
            }
            r = run.finish().assertExit(0);
        }
        String ctx = r.describe();
        assertTrue(r.logLines().stream().anyMatch(l -> l.contains("] plan group=0 groups=1 domain=node node=0 ")), ctx);
        List<String> w = r.failureWarnings();
        assertEquals(1, w.size(), "one warning: what stays\n" + ctx);
        assertTrue(w.get(0).contains("group 0 moved from node 0 to node 1: threads placed before keep their memory "
                + "policy preferred:0"), w.get(0));
        assertEquals("1", Lines.summary(r).get("replans"), ctx);
    }

    /**
     * A JVM started bound to CPU 0 (taskset) in a cpuset of CPUs 0-1: the
     * cpuset narrowed to CPU 1 leaves its group no CPUs (numapin stays
     * within the binding it was started with, as the kernel keeps a
     * thread's own mask): one warning, and the workers are where the kernel
     * puts them; the cpuset widened again gives them CPU 0 back.
     */
    @Test
    void aCpusetThatLeavesTheGroupNoCpusIsOneWarning() throws IOException, InterruptedException {
        Path hold = RunLogs.newRunDir().resolve("hold");
        ChildResult r;
        try (Cpuset cs = new Cpuset("0-1")) {
            Launch.Running run = inCpuset(cs, hold, "taskset", "-c", "0").fakeTwoNodes().options(OPTIONS).start();
            try {
                long pid = readyPid(run);
                await(pid, all(2, "0"), "placed on node 0", run);
                cs.cpus("1");
                run.awaitLine(numapinLine("warning", "the cpuset now allows cpus=1, which leaves group 0 no CPUs "
                        + "\\(the JVM started bound to cpus=0\\): threads are left where the kernel puts them until "
                        + "it allows some again"));
                await(pid, all(2, "1"), "left to the kernel", run);
                cs.cpus("0-1");
                run.awaitLine(numapinLine("info", "replan group=0 groups=1 domain=node node=0 slice=1/1 cpus=0 "
                        + "cpus_mode=node cpukind=performance slots=1 mem=none allowed=0-1 was_node=0 was_cpus=0"));
                await(pid, all(2, "0"), "after the cpuset allowed CPU 0 again", run);
            } finally {
                Files.createFile(hold);
            }
            r = run.finish().assertExit(0);
        }
        String ctx = r.describe();
        assertEquals(1, r.failureWarnings().size(), "one warning\n" + ctx);
        List<String> log = r.logLines();
        int back = 0;
        while (back < log.size() && !log.get(back).contains("] replan ")) {
            back++;
        }
        assertEquals(0, log.subList(0, back).stream().filter(l -> l.contains(" how=")).count(),
                "no thread moved by numapin while the group had no CPUs\n" + ctx);
        assertEquals("2", Lines.summary(r).get("replans"), ctx);
    }

    /** The host pid of the java a namespaced launch runs. */
    static long javaPid(Launch.Running run) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LIMIT_S);
        while (System.nanoTime() < deadline) {
            for (ProcessHandle h : (Iterable<ProcessHandle>) run.process.descendants()::iterator) {
                if (h.info().command().orElse("").endsWith("/bin/java")) {
                    return h.pid();
                }
            }
            Thread.sleep(20);
        }
        fail("no java under " + run.process.pid() + "\n" + run.stdout());
        return -1;
    }

    /**
     * Two pods on one machine: each JVM in a cpuset of its own (CPU 0, CPU
     * 1: one fake node each) and a PID namespace of its own, both with
     * group=auto sharing a lock directory. Each is group 0 of 1 with the
     * node its CPUs allow, needs no lock, and places its workers within its
     * own cpuset; `numapin check` from here (another PID namespace) shows
     * both, each worker with the CPUs its JVM's numapin set.
     */
    @Test
    void twoPodsEachPlaceWithinTheirOwnCpuset() throws IOException, InterruptedException {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/unshare")), "needs unshare (util-linux)");
        Path dir = RunLogs.newRunDir();
        Path locks = AutoGroupTest.privateDir("locks");
        Path hold = dir.resolve("hold");
        String[] cpus = {"0", "1"};
        List<Launch.Running> runs = new ArrayList<>();
        List<String[]> checks = new ArrayList<>();
        List<Long> pids = new ArrayList<>();
        List<Cpuset> sets = new ArrayList<>();
        try {
            for (String c : cpus) {
                Cpuset cs = new Cpuset(c);
                sets.add(cs);
                runs.add(inCpuset(cs, hold, "unshare", "--pid", "--fork", "--mount-proc").fakeTwoNodes()
                        .options("group=auto,lockdir=" + locks + "," + OPTIONS).start());
            }
            for (int i = 0; i < 2; i++) {
                runs.get(i).awaitLine(Pattern.compile("workers-ready pid=(\\d+)"));
                long pid = javaPid(runs.get(i));
                pids.add(pid);
                await(pid, all(2, cpus[i]), "pod " + i, runs.get(i));
            }
            // The markers are written by the first rescan pass.
            Thread.sleep(500);
            for (long pid : pids) {
                checks.add(Launch.tool(Build.numapin().toString(), "check", String.valueOf(pid)));
            }
        } finally {
            Files.createFile(hold);
            for (Launch.Running run : runs) {
                run.finish();
            }
            for (Cpuset cs : sets) {
                cs.close();
            }
        }
        for (int i = 0; i < 2; i++) {
            ChildResult r = runs.get(i).finish().assertExit(0);
            String ctx = r.describe() + "\ncheck:\n" + checks.get(i)[1];
            assertTrue(r.logLines().stream().anyMatch(l -> l.endsWith("] auto group=0 groups=1 lock=none")), ctx);
            String plan = "] plan group=0 groups=1 domain=node node=" + i + " slice=1/1 cpus=" + cpus[i] + " ";
            assertTrue(r.logLines().stream().anyMatch(l -> l.contains(plan)), ctx);
            assertEquals(2, r.placed().size(), ctx);
            assertEquals("0", checks.get(i)[0], ctx);
            Matcher m = Pattern.compile("(?m)^thread \"ForkJoinPool-1-worker-\\d+\" tid=(\\d+) cpus=" + cpus[i]
                    + " .* nstid=(\\d+).* planned=" + cpus[i] + " drift=no(?: |$)").matcher(checks.get(i)[1]);
            int workers = 0;
            while (m.find()) {
                workers++;
                assertTrue(!m.group(1).equals(m.group(2)), "the JVM's own thread id differs from the host's\n" + ctx);
            }
            assertEquals(2, workers, "check shows both workers with the CPUs numapin set, seen from the host\n" + ctx);
        }
        try (Stream<Path> s = Files.list(locks)) {
            assertEquals(0, s.count(), "a JVM with one group took a lock");
        }
    }
}
