package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The child programs' output (numapin.child): lines "WORD key=value key="quoted value" ...".
 */
final class Lines {
    private static final Pattern FIELD = Pattern.compile(" ([a-z_]+)=(\"(?:[^\"\\\\]|\\\\.)*\"|\\S+)");

    private Lines() {}

    /** One line's fields, in order; quoted values unquoted. */
    static Map<String, String> fields(String line) {
        Map<String, String> f = new LinkedHashMap<>();
        Matcher m = FIELD.matcher(line);
        while (m.find()) {
            String v = m.group(2);
            if (v.startsWith("\"")) {
                v = ChildResult.unquote(v.substring(1, v.length() - 1));
            }
            f.put(m.group(1), v);
        }
        return f;
    }

    /** The fields of every stdout line that starts with "WORD ". */
    static List<Map<String, String>> of(ChildResult r, String word) {
        List<Map<String, String>> out = new ArrayList<>();
        for (String l : r.stdoutLines()) {
            if (l.startsWith(word + " ") || l.equals(word)) {
                out.add(fields(l));
            }
        }
        return out;
    }

    /** Exactly n such lines. */
    static List<Map<String, String>> exactly(ChildResult r, String word, int n) {
        List<Map<String, String>> l = of(r, word);
        assertTrue(l.size() == n, l.size() + " '" + word + "' lines, expected " + n + "\n" + r.describe());
        return l;
    }

    /** Exactly one such line. */
    static Map<String, String> one(ChildResult r, String word) {
        return exactly(r, word, 1).get(0);
    }

    /** numapin's summary line as a map (every field). */
    static Map<String, String> summary(ChildResult r) {
        List<String> s = r.logLines().stream().filter(l -> l.contains("][numapin] summary ")).toList();
        assertTrue(s.size() == 1, s.size() + " summary lines, expected 1\n" + r.describe());
        return fields(s.get(0).substring(s.get(0).indexOf(" summary") + " summary".length()));
    }

    static Map<String, String> summary(List<String> logLines, String context) {
        List<String> s = logLines.stream().filter(l -> l.contains("][numapin] summary ")).toList();
        assertTrue(s.size() == 1, s.size() + " summary lines, expected 1\n" + context);
        return fields(s.get(0).substring(s.get(0).indexOf(" summary") + " summary".length()));
    }
}
