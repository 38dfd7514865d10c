package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import numapin.tests.ChildResult.Cpus;
import numapin.tests.ChildResult.Placed;

/**
 * `numapin check PID` on a running JVM (numapin.child.AttachTarget,
 * started with the agent, group 1 of the fake 2-node machine: CPU 1): each
 * thread the target reports about itself (name, tid, the CPUs it may run
 * on) is listed by check with the JVM's name for it, the same CPUs, and a
 * last CPU among them; the threads numapin placed are on CPU 1, the plain
 * thread on all CPUs. The JVM's names come from jcmd Thread.print: JDK 17
 * writes thread ids in hexadecimal, later JDKs in decimal.
 */
@ExtendWith(RunLogs.class)
class CheckCommandTest {
    static final Pattern THREAD = Pattern.compile(
            "^thread \"(.*)\" tid=(\\d+) cpus=(\\S+) nodes=(\\S+) last_cpu=(-?\\d+) last_node=(-?\\d+)( name=kernel)?"
                    + "(?: planned=\\S+ drift=(?:yes|no))?$");

    static String all;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        all = Machine.allowedCpus();
    }

    record Seen(String name, String cpus, String nodes, int lastCpu, boolean kernelName) {}

    static Map<Long, Seen> threads(String output) {
        Map<Long, Seen> r = new HashMap<>();
        for (String l : ChildResult.lines(output + "\n")) {
            Matcher m = THREAD.matcher(l);
            if (m.matches()) {
                r.put(Long.parseLong(m.group(2)), new Seen(m.group(1), m.group(3), m.group(4),
                        Integer.parseInt(m.group(5)), m.group(7) != null));
            }
        }
        return r;
    }

    /** numapin check with these arguments. */
    static ChildResult check(String... args) {
        List<String> cmd = new ArrayList<>(List.of(Build.numapin().toString(), "check"));
        cmd.addAll(List.of(args));
        return Launch.command(cmd).run();
    }

    @Test
    void checkListsEachThreadByNameWithTheCpusItHas() throws IOException {
        Path go = RunLogs.newRunDir().resolve("go");
        Launch.Running run = Launch.program("AttachTarget", go.toString()).options("group=1,groups=2,scope=threads")
                .fakeTwoNodes().start();
        ChildResult text;
        ChildResult json;
        ChildResult kernel;
        ChildResult filtered;
        try {
            String pid = run.awaitLine(Pattern.compile("attach-ready pid=(\\d+)")).group(1);
            text = check(pid);
            json = check(pid, "--json");
            kernel = check(pid, "--kernel-names");
            filtered = check(pid, "--threads", "Side|ForkJoinPool-*");
            Files.createFile(go);
        } finally {
            if (!Files.exists(go)) {
                run.kill();
            }
        }
        ChildResult r = run.finish().assertExit(0);
        String ctx = r.describe() + "\ncheck:\n" + text.describe();
        text.assertExit(0);
        assertTrue(text.stdout.startsWith("process pid="), ctx);
        assertEquals("", text.stderr, ctx);

        // Every thread that said where it runs: same name, tid, CPUs.
        Map<Long, Seen> seen = threads(text.stdout);
        List<Map<String, String>> before = Lines.of(r, "attach-before");
        assertEquals(3, before.size(), ctx);
        for (Map<String, String> b : before) {
            Seen s = seen.get(Long.parseLong(b.get("tid")));
            assertTrue(s != null, "check does not list " + b + "\n" + ctx);
            assertEquals(b.get("name"), s.name(), "the JVM's name\n" + ctx);
            assertTrue(!s.kernelName(), ctx);
            assertEquals(Cpus.parse(b.get("cpus")), Cpus.parse(s.cpus()), b + "\n" + ctx);
            assertTrue(Cpus.parse(s.cpus()).contains(s.lastCpu()), "last CPU outside the allowed ones: " + s + "\n"
                    + ctx);
        }
        // Threads numapin placed: on CPU 1; the plain thread: everywhere.
        List<Placed> placed = r.placed();
        assertTrue(placed.size() >= 2, ctx);
        for (Placed p : placed) {
            Seen s = seen.get(p.tid());
            if (s == null) {
                continue; /* ended before check looked */
            }
            assertEquals(p.name(), s.name(), ctx);
            assertEquals("1", s.cpus(), p.line() + "\n" + ctx);
            assertEquals(1, s.lastCpu(), p.line() + "\n" + ctx);
        }
        Seen side = seen.values().stream().filter(s -> s.name().equals("Side")).findFirst().orElseThrow();
        assertEquals(Cpus.parse(all), Cpus.parse(side.cpus()), ctx);
        assertTrue(seen.values().stream().anyMatch(s -> s.name().equals("main")), ctx);

        // --json: valid, the same threads.
        json.assertExit(0);
        Path jf = json.dir.resolve("check.json");
        Files.writeString(jf, json.stdout);
        List<String> tids = ReportTest.jq(".threads[].tid", jf);
        for (Map<String, String> b : before) {
            assertTrue(tids.contains(b.get("tid")), b + " not in --json\n" + json.describe());
        }
        // --kernel-names: the kernel's names (15 bytes at most), no thread dump.
        kernel.assertExit(0);
        Map<Long, Seen> k = threads(kernel.stdout);
        for (Map<String, String> b : before) {
            Seen s = k.get(Long.parseLong(b.get("tid")));
            String name = b.get("name");
            assertEquals(name.substring(0, Math.min(15, name.length())), s.name(), kernel.describe());
            assertTrue(s.kernelName(), kernel.describe());
        }
        // --threads: only the matching names.
        filtered.assertExit(0);
        Map<Long, Seen> f = threads(filtered.stdout);
        assertTrue(f.values().stream().allMatch(s -> s.name().equals("Side") || s.name().startsWith("ForkJoinPool-")),
                filtered.describe());
        assertTrue(f.size() >= 3, filtered.describe());
        assertTrue(filtered.stdout.contains("matched threads=" + f.size()), filtered.describe());
    }

    @Test
    void noSuchProcessOrBadArgumentsExitNonZero() {
        ChildResult none = check("999999999");
        none.assertExit(1);
        assertTrue(none.stderr.contains("numapin check: no process 999999999"), none.describe());
        check("12x").assertExit(2);
        ChildResult badGlob = check("1", "--threads", "a[");
        badGlob.assertExit(2);
        assertTrue(badGlob.stderr.contains("numapin check: invalid --threads 'a[': valid values are shell globs"),
                badGlob.describe());
    }

    @Test
    void withoutAThreadDumpTheKernelNamesAreShownAfterOneLine() {
        // This test's own JVM, with a jcmd that fails.
        String pid = String.valueOf(ProcessHandle.current().pid());
        ChildResult r = check(pid, "--jcmd", "/bin/false").assertExit(0);
        assertEquals(1, (r.stdout + "\n" + r.stderr).lines().filter(l -> l.startsWith("numapin check: ")).count(),
                r.describe());
        assertTrue(r.stderr.contains("numapin check: no Java thread names (/bin/false " + pid
                + " Thread.print exited with 1): the kernel's names are shown"), r.describe());
        Map<Long, Seen> seen = threads(r.stdout);
        assertTrue(seen.size() > 5 && seen.values().stream().allMatch(Seen::kernelName), r.describe());
    }

    /**
     * Another user's JVM: check reads what /proc shows anyone (threads,
     * CPUs), asks the JVM nothing (its memory map is not readable, so it is
     * not known to be a JVM), and says why the memory lines are missing.
     */
    @Test
    void anotherUsersJvmIsShownSayingWhatCannotBeRead() {
        assumeTrue(Machine.isRoot() && Machine.onPath("setpriv"), "needs root and setpriv");
        Path go = RunLogs.newRunDir().resolve("go");
        Launch.Running run = Launch.program("AttachTarget", go.toString()).noAgent().start();
        try {
            String pid = run.awaitLine(Pattern.compile("attach-ready pid=(\\d+)")).group(1);
            ChildResult r = Launch.command(Build.numapin().toString(), "check", pid).asUser("nobody", "nogroup")
                    .run();
            assertEquals(0, r.exitCode, r.describe());
            assertTrue(r.stderr.contains("not asking process " + pid + " for Java thread names: its memory map "
                    + "cannot be read (Permission denied)"), r.describe());
            assertTrue(r.stdout.contains("memory unknown: /proc/" + pid + "/numa_maps: Permission denied (EACCES); "
                    + "run check as the process's user or root"), r.describe());
            assertTrue(threads(r.stdout).size() > 5, r.describe());
            ChildResult j = Launch.command(Build.numapin().toString(), "check", pid, "--json")
                    .asUser("nobody", "nogroup").run();
            assertTrue(j.stdout.contains("\"memory_kib\": null,") && j.stdout.contains("\"memory_error\": \"EACCES\""),
                    j.describe());
        } finally {
            run.process.destroyForcibly();
        }
    }
}
