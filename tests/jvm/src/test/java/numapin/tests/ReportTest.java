package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import numapin.tests.ChildResult.Placed;

/**
 * The placement report (report=FILE): JSON that jq reads, written at exit
 * with mode 0600, "%p" in its name the JVM's pid, and the same facts as
 * the log: each placed and skipped thread with its tid, CPUs and memory
 * policy, and the summary's totals.
 */
@ExtendWith(RunLogs.class)
class ReportTest {
    @TempDir
    Path dir;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
    }

    /** jq's output for a filter on a file; jq's exit status must be 0. */
    static List<String> jq(String filter, Path file) {
        ChildResult r = Launch.command("jq", "-r", filter, file.toString()).noPreload().run();
        assertEquals(0, r.exitCode, "jq " + filter + " " + file + "\n" + r.describe());
        return ChildResult.lines(r.stdout.isEmpty() ? "\n" : r.stdout).stream().filter(l -> !l.isEmpty())
                .collect(Collectors.toList());
    }

    static Path onlyReport(Path dir, String ctx) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            List<Path> r = s.filter(f -> f.getFileName().toString().startsWith("report-")).toList();
            assertEquals(1, r.size(), "report files in " + dir + ": " + r + "\n" + ctx);
            return r.get(0);
        }
    }

    @Test
    void reportAgreesWithTheLogAndTheSummary() throws Exception {
        ChildResult r = Launch.probe(PlacementTest.MIX).fakeTwoNodes()
                .options("group=0,groups=2,log=debug,report=" + dir + "/report-%p.json").run().assertExit(0);
        String ctx = r.describe();
        Path file = onlyReport(dir, ctx);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)),
                "report file mode\n" + ctx);
        // "%p" is the JVM's pid, which the report states.
        String pid = jq(".pid", file).get(0);
        assertEquals("report-" + pid + ".json", file.getFileName().toString(), ctx);
        assertEquals(List.of("4"), jq(".numapin", file), "format version\n" + ctx);
        // The sampled accesses: the summary's access_local=, or, unsampled, the
        // log's reason.
        String access = Lines.summary(r).get("access_local");
        if (access.equals("unsampled")) {
            String prefix = "[info][numapin] access: no access locality for this JVM: ";
            String why = r.logLines().stream().filter(l -> l.contains(prefix))
                    .map(l -> l.substring(l.indexOf(prefix) + prefix.length())).findFirst().orElse("(no line)");
            assertEquals(List.of("false", why), jq(".access.sampled, .access.unsampled", file), ctx);
        } else {
            assertEquals(List.of("true", access.replace("%", "")), jq(".access.sampled, .access.access_local", file),
                    ctx);
        }
        // The hugetlb pages by size and node: the summary's mem_huge=, as an object.
        String huge = Lines.summary(r).get("mem_huge");
        assertEquals(List.of(huge.equals("none") ? "0" : String.valueOf(huge.split(",").length)),
                jq("[.memory.huge_pages[] | keys[]] | length", file), "huge pages: " + huge + "\n" + ctx);
        assertEquals(List.of("0 2 0 0-0"), jq("\"\\(.plan.group) \\(.plan.groups) \\(.plan.node) "
                + "\\(.plan.cpus)-\\(.plan.cpus)\"", file), "plan: group 0 of 2 is node 0, CPU 0\n" + ctx);
        assertTrue(r.logLines().stream().anyMatch(l -> l.endsWith("[info][numapin] report " + file)),
                "no 'report FILE' line\n" + ctx);

        // Each thread of the report, by tid: outcome, name, cpus, mem.
        Map<Long, String> report = new HashMap<>();
        for (String l : jq(".threads[] | \"\\(.tid)\\t\\(.outcome)\\t\\(.name)\\t\\(.cpus)\\t\\(.mem)"
                + "\\t\\(.how)\\t\\(.verified)\"", file)) {
            String[] f = l.split("\t", 2);
            assertEquals(null, report.put(Long.parseLong(f[0]), f[1]), "two entries for tid " + f[0] + "\n" + ctx);
        }
        List<Placed> placed = ChildResult.placed(r.logLines(), "placed");
        assertTrue(placed.size() >= 4, "placed lines\n" + ctx);
        for (Placed p : placed) {
            assertEquals("placed\t" + p.name() + "\t" + p.cpus() + "\t" + p.mem() + "\tstart\ttrue",
                    report.get(p.tid()), "report entry for " + p.line() + "\n" + ctx);
        }
        Map<String, Long> skipped = ChildResult.skipped(r.logLines());
        assertTrue(!skipped.isEmpty(), "skipped lines\n" + ctx);
        for (Map.Entry<String, Long> s : skipped.entrySet()) {
            assertEquals("skipped\t" + s.getKey() + "\tnull\tnull\tstart\tnull", report.get(s.getValue()),
                    "report entry for skipped \"" + s.getKey() + "\"\n" + ctx);
        }
        // The totals are the summary's.
        Map<String, String> summary = Lines.summary(r);
        for (String k : List.of("placed", "skipped", "failed", "mem_failed")) {
            assertEquals(List.of(summary.get(k)), jq(".totals." + k, file), "totals." + k + " vs. the summary\n"
                    + ctx);
        }
        assertEquals(List.of(String.valueOf(placed.size() + skipped.size())), jq(".threads | length", file),
                "one entry per placed or skipped line\n" + ctx);
        // The advice is the log's advice lines, in their order.
        List<String> advice = new ArrayList<>();
        for (String l : r.logLines()) {
            java.util.regex.Matcher m = java.util.regex.Pattern
                    .compile("^\\[[^]]*\\]\\[(info|warning)\\]\\[numapin\\] advice: (.*)$").matcher(l);
            if (m.matches())
                advice.add(m.group(1) + " " + m.group(2));
        }
        assertTrue(!advice.isEmpty(), "this run gives advice (2 groups on a 1-CPU node)\n" + ctx);
        assertEquals(advice, jq(".advice[] | \"\\(.level) \\(.text)\"", file), "advice vs. the log\n" + ctx);
        assertEquals(List.of("0"), jq(".advice_dropped", file), ctx);
    }

    /**
     * A thread joined before the JVM exits is reported ended, one still
     * running (the JDK's Common-Cleaner, placed here too) live: with
     * cpus=node, where an end is seen as the OS thread exits (or, if it has
     * not yet, from the JVM's list of threads at exit), as with cpus=core,
     * where ThreadEnd says it.
     */
    @Test
    void aJoinedThreadIsReportedEnded() throws Exception {
        for (String cpus : List.of("node", "core")) {
            Path file = dir.resolve("report-" + cpus + ".json");
            ChildResult r = Launch.probe("plain:Gone-1", "end:Gone-1").fakeTwoNodes()
                    .options("group=0,groups=1,cpus=" + cpus + ",threads=Gone-*|Common-Cleaner,report=" + file)
                    .run().assertExit(0);
            assertEquals(List.of("Common-Cleaner true", "Gone-1 false"),
                    jq("[.threads[] | select(.name == \"Gone-1\" or .name == \"Common-Cleaner\") "
                            + "| \"\\(.name) \\(.live)\"] | sort | .[]", file),
                    "cpus=" + cpus + "\n" + r.describe());
            assertEquals(List.of("1"), jq(".totals.live", file), "cpus=" + cpus + "\n" + r.describe());
        }
    }

    @Test
    void aReportThatCannotBeWrittenIsOneWarningOrUnderStrictNoStart() throws Exception {
        String missing = dir.resolve("no-such-dir").resolve("report.json").toString();
        ChildResult r = Launch.probe("common").fakeTwoNodes().options("report=" + missing).run().assertExit(0);
        List<String> w = r.failureWarnings();
        assertEquals(1, w.size(), "warnings\n" + r.describe());
        assertTrue(w.get(0).contains("cannot write report file '" + missing + "': No such file or directory (ENOENT)"
                + "; no report will be written"), w.get(0));
        assertTrue(!r.probes().isEmpty(), "the JVM went on\n" + r.describe());

        ChildResult s = Launch.version().fakeTwoNodes().options("strict,report=" + missing).run();
        assertNotEquals(0, s.exitCode, "exit status under strict\n" + s.describe());
        List<String> errors = s.stderrLogLines();
        assertEquals(1, errors.size(), "error lines\n" + s.describe());
        assertTrue(errors.get(0).contains("[error][numapin] cannot write report file '" + missing + "'"), errors.get(0));
    }
}
