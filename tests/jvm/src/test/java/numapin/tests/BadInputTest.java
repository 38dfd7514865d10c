package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Malformed option strings (issue 7): each stops the JVM at start-up with
 * exactly one numapin error line on stderr that names what is wrong, in
 * one line of printable ASCII, and HotSpot's own initialization error; exit
 * status 1, no crash (no signal, no hs_err file) and nothing placed.
 *
 * <p>The option strings reach the JVM through an argument file
 * ({@code java @FILE}), which passes any byte as it is (non-ASCII, invalid
 * UTF-8, control characters), whatever the locale of the test JVM.
 */
@ExtendWith(RunLogs.class)
class BadInputTest {
    static final Pattern ERROR_LINE = Pattern.compile("^\\[\\d+\\.\\d{3}s\\]\\[error\\]\\[numapin\\] \\S.*");
    /** What HotSpot itself prints when Agent_OnLoad fails (JDK 17 and 25). */
    static final Pattern HOTSPOT_LINE = Pattern.compile(
            "^(Error occurred during initialization of VM|agent library failed (to init|Agent_OnLoad)\\b.*)$");

    enum Machine {
        /** This machine as it is. */
        REAL,
        /** The fake two-node machine (CPU 0 on node 0, CPU 1 on node 1). */
        FAKE,
        /** A hybrid machine's XML (two CPU kinds); dryrun in the options. */
        HYBRID
    }

    /** One case: the option string's bytes, the machine, the word the error must name (or null). */
    record Bad(String label, byte[] options, Machine machine, String names) {
        @Override
        public String toString() {
            return label;
        }
    }

    static Bad bad(String options, String names) {
        return new Bad(options.length() > 60 ? options.substring(0, 40) + "...(" + options.length() + " chars)"
                : options, options.getBytes(StandardCharsets.UTF_8), Machine.REAL, names);
    }

    static Bad fake(String options, String names) {
        return new Bad(options + " [fake 2 nodes]", options.getBytes(StandardCharsets.UTF_8), Machine.FAKE, names);
    }

    static Bad hybrid(String options, String names) {
        return new Bad(options + " [hybrid]", options.getBytes(StandardCharsets.UTF_8), Machine.HYBRID, names);
    }

