package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A placed thread whose CPUs someone else changes (docs/lifecycle.md#drift):
 * an operator's {@code taskset -p} on a fork-join worker of a JVM placed as
 * group 1 of the fake 2-node machine (CPU 1). With the default drift=restore
 * numapin puts it back within a rescan period, with one {@code how=drift}
 * line, counted in the summary and the report; with drift=log it is noted
 * once and left, and {@code numapin check} shows it drifted from outside
 * (the agent's marker); rescan=0 checks nothing. Each thread's CPUs are read
 * from /proc by the test, not taken from numapin's log.
 */
@ExtendWith(RunLogs.class)
class DriftTest {
    static final String PERIOD_MS = "100";

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
    }

    /** A thread's allowed CPUs, read from its /proc status. */
    static String cpusOf(long pid, long tid) {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/task/" + tid + "/status"))) {
                if (l.startsWith("Cpus_allowed_list:")) {
                    return l.substring(l.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        throw new IllegalStateException("no Cpus_allowed_list for " + pid + "/" + tid);
    }

    /** `taskset -p -c CPUS TID`, as an operator would. */
    static void taskset(Path dir, long tid, String cpus) {
        String[] r = Launch.tool("taskset", "-p", "-c", cpus, String.valueOf(tid));
        assertEquals("0", r[0], "taskset: " + r[1]);
    }

    /** The workers' tids, from their own "worker" lines. */
    static List<Long> workerTids(Launch.Running run) {
        List<Long> tids = new ArrayList<>();
        for (String l : ChildResult.lines(run.stdout() + "\n")) {
            if (l.startsWith("worker ")) {
                tids.add(Long.parseLong(Lines.fields(l).get("tid")));
            }
        }
        return tids;
    }

    static Launch workers(Path hold, String options) {
        return Launch.program("Workers", "2", hold.toString()).fakeTwoNodes().options(options);
    }

    static Pattern numapinLine(String level, String rest) {
        return Pattern.compile("^\\[\\d+\\.\\d{3}s\\]\\[" + level + "\\]\\[numapin\\] " + rest + "$");
    }

    @Test
    void aWorkerMovedByTasksetIsPutBack() throws IOException {
        Path dir = RunLogs.newRunDir();
        Path hold = dir.resolve("hold");
        Path report = dir.resolve("report.json");
        Launch.Running run = workers(hold, "group=1,mem=none,rescan=" + PERIOD_MS + ",report=" + report).start();
        long pid, tid, other;
        try {
            pid = Long.parseLong(run.awaitLine(Pattern.compile("workers-ready pid=(\\d+)")).group(1));
            List<Long> tids = workerTids(run);
            assertEquals(2, tids.size(), run.stdout());
            tid = tids.get(0);
            other = tids.get(1);
            assertEquals("1", cpusOf(pid, tid), "placed on group 1's CPU");
            taskset(dir, tid, "0");
            run.awaitLine(numapinLine("info", "placed \"ForkJoinPool-1-worker-\\d+\" tid=" + tid
                    + " group=1 node=1 cpus=1 mem=unchanged how=drift was=0"));
            assertEquals("1", cpusOf(pid, tid), "put back on group 1's CPU");
            assertEquals("1", cpusOf(pid, other), "the other worker was not touched");
        } finally {
            Files.createFile(hold);
        }
        ChildResult r = run.finish().assertExit(0);
        String ctx = r.describe();
        List<String> drift = r.logLines().stream().filter(l -> l.contains(" how=drift")).toList();
        assertEquals(1, drift.size(), "one line per thread put back\n" + ctx);
        Map<String, String> s = Lines.summary(r);
        assertEquals("2", s.get("placed"), ctx);
        assertEquals("1", s.get("drift"), ctx);
        assertEquals("0", s.get("replans"), ctx);
        assertEquals(List.of(), r.failureWarnings(), ctx);
        String[] jq = Launch.tool("jq", "-r",
                ".totals.drift, (.threads[] | select(.drift > 0) | \"\\(.tid) \\(.drift) \\(.cpus)\")", report.toString());
        assertEquals("0", jq[0], jq[1]);
        assertEquals("1\n" + tid + " 1 1\n", jq[1], "the report's drift count\n" + ctx);
    }

    @Test
    void withDriftLogTheWorkerIsLeftAndCheckShowsItDrifted() throws IOException, InterruptedException {
        Path dir = RunLogs.newRunDir();
        Path hold = dir.resolve("hold");
        Launch.Running run = workers(hold, "group=1,mem=none,drift=log,rescan=" + PERIOD_MS).start();
        long pid, tid, other;
        String[] text, json;
        try {
            pid = Long.parseLong(run.awaitLine(Pattern.compile("workers-ready pid=(\\d+)")).group(1));
            List<Long> tids = workerTids(run);
            tid = tids.get(0);
            other = tids.get(1);
            taskset(dir, tid, "0");
            run.awaitLine(numapinLine("info", "drifted \"ForkJoinPool-1-worker-\\d+\" tid=" + tid
                    + " group=1 node=1 cpus=0 planned=1"));
            Thread.sleep(10 * Long.parseLong(PERIOD_MS)); // ten periods more: still left where taskset put it
            assertEquals("0", cpusOf(pid, tid), "drift=log leaves the thread where it was put");
            String cli = Build.numapin().toString();
            text = Launch.tool(cli, "check", String.valueOf(pid));
            json = Launch.tool(cli, "check", String.valueOf(pid), "--json");
        } finally {
            Files.createFile(hold);
        }
        ChildResult r = run.finish().assertExit(0);
        String ctx = r.describe() + "\ncheck:\n" + text[1];
        assertEquals("0", text[0], ctx);
        Matcher drifted = Pattern.compile("(?m)^thread \"ForkJoinPool-1-worker-\\d+\" tid=" + tid
                + " cpus=0 .* planned=1 drift=yes(?: |$)").matcher(text[1]);
        assertTrue(drifted.find(), "check marks the moved worker drifted\n" + ctx);
        assertTrue(Pattern.compile("(?m)^thread \"ForkJoinPool-1-worker-\\d+\" tid=" + other
                + " cpus=1 .* planned=1 drift=no(?: |$)").matcher(text[1]).find(), "and the other one not\n" + ctx);
        assertTrue(Pattern.compile("(?m)^numapin group=1 groups=2 replans=0 cpus=1 nodes=1 placed=2 drifted=1 "
                + "agent_drift=1 age_s=\\d+$").matcher(text[1]).find(), ctx);
        assertTrue(Pattern.compile("(?m)^thread \"main\" tid=\\d+ cpus=\\S+ nodes=\\S+ last_cpu=-?\\d+ last_node=-?\\d+$")
                .matcher(text[1]).find(), "a thread numapin did not place has no planned CPUs\n" + ctx);
        assertTrue(json[1].contains("\"tid\": " + tid + ",") && json[1].contains("\"planned\": \"1\", \"drift\": true"),
                "check --json\n" + json[1]);
        assertEquals(1, r.logLines().stream().filter(l -> l.contains("] drifted ")).count(), "noted once\n" + ctx);
        assertEquals(0, r.logLines().stream().filter(l -> l.contains(" how=drift")).count(), ctx);
        assertEquals("1", Lines.summary(r).get("drift"), ctx);
    }

    @Test
    void rescanZeroChecksNothing() throws IOException, InterruptedException {
        Path dir = RunLogs.newRunDir();
        Path hold = dir.resolve("hold");
        Launch.Running run = workers(hold, "group=1,mem=none,rescan=0").start();
        long pid, tid;
        String[] text;
        try {
            pid = Long.parseLong(run.awaitLine(Pattern.compile("workers-ready pid=(\\d+)")).group(1));
            tid = workerTids(run).get(0);
            taskset(dir, tid, "0");
            Thread.sleep(1000);
            assertEquals("0", cpusOf(pid, tid), "no rescan thread: nothing puts it back");
            text = Launch.tool(Build.numapin().toString(), "check", String.valueOf(pid), "--kernel-names");
        } finally {
            Files.createFile(hold);
        }
        ChildResult r = run.finish().assertExit(0);
        assertTrue(!text[1].contains("planned="), "no marker without the rescan thread\n" + text[1]);
        assertEquals("0", Lines.summary(r).get("drift"), r.describe());
    }
}
