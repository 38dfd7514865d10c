package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** What a child JVM did: exit status, output, and that output parsed. */
final class ChildResult {
    /** Any numapin log line: the JVM's unified-logging shape. */
    static final Pattern LOG_LINE = Pattern.compile(
            "^\\[\\d+\\.\\d{3}s\\]\\[(error|warning|info|debug|trace)\\]\\[numapin\\] \\S.*");
    static final Pattern ERROR_LINE = Pattern.compile("^\\[\\d+\\.\\d{3}s\\]\\[error\\]\\[numapin\\] \\S.*");
    /** What HotSpot itself prints when Agent_OnLoad fails (JDK 17 and 25). */
    static final Pattern HOTSPOT_LINE = Pattern.compile(
            "^(Error occurred during initialization of VM|agent library failed (to init|Agent_OnLoad)\\b.*)$");
    /** The last line of every program of numapin.child: "probe-done ...", "workers-done", ... */
    static final Pattern DONE_LINE = Pattern.compile("^[a-z]+-done( .*)?$");
    static final String QUOTED = "\"((?:[^\"\\\\]|\\\\.)*)\"";
    static final Pattern PLACED = Pattern.compile(
            "^\\[\\d+\\.\\d{3}s\\]\\[info\\]\\[numapin\\] (placed|would-place) " + QUOTED
                    + " tid=(\\d+) group=(\\d+) node=(\\S+) cpus=(\\S+) mem=(\\S+)(?: .*)?$");
    static final Pattern SKIPPED = Pattern.compile(
            "^\\[\\d+\\.\\d{3}s\\]\\[debug\\]\\[numapin\\] skipped " + QUOTED + " tid=(\\d+)(?: .*)?$");
    /** The summary line: key=value fields; placed, skipped, failed, mem_failed and cpus must be there. */
    static final Pattern SUMMARY = Pattern.compile(
            "^\\[\\d+\\.\\d{3}s\\]\\[info\\]\\[numapin\\] summary( [a-z_]+=\\S+)+$");
    static final Pattern FIELD = Pattern.compile(" ([a-z_]+)=(\\S+)");
    static final Pattern PROBE = Pattern.compile(
            "^probe name=\"(.*)\" tid=(\\d+) cpus=(\\S+) kind=(\\S+) pool=(\\S+)$");

    record ProbeLine(String name, long tid, String cpus, String kind, String pool) {}

    record Placed(String verb, String name, long tid, int group, String node, String cpus, String mem,
            String line) {}

    record Summary(int placed, int skipped, int failed, int memFailed, String cpus) {}

    final Path dir;
    final Path workDir;
    final int exitCode;
    final String stdout;
    final String stderr;

    ChildResult(Path dir, Path workDir, int exitCode, String stdout, String stderr) {
        this.dir = dir;
        this.workDir = workDir;
        this.exitCode = exitCode;
        this.stdout = stdout;
        this.stderr = stderr;
    }

    static List<String> lines(String s) {
        List<String> r = new ArrayList<>(Arrays.asList(s.split("\n", -1)));
        if (r.get(r.size() - 1).isEmpty()) {
            r.remove(r.size() - 1);
        }
        return r;
    }

    List<String> stdoutLines() {
        return lines(stdout);
    }

    List<String> stderrLines() {
        return lines(stderr);
    }

    /** Lines that look like numapin's, in the given text. */
    static List<String> numapinLines(String text) {
        return lines(text).stream().filter(l -> l.contains("][numapin]")).collect(Collectors.toList());
    }

    List<String> logLines() {
        return numapinLines(stdout);
    }

    List<String> stderrLogLines() {
        return numapinLines(stderr);
    }

    /** numapin lines of a level, on stdout and stderr together. */
    List<String> levelLines(String level) {
        List<String> all = new ArrayList<>(numapinLines(stdout));
        all.addAll(numapinLines(stderr));
        return all.stream().filter(l -> l.contains("][" + level + "][numapin]")).collect(Collectors.toList());
    }

    /** Warnings about failures: every warning but start-up advice ("advice: ..."). */
    List<String> failureWarnings() {
        return levelLines("warning").stream().filter(l -> !l.contains("][numapin] advice: "))
                .collect(Collectors.toList());
    }