    /** Raw bytes: prefix (UTF-8), then the bytes given as ints, then suffix. */
    static Bad raw(String label, String prefix, int[] bytes, String suffix, String names) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(prefix.getBytes(StandardCharsets.UTF_8));
        for (int x : bytes) {
            b.write(x);
        }
        b.writeBytes(suffix.getBytes(StandardCharsets.UTF_8));
        return new Bad(label, b.toByteArray(), Machine.REAL, names);
    }

    static String repeat(String s, int n) {
        return s.repeat(n);
    }

    static Stream<Bad> cases() {
        List<Bad> c = new ArrayList<>(List.of(
                // empty options, keys and values
                bad(",", "empty option"),
                bad(",,", "empty option"),
                bad("group=0,", "empty option"),
                bad(",group=0", "empty option"),
                bad("=", "empty option"),
                bad("=1", "empty option"),
                bad("group", "group"),
                bad("group=", "group"),
                bad("groups=", "groups"),
                bad("threads=", "threads"),
                bad("scope=", "scope"),
                bad("rescan=", "rescan"),
                bad("domain=", "domain"),
                bad("cpus=", "cpus"),
                bad("cpukind=", "cpukind"),
                bad("mem=", "mem"),
                bad("log=", "log"),
                bad("strict=", "strict"),
                bad("jfr=", "jfr"),
                bad("jfr", "jfr"),
                // unknown keys, case, spaces
                bad("foo=1", "foo"),
                bad("GROUP=1", "GROUP"),
                bad(" group=1", "group"),
                bad("group =1", "group"),
                bad("group= 1", "group"),
                bad("group=1 ", "group"),
                bad("a=1,b=2,c=3", "a"),
                // numbers: negative, signs, bases, overflow, past the range
                bad("group=-1", "group"),
                bad("group=+1", "group"),
                bad("group=0x1", "group"),
                bad("group=1e3", "group"),
                bad("group=1.0", "group"),
                bad("group=4096", "group"),
                bad("group=2147483648", "group"),
                bad("group=-2147483649", "group"),
                bad("group=99999999999999999999", "group"),
                bad("groups=0", "groups"),
                bad("groups=-1", "groups"),
                bad("groups=4097", "groups"),
                bad("groups=4294967297", "groups"),
                bad("groups=18446744073709551617", "groups"),
                bad("rescan=-1", "rescan"),
                bad("rescan=5", "rescan"),
                bad("rescan=3600001", "rescan"),
                bad("rescan=99999999999", "rescan"),
                bad("cpukind=256", "cpukind"),
                bad("cpukind=-1", "cpukind"),
                bad("cpukind=99999999999999999999", "cpukind"),
                // a group past groups
                bad("group=2,groups=2", "group"),
                bad("group=1,groups=1", "group"),
                bad("group=4096,groups=4096", "group"),
                fake("group=2", "group"),
                fake("group=5", "group"),
                // duplicate keys
                bad("group=0,group=0", "group"),
                bad("groups=2,groups=2", "groups"),
                bad("threads=a,threads=b", "threads"),
                bad("log=info,log=debug", "log"),
                bad("dryrun,dryrun", "dryrun"),
                bad("strict,strict=true", "strict"),
                // thread patterns: empty or unbalanced
                bad("threads=|", "threads"),
                bad("threads=|a", "threads"),
                bad("threads=a|", "threads"),
                bad("threads=a||b", "threads"),
                bad("threads=Worker-[", "threads"),
                bad("threads=Worker-[0-9", "threads"),
                bad("threads=[!", "threads"),
                bad("threads=[]", "threads"),
                bad("threads=[[:digit:]", "threads"),
                bad("threads=Tier-*|Worker-\\", "threads"),
                // enumerations
                bad("scope=process", "scope"),
                bad("scope=JVM", "scope"),
                bad("domain=socket", "domain"),
                bad("domain=L3", "domain"),
                bad("cpus=socket", "cpus"),
                bad("cpus=Core", "cpus"),
                bad("cpukind=fast", "cpukind"),
                bad("log=loud", "log"),
                bad("log=INFO", "log"),
                bad("log=info:", "log"),
                bad("log=:x.log", "log"),
                bad("dryrun=yes", "dryrun"),
                bad("dryrun=1", "dryrun"),
                bad("help=maybe", "help"),
                bad("jfr=yes", "jfr"),
                bad("jfr=OFF", "jfr"),
                bad("jfr=on,jfr=off", "jfr"),
                // memory policies and their nodes
                bad("mem=bogus", "mem"),
                bad("mem=bind:", "mem"),
                bad("mem=bind:a", "mem"),
                bad("mem=bind:-1", "mem"),
                bad("mem=bind:1-", "mem"),
                bad("mem=bind:3-1", "mem"),
                bad("mem=bind:0++1", "mem"),
                bad("mem=bind:0,1", "1"),
                bad("mem=bind:4096", "mem"),
                bad("mem=bind:4294967296", "mem"),
                bad("mem=bind:0-4294967295", "mem"),
                bad("mem=bind:99999999999999999999", "mem"),
                bad("mem=local:0", "mem"),
                bad("mem=none:0", "mem"),
                fake("mem=bind:2", "mem"),
                fake("mem=interleave:0-1+7", "mem"),
                // machine-dependent values
                fake("domain=l3,strict", "domain"),
                hybrid("cpukind=7,dryrun", "cpukind"),
                // several errors: still one line, about the first
                bad("group=0,cpus=bad,mem=worse", "cpus"),
                bad("x=1,y=2", "x"),
                // non-ASCII and control bytes
                bad("gr\u00fcp=1", null),
                bad("group=\u0661", "group"),
                bad("cpus=c\u00f6re", "cpus"),
                bad("mem=bind:\u00b9", "mem"),
                bad("cpus=core\u00a0", "cpus"),
                raw("cpus=\\xff", "cpus=", new int[] {0xff}, "", "cpus"),
                raw("\\xc3\\x28=1 (invalid UTF-8 key)", "", new int[] {0xc3, 0x28}, "=1", null),
                raw("cpus=co\\nre", "cpus=co", new int[] {'\n'}, "re", "cpus"),
                raw("group=1\\tgroups=2", "group=1", new int[] {'\t'}, "groups=2", "group"),
                raw("cpus=\\x1b[31mred (terminal escape)", "cpus=", new int[] {0x1b}, "[31mred", "cpus"),
                raw("log=\\x07", "log=", new int[] {7}, "", "log"),
                // 10 KB
                bad(repeat("x", 10240), null),
                bad("threads=" + repeat("a", 10240), null),
                bad("group=" + repeat("9", 10000), null),
                bad(repeat("group=0,", 1300), null),
                // just under the length limit, still wrong
                bad("threads=" + repeat("a", 8000) + ",cpus=bad", "cpus"),
                bad(repeat("k", 5000) + "=1", null)));
        return c.stream();
    }

    /** The options inside a double-quoted argument-file string (java @FILE). */
    static byte[] argFileLine(byte[] agentPrefix, byte[] options) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.write('"');
        for (byte[] part : List.of(agentPrefix, options)) {
            for (byte x : part) {
                switch (x) {
                    case '\\' -> b.writeBytes(new byte[] {'\\', '\\'});
                    case '"' -> b.writeBytes(new byte[] {'\\', '"'});
                    case '\n' -> b.writeBytes(new byte[] {'\\', 'n'});
                    case '\r' -> b.writeBytes(new byte[] {'\\', 'r'});
                    case '\t' -> b.writeBytes(new byte[] {'\\', 't'});
                    case '\f' -> b.writeBytes(new byte[] {'\\', 'f'});
                    default -> b.write(x);
                }
            }
        }
        b.write('"');
        b.write('\n');
        return b.toByteArray();
    }

    static ChildResult runWith(byte[] options, Machine machine) throws IOException {
        Path argFile = Files.createTempFile("numapin-badinput-", ".args");
        try {
            byte[] prefix = ("-agentpath:" + ChildJvm.agent() + "=").getBytes(StandardCharsets.UTF_8);
            Files.write(argFile, argFileLine(prefix, options));
            FaultsTest.Child c = FaultsTest.Child.version().noAgent().jvmArg("@" + argFile);
            ChildResult r = switch (machine) {
                case FAKE -> c.fakeTwoNodes().run();
                case HYBRID -> c.env("HWLOC_XMLFILE",
                        FaultsTest.topology("20em64t-hybrid-1p6c2t+2ca4co1t.xml").toString()).run();
                default -> c.run();
            };
            return r;
        } finally {
            Files.deleteIfExists(argFile);
        }
    }

    /** Everything a bad option string must do, whatever the string. */
    static String assertStopsWithOneLine(ChildResult r, String what) {
        String ctx = what + "\n" + r.describe();
        assertTrue(r.exitCode != 0, "the JVM started\n" + ctx);
        assertTrue(r.exitCode < 128, "the JVM died of a signal\n" + ctx);
        assertEquals(1, r.exitCode, "HotSpot's exit status for a failed Agent_OnLoad\n" + ctx);
        assertEquals(List.of(), r.hsErrFiles(), "hs_err files: the JVM crashed\n" + ctx);

        List<String> errors = r.stderrLogLines();
        assertEquals(1, errors.size(), "numapin lines on stderr\n" + ctx);
        String line = errors.get(0);
        assertTrue(ERROR_LINE.matcher(line).matches(), "not an error line in unified-logging shape: " + line);
        // Printable ASCII only: a control byte taken from the options would
        // break the line or drive the terminal; other bytes are written as
        // \xNN, as thread names are (docs/logging.md).
        assertTrue(line.chars().allMatch(ch -> ch >= 0x20 && ch < 0x7f),
                "control or non-ASCII characters in the error line: "
                        + line.replaceAll("[^\\x20-\\x7e]", "?"));
        assertTrue(line.length() < 1500, "an error line of " + line.length() + " characters");
        // Nothing else on stderr but HotSpot's own two lines: a line broken
        // in two by a newline taken from the options would show here.
        for (String l : r.stderrLines()) {
            assertTrue(l.equals(line) || HOTSPOT_LINE.matcher(l).matches() || l.isEmpty(),
                    "stderr line neither numapin's error nor HotSpot's: '" + l + "'\n" + ctx);
        }
        assertTrue((r.stdout + r.stderr).contains("Error occurred during initialization of VM"),
                "HotSpot's own initialization error is missing\n" + ctx);
        // No partial start: nothing placed, no error twice.
        List<String> out = r.logLines();
        assertEquals(List.of(), out.stream().filter(l -> l.contains("[error][numapin]")).collect(Collectors.toList()),
                "error lines on stdout too\n" + ctx);
        assertEquals(List.of(), out.stream().filter(l -> l.contains("[numapin] placed \"")
                || l.contains("[numapin] would-place \"") || l.contains("[numapin] jvm group="))
                .collect(Collectors.toList()), "placements before the JVM stopped\n" + ctx);
        return line;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void badOptionStringStopsTheJvmWithOneClearLine(Bad c) throws IOException {
        ChildResult r = runWith(c.options(), c.machine());
        String line = assertStopsWithOneLine(r, "options: " + c.label());
        if (c.names() != null) {
            String msg = line.substring(line.indexOf("] ", line.indexOf("[numapin]")) + 2);
            assertTrue(Pattern.compile("(^|\\W)" + Pattern.quote(c.names()) + "(\\W|$)").matcher(msg).find(),
                    "the error does not name '" + c.names() + "': " + line);
        }
    }

    @Test
    void atLeastSixtyCases() {
        assertTrue(cases().count() >= 60, "cases: " + cases().count());
    }

    /** The error also reaches the log file the options asked for, once. */
    @Test
    void theErrorAlsoGoesToTheLogFileAsked() throws IOException {
        Path dir = RunLogs.newRunDir();
        Path log = dir.resolve("numapin.log");
        ChildResult r = runWith(("log=debug:" + log + ",cpus=bogus,groups=0").getBytes(StandardCharsets.UTF_8),
                Machine.REAL);
        String line = assertStopsWithOneLine(r, "log file and a bad option");
        String text = Files.readString(log);
        List<String> fileLines = ChildResult.lines(text);
        assertEquals(List.of(line.substring(line.indexOf("]["))),
                fileLines.stream().map(l -> l.substring(l.indexOf("]["))).collect(Collectors.toList()),
                "the log file holds the one error line\n" + r.describe());
    }
}
