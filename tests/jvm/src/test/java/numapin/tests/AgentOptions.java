package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the agent itself says about its options: the options its error for
 * an unknown one lists ("valid options are ..."), and its reference
 * (-agentpath:...=help): a line "  KEY[=SPEC]  description" for each, the
 * description going on in more indented lines. The tests take from these
 * which options to cover, so that none is left out.
 */
final class AgentOptions {
    private static final Pattern OPTION_LINE = Pattern.compile("^  ([a-z]+)(?:=(\\S+))?(?:\\s.*)?$");
    private static final Pattern VALID_OPTIONS = Pattern.compile(": valid options are (.+)$");

    private static List<String> accepted;
    private static String help;

    private AgentOptions() {}

    /** The options named by the error for an unknown option, in its order. */
    static synchronized List<String> accepted() {
        if (accepted == null) {
            ChildResult r = Launch.version().options("numapin-no-such-option=1").run();
            List<String> errors = r.stderrLogLines();
            assertEquals(1, errors.size(), "the error for an unknown option\n" + r.describe());
            Matcher m = VALID_OPTIONS.matcher(errors.get(0));
            assertTrue(m.find(), "the error for an unknown option lists no valid options: " + errors.get(0));
            accepted = List.of(m.group(1).split(", "));
        }
        return accepted;
    }

    /** What `java -agentpath:...=help -version` prints on stdout. */
    static synchronized String help() {
        if (help == null) {
            help = Launch.version().options("help").run().assertExit(0).stdout;
        }
        return help;
    }

    /** Each option of a help text: KEY -> [SPEC, the lines about it]. */
    private static Map<String, String[]> parse(String text) {
        Map<String, String[]> r = new LinkedHashMap<>();
        String key = null;
        for (String l : ChildResult.lines(text)) {
            Matcher m = OPTION_LINE.matcher(l);
            if (m.matches()) {
                key = m.group(1);
                assertTrue(r.put(key, new String[] {m.group(2) == null ? "" : m.group(2), l}) == null,
                        "help documents " + key + " twice:\n" + text);
            } else if (key != null && l.startsWith("   ")) {
                r.get(key)[1] += "\n" + l;
            } else {
                key = null;
            }
        }
        return r;
    }

    /** The options a help text documents, in its order. */
    static List<String> documented(String text) {
        return new ArrayList<>(parse(text).keySet());
    }

    private static String[] of(String key) {
        String[] o = parse(help()).get(key);
        assertTrue(o != null, "help does not document " + key + ":\n" + help());
        return o;
    }

    /** The help's lines about an option: its line and the description's. */
    static String helpOf(String key) {
        return of(key)[1];
    }

    /**
     * The literal values in the help's KEY=SPEC: "cpus=node|core|pu" gives
     * node, core, pu; placeholders (N, GLOB, LEVEL) and optional parts
     * ("none[:NODES]" gives none) are left out.
     */
    static List<String> literalValues(String key) {
        List<String> r = new ArrayList<>();
        for (String alt : of(key)[0].split("\\|")) {
            String v = alt.replaceAll("\\[.*\\]$", "");
            if (v.matches("[a-z][a-z0-9]*")) {
                r.add(v);
            }
        }
        return r;
    }
}
