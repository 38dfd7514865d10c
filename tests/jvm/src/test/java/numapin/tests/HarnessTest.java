package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import numapin.tests.ChildResult.Cpus;
import numapin.tests.ChildResult.Placed;

/**
 * `numapin groups` running TierBench, and the recipes of docs/harness/ that
 * can run on this machine: each recipe's tested snippet is read from its
 * document (the fenced block after a {@code <!-- test: NAME -->} line) and
 * run, so the documents cannot drift from what is tested.
 *
 * <p>Processes are started here with ProcessBuilder (build/numapin, shell
 * snippets, java with TierBench's classpath); their command lines, stdout
 * and stderr are kept by {@link RunLogs} when a test fails. Nothing here
 * asserts a duration: the machine is shared.
 */
@ExtendWith(RunLogs.class)
class HarnessTest {
    static final String HDRHISTOGRAM = "/usr/share/java/hdrhistogram.jar";
    static final String TIERBENCH = "numapin.tierbench.TierBench";
    /** TierBench's tier threads: Tier1-worker-1 and so on. */
    static final Pattern TIER_THREAD = Pattern.compile("Tier[123]-worker-\\d+");
    /** A brief TierBench run, as in the harness brief. */
    static final List<String> BRIEF = List.of("--duration-s", "3", "--steps", "3", "--working-set-mb", "16",
            "--calibrate-ms", "500");
    /** Briefer still, for runs that only need the tier threads to start and work. */
    static final List<String> SHORT = List.of("--duration-s", "1", "--steps", "1", "--working-set-mb", "16",
            "--calibrate-ms", "300");

    // ---- where things are ----

    /** build/ (or the B= build directory): libnumapin.so, numapin, tierbench/classes. */
    static Path buildDir() {
        return Path.of(ChildJvm.agent()).toAbsolutePath().getParent();
    }

    static Path numapin() {
        return buildDir().resolve("numapin");
    }

    static String tierBenchClassPath() {
        Path classes = buildDir().resolve("tierbench/classes");
        assertTrue(Files.isRegularFile(classes.resolve("numapin/tierbench/TierBench.class")),
                "TierBench is not built in " + classes + " (make tierbench; make test-java does it)");
        assertTrue(Files.isRegularFile(Path.of(HDRHISTOGRAM)), HDRHISTOGRAM + " is missing (libhdrhistogram-java)");
        return classes + File.pathSeparator + HDRHISTOGRAM;
    }