    List<ProbeLine> probes() {
        List<ProbeLine> r = new ArrayList<>();
        for (String l : stdoutLines()) {
            Matcher m = PROBE.matcher(l);
            if (m.matches()) {
                r.add(new ProbeLine(m.group(1), Long.parseLong(m.group(2)), m.group(3), m.group(4), m.group(5)));
            }
        }
        return r;
    }

    List<ProbeLine> probes(String kind) {
        return probes().stream().filter(p -> p.kind().equals(kind)).collect(Collectors.toList());
    }

    ProbeLine probe(String name) {
        List<ProbeLine> r = probes().stream().filter(p -> p.name().equals(name)).collect(Collectors.toList());
        assertEquals(1, r.size(), "probe lines for thread \"" + name + "\"\n" + describe());
        return r.get(0);
    }

    static List<Placed> placed(List<String> logLines, String verb) {
        List<Placed> r = new ArrayList<>();
        for (String l : logLines) {
            Matcher m = PLACED.matcher(l);
            if (m.matches() && m.group(1).equals(verb)) {
                r.add(new Placed(m.group(1), unquote(m.group(2)), Long.parseLong(m.group(3)),
                        Integer.parseInt(m.group(4)), m.group(5), m.group(6), m.group(7), l));
            }
        }
        return r;
    }

    List<Placed> placed() {
        return placed(logLines(), "placed");
    }

    /** A thread's key in {@link #placedByThread}: NAME/TID (a name alone may come back, a tid be reused). */
    static String threadKey(String name, Object tid) {
        return name + "/" + tid;
    }

    /** Placed lines by NAME/TID; fails on two lines for one thread, or on one that does not parse. */
    Map<String, Placed> placedByThread() {
        Map<String, Placed> m = new LinkedHashMap<>();
        for (Placed p : placed()) {
            assertTrue(m.put(threadKey(p.name(), p.tid()), p) == null,
                    "two 'placed' lines for \"" + p.name() + "\" tid=" + p.tid() + "\n" + describe());
        }
        assertEquals(placedLike(logLines(), "placed"), m.size(), "'placed' lines that do not parse\n" + describe());
        return m;
    }

    List<Placed> wouldPlace() {
        return placed(logLines(), "would-place");
    }

    /** Lines containing ` placed "` at all: a check that PLACED did not miss any. */
    static long placedLike(List<String> logLines, String verb) {
        return logLines.stream().filter(l -> l.contains("[numapin] " + verb + " \"")).count();
    }

    static Map<String, Long> skipped(List<String> logLines) {
        Map<String, Long> r = new LinkedHashMap<>();
        for (String l : logLines) {
            Matcher m = SKIPPED.matcher(l);
            if (m.matches()) {
                r.put(unquote(m.group(1)), Long.parseLong(m.group(2)));
            }
        }
        return r;
    }

    static Summary summary(List<String> logLines, String context) {
        List<String> found = logLines.stream().filter(l -> l.contains("[numapin] summary ")).collect(Collectors.toList());
        assertEquals(1, found.size(), "summary lines\n" + context);
        String line = found.get(0);
        assertTrue(SUMMARY.matcher(line).matches(), "summary line shape: " + line + "\n" + context);
        Map<String, String> f = new LinkedHashMap<>();
        Matcher m = FIELD.matcher(line);
        while (m.find()) {
            assertTrue(f.put(m.group(1), m.group(2)) == null, "field " + m.group(1) + " twice: " + line);
        }
        for (String k : List.of("placed", "skipped", "failed", "mem_failed", "cpus")) {
            assertTrue(f.containsKey(k), "summary has no " + k + "=: " + line + "\n" + context);
        }
        return new Summary(Integer.parseInt(f.get("placed")), Integer.parseInt(f.get("skipped")),
                Integer.parseInt(f.get("failed")), Integer.parseInt(f.get("mem_failed")), f.get("cpus"));
    }

    Summary summary() {
        return summary(logLines(), describe());
    }

    static String unquote(String s) {
        return s.replace("\\\"", "\"").replace("\\\\", "\\");
    }

