package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import numapin.child.Self;
import numapin.tests.ChildResult.Placed;

/**
 * numapin's events in JDK Flight Recorder recordings (docs/jfr.md), read
 * back with the JDK's own `jfr` tool: numapin.Placement lists exactly the
 * threads the log says were placed, with the same CPUs, whether the
 * recording started at launch or later with jcmd, and only while one
 * runs; numapin.Plan, numapin.Advice and numapin.NodeMemory are there; a
 * runtime without the jdk.jfr module runs and places as ever. The child is
 * numapin.child.Phases on the fake 2-node machine (group 1 is CPU 1).
 */
@ExtendWith(RunLogs.class)
class JfrTest {
    static final String[] TYPES = {"numapin.Placement", "numapin.Plan", "numapin.Advice", "numapin.NodeMemory",
            "numapin.AccessLocality"};

    @TempDir
    Path dir;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
    }

    /** Recording settings: numapin's periodic events every second, and jdk.ThreadStart. */
    Path settings() throws IOException {
        Path jfc = dir.resolve("numapin-test.jfc");
        Files.writeString(jfc, """
                <?xml version="1.0" encoding="UTF-8"?>
                <configuration version="2.0" label="numapin test">
                  <event name="numapin.NodeMemory"><setting name="enabled">true</setting>\
                <setting name="period">1 s</setting></event>
                  <event name="numapin.AccessLocality"><setting name="enabled">true</setting>\
                <setting name="period">1 s</setting></event>
                  <event name="numapin.ThreadAccess"><setting name="enabled">true</setting>\
                <setting name="period">1 s</setting></event>
                  <event name="jdk.ThreadStart"><setting name="enabled">true</setting></event>
                </configuration>
                """);
        return jfc;
    }

    /** `jfr ARGS...`: its output; its exit status must be 0. */
    static String jfr(String... args) {
        List<String> cmd = new ArrayList<>(List.of(Build.jdkTool("jfr")));
        cmd.addAll(List.of(args));
        String[] r = Launch.tool(cmd.toArray(new String[0]));
        assertEquals("0", r[0], String.join(" ", cmd) + ":\n" + r[1]);
        return r[1];
    }

    static final Pattern FIELD = Pattern.compile("^  (\\w+) = (.*)$");

    /** The events of a type in a recording, as `jfr print` shows them: one map of fields each. */
    static List<Map<String, String>> events(Path recording, String type) {
        List<Map<String, String>> r = new ArrayList<>();
        Map<String, String> cur = null;
        for (String l : ChildResult.lines(jfr("print", "--events", type, recording.toString()))) {
            if (l.equals(type + " {")) {
                cur = new LinkedHashMap<>();
            } else if (l.equals("}") && cur != null) {
                r.add(cur);
                cur = null;
            } else if (cur != null) {
                Matcher m = FIELD.matcher(l);
                if (m.matches()) {
                    cur.put(m.group(1), m.group(2));
                }
            }
        }
        return r;
    }

    /** A string field's value: "text" unquoted. */
    static String str(Map<String, String> e, String key) {
        String v = e.get(key);
        return v != null && v.startsWith("\"") ? ChildResult.unquote(v.substring(1, v.lastIndexOf('"'))) : v;
    }

    /** The placed lines of the log, by tid. */
    static Map<Long, Placed> placedByTid(ChildResult r) {
        Map<Long, Placed> m = new TreeMap<>();
        for (Placed p : ChildResult.placed(r.logLines(), "placed")) {
            m.put(p.tid(), p);
        }
        return m;
    }

    /**
     * The recording's placements are exactly the log's placed threads whose
     * names start with one of the prefixes: once each, same tid, name,
     * group and CPUs; `earlier` set for the pools placed before the
     * recording ran, not for those placed while it ran, which numapin's
     * thread commits ("numapin jfr" their event thread, the placed thread
     * their thread field); either for the pools of
     * `either` (placed while numapin was noticing the recording). Returns
     * the events.
     */
    static List<Map<String, String>> assertPlacements(Path recording, ChildResult r, List<String> earlier,
            List<String> live, List<String> either) {
        String ctx = r.describe();
        List<Map<String, String>> ev = events(recording, "numapin.Placement");
        Map<Long, Placed> log = placedByTid(r);
        Map<Long, Map<String, String>> byTid = new HashMap<>();
        for (Map<String, String> e : ev) {
            long tid = Long.parseLong(e.get("osThreadId"));
            assertEquals(null, byTid.put(tid, e), "two numapin.Placement events for tid " + tid + ": " + ev + "\n" + ctx);
        }
        TreeSet<Long> want = new TreeSet<>();
        for (Placed p : log.values()) {
            boolean before = earlier.stream().anyMatch(p.name()::startsWith);
            boolean during = live.stream().anyMatch(p.name()::startsWith);
            boolean maybe = either.stream().anyMatch(p.name()::startsWith);
            if (!before && !during && !maybe) {
                continue;
            }
            want.add(p.tid());
            Map<String, String> e = byTid.get(p.tid());
            assertTrue(e != null, "no numapin.Placement event for " + p.line() + "; events " + ev + "\n" + ctx);
            assertEquals(p.name(), str(e, "threadName"), e.toString());
            assertEquals(p.cpus(), str(e, "cpus"), "the event's CPUs are the log's: " + e + "\n" + p.line());
            assertEquals(String.valueOf(p.group()), e.get("group"), e.toString());
            assertEquals(p.node(), str(e, "nodes"), e.toString());
            assertEquals("start", str(e, "how"), e.toString());
            if (!maybe) {
                assertEquals(String.valueOf(before), e.get("earlier"), "earlier: " + e + "\n" + p.line());
            }
            assertTrue(e.get("thread").startsWith(Self.q(p.name()) + " "),
                    "the thread field is the placed thread: " + e);
            if (e.get("earlier").equals("false")) {
                // Committed by numapin's thread, or by JFR's own where a
                // chunk ended first (the recording's stop, at exit).  Before
                // JDK 21 (JDK-8304033) a thread attached through JNI after
                // the recording started has no event thread in it.
                String committer = e.get("eventThread");
                if (committer != null || Runtime.version().feature() >= 21) {
                    assertTrue(String.valueOf(committer).matches("\"(numapin jfr|JFR [^\"]*|Attach Listener)\" .*"),
                            "a placement while the recording runs is queued by the placed thread and "
                                    + "committed by numapin's: " + e);
                }
            }
        }
        assertEquals(want, new TreeSet<>(byTid.keySet()), "the recording's placements are the log's\n" + ctx);
        return ev;
    }

    /** The advice lines of the log, without "advice: ", at info and warning level. */
    static TreeSet<String> advice(ChildResult r) {
        return r.logLines().stream().filter(l -> l.matches(".*\\]\\[(info|warning)\\]\\[numapin\\] advice: .*"))
                .map(l -> l.substring(l.indexOf("] advice: ") + "] advice: ".length()))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    void aRecordingFromLaunchHoldsEveryPlacementPlanAdviceAndNodeMemory() throws IOException {
        Path recording = dir.resolve("launch.jfr");
        Launch.Running run = Launch.program("Phases", dir.toString(), "2", "2").fakeTwoNodes()
                .options("group=1,groups=2,log=debug")
                .jvmArg("-XX:StartFlightRecording:filename=" + recording + ",settings=" + settings())
                .start();
        try {
            run.awaitLine(Pattern.compile("phase-ready 1 .*"));
            // Pool 1 may be placed before numapin saw the recording: told then.
            run.awaitLine(Pattern.compile(".*\\[numapin\\] JFR: recordings \\S+ run: .*"));
            Files.createFile(dir.resolve("go-1"));
            run.awaitLine(Pattern.compile("phase-ready 2 .*"));
            run.awaitLine(Pattern.compile(".*\\[numapin\\] JFR: numapin.NodeMemory: first events.*"));
            run.awaitLine(Pattern.compile(".*\\[numapin\\] JFR: numapin.AccessLocality: first events.*"));
            // More placed workers than the group's one CPU: advice, once the
            // next exit or the periodic rescan (every second) counts them
            // again; awaited, so that the recording still runs to hold it.
            run.awaitLine(Pattern.compile(".*\\[numapin\\] advice: \\d+ placed threads are live on .*"));
            Files.createFile(dir.resolve("go-2"));
        } finally {
            if (!Files.exists(dir.resolve("go-2"))) {
                run.kill();
            }
        }
        ChildResult r = run.finish().assertExit(0);
        String ctx = r.describe();
        assertEquals(List.of(), r.failureWarnings().stream().filter(l -> !l.contains("memory policy"))
                .collect(Collectors.toList()), ctx);
        assertEquals(4, placedByTid(r).size(), "placed lines\n" + ctx);

        // Pool 2 was placed while the recording ran: on its threads, at their start.
        List<Map<String, String>> placements = assertPlacements(recording, r, List.of(), List.of("ForkJoinPool-2-"),
                List.of("ForkJoinPool-1-"));
        for (Map<String, String> e : placements) {
            // Node 1 is not this kernel's: the policy is refused, and the event says so.
            assertEquals("N/A", e.get("memoryPolicy"), e.toString());
            assertEquals("EINVAL", str(e, "memoryError"), e.toString());
            assertEquals("false", e.get("verified"), e.toString());
        }
        // jdk.ThreadStart of the same threads, to line the events up with.
        List<String> started = events(recording, "jdk.ThreadStart").stream().map(e -> e.get("thread"))
                .collect(Collectors.toList());
        for (Map<String, String> e : placements) {
            if (e.get("earlier").equals("false")) {
                assertTrue(started.contains(e.get("thread")), "jdk.ThreadStart for " + e.get("thread") + ": " + started);
            }
        }

        String summary = jfr("summary", recording.toString());
        for (String t : TYPES) {
            Matcher m = Pattern.compile("(?m)^ " + Pattern.quote(t) + "\\s+(\\d+)\\s").matcher(summary);
            assertTrue(m.find(), "jfr summary lists " + t + ":\n" + summary);
            assertTrue(Long.parseLong(m.group(1)) > 0, "jfr summary: no " + t + " events:\n" + summary);
        }

        List<Map<String, String>> plans = events(recording, "numapin.Plan");
        assertEquals(1, plans.size(), "one numapin.Plan a recording: " + plans);
        Map<String, String> plan = plans.get(0);
        assertEquals("1", plan.get("group"), plan.toString());
        assertEquals("2", plan.get("groups"), plan.toString());
        assertEquals("1", str(plan, "nodes"), plan.toString());
        assertEquals("1", str(plan, "cpus"), plan.toString());
        assertEquals("node", str(plan, "domain"), plan.toString());
        assertEquals("jvm", str(plan, "scope"), "the default scope with two groups: " + plan);
        assertEquals("group=1,groups=2,log=debug", str(plan, "options"), plan.toString());

        TreeSet<String> told = events(recording, "numapin.Advice").stream().map(e -> str(e, "message"))
                .collect(Collectors.toCollection(TreeSet::new));
        assertTrue(!advice(r).isEmpty(), "advice lines in the log\n" + ctx);
        assertEquals(advice(r), told, "numapin.Advice: the log's advice lines, once each\n" + ctx);
        assertEquals(advice(r).size(), events(recording, "numapin.Advice").size(), "once each");

        List<Map<String, String>> memory = events(recording, "numapin.NodeMemory");
        Map<String, String> node0 = memory.stream().filter(e -> e.get("node").equals("0")).findFirst().orElseThrow();
        Map<String, String> node1 = memory.stream().filter(e -> e.get("node").equals("1")).findFirst().orElseThrow();
        assertTrue(node0.get("resident").matches("[0-9.]+ [kMG]B"), "the JVM's memory is on node 0: " + node0);
        assertEquals("0 bytes", node1.get("resident"), "this kernel has no node 1: " + node1);
        assertEquals("false", node0.get("groupNode"), node0.toString());
        assertEquals("true", node1.get("groupNode"), node1.toString());

        // The kernel samples no access under the default preferred policy:
        // each AccessLocality event says why, as the log's line at exit
        // does, and no thread has a ThreadAccess event.
        String prefix = "[info][numapin] access: no access locality for this JVM: ";
        String why = r.logLines().stream().filter(l -> l.contains(prefix))
                .map(l -> l.substring(l.indexOf(prefix) + prefix.length())).findFirst().orElse(null);
        assertTrue(why != null, "the log says why the kernel samples no access\n" + ctx);
        List<Map<String, String>> access = events(recording, "numapin.AccessLocality");
        assertTrue(!access.isEmpty(), "numapin.AccessLocality events\n" + summary);
        for (Map<String, String> e : access) {
            assertEquals("false", e.get("sampled"), e.toString());
            assertEquals("1", str(e, "nodes"), e.toString());
            assertEquals(why, str(e, "unsampled"), e.toString());
            assertEquals("0", e.get("accessSamples"), e.toString());
        }
        assertEquals(List.of(), events(recording, "numapin.ThreadAccess"), "nothing sampled, no thread's events");
        assertTrue(summary.matches("(?s).*\\n numapin\\.ThreadAccess\\s+0\\s.*"),
                "jfr summary lists numapin.ThreadAccess, with no event:\n" + summary);
    }

    /**
     * Threads placed in the moment before the JVM exits, while their events
     * still wait on numapin's queue, are in the recording written at exit:
     * the end of its last chunk commits them.
     */
    @Test
    void placementsJustBeforeExitAreInTheRecording() throws IOException {
        Path recording = dir.resolve("exit.jfr");
        Launch.Running run = Launch.program("Phases", dir.toString(), "1", "2").fakeTwoNodes()
                .options("group=1,groups=2,mem=none,log=debug")
                .jvmArg("-XX:StartFlightRecording:filename=" + recording + ",settings=" + settings())
                .start();
        try {
            run.awaitLine(Pattern.compile("phase-ready 1 .*"));
            run.awaitLine(Pattern.compile(".*\\[numapin\\] JFR: recordings \\S+ run: .*"));
            // Pool 2 is placed and the JVM exits at once after.
            Files.createFile(dir.resolve("go-2"));
            Files.createFile(dir.resolve("go-1"));
        } finally {
            if (!Files.exists(dir.resolve("go-1"))) {
                run.kill();
            }
        }
        ChildResult r = run.finish().assertExit(0);
        assertEquals(3, placedByTid(r).size(), "placed lines\n" + r.describe());
        assertPlacements(recording, r, List.of(), List.of("ForkJoinPool-2-"), List.of("ForkJoinPool-1-"));
    }

    /** jcmd, on this JDK, against a running child: exit status 0. */
    static String jcmd(Launch.Running run, String... args) {
        List<String> cmd = new ArrayList<>(List.of(Build.jdkTool("jcmd"), String.valueOf(run.pid())));
        cmd.addAll(List.of(args));
        String[] r = Launch.tool(cmd.toArray(new String[0]));
        assertEquals("0", r[0], String.join(" ", cmd) + ":\n" + r[1]);
        return r[1];
    }

    /** JFR.start with jcmd; waits until numapin has told the recording the placements made before. */
    static void startRecording(Launch.Running run, String name, Path file, int earlier) {
        jcmd(run, "JFR.start", "name=" + name, "filename=" + file);
        run.awaitLine(Pattern.compile(".*\\[numapin\\] JFR: recordings \\S+ run: told the plan, the advice and "
                + earlier + " placements made before"));
    }

    @Test
    void recordingsStartedAndStoppedWithJcmdHoldThePlacementsOfTheirTime() throws IOException {
        Path first = dir.resolve("first.jfr");
        Path second = dir.resolve("second.jfr");
        Launch.Running run = Launch.program("Phases", dir.toString(), "2", "2", "2", "2").fakeTwoNodes()
                .options("group=1,groups=2,mem=none,log=debug").start();
        try {
            // Pool 1 placed; a recording starts: it is told pool 1 at once.
            run.awaitLine(Pattern.compile("phase-ready 1 .*"));
            startRecording(run, "first", first, 2);
            Files.createFile(dir.resolve("go-1"));
            // Pool 2 placed while it runs; then it stops.
            run.awaitLine(Pattern.compile("phase-ready 2 .*"));
            jcmd(run, "JFR.stop", "name=first");
            run.awaitLine(Pattern.compile(".*\\[numapin\\] JFR: no recording runs: numapin's events stop"));
            Files.createFile(dir.resolve("go-2"));
            // Pool 3 placed with no recording; a second one starts and is told pools 1 to 3.
            run.awaitLine(Pattern.compile("phase-ready 3 .*"));
            startRecording(run, "second", second, 6);
            Files.createFile(dir.resolve("go-3"));
            run.awaitLine(Pattern.compile("phase-ready 4 .*"));
            jcmd(run, "JFR.stop", "name=second");
            Files.createFile(dir.resolve("go-4"));
        } finally {
            if (!Files.exists(dir.resolve("go-4"))) {
                run.kill();
            }
        }
        ChildResult r = run.finish().assertExit(0);
        assertEquals(List.of(), r.failureWarnings(), r.describe());
        assertEquals(8, placedByTid(r).size(), "placed lines\n" + r.describe());
        for (Map<String, String> e : assertPlacements(first, r, List.of("ForkJoinPool-1-"), List.of("ForkJoinPool-2-"),
                List.of())) {
            assertEquals("none", str(e, "memoryPolicy"), e.toString());
            assertEquals("true", e.get("verified"), e.toString());
        }
        assertPlacements(second, r, List.of("ForkJoinPool-1-", "ForkJoinPool-2-", "ForkJoinPool-3-"),
                List.of("ForkJoinPool-4-"), List.of());
        assertEquals(1, events(first, "numapin.Plan").size(), "one numapin.Plan a recording");
        assertEquals(1, events(second, "numapin.Plan").size(), "one numapin.Plan a recording");
        assertEquals(advice(r).size(), events(second, "numapin.Advice").size(), "each advice line once");
    }

    @Test
    void jfrOffEmitsNothing() throws IOException {
        Path recording = dir.resolve("off.jfr");
        ChildResult r = Launch.program("Workers", "2").fakeTwoNodes().options("groups=2,jfr=off,log=debug")
                .jvmArg("-XX:StartFlightRecording:filename=" + recording + ",settings=" + settings())
                .run().assertExit(0);
        assertEquals(2, placedByTid(r).size(), r.describe());
        assertEquals(List.of(), r.logLines().stream().filter(l -> l.contains("] JFR: ")).collect(Collectors.toList()),
                r.describe());
        String summary = jfr("summary", recording.toString());
        assertTrue(!summary.contains("numapin."), "jfr=off: no numapin event type in the recording:\n" + summary);
    }

    /**
     * A JVM that ends within its first second with no recording started
     * at launch (java -version, a build tool's fork) never has jdk.jfr
     * loaded for numapin's sake: numapin's JFR thread waits that long
     * before it looks. A JVM that lives longer is told nothing here.
     */
    @Test
    void aShortJvmWithoutARecordingLoadsNoJfrClass() throws IOException {
        Path classes = dir.resolve("classes.log");
        ChildResult r = Launch.program("Workers", "2").fakeTwoNodes().options("groups=2,log=debug")
                .jvmArg("-Xlog:class+load=info:file=" + classes).run().assertExit(0);
        String ctx = r.describe();
        assertEquals(2, placedByTid(r).size(), ctx);
        String summary = r.logLines().stream().filter(l -> l.contains("[numapin] summary ")).findFirst().orElseThrow();
        double uptime = Double.parseDouble(summary.substring(1, summary.indexOf("s]")));
        assumeTrue(uptime < 1.0, "the JVM lived " + uptime + " s, past numapin's first look for recordings");
        List<String> jfrClasses = Files.readAllLines(classes).stream().filter(l -> l.contains(" jdk.jfr."))
                .collect(Collectors.toList());
        assertEquals(List.of(), jfrClasses, "jdk.jfr classes loaded in a JVM of " + uptime + " s\n" + ctx);
        assertEquals(List.of(), r.logLines().stream().filter(l -> l.contains("] JFR: ")).collect(Collectors.toList()),
                ctx);
    }

    /** A runtime of java.base alone (jlink): no jdk.jfr, and numapin places as ever. */
    @Test
    void aJavaBaseOnlyRuntimeRunsAndPlaces() throws IOException {
        Path image = dir.resolve("java.base-only");
        String[] link = Launch.tool(Build.jdkTool("jlink"), "--add-modules", "java.base", "--output",
                image.toString());
        assertEquals("0", link[0], "jlink:\n" + link[1]);
        Path hold = dir.resolve("hold");
        Launch.Running run = Launch.command(image.resolve("bin/java").toString(),
                "-agentpath:" + Build.agent() + "=groups=2,log=debug", "-XX:+UseSerialGC", "-Xmx64m", "-cp",
                Build.childClassPath(), "numapin.child.Workers", "2", hold.toString()).fakeTwoNodes().start();
        try {
            // numapin's JFR thread first looks a second into the JVM's life.
            run.awaitLine(Pattern.compile(".*\\[numapin\\] JFR: .*"));
        } finally {
            Files.createFile(hold);
        }
        ChildResult r = run.finish().assertExit(0);
        String ctx = r.describe();
        assertEquals(2, placedByTid(r).size(), ctx);
        for (Placed p : placedByTid(r).values()) {
            assertEquals("0", p.cpus(), p.line());
        }
        List<String> jfr = r.logLines().stream().filter(l -> l.contains("] JFR: ")).collect(Collectors.toList());
        assertEquals(1, jfr.size(), ctx);
        assertTrue(jfr.get(0).contains("[debug][numapin] JFR: this Java runtime has no jdk.jfr module"), jfr.get(0));
        assertEquals(List.of(), r.failureWarnings(), ctx);
    }
}
