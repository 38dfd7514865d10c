package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The blocks of the documents that tests run or compare with what numapin
 * prints: the fenced block after a line {@code <!-- test: NAME -->}, and
 * the shape of an output line (its words and the keys of its fields, in
 * order, without their values), which a sample shares with the real
 * output however the numbers differ.
 */
final class DocSamples {
    private DocSamples() {}

    /**
     * The fenced block that follows the line {@code <!-- test: NAME -->} in
     * the document at path (relative to the repository), without the
     * indentation of its fence (blocks in list items are indented).
     */
    static String block(String path, String name) {
        Path p = Build.repo().resolve(path);
        List<String> lines = ChildResult.lines(TestFiles.read(p));
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

    /** The lines of a sample block, without the "..." lines that stand for more of the same. */
    static List<String> sampleLines(String path, String name) {
        return ChildResult.lines(block(path, name)).stream().filter(l -> !l.trim().equals("..."))
                .collect(Collectors.toList());
    }

    private static final Pattern TOKEN = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|\\S+");
    private static final Pattern LOG_PREFIX = Pattern.compile("^\\[[0-9.]+s\\]\\[([a-z]+)\\]\\[numapin\\] ");

    /**
     * A line's shape: a log line's level, then for each word of the line
     * the word itself, "KEY=" for a field, "\"\"" for a quoted string (a
     * thread's name). A field's value in parentheses after it (the plan
     * line's scope) is a word of its own.
     */
    static String shape(String line) {
        List<String> out = new ArrayList<>();
        Matcher p = LOG_PREFIX.matcher(line);
        String rest = line;
        if (p.find()) {
            out.add("[" + p.group(1) + "]");
            rest = line.substring(p.end());
        }
        Matcher m = TOKEN.matcher(rest);
        while (m.find()) {
            String t = m.group();
            int eq = t.indexOf('=');
            if (t.startsWith("\"")) {
                out.add("\"\"");
            } else if (eq > 0) {
                out.add(t.substring(0, eq + 1));
            } else {
                out.add(t);
            }
        }
        return String.join(" ", out);
    }

    /** The shapes of lines, in order. */
    static List<String> shapes(List<String> lines) {
        return lines.stream().map(DocSamples::shape).collect(Collectors.toList());
    }

    /**
     * The sample and the real lines have the same shapes in the same order;
     * what says where each comes from on failure.
     */
    static void assertSameShapes(List<String> sample, List<String> real, String what) {
        assertEquals(String.join("\n", shapes(sample)), String.join("\n", shapes(real)),
                "the sample's lines vs. the program's, as shapes (" + what + ")\nsample:\n"
                        + String.join("\n", sample) + "\nreal:\n" + String.join("\n", real));
    }
}
