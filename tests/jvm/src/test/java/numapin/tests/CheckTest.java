package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * `numapin check PID` on a running JVM (numapin.lifecycle.AttachTarget,
 * started with the agent, group 1 of the fake 2-node machine: CPU 1): each
 * thread the target reports about itself (name, tid, the CPUs it may run
 * on) is listed by check with the JVM's name for it, the same CPUs, and a
 * last CPU among them; the threads numapin placed are on CPU 1, the plain
 * thread on all CPUs. The JVM's names come from jcmd Thread.print: JDK 17
 * writes thread ids in hexadecimal, later JDKs in decimal.
 */
@ExtendWith(RunLogs.class)
class CheckTest {
    static final Pattern THREAD = Pattern.compile(
            "^thread \"(.*)\" tid=(\\d+) cpus=(\\S+) nodes=(\\S+) last_cpu=(-?\\d+) last_node=(-?\\d+)( name=kernel)?$");

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

    @Test
    void checkListsEachThreadByNameWithTheCpusItHas() throws IOException, InterruptedException {
        Path go = RunLogs.newRunDir().resolve("go");
        Launch.Running run = Launch.program("AttachTarget", go.toString()).options("group=1,groups=2,scope=threads")
                .fakeTwoNodes().start();
        String[] text, json, kernel, filtered;
        try {
            String pid = run.awaitLine(Pattern.compile("attach-ready pid=(\\d+)"), 60).group(1);
            Path tools = RunLogs.newRunDir();
            String cli = HarnessTest.numapin().toString();
            text = Launch.tool(tools, cli, "check", pid);
            json = Launch.tool(tools, cli, "check", pid, "--json");
            kernel = Launch.tool(tools, cli, "check", pid, "--kernel-names");
            filtered = Launch.tool(tools, cli, "check", pid, "--threads", "Side|ForkJoinPool-*");
            Files.createFile(go);
        } finally {
            if (!Files.exists(go)) {
                run.kill();
            }
        }
        ChildResult r = run.finish().assertExit(0);
        String ctx = r.describe() + "\ncheck:\n" + text[1];
        assertEquals("0", text[0], ctx);
        assertTrue(text[1].startsWith("process pid="), ctx);

        // Every thread that said where it runs: same name, tid, CPUs.
        Map<Long, Seen> seen = threads(text[1]);
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
        assertEquals("0", json[0], json[1]);
        Path jf = RunLogs.newRunDir().resolve("check.json");
        Files.writeString(jf, json[1]);
        List<String> tids = ReportTest.jq(".threads[].tid", jf);
        for (Map<String, String> b : before) {
            assertTrue(tids.contains(b.get("tid")), b + " not in --json\n" + json[1]);
        }
        // --kernel-names: the kernel's names (15 bytes at most), no thread dump.
        assertEquals("0", kernel[0], kernel[1]);
        Map<Long, Seen> k = threads(kernel[1]);
        for (Map<String, String> b : before) {
            Seen s = k.get(Long.parseLong(b.get("tid")));
            String name = b.get("name");
            assertEquals(name.substring(0, Math.min(15, name.length())), s.name(), kernel[1]);
            assertTrue(s.kernelName(), kernel[1]);
        }
        // --threads: only the matching names.
        assertEquals("0", filtered[0], filtered[1]);
        Map<Long, Seen> f = threads(filtered[1]);
        assertTrue(f.values().stream().allMatch(s -> s.name().equals("Side") || s.name().startsWith("ForkJoinPool-")),
                filtered[1]);
        assertTrue(f.size() >= 3, filtered[1]);
        assertTrue(filtered[1].contains("matched threads=" + f.size()), filtered[1]);
    }

    @Test
    void noSuchProcessOrBadArgumentsExitNonZero() {
        Path tools = RunLogs.newRunDir();
        String cli = HarnessTest.numapin().toString();
        String[] none = Launch.tool(tools, cli, "check", "999999999");
        assertEquals("1", none[0], none[1]);
        assertTrue(none[1].contains("numapin check: no process 999999999"), none[1]);
        String[] bad = Launch.tool(tools, cli, "check", "12x");
        assertEquals("2", bad[0], bad[1]);
        String[] badGlob = Launch.tool(tools, cli, "check", "1", "--threads", "a[");
        assertEquals("2", badGlob[0], badGlob[1]);
        assertTrue(badGlob[1].contains("numapin check: invalid --threads 'a[': valid values are shell globs"), badGlob[1]);
    }

    @Test
    void withoutAThreadDumpTheKernelNamesAreShownAfterOneLine() {
        // This test's own JVM, with a jcmd that fails.
        String pid = String.valueOf(ProcessHandle.current().pid());
        String[] r = Launch.tool(RunLogs.newRunDir(), HarnessTest.numapin().toString(), "check", pid, "--jcmd",
                "/bin/false");
        assertEquals("0", r[0], r[1]);
        assertEquals(1, r[1].lines().filter(l -> l.startsWith("numapin check: ")).count(), r[1]);
        assertTrue(r[1].contains("numapin check: no Java thread names (/bin/false " + pid
                + " Thread.print exited with 1): the kernel's are shown"), r[1]);
        Map<Long, Seen> seen = threads(r[1]);
        assertTrue(seen.size() > 5 && seen.values().stream().allMatch(Seen::kernelName), r[1]);
    }
}
