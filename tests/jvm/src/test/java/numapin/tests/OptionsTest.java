package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The options the agent accepts: its help documents each of them, a valid
 * value of each is taken and applied, and no options at all is fine. (The
 * refused ones: {@link BadOptionsTest}.) Which options there are comes from
 * the agent itself ({@link AgentOptions}), so that a new one cannot be left
 * out here.
 */
@ExtendWith(RunLogs.class)
class OptionsTest {
    /** HWLOC_SYNTHETIC: one node with an L3 (for domain=l3) and two cores, CPUs 0 and 1. */
    static final String ONE_NODE_WITH_L3 = "pack:1 numa:1 l3:1 core:2 pu:1";

    @Test
    void helpDocumentsEveryOptionTheAgentAcceptsAndTheJvmGoesOn() {
        ChildResult r = Launch.version().options("help").run().assertExit(0);
        assertEquals(AgentOptions.accepted(), AgentOptions.documented(r.stdout),
                "the options help documents vs. those the error for an unknown option lists\n" + r.describe());
        assertTrue(r.stdout.startsWith("numapin: "), "help is not on stdout\n" + r.describe());
        assertEquals(List.of(), r.logLines(), "help, then the agent does nothing\n" + r.describe());
        assertEquals(List.of(), r.stderrLogLines(), r.describe());
        assertTrue(r.stderr.contains("version \""), "java -version did not run after help\n" + r.describe());
        assertEquals(List.of(), r.hsErrFiles(), r.describe());
    }

    @Test
    void helpWithAProgramRunsTheProgram() {
        ChildResult r = Launch.probe("default:2").fakeTwoNodes().options("help").run().assertExit(0);
        assertTrue(r.stdout.contains("probe-done "), "the program did not run to its end after help\n"
                + r.describe());
    }

    /**
     * Valid values of each option: those its help names literally (cpus=node|core|pu)
     * and these, for the placeholders. "" is the bare flag ("dryrun");
     * FILE a file of the test's. help=true has tests of its own.
     */
    static final Map<String, List<String>> VALID = Map.ofEntries(
            Map.entry("group", List.of("0")),
            Map.entry("groups", List.of("1")),
            Map.entry("threads", List.of("X-*|Y?", "ForkJoinPool-*-worker-*")),
            Map.entry("scope", List.of()),
            Map.entry("rescan", List.of("0", "100")),
            Map.entry("drift", List.of()),
            Map.entry("lockdir", List.of("DIR")),
            Map.entry("domain", List.of()),
            Map.entry("cpus", List.of()),
            Map.entry("cpukind", List.of("0")),
            Map.entry("mem", List.of("bind:0", "interleave:0")),
            Map.entry("log", List.of("off", "error", "warning", "info", "debug", "trace", "debug:FILE")),
            Map.entry("logsync", List.of("", "true", "false", "yes", "no")),
            Map.entry("report", List.of("FILE")),
            Map.entry("jfr", List.of()),
            Map.entry("topocache", List.of("DIR")),
            Map.entry("dryrun", List.of("", "true", "false", "yes", "no")),
            Map.entry("strict", List.of("", "true", "false", "yes", "no")),
            Map.entry("help", List.of("false")));

    /** VALID's values of an option and those its help names, each once. */
    static List<String> validValues(String key) {
        List<String> v = new ArrayList<>(VALID.get(key));
        for (String h : AgentOptions.literalValues(key)) {
            if (!v.contains(h)) {
                v.add(h);
            }
        }
        return v;
    }

