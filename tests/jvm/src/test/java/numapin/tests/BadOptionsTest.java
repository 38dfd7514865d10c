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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Option strings the agent refuses: each stops the JVM at start-up with
 * exactly one numapin error line on stderr, of printable ASCII, that names
 * the option and what to give instead (its valid values, the valid options,
 * the machine's nodes, to give it once, the longest string), and HotSpot's
 * own initialization error; exit status 1, no crash (no signal, no hs_err
 * file) and nothing placed. The valid values an error lists are those the
 * agent's help names ({@link AgentOptions}).
 *
 * <p>The option strings reach the JVM through an argument file
 * ({@code java @FILE}), which passes any byte as it is (non-ASCII, invalid
 * UTF-8, control characters), whatever the locale of the test JVM.
 */
@ExtendWith(RunLogs.class)
class BadOptionsTest {
    /**
     * What an error says to give instead: the valid values, options or
     * nodes, to give an option once, the longest option string; or, for a
     * refusal that depends on the machine, that strict stopped the JVM.
     */
    static final Pattern FIX = Pattern.compile("\\bvalid (values|options|nodes) are \\S|: give each option once$"
            + "|: at most \\d+ are accepted$|\\(strict: the JVM does not start\\)$");
    /** An error about one option's value that lists the valid values: KEY, then the values. */
    static final Pattern VALUES_OF = Pattern.compile(
            "(?:invalid value '.*' for option|option) '([a-z]+)'(?: needs a value)?: valid values are (.+)$");
    static final Pattern OPTIONS_LISTED = Pattern.compile(": valid options are (.+)$");

    enum Topology {
        /** This machine as it is. */
        REAL,
        /** The fake two-node machine (CPU 0 on node 0, CPU 1 on node 1). */
        FAKE,
        /** A hybrid machine's XML (two CPU kinds); dryrun in the options. */
        HYBRID
    }

    /**
     * One case: the option string's bytes, the machine, the word the error
     * must name (or null), and values it must list.
     */
    record Bad(String label, byte[] options, Topology machine, String names, List<String> lists) {
        Bad(String label, byte[] options, Topology machine, String names) {
            this(label, options, machine, names, List.of());
        }

        /** The same case, its error also listing these values. */
        Bad listing(String... values) {
            return new Bad(label, options, machine, names, List.of(values));
        }

        @Override
        public String toString() {
            return label;
        }
    }

    static Bad bad(String options, String names) {
        return new Bad(options.length() > 60 ? options.substring(0, 40) + "...(" + options.length() + " chars)"
                : options, options.getBytes(StandardCharsets.UTF_8), Topology.REAL, names);
    }

    static Bad fake(String options, String names) {
        return new Bad(options + " [fake 2 nodes]", options.getBytes(StandardCharsets.UTF_8), Topology.FAKE, names);
    }

    static Bad hybrid(String options, String names) {
        return new Bad(options + " [hybrid]", options.getBytes(StandardCharsets.UTF_8), Topology.HYBRID, names);
    }

    /** Raw bytes: prefix (UTF-8), then the bytes given as ints, then suffix. */
    static Bad raw(String label, String prefix, int[] bytes, String suffix, String names) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(prefix.getBytes(StandardCharsets.UTF_8));
        for (int x : bytes) {
            b.write(x);
        }
        b.writeBytes(suffix.getBytes(StandardCharsets.UTF_8));
        return new Bad(label, b.toByteArray(), Topology.REAL, names);
    }

    static String repeat(String s, int n) {
        return s.repeat(n);
    }

    static Stream<Bad> cases() {
        List<Bad> c = new ArrayList<>(List.of(
                // empty options and keys (empty values: everyOptionGivenNoValueIsRefused...)
                bad(",", "empty option"),
                bad(",,", "empty option"),
                bad("group=0,", "empty option"),
                bad(",group=0", "empty option"),
                bad("=", "empty option"),
                bad("=1", "empty option"),
                bad("group", "group"),
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
                bad("group=abc", "group"),
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
                bad("drift=off", "drift"),
                bad("lockdir=relative/dir", "lockdir"),
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
                bad("group=0,group=1", "group"),
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
                bad("cpus=bogus", "cpus").listing("node", "core", "pu"),
                bad("cpus=Core", "cpus"),
                bad("cpukind=fast", "cpukind"),
                bad("log=loud", "log").listing("off", "error", "warning", "info", "debug", "trace"),
                bad("log=INFO", "log"),
                bad("log=info:", "log"),
                bad("log=:x.log", "log"),
                bad("dryrun=on", "dryrun"),
                bad("drift=never", "drift").listing("restore", "log"),
                bad("lockdir=tmp/locks", "lockdir").listing("absolute path"),
                bad("dryrun=1", "dryrun"),
                bad("dryrun=maybe", "dryrun"),
                bad("help=maybe", "help"),
                bad("jfr=yes", "jfr"),
                bad("jfr=OFF", "jfr"),
                bad("jfr=on,jfr=off", "jfr"),
                // memory policies and their nodes
                bad("mem=bogus", "mem").listing("preferred", "bind", "interleave", "local", "none"),
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

    /** java @FILE -version, the argument file holding -agentpath:LIB=OPTIONS (kept with the run's logs). */
    static ChildResult runWith(byte[] options, Topology machine) throws IOException {
        Path argFile = RunLogs.newRunDir().resolve("options.args");
        byte[] prefix = ("-agentpath:" + Build.agent() + "=").getBytes(StandardCharsets.UTF_8);
        Files.write(argFile, argFileLine(prefix, options));
        Launch c = Launch.version().noAgent().jvmArg("@" + argFile);
        return switch (machine) {
            case FAKE -> c.fakeTwoNodes().run();
            case HYBRID -> c.env("HWLOC_XMLFILE", Build.topology("20em64t-hybrid-1p6c2t+2ca4co1t.xml").toString())
                    .run();
            default -> c.run();
        };
    }

    /**
     * Everything a bad option string must do, whatever the string: stop the
     * JVM with exit status 1 and one error line of printable ASCII that ends
     * saying what to give instead, nothing else on stderr but HotSpot's own
     * lines. Returns the error line.
     */
    static String assertStopsWithOneLine(ChildResult r, String what) {
        String ctx = what + "\n" + r.describe();
        String line = r.assertDidNotStart("");
        assertEquals(1, r.exitCode, "HotSpot's exit status for a failed Agent_OnLoad\n" + ctx);
        // Printable ASCII only: a control byte taken from the options would
        // break the line or drive the terminal; other bytes are written as
        // \\xNN, as thread names are (docs/logging.md).
        assertTrue(line.chars().allMatch(ch -> ch >= 0x20 && ch < 0x7f),
                "control or non-ASCII characters in the error line: "
                        + line.replaceAll("[^\\x20-\\x7e]", "?"));
        assertTrue(line.length() < 1500, "an error line of " + line.length() + " characters");
        // Nothing else on stderr but HotSpot's own two lines: a line broken
        // in two by a newline taken from the options would show here.
        for (String l : r.stderrLines()) {
            assertTrue(l.equals(line) || ChildResult.HOTSPOT_LINE.matcher(l).matches() || l.isEmpty(),
                    "stderr line neither numapin's error nor HotSpot's: '" + l + "'\n" + ctx);
        }
        String msg = message(line);
        assertTrue(FIX.matcher(msg).find(), "the error does not say what to give instead: " + line);
        Matcher values = VALUES_OF.matcher(msg);
        if (values.find()) {
            assertListsTheValuesHelpNames(values.group(1), values.group(2), line);
        }
        Matcher options = OPTIONS_LISTED.matcher(msg);
        if (options.find()) {
            assertEquals(AgentOptions.documented(AgentOptions.help()), List.of(options.group(1).split(", ")),
                    "the valid options of the error vs. those help documents: " + line);
        }
        return line;
    }

    /** The message of a numapin log line, after "[numapin] ". */
    static String message(String line) {
        return line.substring(line.indexOf("] ", line.indexOf("[numapin]")) + 2);
    }

    static boolean hasWord(String text, String word) {
        return Pattern.compile("(^|\\W)" + Pattern.quote(word) + "(\\W|$)").matcher(text).find();
    }

    /**
     * The valid values an error lists for an option agree with the agent's
     * help: each value its help names literally (node, core, pu) is in the
     * error, and each single-word value of the error is in the help's lines
     * about the option.
     */
    static void assertListsTheValuesHelpNames(String key, String values, String line) {
        for (String v : AgentOptions.literalValues(key)) {
            assertTrue(hasWord(values, v), "the error does not list " + key + "=" + v + ", which help names: " + line);
        }
        String help = AgentOptions.helpOf(key);
        for (String v : values.split(", ")) {
            if (v.matches("[a-z][a-z0-9]*")) {
                assertTrue(hasWord(help, v), "the error lists " + key + "=" + v + ", which help does not name: " + line
                        + "\nhelp:\n" + help);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void badOptionStringStopsTheJvmWithOneClearLine(Bad c) throws IOException {
        ChildResult r = runWith(c.options(), c.machine());
        String line = assertStopsWithOneLine(r, "options: " + c.label());
        if (c.names() != null) {
            assertTrue(hasWord(message(line), c.names()), "the error does not name '" + c.names() + "': " + line);
        }
        for (String v : c.lists()) {
            assertTrue(hasWord(message(line), v), "the error does not list the valid value '" + v + "': " + line);
        }
    }

    /** KEY= for every option the agent accepts: refused, naming KEY and its valid values. */
    @Test
    void everyOptionGivenNoValueIsRefusedWithItsValidValues() throws IOException {
        for (String key : AgentOptions.accepted()) {
            ChildResult r = runWith((key + "=").getBytes(StandardCharsets.UTF_8), Topology.REAL);
            String line = assertStopsWithOneLine(r, "options: " + key + "=");
            Matcher m = VALUES_OF.matcher(message(line));
            assertTrue(m.find() && m.group(1).equals(key), "the error for " + key + "= does not give " + key
                    + "'s valid values: " + line);
        }
    }

    /** The error also reaches the log file the options asked for, once. */
    @Test
    void theErrorAlsoGoesToTheLogFileAsked() throws IOException {
        Path dir = RunLogs.newRunDir();
        Path log = dir.resolve("numapin.log");
        ChildResult r = runWith(("log=debug:" + log + ",cpus=bogus,groups=0").getBytes(StandardCharsets.UTF_8),
                Topology.REAL);
        String line = assertStopsWithOneLine(r, "log file and a bad option");
        String text = Files.readString(log);
        List<String> fileLines = ChildResult.lines(text);
        assertEquals(List.of(line.substring(line.indexOf("]["))),
                fileLines.stream().map(l -> l.substring(l.indexOf("]["))).collect(Collectors.toList()),
                "the log file holds the one error line\n" + r.describe());
    }
}