    /** hs_err_pid*.log files the JVM left in its working directory. */
    List<Path> hsErrFiles() {
        try (Stream<Path> s = Files.list(workDir)) {
            return s.filter(p -> p.getFileName().toString().matches("hs_err_pid.*\\.log"))
                    .collect(Collectors.toList());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** For assertion messages: where the logs are, and the output itself. */
    String describe() {
        return "exit=" + exitCode + ", logs in " + dir + "\n--- stdout ---\n" + clip(stdout)
                + "--- stderr ---\n" + clip(stderr) + "---";
    }

    private static String clip(String s) {
        return s.length() <= 6000 ? s : s.substring(0, 3000) + "\n[...]\n" + s.substring(s.length() - 3000);
    }

    ChildResult assertExit(int expected) {
        assertEquals(expected, exitCode, "exit status\n" + describe());
        return this;
    }

    /** The program ran to its end (its "...-done" line, exit 0), nothing on stderr from numapin, no crash. */
    ChildResult assertRan() {
        assertExit(0);
        assertTrue(stdoutLines().stream().anyMatch(l -> DONE_LINE.matcher(l).matches()),
                "the program did not finish\n" + describe());
        assertEquals(List.of(), stderrLogLines(), "numapin lines on stderr\n" + describe());
        assertEquals(List.of(), hsErrFiles(), "hs_err files: the JVM crashed\n" + describe());
        return this;
    }

    /** Failure warnings (advice aside), each matching its pattern, in order, and no others. */
    void assertWarnings(String... patterns) {
        List<String> w = failureWarnings();
        assertEquals(patterns.length, w.size(), "warnings (advice aside)\n" + describe());
        for (int i = 0; i < patterns.length; i++) {
            assertTrue(Pattern.compile(patterns[i]).matcher(w.get(i)).find(),
                    "warning '" + w.get(i) + "' does not match " + patterns[i] + "\n" + describe());
        }
    }

    /**
     * numapin stopped the JVM at start-up: a non-zero exit that is not a
     * signal, no hs_err file, exactly one numapin line on stderr, an error
     * line in unified-logging shape matching the pattern, none on stdout,
     * HotSpot's own initialization error, and nothing placed. Returns the
     * error line.
     */
    String assertDidNotStart(String pattern) {
        String ctx = describe();
        assertTrue(exitCode != 0, "the JVM started\n" + ctx);
        assertTrue(exitCode < 128, "the JVM died of a signal\n" + ctx);
        assertEquals(List.of(), hsErrFiles(), "hs_err files: the JVM crashed\n" + ctx);
        List<String> errors = stderrLogLines();
        assertEquals(1, errors.size(), "numapin lines on stderr\n" + ctx);
        String line = errors.get(0);
        assertTrue(ERROR_LINE.matcher(line).matches(), "not an error line in unified-logging shape: " + line);
        assertTrue(Pattern.compile(pattern).matcher(line).find(), line + " vs. " + pattern);
        assertTrue((stdout + stderr).contains("Error occurred during initialization of VM"),
                "HotSpot's own initialization error is missing\n" + ctx);
        List<String> out = logLines();
        assertEquals(List.of(), out.stream().filter(l -> l.contains("[error][numapin]")).collect(Collectors.toList()),
                "error lines on stdout too\n" + ctx);
        assertEquals(List.of(), out.stream().filter(l -> l.contains("[numapin] placed \"")
                || l.contains("[numapin] would-place \"") || l.contains("[numapin] jvm group="))
                .collect(Collectors.toList()), "placements before the JVM stopped\n" + ctx);
        return line;
    }

    /**
     * strict: the plan could not be applied, so numapin stopped the JVM
     * ({@link #assertDidNotStart}) before the program printed anything.
     */
    void assertStrictStop(String pattern) {
        assertDidNotStart(pattern);
        assertEquals(List.of(), stdoutLines().stream().filter(l -> !l.isEmpty() && !l.contains("][numapin]")
                && !HOTSPOT_LINE.matcher(l).matches()).collect(Collectors.toList()), "the program ran\n" + describe());
    }

    /** Every probe line of the given kinds read exactly these CPUs. */
    void assertCpus(String expected, List<ProbeLine> lines, String what) {
        assertTrue(!lines.isEmpty(), "no " + what + " reported\n" + describe());
        for (ProbeLine p : lines) {
            assertEquals(Cpus.parse(expected), Cpus.parse(p.cpus()),
                    what + " \"" + p.name() + "\" tid=" + p.tid() + " runs on cpus=" + p.cpus()
                            + ", expected " + expected + "\n" + describe());
        }
    }

    /**
     * numapin's placement lines (verb "placed" or "would-place") against what
     * the threads themselves read: one line for each probe thread whose name
     * matches threads=, none for any other, and each with the tid the thread
     * read and (when readBack) the CPUs it read. Returns the lines by name.
     */
    Map<String, Placed> assertPlacementLinesMatchProbe(List<String> logLines, String threads, String verb,
            boolean readBack) {
        String ctx = describe();
        for (String l : logLines) {
            assertTrue(LOG_LINE.matcher(l).matches(), "numapin line of the wrong shape: " + l + "\n" + ctx);
        }
        List<Placed> placed = placed(logLines, verb);
        assertEquals(placedLike(logLines, verb), placed.size(),
                "some '" + verb + "' lines do not parse as '" + verb
                        + " \"NAME\" tid=N group=N node=LIST cpus=LIST mem=POLICY'\n" + ctx);
        Map<String, Placed> byName = new LinkedHashMap<>();
        for (Placed p : placed) {
            assertTrue(byName.put(p.name(), p) == null, "two '" + verb + "' lines for \"" + p.name() + "\"\n" + ctx);
        }
        Map<String, ProbeLine> expected = new LinkedHashMap<>();
        for (ProbeLine p : probes()) {
            if (!p.kind().equals("main") && matches(threads, p.name())) {
                expected.put(p.name(), p);
            }
        }
        assertTrue(!expected.isEmpty(), "the probe started no thread matching " + threads + "\n" + ctx);
        assertEquals(new TreeSet<>(expected.keySet()), new TreeSet<>(byName.keySet()),
                "names in '" + verb + "' lines vs. probe threads matching threads=" + threads + "\n" + ctx);
        for (ProbeLine p : expected.values()) {
            Placed l = byName.get(p.name());
            assertEquals(p.tid(), l.tid(), "tid in numapin's line vs. the thread's own /proc/thread-self for \""
                    + p.name() + "\"\n" + ctx);
            if (readBack) {
                assertEquals(Cpus.parse(p.cpus()), Cpus.parse(l.cpus()), "cpus in numapin's line vs. the thread's"
                        + " Cpus_allowed_list for \"" + p.name() + "\": " + l.line() + "\n" + ctx);
            }
        }
        return byName;
    }

    /** Thread names glob-matched the way numapin matches them (fnmatch, no flags). */
    static boolean matches(String threads, String name) {
        for (String g : threads.split("\\|")) {
            if (Pattern.matches(globToRegex(g), name)) {
                return true;
            }
        }
        return false;
    }

    static String globToRegex(String glob) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < glob.length(); i++) {
            char c = glob.charAt(i);
            switch (c) {
                case '*' -> sb.append(".*");
                case '?' -> sb.append('.');
                case '[' -> {
                    int end = glob.indexOf(']', i + 2);
                    if (end < 0) {
                        sb.append("\\[");
                    } else {
                        String cls = glob.substring(i + 1, end);
                        if (cls.startsWith("!")) {
                            cls = "^" + cls.substring(1);
                        }
                        sb.append('[').append(cls.replace("\\", "\\\\")).append(']');
                        i = end;
                    }
                }
                default -> sb.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return sb.toString();
    }

    /** Linux cpulist syntax ("0-2,5"), as a set. */
    static final class Cpus {
        static TreeSet<Integer> parse(String list) {
            assertNotNull(list);
            TreeSet<Integer> r = new TreeSet<>();
            for (String part : list.split(",")) {
                if (part.isEmpty()) {
                    continue;
                }
                String[] ab = part.split("-");
                int a = Integer.parseInt(ab[0]);
                int b = ab.length > 1 ? Integer.parseInt(ab[1]) : a;
                for (int i = a; i <= b; i++) {
                    r.add(i);
                }
            }
            return r;
        }
    }
}