    /**
     * Every option the agent accepts, each with every value of
     * {@link #validValues}: run i gives each option its i-th value (round
     * robin), so a few JVMs try them all. Each run starts and ends cleanly,
     * and what it asked for is what numapin did: the plan in its report
     * (group, groups, threads, scope, domain, cpus, cpukind, mem, dryrun),
     * the log at the level and in the place asked (strict in its plan line),
     * the rescan thread only when rescan is not 0, no help text.
     */
    @Test
    void everyOptionWithAValidValueIsAccepted() throws IOException, InterruptedException {
        List<String> keys = AgentOptions.accepted();
        assertEquals(new TreeSet<>(keys), new TreeSet<>(VALID.keySet()),
                "VALID gives a valid value for every option the agent accepts, and no other");
        int runs = keys.stream().mapToInt(k -> validValues(k).size()).max().getAsInt();
        for (int i = 0; i < runs; i++) {
            Path dir = RunLogs.newRunDir();
            Path xdg = TestFiles.mkdirs(dir.resolve("xdg"), true);
            Path logFile = dir.resolve("numapin.log");
            Map<String, String> asked = new LinkedHashMap<>();
            List<String> parts = new ArrayList<>();
            for (String k : keys) {
                List<String> values = validValues(k);
                String v = values.get(i % values.size()).replace("FILE", k.equals("log") ? logFile.toString()
                        : dir.resolve("report-%p.json").toString()).replace("DIR", dir.resolve("locks").toString());
                asked.put(k, v);
                parts.add(v.isEmpty() ? k : k + "=" + v);
            }
            String options = String.join(",", parts);
            ChildResult r = Launch.probe("default:2").options(options).env("HWLOC_SYNTHETIC", ONE_NODE_WITH_L3)
                    .env("HWLOC_THISSYSTEM", "1").env("XDG_RUNTIME_DIR", xdg.toString()).run().assertRan();
            String ctx = "options " + options + "\n" + r.describe();
            assertEquals(List.of(), r.levelLines("error"), ctx);
            assertEquals(List.of(), r.failureWarnings(), ctx);
            assertFalse(r.stdout.contains("usage: -agentpath:"), "help=false printed the help\n" + ctx);

            // The plan, as the report gives it.
            Path report;
            try (var s = Files.list(dir)) {
                report = s.filter(p -> p.getFileName().toString().startsWith("report-")).findFirst().orElse(null);
            }
            assertTrue(report != null, "no report in " + dir + "\n" + ctx);
            String plan = ReportTest.jq(".plan | \"\\(.group) \\(.groups) \\(.threads) \\(.scope) \\(.domain) "
                    + "\\(.cpus_mode) \\(.cpukind) \\(.mem) \\(.dryrun)\"", report).get(0);
            String mem = asked.get("mem");
            String want = String.join(" ", asked.get("group").equals("auto") ? "0" : asked.get("group"),
                    asked.get("groups"), asked.get("threads"), asked.get("scope"), asked.get("domain"),
                    asked.get("cpus"), asked.get("cpukind"),
                    mem.contains(":") || mem.equals("local") || mem.equals("none") ? mem : mem + ":0",
                    String.valueOf(!asked.get("dryrun").equals("false") && !asked.get("dryrun").equals("no")));
            assertEquals(want, plan, "the report's plan\n" + ctx);
            List<String> threads = ReportTest.jq(".threads[].name", report);
            // The rescan thread attaches to the JVM once its first period
            // has passed, and never under rescan=0.
            if (asked.get("rescan").equals("0")) {
                assertFalse(threads.contains("numapin rescan"),
                        "a rescan thread under rescan=0: " + threads + "\n" + ctx);
            }

            // The log: at the level asked, where it was asked.
            String log = asked.get("log");
            String level = log.contains(":") ? log.substring(0, log.indexOf(':')) : log;
            List<String> lines = log.contains(":") ? ChildResult.numapinLines(Files.readString(logFile)) : r.logLines();
            if (log.contains(":")) {
                assertEquals(List.of(), r.logLines(), "log lines on stdout under log=" + log + "\n" + ctx);
            }
            List<String> order = List.of("off", "error", "warning", "info", "debug", "trace");
            int at = order.indexOf(level);
            assertTrue(at >= 0, "a level of VALID that numapin's order does not know: " + level);
            for (String l : lines) {
                assertTrue(ChildResult.LOG_LINE.matcher(l).matches(), "log line of the wrong shape: " + l);
                String lv = l.substring(l.indexOf("][") + 2, l.indexOf("][numapin]"));
                assertTrue(order.indexOf(lv) <= at, "a " + lv + " line under log=" + log + ": " + l + "\n" + ctx);
            }
            assertEquals(at >= order.indexOf("info"),
                    lines.stream().anyMatch(l -> l.contains("][info][numapin] plan ")),
                    "a plan line under log=" + log + "\n" + ctx);
            assertEquals(at >= order.indexOf("debug"), lines.stream().anyMatch(l -> l.contains("][debug][numapin] ")),
                    "debug lines under log=" + log + "\n" + ctx);
            for (String l : lines) {
                if (l.contains("][info][numapin] plan ")) {
                    assertEquals(asked.get("strict").equals("false") || asked.get("strict").equals("no") ? "no" : "yes", Lines.fields(l).get("strict"),
                            "strict in the plan line: " + l + "\n" + ctx);
                }
            }
        }
    }

    @Test
    void noOptionsAtAllIsFine() {
        ChildResult r = Launch.version().options(null).run().assertExit(0);
        assertEquals(List.of(), r.levelLines("error"), r.describe());
        assertEquals(List.of(), r.levelLines("warning"), r.describe());
    }
}
