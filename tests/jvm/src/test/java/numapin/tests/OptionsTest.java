package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Bad options stop the JVM cleanly with one line saying what is wrong. */
@ExtendWith(RunLogs.class)
class OptionsTest {
    static final Pattern ERROR_LINE = Pattern.compile("^\\[\\d+\\.\\d{3}s\\]\\[error\\]\\[numapin\\] \\S.*");

    /** options, fake 2-node machine?, the option the message must name, words it must list. */
    static Stream<Arguments> badOptions() {
        return Stream.of(
                Arguments.of("foo=1", false, "foo", List.of()),
                Arguments.of("group=-1", false, "group", List.of()),
                Arguments.of("group=abc", false, "group", List.of()),
                Arguments.of("group=99999999999999999999", false, "group", List.of()),
                Arguments.of("groups=0", false, "groups", List.of()),
                Arguments.of("group=2,groups=2", false, "group", List.of()),
                Arguments.of("cpus=bogus", false, "cpus", List.of("node", "core", "pu")),
                Arguments.of("mem=bogus", false, "mem", List.of("preferred", "bind", "interleave", "local", "none")),
                Arguments.of("log=loud", false, "log", List.of("off", "error", "warning", "info", "debug", "trace")),
                Arguments.of("threads=", false, "threads", List.of()),
                Arguments.of("threads=a||b", false, "threads", List.of()),
                Arguments.of("group=0,group=1", false, "group", List.of()),
                Arguments.of("dryrun=maybe", false, "dryrun", List.of()),
                // The fake machine has 2 nodes, so 2 groups by default: 0 and 1.
                Arguments.of("group=2", true, "group", List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badOptions")
    void badOptionStopsTheJvmWithOneErrorLine(String options, boolean fake, String option, List<String> valid) {
        ChildJvm c = ChildJvm.version().options(options);
        if (fake) {
            c.fakeTwoNodes();
        }
        ChildResult r = c.run();
        assertTrue(r.exitCode != 0, "the JVM started despite -agentpath:...=" + options + "\n" + r.describe());
        assertTrue(r.exitCode < 128, "the JVM died of a signal\n" + r.describe());
        assertEquals(1, r.exitCode, "HotSpot's exit status for a failed Agent_OnLoad\n" + r.describe());
        assertEquals(List.of(), r.hsErrFiles(), "hs_err files: the JVM crashed\n" + r.describe());

        List<String> lines = r.stderrLogLines();
        assertEquals(1, lines.size(), "numapin lines on stderr\n" + r.describe());
        String line = lines.get(0);
        assertTrue(ERROR_LINE.matcher(line).matches(), "not an error line in unified-logging shape: " + line);
        assertTrue(Pattern.compile("\\b" + Pattern.quote(option) + "\\b").matcher(line.substring(line.indexOf("] ")))
                        .find(), "the error does not name option '" + option + "': " + line);
        for (String v : valid) {
            assertTrue(line.contains(v), "the error does not list valid value '" + v + "': " + line);
        }
        assertEquals(List.of(), r.logLines().stream().filter(l -> l.contains("[error][numapin]"))
                .collect(Collectors.toList()), "error lines on stdout too\n" + r.describe());
        // HotSpot prints this on stdout.
        assertTrue((r.stdout + r.stderr).contains("Error occurred during initialization of VM"),
                "HotSpot's own initialization error is missing\n" + r.describe());
    }

    @Test
    void helpPrintsTheReferenceAndTheJvmGoesOn() {
        ChildResult r = ChildJvm.version().options("help").run().assertExit(0);
        String out = r.stdout + r.stderr;
        for (String key : List.of("group=", "groups=", "threads=", "cpus=", "mem=", "log=", "report=", "jfr=", "dryrun",
                "strict", "help")) {
            assertTrue(out.contains(key), "help does not mention " + key + "\n" + r.describe());
        }
        for (String value : List.of("node", "core", "pu", "preferred", "bind", "interleave", "local", "none")) {
            assertTrue(out.contains(value), "help does not mention " + value + "\n" + r.describe());
        }
        assertTrue(r.stderr.contains("version \""), "java -version did not run after help\n" + r.describe());
        assertEquals(List.of(), r.hsErrFiles(), r.describe());
    }

    @Test
    void helpWithAProgramRunsTheProgram() {
        ChildResult r = ChildJvm.probe("default:2").fakeTwoNodes().options("help").run().assertExit(0);
        assertTrue(r.stdout.contains("probe-done "), "the program did not run to its end after help\n"
                + r.describe());
    }

    @Test
    void everyOptionWithAValidValueIsAccepted() {
        ChildResult r = ChildJvm.version()
                .options("group=0,groups=1,threads=X-*|Y?,cpus=core,mem=interleave,log=warning,jfr=off,"
                        + "dryrun=false,strict=false,help=false")
                .run().assertExit(0);
        assertEquals(List.of(), r.levelLines("error"), r.describe());
        assertEquals(List.of(), r.hsErrFiles(), r.describe());
    }

    @Test
    void noOptionsAtAllIsFine() {
        ChildResult r = ChildJvm.version().options(null).run().assertExit(0);
        assertEquals(List.of(), r.levelLines("error"), r.describe());
        assertEquals(List.of(), r.levelLines("warning"), r.describe());
    }
}