    /** The repository: the first directory above the build directory that has docs/harness. */
    static Path repoRoot() {
        for (Path p = buildDir(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("docs/harness")) && Files.isRegularFile(p.resolve("tests/jvm/run.sh"))) {
                return p;
            }
        }
        Path cwd = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        assertTrue(Files.isDirectory(cwd.resolve("docs/harness")), "cannot find the repository above "
                + buildDir() + " or at " + cwd);
        return cwd;
    }

    /** java, TierBench, and these arguments. */
    static List<String> tierBench(List<String> jvmArgs, List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ChildJvm.java());
        cmd.addAll(jvmArgs);
        cmd.addAll(List.of("-cp", tierBenchClassPath(), TIERBENCH));
        cmd.addAll(args);
        return cmd;
    }

    // ---- processes ----

    /** One process with a clean environment, a time limit and logs kept by RunLogs. */
    static final class Proc {
        static final long TIME_LIMIT_S = Long.getLong("numapin.child.timeout", 120);
        final List<String> cmd;
        final Map<String, String> env = new LinkedHashMap<>();
        Path cwd;

        Proc(List<String> cmd) {
            this.cmd = new ArrayList<>(cmd);
            // Inherit no fake topology, JVM option or group from the caller.
            for (String k : List.of("HWLOC_SYNTHETIC", "HWLOC_THISSYSTEM", "HWLOC_XMLFILE", "JAVA_TOOL_OPTIONS",
                    "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "NUMAPIN_GROUP", "NUMAPIN_GROUPS")) {
                env.put(k, null);
            }
        }

        static Proc of(List<String> cmd) {
            return new Proc(cmd);
        }

        static Proc of(String... cmd) {
            return new Proc(Arrays.asList(cmd));
        }

        /** sh -c SCRIPT. */
        static Proc sh(String script) {
            return new Proc(List.of("/bin/sh", "-c", script));
        }

        Proc env(String k, String v) {
            env.put(k, v);
            return this;
        }

        Proc cwd(Path dir) {
            this.cwd = dir;
            return this;
        }

        ChildResult run() {
            return Launch.spawn(cmd, env, cwd).finish(TIME_LIMIT_S);
        }
    }

    static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + p, e);
        }
    }

    static void write(Path p, String text, boolean executable) {
        try {
            Files.writeString(p, text, StandardCharsets.UTF_8);
            if (executable) {
                Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + p, e);
        }
    }

    static Path mkdirs(Path p) {
        try {
            return Files.createDirectories(p);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---- what TierBench printed ----

    /** TierBench's output: its result line, its placement block, and numapin's lines among them. */
    static final class Bench {
        final String text;
        final String context;
        final Map<String, Double> result = new LinkedHashMap<>();
        /** placement block: thread name -> the cpus it read itself. */
        final Map<String, String> placement = new TreeMap<>();
        final List<String> logLines;

        Bench(String text, String context) {
            this.text = text;
            this.context = context;
            List<String> lines = ChildResult.lines(text);
            String resultLine = null;
            boolean inPlacement = false;
            for (String l : lines) {
                if (l.startsWith("result ")) {
                    resultLine = l;
                }
                if (l.equals("placement:")) {
                    inPlacement = true;
                    continue;
                }
                if (inPlacement && l.startsWith("  ")) {
                    String[] f = l.trim().split("\\s+");
                    assertEquals(3, f.length, "placement line: " + l + "\n" + context);
                    assertTrue(f[1].startsWith("tid=") && f[2].startsWith("cpus="), "placement line: " + l
                            + "\n" + context);
                    placement.put(f[0], f[2].substring(5));
                    continue;
                }
                inPlacement = false;
            }
            assertNotNull(resultLine, "TierBench printed no result line\n" + context);
            for (String tok : resultLine.substring(7).trim().split(" ")) {
                int eq = tok.indexOf('=');
                assertTrue(eq > 0, "result field without '=': " + tok + " in " + resultLine + "\n" + context);
                try {
                    result.put(tok.substring(0, eq), Double.parseDouble(tok.substring(eq + 1)));
                } catch (NumberFormatException e) {
                    fail("result field " + tok + " is not a number: " + resultLine + "\n" + context);
                }
            }
            logLines = ChildResult.numapinLines(text);
        }

        /** Tier threads of the placement block (each ran at least one request). */
        Map<String, String> tierPlacement() {
            Map<String, String> r = new TreeMap<>();
            placement.forEach((k, v) -> {
                if (TIER_THREAD.matcher(k).matches()) {
                    r.put(k, v);
                }
            });
            return r;
        }

        /** numapin's "plan" line, as key=value fields. */
        Map<String, String> plan() {
            List<String> plans = logLines.stream().filter(l -> l.contains("][info][numapin] plan "))
                    .collect(Collectors.toList());
            assertEquals(1, plans.size(), "numapin plan lines\n" + context);
            Map<String, String> f = new LinkedHashMap<>();
            Matcher m = ChildResult.FIELD.matcher(plans.get(0));
            while (m.find()) {
                f.put(m.group(1), m.group(2));
            }
            return f;
        }

        List<Placed> placed(String verb) {
            List<Placed> r = ChildResult.placed(logLines, verb);
            assertEquals(ChildResult.placedLike(logLines, verb), r.size(), "unparsed '" + verb + "' lines\n"
                    + context);
            return r;
        }

        Set<String> placedNames(String verb) {
            return placed(verb).stream().map(Placed::name).collect(Collectors.toCollection(TreeSet::new));
        }

        /** The result line is whole and its SLA fields agree with each other. */
        void checkResult() {
            checkSla(result, context);
        }

        /**
         * Every tier thread that worked was placed by numapin on `cpus`, and
         * read back exactly those CPUs itself; numapin placed nothing else.
         */
        void checkTiersPlacedOn(String cpus) {
            Map<String, String> tiers = tierPlacement();
            assertEquals(Set.of("Tier1", "Tier2", "Tier3"), tiers.keySet().stream()
                    .map(n -> n.substring(0, 5)).collect(Collectors.toSet()),
                    "tier threads in the placement block\n" + context);
            tiers.forEach((name, got) -> assertEquals(Cpus.parse(cpus), Cpus.parse(got),
                    name + " read cpus=" + got + ", expected its group's " + cpus + "\n" + context));
            Map<String, Placed> byName = new TreeMap<>();
            for (Placed p : placed("placed")) {
                assertTrue(byName.put(p.name(), p) == null, "two placed lines for " + p.name() + "\n" + context);
                assertTrue(TIER_THREAD.matcher(p.name()).matches(), "numapin placed a thread that is not a tier"
                        + " thread: " + p.line() + "\n" + context);
                assertEquals(Cpus.parse(cpus), Cpus.parse(p.cpus()), "numapin's line: " + p.line() + "\n"
                        + context);
            }
            assertTrue(byName.keySet().containsAll(tiers.keySet()), "tier threads that worked " + tiers.keySet()
                    + " but numapin placed " + byName.keySet() + "\n" + context);
        }
    }

    static final String[] SLA = {"sla10", "sla25", "sla50", "sla75", "sla100"};

    /**
     * TierBench's result fields: all there, none negative, percentiles in
     * order, sla10 <= sla25 <= ... <= sla100 <= throughput, and sla_geomean
     * between the least and the greatest SLA throughput (and, when none is
     * 0, their geometric mean, within the rounding of the printed values).
     */
    static void checkSla(Map<String, Double> r, String context) {
        for (String k : List.of("throughput", "p50_ms", "p99_ms", "p999_ms", "sla10", "sla25", "sla50", "sla75",
                "sla100", "sla_geomean")) {
            assertTrue(r.containsKey(k), "result has no " + k + ": " + r + "\n" + context);
            assertTrue(r.get(k) >= 0 && !r.get(k).isNaN(), k + " = " + r.get(k) + "\n" + context);
        }
        String fields = "result " + r + "\n" + context;
        assertTrue(r.get("throughput") > 0, "throughput 0: " + fields);
        assertTrue(r.get("p50_ms") <= r.get("p99_ms") && r.get("p99_ms") <= r.get("p999_ms"),
                "p50 <= p99 <= p99.9: " + fields);
        double min = Double.MAX_VALUE;
        double max = 0;
        double logSum = 0;
        for (int i = 0; i < SLA.length; i++) {
            double v = r.get(SLA[i]);
            if (i > 0) {
                assertTrue(r.get(SLA[i - 1]) <= v, SLA[i - 1] + " <= " + SLA[i] + ": " + fields);
            }
            min = Math.min(min, v);
            max = Math.max(max, v);
            logSum += Math.log(Math.max(v, 1e-9));
        }
        assertTrue(r.get("sla100") <= r.get("throughput"), "sla100 <= throughput: " + fields);
        double geo = r.get("sla_geomean");
        assertTrue(min - 0.5 <= geo && geo <= max + 0.5, "min(sla) <= sla_geomean <= max(sla): " + fields);
        if (min > 0) {
            double expected = Math.exp(logSum / SLA.length);
            assertTrue(Math.abs(geo - expected) <= 1 + 1e-3 * expected, "sla_geomean " + geo
                    + " vs. the geometric mean of the printed SLA values " + expected + ": " + fields);
        }
    }

    // ---- the numapin groups table ----

    /** numapin groups' merged table: header keys, a row per group, the total row. */
    static final class Table {
        final List<String> keys = new ArrayList<>();
        final Map<Integer, Integer> exit = new TreeMap<>();
        final Map<Integer, Map<String, Double>> rows = new TreeMap<>();
        final Map<Integer, String> numapin = new TreeMap<>();
        Map<String, Double> total;
        String logs;

        Table(String stdout, String context) {
            List<String> lines = ChildResult.lines(stdout);
            assertFalse(lines.isEmpty(), "no table\n" + context);
            String[] head = lines.get(0).trim().split("\\s+");
            assertTrue(head.length >= 3 && head[0].equals("group") && head[1].equals("exit")
                    && head[head.length - 1].equals("numapin"), "table header: " + lines.get(0) + "\n" + context);
            keys.addAll(Arrays.asList(head).subList(2, head.length - 1));
            for (String l : lines.subList(1, lines.size())) {
                String[] f = l.trim().split("\\s+");
                if (l.startsWith("logs: ")) {
                    logs = l.substring(6);
                } else if (f[0].equals("total")) {
                    assertTrue(f.length >= 1 + keys.size(), "total row: " + l + "\n" + context);
                    total = values(f, 1, l, context);
                } else {
                    assertTrue(f[0].matches("\\d+") && f[1].matches("\\d+") && f.length >= 2 + keys.size(),
                            "group row: " + l + "\n" + context);
                    int g = Integer.parseInt(f[0]);
                    assertTrue(exit.put(g, Integer.parseInt(f[1])) == null, "two rows for group " + g + "\n"
                            + context);
                    rows.put(g, values(f, 2, l, context));
                    numapin.put(g, String.join(" ", Arrays.asList(f).subList(2 + keys.size(), f.length)));
                }
            }
        }

        private Map<String, Double> values(String[] f, int from, String line, String context) {
            Map<String, Double> v = new LinkedHashMap<>();
            for (int k = 0; k < keys.size(); k++) {
                String s = f[from + k];
                if (!s.equals("-")) {
                    try {
                        v.put(keys.get(k), Double.parseDouble(s));
                    } catch (NumberFormatException e) {
                        fail("not a number in column " + keys.get(k) + ": " + line + "\n" + context);
                    }
                }
            }
            return v;
        }
    }

    static String describeGroups(ChildResult r, Path logs, int groups) {
        StringBuilder sb = new StringBuilder(r.describe());
        for (int g = 0; g < groups; g++) {
            Path log = logs.resolve("group-" + g + ".log");
            sb.append("\n--- ").append(log).append(" ---\n")
                    .append(Files.exists(log) ? read(log) : "(missing)\n");
        }
        return sb.toString();
    }

    // ---- documents ----

    /**
     * The fenced block that follows the line {@code <!-- test: NAME -->} in
     * docs/harness/FILE, without the indentation of its fence (blocks in
     * list items are indented).
     */
    static String docBlock(String file, String name) {
        Path p = repoRoot().resolve("docs/harness").resolve(file);
        List<String> lines = ChildResult.lines(read(p));
        String marker = "<!-- test: " + name + " -->";
        int at = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).trim().equals(marker)) {
                assertTrue(at < 0, p + " has two lines " + marker);
                at = i;
            }
        }
        assertTrue(at >= 0, p + " has no line " + marker);
        int open = at + 1;
        while (open < lines.size() && lines.get(open).isBlank()) {
            open++;
        }
        assertTrue(open < lines.size() && lines.get(open).trim().startsWith("```"), "no fenced block after "
                + marker + " in " + p);
        String fence = lines.get(open);
        String indent = fence.substring(0, fence.indexOf('`'));
        StringBuilder sb = new StringBuilder();
        for (int i = open + 1; i < lines.size(); i++) {
            String l = lines.get(i);
            if (l.trim().startsWith("```")) {
                return sb.toString();
            }
            assertTrue(l.isBlank() || l.startsWith(indent), "line less indented than its fence in " + p + ": " + l);
            sb.append(l.isBlank() ? "" : l.substring(indent.length())).append('\n');
        }
        fail("unterminated block after " + marker + " in " + p);
        return null;
    }

    /** The documents' install paths, made this build's. */
    static String localPaths(String text) {
        return text.replace("/opt/numapin/", buildDir() + "/");
    }

    static boolean oneNodeTwoCpus() {
        return Machine.isOneNodeTwoCpus();
    }

    // =====================================================================
    // numapin groups
    // =====================================================================

    /**
     * Two groups of TierBench: both exit 0, the table has a row per group
     * and a total row (sums; worst group for *_ms), each group's tier
     * threads ran on its group's CPUs (CPU 0 and CPU 1 on this machine),
     * and {group} in the command's arguments reached each JVM as its group.
     */
    @Test
    void twoGroupsOfTierBench() {
        Path logs = RunLogs.newRunDir().resolve("logs");
        List<String> cmd = new ArrayList<>(List.of(numapin().toString(), "groups", "--groups", "2",
                "--options", "threads=Tier*-worker-*", "--logs", logs.toString(), "--"));
        cmd.addAll(tierBench(List.of("-Dnumapin.harness.group={group}", "-Dnumapin.harness.log=run-{group}.log",
                "-XshowSettings:properties"), BRIEF));
        ChildResult r = Proc.of(cmd).run();
        String ctx = describeGroups(r, logs, 2);
        r.assertExit(0);
        assertEquals("", r.stderr, "numapin groups wrote to stderr\n" + ctx);

        Table t = new Table(r.stdout, ctx);
        assertEquals(Set.of(0, 1), t.rows.keySet(), "group rows\n" + ctx);
        assertEquals(Map.of(0, 0, 1, 0), t.exit, "exit column\n" + ctx);
        assertNotNull(t.total, "no total row\n" + ctx);
        assertEquals(logs + "/group-N.log", t.logs, "logs line\n" + ctx);
        assertTrue(t.keys.containsAll(List.of("throughput", "p99_ms", "sla_geomean")), "columns " + t.keys + "\n"
                + ctx);
        for (String k : t.keys) {
            double a = t.rows.get(0).get(k);
            double b = t.rows.get(1).get(k);
            double want = k.endsWith("_ms") ? Math.max(a, b) : a + b;
            assertEquals(want, t.total.get(k), 0.011, "total " + k + " (groups " + a + ", " + b + ")\n" + ctx);
        }

        Set<Integer> seen = new TreeSet<>();
        Set<Integer> allCpus = new TreeSet<>();
        for (int g = 0; g < 2; g++) {
            String log = read(logs.resolve("group-" + g + ".log"));
            Bench b = new Bench(log, "group " + g + "\n" + ctx);
            b.checkResult();
            // The table holds this group's result line, to its 2 decimals.
            for (String k : t.keys) {
                assertEquals(b.result.get(k), t.rows.get(g).get(k), 0.006, "group " + g + " " + k + "\n" + ctx);
            }
            Map<String, String> plan = b.plan();
            assertEquals(String.valueOf(g), plan.get("group"), "plan line of group " + g + "\n" + ctx);
            assertEquals("2", plan.get("groups"), "plan line of group " + g + "\n" + ctx);
            String cpus = plan.get("cpus");
            if (oneNodeTwoCpus()) {
                assertEquals(String.valueOf(g), cpus, "group " + g + "'s CPUs on this 1-node, 2-CPU machine\n"
                        + ctx);
            }
            TreeSet<Integer> mine = Cpus.parse(cpus);
            for (int c : mine) {
                assertTrue(allCpus.add(c), "CPU " + c + " in both groups\n" + ctx);
            }
            b.checkTiersPlacedOn(cpus);
            // The summary numapin logged is the one the table shows.
            ChildResult.Summary s = ChildResult.summary(b.logLines, ctx);
            assertEquals(b.placedNames("placed").size(), s.placed(), "summary placed=\n" + ctx);
            assertTrue(t.numapin.get(g).startsWith("placed=" + s.placed() + " cpus=" + s.cpus() + " mem_pages="),
                    "numapin column of group " + g + ": " + t.numapin.get(g) + "\n" + ctx);
            assertTrue(t.numapin.get(g).contains(" mem_local="), "numapin column of group " + g + "\n" + ctx);
            assertEquals(Cpus.parse(cpus), Cpus.parse(s.cpus()), "summary cpus=\n" + ctx);
            // {group} in two arguments, as the JVM saw them (-XshowSettings:properties).
            assertTrue(log.contains("    numapin.harness.group = " + g + "\n"), "group " + g
                    + " did not get -Dnumapin.harness.group=" + g + "\n" + ctx);
            assertTrue(log.contains("    numapin.harness.log = run-" + g + ".log\n"), "group " + g
                    + " did not get -Dnumapin.harness.log=run-" + g + ".log\n" + ctx);
            // The agent came through JAVA_TOOL_OPTIONS, with the --options appended, after
            // the flag that sizes the JVM to its group's CPUs.
            assertTrue(log.contains("Picked up JAVA_TOOL_OPTIONS: -XX:ActiveProcessorCount=" + mine.size()
                    + " -agentpath:" + ChildJvm.agent() + "=group=" + g + ",groups=2,threads=Tier*-worker-*"),
                    "JAVA_TOOL_OPTIONS of group " + g + "\n" + ctx);
            seen.add(g);
        }
        assertEquals(Set.of(0, 1), seen);
    }

    /**
     * A group that fails makes numapin groups fail: group 0's TierBench gets
     * --steps 0 (a usage error, exit 2), group 1 runs. The table shows each
     * group's own status, and the total holds the group that printed a result.
     */
    @Test
    void aFailingGroupFailsTheRun() {
        Path logs = RunLogs.newRunDir().resolve("logs");
        List<String> cmd = new ArrayList<>(List.of(numapin().toString(), "groups", "--groups", "2",
                "--options", "threads=Tier*-worker-*", "--logs", logs.toString(), "--"));
        cmd.addAll(tierBench(List.of(), List.of("--steps", "{group}", "--duration-s", "1", "--working-set-mb", "16",
                "--calibrate-ms", "300")));
        ChildResult r = Proc.of(cmd).run();
        String ctx = describeGroups(r, logs, 2);
        assertEquals(1, r.exitCode, "numapin groups' exit status with a failed group\n" + ctx);
        Table t = new Table(r.stdout, ctx);
        assertEquals(Map.of(0, 2, 1, 0), t.exit, "exit column\n" + ctx);
        assertTrue(read(logs.resolve("group-0.log")).contains("TierBench: durations, steps and sizes must be"
                + " positive"), "group 0's usage error\n" + ctx);
        Bench one = new Bench(read(logs.resolve("group-1.log")), ctx);
        one.checkResult();
        assertEquals(one.result.get("throughput"), t.total.get("throughput"), 0.006, "total = group 1\n" + ctx);
        assertTrue(t.rows.get(0).isEmpty(), "group 0 printed no result, its row should be '-'\n" + ctx);
    }

    /** Children that cannot be run, or die by a signal: their status in the table, exit 1. */
    @Test
    void unrunnableAndKilledChildren() {
        Path dir = RunLogs.newRunDir();
        ChildResult missing = Proc.of(numapin().toString(), "groups", "--groups", "2", "--logs",
                dir.resolve("missing").toString(), "--", "/nonexistent/command").run();
        String ctx = describeGroups(missing, dir.resolve("missing"), 2);
        assertEquals(1, missing.exitCode, "exit status\n" + ctx);
        assertEquals(Map.of(0, 127, 1, 127), new Table(missing.stdout, ctx).exit, "exit column\n" + ctx);
        assertTrue(read(dir.resolve("missing/group-0.log")).contains("cannot run /nonexistent/command"), ctx);

        ChildResult killed = Proc.of(numapin().toString(), "groups", "--groups", "2", "--logs",
                dir.resolve("killed").toString(), "--", "/bin/sh", "-c",
                "if [ \"$NUMAPIN_GROUP\" = 1 ]; then kill -9 $$; fi; echo result n=$NUMAPIN_GROUPS").run();
        ctx = describeGroups(killed, dir.resolve("killed"), 2);
        assertEquals(1, killed.exitCode, "exit status\n" + ctx);
        Table t = new Table(killed.stdout, ctx);
        assertEquals(Map.of(0, 0, 1, 128 + 9), t.exit, "exit column: 128+SIGKILL for group 1\n" + ctx);
        assertEquals(Map.of("n", 2.0), t.rows.get(0), "group 0's result (NUMAPIN_GROUPS)\n" + ctx);
    }

    /** Bad arguments: exit 2, a message and the usage on stderr, nothing run, no log directory made. */
    @Test
    void badArgumentsExit2() {
        Path dir = RunLogs.newRunDir();
        Path logs = dir.resolve("logs");
        String n = numapin().toString();
        String marker = dir.resolve("ran").toString();
        List<String> touch = List.of("--", "/bin/sh", "-c", "touch " + marker);
        List<List<String>> bad = new ArrayList<>();
        bad.add(List.of("--groups", "0"));
        bad.add(List.of("--groups", "abc"));
        bad.add(List.of("--groups", "-1"));
        bad.add(List.of("--groups", "2x"));
        bad.add(List.of("--groups", "4097"));
        bad.add(List.of("--groups", ""));
        bad.add(List.of());                                  // no --groups
        bad.add(List.of("--bogus", "--groups", "2"));
        bad.add(List.of("--groups", "2", "--agent", dir.resolve("no-such-lib.so").toString()));
        for (List<String> args : bad) {
            List<String> cmd = new ArrayList<>(List.of(n, "groups", "--logs", logs.toString()));
            cmd.addAll(args);
            cmd.addAll(touch);
            ChildResult r = Proc.of(cmd).run();
            assertEquals(2, r.exitCode, "exit status of " + args + "\n" + r.describe());
            assertTrue(r.stderr.startsWith("numapin groups: ") || r.stderr.startsWith("groups: "),
                    "message on stderr for " + args + "\n" + r.describe());
            assertEquals("", r.stdout, "stdout for " + args + "\n" + r.describe());
        }
        // No command at all, and --groups without a value.
        ChildResult noCmd = Proc.of(n, "groups", "--logs", logs.toString(), "--groups", "2").run();
        assertEquals(2, noCmd.exitCode, noCmd.describe());
        assertTrue(noCmd.stderr.contains("no command given") && noCmd.stderr.contains("usage: numapin groups"),
                noCmd.describe());
        ChildResult noValue = Proc.of(n, "groups", "--groups").run();
        assertEquals(2, noValue.exitCode, noValue.describe());
        assertTrue(noValue.stderr.contains("usage: numapin groups"), noValue.describe());
        assertFalse(Files.exists(Path.of(marker)), "a command ran despite bad arguments");
        assertFalse(Files.exists(logs), "a log directory was made despite bad arguments");

        ChildResult help = Proc.of(n, "groups", "--help").run();
        assertEquals(0, help.exitCode, help.describe());
        assertTrue(help.stdout.startsWith("usage: numapin groups --groups N"), help.describe());
    }

    /**
     * "{group}" in CMD's arguments "becomes i": every occurrence. Today only
     * the first of an argument is replaced (numapin_groups.c replace_group()
     * uses one strstr): `sh -c 'echo {group}-{group}'` prints "0-{group}".
     */
    @Test
    void everyGroupPlaceholderOfAnArgumentIsReplaced() {
        Path logs = RunLogs.newRunDir().resolve("logs");
        ChildResult r = Proc.of(numapin().toString(), "groups", "--groups", "2", "--logs", logs.toString(), "--",
                "/bin/sh", "-c", "echo result a={group} b={group}").run();
        String ctx = describeGroups(r, logs, 2);
        r.assertExit(0);
        Table t = new Table(r.stdout, ctx);
        assertEquals(Map.of("a", 1.0, "b", 1.0), t.rows.get(1), ctx);
    }

    // =====================================================================
    // docs/harness/specjbb2015-multijvm.md: picking tier patterns
    // =====================================================================

    /**
     * The SPECjbb recipe's method, on TierBench: (1) a run with
     * dryrun,log=debug lists every thread the run creates; the document's
     * pipeline turns that into name patterns; (2) threads= built from the
     * Tier patterns, still under dryrun, would place exactly the tier
     * threads and binds nothing; (3) without dryrun, it places exactly them,
     * on the group's CPUs, and leaves the injector threads and main alone.
     */
    @Test
    void dryRunListsThreadNamesAndTheChosenGlobsPlaceExactlyTheTiers() {
        String agent = "-agentpath:" + ChildJvm.agent();
        // (1) Which threads does a run create?
        ChildResult list = Proc.of(tierBench(List.of(agent + "=group=1,groups=2,dryrun,log=debug"), SHORT)).run();
        list.assertExit(0);
        Bench b1 = new Bench(list.stdout, list.describe());
        b1.checkResult();
        Map<String, Long> skipped = ChildResult.skipped(b1.logLines);
        assertTrue(skipped.keySet().containsAll(b1.tierPlacement().keySet()), "the tier threads should be"
                + " listed as skipped (the default threads= matches fork-join pools named ForkJoinPool-*)\n"
                + list.describe());
        assertTrue(skipped.keySet().stream().anyMatch(s -> s.startsWith("Injector-calibrate-")),
                "Injector-calibrate-* threads listed\n" + list.describe());
        assertTrue(skipped.containsKey("main"), "main listed\n" + list.describe());
        assertEquals(Set.of(), b1.placedNames("placed"), "dryrun placed something\n" + list.describe());
        // Nothing was bound: the tier threads kept the process's CPUs.
        b1.tierPlacement().forEach((name, cpus) -> assertEquals(Cpus.parse(Machine.allowedCpus()),
                Cpus.parse(cpus), name + " under dryrun\n" + list.describe()));

        // The document's pipeline, on this log (named as run_multi.sh names a backend's log).
        Path dir = list.workDir;
        write(dir.resolve("Group1.Backend.beJVM.log"), list.stdout, false);
        ChildResult names = Proc.sh(docBlock("specjbb2015-multijvm.md", "thread-names")).cwd(dir).run();
        names.assertExit(0);
        Map<String, Integer> patterns = new TreeMap<>();
        for (String l : names.stdoutLines()) {
            Matcher m = Pattern.compile("^\\s*(\\d+) (.+)$").matcher(l);
            assertTrue(m.matches(), "pipeline output line: '" + l + "'\n" + names.describe());
            patterns.put(m.group(2), Integer.parseInt(m.group(1)));
        }
        for (String want : List.of("Tier1-worker-*", "Tier2-worker-*", "Tier3-worker-*", "Injector-calibrate-*",
                "main")) {
            assertTrue(patterns.containsKey(want), "pattern " + want + " in the pipeline's output " + patterns
                    + "\n" + names.describe());
        }
        int tierCount = 0;
        for (Map.Entry<String, Integer> e : patterns.entrySet()) {
            if (e.getKey().startsWith("Tier")) {
                tierCount += e.getValue();
            }
        }
        assertEquals(b1.tierPlacement().size(), tierCount, "tier threads counted by the pipeline\n"
                + names.describe());

        // Choose: the tier pools.
        String threads = patterns.keySet().stream().filter(p -> p.startsWith("Tier"))
                .collect(Collectors.joining("|"));
        assertEquals("Tier1-worker-*|Tier2-worker-*|Tier3-worker-*", threads);

        // (2) Check the choice without binding anything.
        ChildResult check = Proc.of(tierBench(List.of(agent + "=group=1,groups=2,dryrun,log=debug,threads="
                + threads), SHORT)).run();
        check.assertExit(0);
        Bench b2 = new Bench(check.stdout, check.describe());
        assertEquals(b2.tierPlacement().keySet(), b2.placedNames("would-place"), "would-place lines vs. the tier"
                + " threads that worked\n" + check.describe());
        String groupCpus = b2.plan().get("cpus");
        for (Placed p : b2.placed("would-place")) {
            assertEquals(Cpus.parse(groupCpus), Cpus.parse(p.cpus()), p.line() + "\n" + check.describe());
        }
        assertFalse(ChildResult.skipped(b2.logLines).keySet().stream().anyMatch(s -> s.startsWith("Tier")),
                "a tier thread was still skipped\n" + check.describe());
        b2.tierPlacement().forEach((name, cpus) -> assertEquals(Cpus.parse(Machine.allowedCpus()),
                Cpus.parse(cpus), name + " under dryrun\n" + check.describe()));

        // (3) Place them.
        ChildResult run = Proc.of(tierBench(List.of(agent + "=group=1,groups=2,threads=" + threads), SHORT)).run();
        run.assertExit(0);
        Bench b3 = new Bench(run.stdout, run.describe());
        b3.checkResult();
        String cpus = b3.plan().get("cpus");
        if (oneNodeTwoCpus()) {
            assertEquals("1", cpus, "group 1 of 2 on this machine\n" + run.describe());
        }
        b3.checkTiersPlacedOn(cpus);
        assertEquals(b3.tierPlacement().keySet(), b3.placedNames("placed"), "placed exactly the tier threads\n"
                + run.describe());
        b3.placement.forEach((name, got) -> {
            if (!TIER_THREAD.matcher(name).matches()) {
                fail("unexpected thread in the placement block: " + name);
            }
        });
    }

    /**
     * The SPECjbb recipe's run_multi.sh loop, with `java` replaced by a stub
     * that prints its arguments and then starts a real JVM with only the
     * -agentpath argument (java -version): each group's Backend and
     * TxInjector get their group (SPECjbb's Group1 is numapin's group 0),
     * the agent argument arrives as one argument with its globs intact, and
     * numapin accepts it.
     */
    @Test
    void runMultiLoopGivesEachGroupItsAgent() {
        Path dir = RunLogs.newRunDir();
        Path work = mkdirs(dir.resolve("work"));
        Path stub = dir.resolve("java-stub");
        write(stub, "#!/bin/sh\n"
                + "agent=\n"
                + "for a in \"$@\"; do\n"
                + "    printf 'arg: %s\\n' \"$a\"\n"
                + "    case \"$a\" in -agentpath:*) agent=$a ;; esac\n"
                + "done\n"
                + "[ -n \"$agent\" ] || exit 0\n"
                + "exec '" + ChildJvm.java() + "' \"$agent\" -XX:+UseSerialGC -version\n", true);
        // A file a stray unquoted glob could expand to, were the agent argument left unquoted.
        write(work.resolve("ForkJoinPool-1-worker-1"), "", false);
        String loop = localPaths(docBlock("specjbb2015-multijvm.md", "run-multi-loop"));
        ChildResult r = Proc.of("/bin/bash", "-c", loop + "\nwait\n").cwd(work)
                .env("JAVA", stub.toString())
                .env("GROUP_COUNT", "2").env("TI_JVM_COUNT", "1")
                .env("JAVA_OPTS_BE", "-Xms1g -Xmx1g").env("JAVA_OPTS_TI", "-Xmx256m")
                .env("SPEC_OPTS_BE", "").env("SPEC_OPTS_TI", "").env("MODE_ARGS_BE", "").env("MODE_ARGS_TI", "")
                .run();
        r.assertExit(0);
        String controller = read(work.resolve("controller.log"));
        assertTrue(controller.contains("arg: MULTICONTROLLER\n") && !controller.contains("arg: -agentpath:"),
                "the Controller: no agent\n" + controller + r.describe());
        for (int gnum = 1; gnum <= 2; gnum++) {
            int group = gnum - 1;
            for (String jvm : List.of("Backend.beJVM", "TxInjector.txiJVM1")) {
                Path log = work.resolve("Group" + gnum + "." + jvm + ".log");
                assertTrue(Files.exists(log), log + " missing\n" + r.describe());
                String text = read(log);
                String ctx = log + ":\n" + text + "\n" + r.describe();
                List<String> args = ChildResult.lines(text).stream().filter(l -> l.startsWith("arg: "))
                        .map(l -> l.substring(5)).collect(Collectors.toList());
                List<String> agents = args.stream().filter(a -> a.startsWith("-agentpath:"))
                        .collect(Collectors.toList());
                assertEquals(1, agents.size(), "one -agentpath argument\n" + ctx);
                String a = agents.get(0);
                assertTrue(a.startsWith("-agentpath:" + ChildJvm.agent() + "=group=" + group + ",groups=2"),
                        "agent argument " + a + "\n" + ctx);
                String mode = jvm.startsWith("Backend") ? "BACKEND" : "TXINJECTOR";
                int m = args.indexOf("-m");
                assertTrue(m >= 0 && args.get(m + 1).equals(mode) && args.contains("-G=Group" + gnum),
                        "SPECjbb arguments\n" + ctx);
                assertTrue(args.indexOf(a) < args.indexOf("-jar"), "the agent before -jar\n" + ctx);
                // numapin plan --java-flags: sized to the group (one CPU each on this machine).
                List<String> sized = args.stream().filter(x -> x.startsWith("-XX:ActiveProcessorCount=")).toList();
                assertEquals(1, sized.size(), "one -XX:ActiveProcessorCount\n" + ctx);
                if (oneNodeTwoCpus()) {
                    assertEquals("-XX:ActiveProcessorCount=1", sized.get(0), ctx);
                }
                if (mode.equals("BACKEND")) {
                    assertTrue(a.contains(",threads=ForkJoinPool-*-worker-*"), "backend threads= glob intact: "
                            + a + "\n" + ctx);
                }
                // numapin took the option string: its plan names the group.
                assertTrue(ChildResult.numapinLines(text).stream().anyMatch(l -> l.contains("][info][numapin] plan group=" + group
                        + " groups=2 ")), "numapin's plan for group " + group + "\n" + ctx);
                assertFalse(text.contains("[error][numapin]"), ctx);
            }
        }
    }

    // =====================================================================
    // docs/harness/java-tool-options.md
    // =====================================================================

    /** A launcher that cannot be edited: it runs TierBench with fixed arguments. */
    static Path writeLauncher(Path dir) {
        Path launcher = dir.resolve("launcher.sh");
        List<String> cmd = tierBench(List.of(), SHORT);
        write(launcher, "#!/bin/sh\n# A vendor's start script: no place for JVM options.\nexec "
                + ChildJvm.shellQuote(cmd) + "\n", true);
        return launcher;
    }

    /** JAVA_TOOL_OPTIONS alone places a JVM started by a script that cannot be edited. */
    @Test
    void javaToolOptionsPlacesAJvmStartedByAnUneditableLauncher() {
        Path dir = RunLogs.newRunDir();
        Path work = mkdirs(dir.resolve("work"));
        writeLauncher(work);
        String snippet = localPaths(docBlock("java-tool-options.md", "launcher"));
        ChildResult r = Proc.sh(snippet).cwd(work).run();
        r.assertExit(0);
        assertTrue(r.stderr.contains("Picked up JAVA_TOOL_OPTIONS: -agentpath:" + ChildJvm.agent()
                + "=group=1,groups=2,threads=Tier*-worker-*"), "the JVM's 'Picked up' line\n" + r.describe());
        Bench b = new Bench(r.stdout, r.describe());
        b.checkResult();
        Map<String, String> plan = b.plan();
        assertEquals("1", plan.get("group"), r.describe());
        if (oneNodeTwoCpus()) {
            assertEquals("1", plan.get("cpus"), r.describe());
        }
        b.checkTiersPlacedOn(plan.get("cpus"));
    }

    /**
     * JAVA_TOOL_OPTIONS with group=auto: two JVMs started alike take
     * different groups (lock files in a private XDG_RUNTIME_DIR, so that
     * other test runs on this machine do not hold groups).
     */
    @Test
    void javaToolOptionsWithGroupAutoGivesTwoJvmsTwoGroups() {
        Path dir = RunLogs.newRunDir();
        Path work = mkdirs(dir.resolve("work"));
        Path runtime = mkdirs(dir.resolve("xdg"));
        try {
            Files.setPosixFilePermissions(runtime, PosixFilePermissions.fromString("rwx------"));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        writeLauncher(work);
        String snippet = localPaths(docBlock("java-tool-options.md", "group-auto"));
        ChildResult r = Proc.sh(snippet).cwd(work).env("XDG_RUNTIME_DIR", runtime.toString()).run();
        r.assertExit(0);
        Set<String> groups = new TreeSet<>();
        Set<Integer> cpus = new TreeSet<>();
        for (String f : List.of("jvm-a.out", "jvm-b.out")) {
            String text = read(work.resolve(f));
            String ctx = f + ":\n" + text + "\n" + r.describe();
            Bench b = new Bench(text, ctx);
            b.checkResult();
            Map<String, String> plan = b.plan();
            groups.add(plan.get("group"));
            b.checkTiersPlacedOn(plan.get("cpus"));
            for (int c : Cpus.parse(plan.get("cpus"))) {
                assertTrue(cpus.add(c), "CPU " + c + " in both JVMs' groups\n" + ctx);
            }
        }
        assertEquals(Set.of("0", "1"), groups, "groups taken by the two JVMs\n" + r.describe());
    }

    /** java-tool-options.md's notes: tools load it too; it wins over the command line; JDK_JAVA_OPTIONS. */
    @Test
    void javaToolOptionsReachesToolsAndWinsOverTheCommandLine() {
        Path bin = Path.of(ChildJvm.java()).getParent();
        String agent = "-agentpath:" + ChildJvm.agent();

        ChildResult jps = Proc.of(bin.resolve("jps").toString()).env("JAVA_TOOL_OPTIONS", agent + "=group=1,groups=2")
                .run();
        jps.assertExit(0);
        assertTrue(jps.stdout.contains("][info][numapin] plan group=1 groups=2 "), "jps loaded numapin\n"
                + jps.describe());

        ChildResult both = Proc.of(ChildJvm.java(), agent + "=group=1,groups=2", "-XX:+UseSerialGC", "-version")
                .env("JAVA_TOOL_OPTIONS", agent + "=group=0,groups=2").run();
        both.assertExit(0);
        List<String> plans = ChildResult.numapinLines(both.stdout).stream()
                .filter(l -> l.contains("][info][numapin] plan ")).collect(Collectors.toList());
        assertEquals(1, plans.size(), "one plan\n" + both.describe());
        assertTrue(plans.get(0).contains(" plan group=0 groups=2 "), "the environment's group\n" + both.describe());
        assertTrue(both.stdout.contains("][warning][numapin] numapin is already loaded; this copy does nothing"),
                "the command line's copy says it does nothing\n" + both.describe());

        ChildResult java = Proc.of(ChildJvm.java(), "-XX:+UseSerialGC", "-version")
                .env("JDK_JAVA_OPTIONS", agent + "=group=1,groups=2").run();
        java.assertExit(0);
        assertTrue(java.stderr.contains("NOTE: Picked up JDK_JAVA_OPTIONS: " + agent), java.describe());
        assertTrue(java.stdout.contains("][info][numapin] plan group=1 groups=2 "), java.describe());
        ChildResult javac = Proc.of(bin.resolve("javac").toString(), "-version")
                .env("JDK_JAVA_OPTIONS", agent + "=group=1,groups=2").run();
        javac.assertExit(0);
        assertFalse((javac.stdout + javac.stderr).contains("[numapin]"), "javac loaded numapin from"
                + " JDK_JAVA_OPTIONS\n" + javac.describe());
    }

    // =====================================================================
    // docs/harness/systemd.md
    // =====================================================================

    static final String DOC_JAVA = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java";

    /** A unit file or drop-in of systemd.md, with this build's paths and this suite's java. */
    static String localUnit(String name) {
        String unit = localPaths(docBlock("systemd.md", name));
        assertTrue(unit.contains(DOC_JAVA), "the " + name + " runs " + DOC_JAVA);
        return unit.replace(DOC_JAVA, ChildJvm.java());
    }

    /** The Environment= assignments of a unit and its drop-ins, later ones winning. */
    static Map<String, String> unitEnvironment(List<String> files) {
        Map<String, String> env = new LinkedHashMap<>();
        for (String f : files) {
            for (String l : ChildResult.lines(f)) {
                if (l.startsWith("Environment=")) {
                    String kv = l.substring(12);
                    assertFalse(kv.contains(" ") || kv.contains("\"") || kv.contains("%"),
                            "one plain K=V per Environment= line is all this test emulates: " + l);
                    env.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
                }
            }
        }
        return env;
    }

    /**
     * ExecStart of a unit (and its drop-ins, in order; an empty ExecStart=
     * clears) as systemd runs it for an instance: specifiers (%i, %%), then
     * words (quotes respected), then ${VAR} from Environment=. Only what
     * the document's units use is emulated; anything else fails the test
     * rather than being guessed.
     */
    static List<String> execStart(List<String> files, String instance) {
        Map<String, String> env = unitEnvironment(files);
        String exec = null;
        for (String f : files) {
            for (String l : ChildResult.lines(f)) {
                if (l.startsWith("ExecStart=")) {
                    String v = l.substring(10);
                    assertTrue(exec == null || v.isEmpty(), "a second ExecStart= without clearing the first");
                    exec = v.isEmpty() ? null : v;
                }
            }
        }
        assertNotNull(exec, "no ExecStart=");
        assertFalse(exec.endsWith("\\"), "continued ExecStart lines are not emulated here");
        assertFalse("-@:+!".indexOf(exec.charAt(0)) >= 0, "ExecStart prefixes are not emulated here: " + exec);
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < exec.length(); i++) {
            char c = exec.charAt(i);
            if (c == '%') {
                char n = exec.charAt(++i);
                switch (n) {
                    case 'i' -> s.append(instance);
                    case '%' -> s.append('%');
                    default -> fail("specifier %" + n + " is not emulated by this test");
                }
            } else {
                s.append(c);
            }
        }
        List<String> words = new ArrayList<>();
        StringBuilder w = null;
        char quote = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else {
                    w.append(c);
                }
            } else if (c == '"' || c == '\'') {
                quote = c;
                if (w == null) {
                    w = new StringBuilder();
                }
            } else if (c == ' ' || c == '\t') {
                if (w != null) {
                    words.add(w.toString());
                    w = null;
                }
            } else {
                assertFalse(c == '\\' || c == ';', "'" + c + "' in ExecStart is not emulated by this test");
                if (w == null) {
                    w = new StringBuilder();
                }
                w.append(c);
            }
        }
        assertEquals(0, quote, "unterminated quote in ExecStart");
        if (w != null) {
            words.add(w.toString());
        }
        List<String> out = new ArrayList<>();
        Pattern var = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)\\}");
        for (String word : words) {
            assertFalse(word.matches("\\$[A-Za-z_].*"), "$VAR words are not emulated by this test: " + word);
            Matcher m = var.matcher(word);
            StringBuilder sb = new StringBuilder();
            while (m.find()) {
                assertTrue(env.containsKey(m.group(1)), "${" + m.group(1) + "} is not set by the unit");
                m.appendReplacement(sb, Matcher.quoteReplacement(env.get(m.group(1))));
            }
            m.appendTail(sb);
            out.add(sb.toString());
        }
        assertTrue(out.get(0).startsWith("/"), "ExecStart's command should be an absolute path: " + out.get(0));
        return out;
    }

    /** A unit's TierBench command for an instance, made short, with the unit's environment. */
    static Proc unitProcess(List<String> files, String instance, List<String> prefix) {
        List<String> cmd = new ArrayList<>(prefix);
        List<String> exec = execStart(files, instance);
        int main = exec.indexOf(TIERBENCH);
        assertTrue(main > 0, "the unit runs TierBench: " + exec);
        cmd.addAll(exec.subList(0, main + 1));
        cmd.addAll(SHORT);
        Proc p = Proc.of(cmd);
        unitEnvironment(files).forEach(p::env);
        return p;
    }

    /** systemd's own check of the unit, and of the unit with the drop-in, where systemd-analyze is installed. */
    @Test
    void systemdUnitVerifies() {
        Path analyze = List.of("/usr/bin/systemd-analyze", "/bin/systemd-analyze").stream().map(Path::of)
                .filter(Files::isExecutable).findFirst().orElse(null);
        Assumptions.assumeTrue(analyze != null, "systemd-analyze is not installed");
        Path dir = mkdirs(RunLogs.newRunDir().resolve("units"));
        write(dir.resolve("numapin-jvm@.service"), localUnit("unit"), false);
        ChildResult r = Proc.of(analyze.toString(), "verify", dir.resolve("numapin-jvm@1.service").toString())
                .cwd(dir).run();
        r.assertExit(0);
        assertEquals("", r.stdout + r.stderr, "systemd-analyze verify printed warnings\n" + r.describe());

        Path dropIn = mkdirs(dir.resolve("numapin-jvm@1.service.d"));
        write(dropIn.resolve("numa.conf"), localUnit("drop-in"), false);
        ChildResult d = Proc.of(analyze.toString(), "verify", dir.resolve("numapin-jvm@1.service").toString())
                .cwd(dir).run();
        d.assertExit(0);
        assertEquals("", d.stdout + d.stderr, "systemd-analyze verify printed warnings for the drop-in\n"
                + d.describe());
    }

    /** The unit's ExecStart for instance 1, run as systemd would: group 1's tier threads on group 1's CPUs. */
    @Test
    void systemdExecStartForInstance1PlacesGroup1() {
        ChildResult r = unitProcess(List.of(localUnit("unit")), "1", List.of()).run();
        r.assertExit(0);
        Bench b = new Bench(r.stdout, r.describe());
        b.checkResult();
        Map<String, String> plan = b.plan();
        assertEquals("1", plan.get("group"), r.describe());
        assertEquals("2", plan.get("groups"), r.describe());
        if (oneNodeTwoCpus()) {
            assertEquals("1", plan.get("cpus"), r.describe());
        }
        b.checkTiersPlacedOn(plan.get("cpus"));
        assertTrue(r.stdout.contains("TierBench: tiers 1/1/1 threads") || !oneNodeTwoCpus(),
                "TierBench sized for one of 2 groups (NUMAPIN_GROUPS=2)\n" + r.describe());
    }

    /**
     * The drop-in's ExecStart (no group=, groups=) in a process bound
     * beforehand, as CPUAffinity= binds it (taskset -c 1 here): one group,
     * on CPU 1, the tier threads there.
     */
    @Test
    void systemdDropInExecStartPlansInsideItsBinding() {
        Assumptions.assumeTrue(Cpus.parse(Machine.allowedCpus()).contains(1), "needs CPU 1");
        ChildResult r = unitProcess(List.of(localUnit("unit"), localUnit("drop-in")), "1",
                List.of("taskset", "-c", "1")).run();
        r.assertExit(0);
        Bench b = new Bench(r.stdout, r.describe());
        b.checkResult();
        Map<String, String> plan = b.plan();
        assertEquals("0", plan.get("group"), r.describe());
        assertEquals("1", plan.get("groups"), r.describe());
        assertEquals("1", plan.get("cpus"), r.describe());
        b.checkTiersPlacedOn("1");
    }

    // =====================================================================
    // docs/harness/kubernetes.md (and systemd.md's CPUAffinity note)
    // =====================================================================

    /** The JAVA_TOOL_OPTIONS value of kubernetes.md's pod, with this build's paths. */
    static String podJavaToolOptions() {
        String pod = docBlock("kubernetes.md", "pod");
        Matcher m = Pattern.compile("- name: JAVA_TOOL_OPTIONS\\n\\s*value: \"([^\"]*)\"").matcher(pod);
        assertTrue(m.find(), "kubernetes.md's pod sets no JAVA_TOOL_OPTIONS:\n" + pod);
        return localPaths(m.group(1));
    }

    /**
     * A JVM confined to some CPUs before it starts (what a pod's cpuset, or
     * systemd's CPUAffinity=, does; taskset here), with kubernetes.md's
     * JAVA_TOOL_OPTIONS (no group=, groups=): numapin plans one group on the
     * CPUs it may use and places the tier threads there.
     */
    @Test
    void confinedJvmPlansOnTheCpusItMayUse() {
        Assumptions.assumeTrue(Cpus.parse(Machine.allowedCpus()).contains(1), "needs CPU 1");
        List<String> cmd = new ArrayList<>(List.of("taskset", "-c", "1"));
        cmd.addAll(tierBench(List.of(), SHORT));
        ChildResult r = Proc.of(cmd).env("JAVA_TOOL_OPTIONS", podJavaToolOptions()).run();
        r.assertExit(0);
        Bench b = new Bench(r.stdout, r.describe());
        b.checkResult();
        Map<String, String> plan = b.plan();
        assertEquals("0", plan.get("group"), r.describe());
        assertEquals("1", plan.get("groups"), r.describe());
        assertEquals("1", plan.get("cpus"), r.describe());
        assertTrue(b.logLines.stream().anyMatch(l -> l.contains("][info][numapin] topology ")
                && l.contains(" allowed=1 ")), "topology allowed=1\n" + r.describe());
        b.checkTiersPlacedOn("1");
    }

    /** kubernetes.md's `numapin plan --restrict` transcript is what numapin prints. */
    @Test
    void kubernetesPlanTranscriptsMatch() {
        for (String name : List.of("plan-restricted", "plan-restricted-2")) {
            String block = docBlock("kubernetes.md", name);
            List<String> lines = ChildResult.lines(block);
            assertTrue(lines.get(0).startsWith("$ numapin "), "transcript starts with '$ numapin ': " + block);
            List<String> args = new ArrayList<>();
            Matcher m = Pattern.compile("\"([^\"]*)\"|(\\S+)").matcher(lines.get(0).substring(10));
            while (m.find()) {
                args.add(m.group(1) != null ? m.group(1) : m.group(2));
            }
            List<String> cmd = new ArrayList<>(List.of(numapin().toString()));
            cmd.addAll(args);
            ChildResult r = Proc.of(cmd).run();
            r.assertExit(0);
            assertEquals(String.join("\n", lines.subList(1, lines.size())) + "\n", r.stdout + r.stderr,
                    "kubernetes.md's transcript " + name + "\n" + r.describe());
        }
    }
}
