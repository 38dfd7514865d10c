package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * Every output of numapin, read by a strict reader of its format, for
 * threads with hostile and ordinary names (numapin.child.Named): markup
 * and script, quotes and backslashes, line breaks, controls and terminal
 * escapes, the bidirectional controls, zero-width characters, a lone high
 * and a lone low surrogate, an emoji, U+0000, CJK, combining marks and
 * 10,000 characters.
 *
 * <p>What each reader must get (the names' forms are derived here from
 * each name as Java has it):
 * <ul>
 * <li>the text: the name in UTF-8, a lone surrogate and U+0000 as U+FFFD;
 * <li>the log (log=info:FILE): ASCII, every line a log line, each name
 *   quoted with {@code "} and {@code \} escaped and every other byte
 *   outside printable ASCII as {@code \xNN};
 * <li>the report (report=FILE) and `numapin check PID --json`: JSON that
 *   Python's json reads from strict UTF-8, without a lone surrogate; each
 *   name its text, and in the report "name_escaped" where the text is not
 *   the name exactly, from which the exact name comes back;
 * <li>what a person reads (`report --html`, `check --svg`, `check
 *   --watch`): the text with controls, format characters and backslashes
 *   written out, so that no name hides, reverses or breaks what follows it,
 *   and no name becomes markup: the page and the SVGs parse (xmllint, the
 *   JDK's XML parser, Python's html.parser, Chromium's DOM) without an
 *   element or attribute from a name; the page's thread table keeps every
 *   column inside a 1,400 px window; the live view's columns stay aligned
 *   at 160 and 80 columns in tmux;
 * <li>`jfr print` (numapin.Placement): each name as Java has the text.
 * </ul>
 * Every check runs, and the test fails with the list of those that did not
 * hold. Needs Python 3, xmllint, Chromium and tmux
 * (scripts/install-deps.sh view).
 */
@ExtendWith(RunLogs.class)
class HostileNamesTest {
    static final String PYTHON = "/usr/bin/python3";
    static final String XMLLINT = "/usr/bin/xmllint";
    static final int WINDOW = 1400;

    /** The 10,000-character name, without a space to break it at. */
    static final String LONG = longName();

    /** Label and name, every name starting "H-" (threads=H-* places them all). */
    static final Map<String, String> NAMES = names();

    static String longName() {
        StringBuilder sb = new StringBuilder("H-long-");
        while (sb.length() < 10_000) {
            sb.append("0123456789abcdefghijklmnopqrstuvwxyz");
        }
        sb.setLength(10_000);
        return sb.toString();
    }

    static Map<String, String> names() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("ordinary", "H-worker-1");
        m.put("markup", "H-<script>alert(1)</script><img src=x onerror=alert(2)>"
                + "<hostile-el hostile-attr=\"1\">&amp;</hostile-el>");
        m.put("quotes", "H-q \"double\" 'single' `back` \\x41 \\u202e \\\\ end\\");
        m.put("newline", "H-line\nbreak\r\n[0.000s][error][numapin] forged");
        m.put("controls", "H-ctl\u0001\u0007\t\u001b[31mred\u001b[0m\u007f\u0085\u009b");
        m.put("bidi", "H-bidi\u202Aa\u202Bb\u202Cc\u202Dd\u202Ee\u2066f\u2067g\u2068h\u2069i\u200Ej\u200Fk"
                + "\u061Cl\u2028m\u2029n");
        m.put("zero-width", "H-zw\u200Ba\u200Cb\u200Dc\u2060d\uFEFFe\u00ADf");
        m.put("lone high surrogate", "H-sur-hi\uD800x");
        m.put("lone low surrogate", "H-sur-lo\uDC00x");
        m.put("emoji", "H-emoji\uD83D\uDE00x");
        m.put("U+0000", "H-nul\u0000x");
        m.put("CJK", "H-\u6F22\u5B57\u30B9\u30EC\u30C3\u30C9-\u7EBF\u7A0B");
        m.put("combining", "H-comb e\u0301 u\u0308 a\u030A\u0323");
        m.put("10,000 characters", LONG);
        return m;
    }

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
    }

    // ---- the forms of a name, from the name as Java has it -----------------------------------------

    /** The name's UTF-8 text, as a Java string: a lone surrogate and U+0000 become U+FFFD. */
    static String text(String name) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
                sb.append(c).append(name.charAt(++i));
            } else if (Character.isSurrogate(c) || c == 0) {
                sb.append('\uFFFD');
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    /** The report's "name_escaped" for a name, or null when its text is the name exactly. */
    static String escaped(String name) {
        if (text(name).equals(name)) {
            return null;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
                sb.append(c).append(name.charAt(++i));
            } else if (Character.isSurrogate(c) || c == 0) {
                sb.append(String.format("\\u%04x", (int) c));
            } else if (c == '\\') {
                sb.append("\\\\");
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    /** The exact name from "name_escaped": `\\` a backslash, `\\uXXXX` a UTF-16 unit; null when malformed. */
    static String unescape(String esc) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < esc.length(); i++) {
            char c = esc.charAt(i);
            if (c != '\\') {
                sb.append(c);
            } else if (i + 1 < esc.length() && esc.charAt(i + 1) == '\\') {
                sb.append('\\');
                i++;
            } else if (i + 5 < esc.length() && esc.charAt(i + 1) == 'u'
                    && esc.substring(i + 2, i + 6).matches("[0-9a-f]{4}")) {
                sb.append((char) Integer.parseInt(esc.substring(i + 2, i + 6), 16));
                i += 5;
            } else {
                return null;
            }
        }
        return sb.toString();
    }

    /** The log's form: the text's UTF-8 quoted, `"` and `\` escaped, every byte outside 0x20-0x7e as \xNN. */
    static String logForm(String text) {
        StringBuilder sb = new StringBuilder("\"");
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            int u = b & 0xff;
            if (u == '"' || u == '\\') {
                sb.append('\\').append((char) u);
            } else if (u < 0x20 || u >= 0x7f) {
                sb.append(String.format("\\x%02x", u));
            } else {
                sb.append((char) u);
            }
        }
        return sb.append('"').toString();
    }

    /**
     * A character a person must see written out: a control, a format
     * character (Unicode's Cf: the bidirectional controls, zero-width
     * characters, the BOM, the soft hyphen) or a line or paragraph separator.
     */
    static boolean hidden(int cp) {
        return Character.isISOControl(cp) || Character.getType(cp) == Character.FORMAT || cp == 0x2028
                || cp == 0x2029;
    }

    /**
     * What a person reads: a hidden character below U+0080 as backslash, x and
     * two hex digits, up to U+FFFF as backslash, u and four, beyond as
     * backslash, U and eight; a backslash doubled.
     */
    static String shown(String text) {
        StringBuilder sb = new StringBuilder();
        text.codePoints().forEach(cp -> {
            if (cp == '\\') {
                sb.append("\\\\");
            } else if (!hidden(cp)) {
                sb.appendCodePoint(cp);
            } else if (cp < 0x80) {
                sb.append(String.format("\\x%02x", cp));
            } else if (cp < 0x10000) {
                sb.append(String.format("\\u%04x", cp));
            } else {
                sb.append(String.format("\\U%08x", cp));
            }
        });
        return sb.toString();
    }

    static String hex(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            sb.append(String.format("%04x", (int) s.charAt(i)));
        }
        return sb.toString();
    }

    static String unhex(String hex) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i + 4 <= hex.length(); i += 4) {
            sb.append((char) Integer.parseInt(hex.substring(i, i + 4), 16));
        }
        return sb.toString();
    }

    /** A string cut for a failure message, each hidden character as <U+XXXX>. */
    static String brief(String s) {
        StringBuilder sb = new StringBuilder();
        s.codePoints().forEach(cp -> {
            if (hidden(cp) || Character.isSurrogate((char) cp) && cp < 0x10000) {
                sb.append(String.format("<U+%04X>", cp));
            } else {
                sb.appendCodePoint(cp);
            }
        });
        String v = sb.toString();
        return v.length() > 160 ? v.substring(0, 160) + "...(" + s.length() + " chars)" : v;
    }

    /** Terminal cells a character takes (wcwidth's rule for the characters used here). */
    static int cells(int cp) {
        int t = Character.getType(cp);
        if (t == Character.NON_SPACING_MARK || t == Character.ENCLOSING_MARK || t == Character.FORMAT) {
            return 0;
        }
        boolean wide = cp >= 0x1100 && (cp <= 0x115f || (cp >= 0x2e80 && cp <= 0xa4cf && cp != 0x303f)
                || (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xfe30 && cp <= 0xfe6f)
                || (cp >= 0xff00 && cp <= 0xff60) || (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f)
                || (cp >= 0x1f900 && cp <= 0x1f9ff) || (cp >= 0x20000 && cp <= 0x3fffd));
        return wide ? 2 : 1;
    }

    /** A screen line as cells: the character drawn in each (a wide one in its first, "" in its second). */
    static List<String> cellsOf(String line) {
        List<String> r = new ArrayList<>();
        line.codePoints().forEach(cp -> {
            int w = cells(cp);
            String s = new String(Character.toChars(cp));
            if (w == 0 && !r.isEmpty()) {
                r.set(r.size() - 1, r.get(r.size() - 1) + s);
            } else {
                r.add(s);
                if (w == 2) {
                    r.add("");
                }
            }
        });
        return r;
    }

    static String cellRange(List<String> c, int from, int to) {
        StringBuilder sb = new StringBuilder();
        for (int i = Math.max(0, from); i < Math.min(to, c.size()); i++) {
            sb.append(c.get(i));
        }
        return sb.toString();
    }

    // ---- the checks, all run, failures collected -------------------------------------------------

    private final List<String> failures = new ArrayList<>();
    private int checks;

    private void check(boolean ok, String what) {
        checks++;
        if (!ok) {
            failures.add(what);
        }
    }

    private void checkEq(Object want, Object got, String what) {
        check(java.util.Objects.equals(want, got), what + ": want " + briefObj(want) + ", got " + briefObj(got));
    }

    static String briefObj(Object o) {
        return o instanceof String s ? "\"" + brief(s) + "\"" : String.valueOf(o);
    }

    /** The bytes as strict UTF-8, or null (a failure recorded) when they are not. */
    private String utf8(Path file, String what) {
        try {
            byte[] b = Files.readAllBytes(file);
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b)).toString();
        } catch (CharacterCodingException e) {
            check(false, what + " (" + file + ") is not valid UTF-8: " + e);
            return null;
        } catch (IOException e) {
            check(false, what + ": cannot read " + file + ": " + e);
            return null;
        }
    }

    /** No character a person must see written out, other than the line breaks and tabs of the format itself. */
    private void noHidden(String content, String what) {
        if (content == null) {
            return;
        }
        Set<String> seen = new TreeSet<>();
        content.codePoints().filter(cp -> hidden(cp) && cp != '\n' && cp != '\t' && cp != '\r')
                .forEach(cp -> seen.add(String.format("U+%04X", cp)));
        check(seen.isEmpty(), what + " holds raw characters a reader cannot see: " + seen);
    }

    // ---- the tools ---------------------------------------------------------------------------------

    /** The strict readers, in Python: JSON from strict UTF-8, and HTML's elements, attributes and text. */
    static final String READERS = """
            import html.parser, json, sys

            def h(s):
                return s.encode('utf-16-be', 'surrogatepass').hex()

            def strict(path):
                text = open(path, 'rb').read().decode('utf-8', 'strict')
                def pairs(ps):
                    d = {}
                    for k, v in ps:
                        if k in d:
                            raise ValueError('duplicate key %r' % k)
                        d[k] = v
                    return d
                def const(c):
                    raise ValueError('not JSON: %s' % c)
                doc = json.loads(text, object_pairs_hook=pairs, parse_constant=const)
                def walk(v, where):
                    if isinstance(v, str):
                        try:
                            v.encode('utf-8')
                        except UnicodeEncodeError as e:
                            raise ValueError('%s: a string that is not text (%s)' % (where, e))
                    elif isinstance(v, dict):
                        for k, x in v.items():
                            walk(k, where)
                            walk(x, where + '.' + k)
                    elif isinstance(v, list):
                        for i, x in enumerate(v):
                            walk(x, '%s[%d]' % (where, i))
                walk(doc, '$')
                return doc

            class Markup(html.parser.HTMLParser):
                def handle_starttag(self, tag, attrs):
                    print('TAG', tag)
                    for k, v in attrs:
                        print('ATTR', k)
                def handle_startendtag(self, tag, attrs):
                    self.handle_starttag(tag, attrs)
                def handle_data(self, data):
                    print('TEXT', h(data))

            mode, path = sys.argv[1], sys.argv[2]
            if mode == 'markup':
                p = Markup(convert_charrefs=True)
                p.feed(open(path, 'rb').read().decode('utf-8', 'strict'))
                p.close()
                sys.exit(0)
            doc = strict(path)
            if mode == 'report':
                print('VERSION', json.dumps(doc.get('numapin')))
                adv = doc.get('advice')
                if not isinstance(adv, list):
                    print('ADVICE-NOT-A-LIST', json.dumps(type(adv).__name__))
                else:
                    for a in adv:
                        ok = isinstance(a, dict) and set(a) == {'level', 'text'} and \\
                            all(isinstance(a[k], str) for k in a)
                        if ok:
                            print('ADVICE', a['level'], h(a['text']))
                        else:
                            print('ADVICE-BAD', h(json.dumps(a, ensure_ascii=True)))
                for t in doc['threads']:
                    e = t.get('name_escaped')
                    print('T', t['tid'], t['outcome'], h(t['name']), '-' if e is None else h(e))
            elif mode == 'check':
                for t in doc['threads']:
                    print('T', t['tid'], t['name_from'], h(t['name']))
            elif mode == 'jfr':
                for e in doc['recording']['events']:
                    v = e['values']
                    print('T', v['osThreadId'], h(v['threadName']))
            """;

    private Path readers;

    /** The Python reader's lines for a file, or null (a failure recorded) when it refuses the file. */
    private List<String> python(String mode, Path file, String what) {
        ChildResult r = Launch.command(ViewTest.need(PYTHON, "view"), readers.toString(), mode, file.toString())
                .noPreload().run();
        if (r.exitCode != 0) {
            String err = r.stderr.lines().reduce((a, b) -> b).orElse("");
            check(false, what + " (" + file + ") is refused by Python's strict reader: " + brief(err));
            return null;
        }
        return ChildResult.lines(r.stdout.isEmpty() ? "\n" : r.stdout);
    }

    static String cli() {
        return Build.numapin().toString();
    }

    /** Chromium on a page, its window 1,400 px wide and this tall (the last argument its address). */
    static ChildResult chromium(Path profile, int height, String... args) {
        List<String> cmd = ViewTest.chromium(profile, args);
        cmd.add(cmd.size() - 1, "--window-size=" + WINDOW + "," + height);
        return Launch.command(cmd).noPreload().run();
    }

    /** tmux on a private socket in a UTF-8 locale. */
    static String[] tmux(String socket, String... args) {
        List<String> cmd = new ArrayList<>(List.of(ViewTest.need("/usr/bin/tmux", "view"), "-u", "-L", socket));
        cmd.addAll(List.of(args));
        ChildResult r = Launch.command(cmd).env("LANG", "C.UTF-8").noPreload().run();
        return new String[] {String.valueOf(r.exitCode), r.stdout + r.stderr};
    }

    // ---- the test ----------------------------------------------------------------------------------

    @Test
    void everyOutputReadsBackEveryName() throws Exception {
        Path dir = RunLogs.newRunDir().toAbsolutePath();
        readers = dir.resolve("readers.py");
        TestFiles.write(readers, READERS, false);
        Path go = dir.resolve("go");
        Path log = dir.resolve("numapin.log");
        Path report = dir.resolve("report.json");
        Path recording = dir.resolve("launch.jfr");
        List<String> labels = new ArrayList<>(NAMES.keySet());
        List<String> args = new ArrayList<>(List.of(go.toString()));
        for (String n : NAMES.values()) {
            args.add(hex(n));
        }
        Launch.Running run = Launch.program("Named", args.toArray(new String[0]))
                .options("group=0,groups=2,threads=H-*,log=info:" + log + ",report=" + report)
                .jvmArg("-XX:StartFlightRecording=filename=" + recording).fakeTwoNodes().start();
        Map<String, Long> tids = new LinkedHashMap<>();
        Path checkJson;
        List<Path> svgs = new ArrayList<>();
        Map<Integer, String> screens = new LinkedHashMap<>();
        String pid;
        try {
            pid = run.awaitLine(Pattern.compile("named-ready pid=(\\d+)")).group(1);
            Matcher m = Pattern.compile("(?m)^named i=(\\d+) tid=(\\d+) units=([0-9a-f]*)$").matcher(run.stdout());
            while (m.find()) {
                String label = labels.get(Integer.parseInt(m.group(1)));
                assertEquals(hex(NAMES.get(label)), m.group(3), "the child's name for " + label);
                tids.put(label, Long.parseLong(m.group(2)));
            }
            assertEquals(NAMES.size(), tids.size(), "a line from each thread of the child:\n" + run.stdout());

            ChildResult json = Launch.command(cli(), "check", pid, "--json").run();
            checkEq(0, json.exitCode, "numapin check --json exit status (" + brief(json.stderr) + ")");
            checkJson = json.dir.resolve("stdout.txt");
            for (int b = 0; b < SVG_BATCHES.size(); b++) {
                Path file = dir.resolve("check-" + b + ".svg");
                ChildResult svg = Launch.command(cli(), "check", pid, "--threads", SVG_BATCHES.get(b), "--svg",
                        file.toString()).run();
                checkEq(0, svg.exitCode, "numapin check --svg exit status (" + brief(svg.stderr) + ")");
                svgs.add(file);
            }
            for (int cols : List.of(160, 80)) {
                screens.put(cols, watch(pid, cols));
            }
            Files.createFile(go);
        } finally {
            if (!Files.exists(go)) {
                run.kill();
            }
        }
        ChildResult jvm = run.finish();
        assertEquals(0, jvm.exitCode, jvm.describe());

        checkLog(log, tids);
        checkReport(report, tids);
        checkCheckJson(checkJson, tids);
        for (int b = 0; b < svgs.size(); b++) {
            checkSvg(svgs.get(b), SVG_BATCHES.get(b));
        }
        Path planSvg = dir.resolve("plan.svg");
        String[] plan = Launch.tool(cli(), "plan", "--groups", "2", "--synthetic", Launch.FAKE_TWO_NODES, "--svg",
                planSvg.toString());
        checkEq("0", plan[0], "numapin plan --svg exit status (" + brief(plan[1]) + ")");
        xmllint(planSvg, "plan --svg", false);
        for (Map.Entry<Integer, String> s : screens.entrySet()) {
            checkScreen(s.getValue(), s.getKey(), tids, pid);
        }
        checkPage(dir, report, tids);
        checkJfr(recording, tids);

        if (!failures.isEmpty()) {
            StringBuilder sb = new StringBuilder(failures.size() + " of " + checks + " checks failed:");
            for (String f : failures) {
                sb.append("\n- ").append(f.length() > 700 ? f.substring(0, 700) + "..." : f);
            }
            fail(sb.toString());
        }
    }

    // ---- the log --------------------------------------------------------------------------------------

    static final Pattern PLACED = Pattern.compile(
            "^\\[\\d+\\.\\d{3}s\\]\\[info\\]\\[numapin\\] placed (" + ChildResult.QUOTED + ") tid=(\\d+) .*$");

    private void checkLog(Path log, Map<String, Long> tids) throws IOException {
        byte[] bytes = Files.readAllBytes(log);
        int nonAscii = -1;
        for (int i = 0; i < bytes.length; i++) {
            if ((bytes[i] & 0x80) != 0) {
                nonAscii = i;
                break;
            }
        }
        String content = new String(bytes, StandardCharsets.UTF_8);
        check(nonAscii < 0, "the log is not ASCII: byte " + nonAscii + " in "
                + (nonAscii < 0 ? "" : brief(content.substring(Math.max(0, content.lastIndexOf('\n', nonAscii)),
                        Math.min(content.length(), nonAscii + 40)))));
        Map<Long, String> placed = new HashMap<>();
        for (String l : ChildResult.lines(content)) {
            check(ChildResult.LOG_LINE.matcher(l).matches() && !l.contains("\r"),
                    "a log line that is not one: " + brief(l));
            Matcher m = PLACED.matcher(l);
            if (m.matches()) {
                placed.put(Long.parseLong(m.group(3)), m.group(1));
            }
        }
        for (Map.Entry<String, Long> t : tids.entrySet()) {
            String want = logForm(text(NAMES.get(t.getKey())));
            String got = placed.get(t.getValue());
            if (got == null) {
                check(false, "the log has no 'placed' line for the " + t.getKey() + " name (tid " + t.getValue() + ")");
            } else if (want.length() > 400 && !got.equals(want)) {
                // A long name is cut in the log, at a whole escape.
                String inner = got.substring(1, got.length() - 1).replaceAll("(\\.\\.\\.|\u2026)$", "");
                check(inner.length() >= 100 && want.startsWith("\"" + inner),
                        "the log's " + t.getKey() + " name is not the start of its quoted form: " + brief(got));
            } else {
                checkEq(want, got, "the log's quoted " + t.getKey() + " name");
            }
        }
    }

    // ---- the JSON ---------------------------------------------------------------------------------------

    private void checkReport(Path report, Map<String, Long> tids) {
        List<String> lines = python("report", report, "the report");
        if (lines == null) {
            return;
        }
        Map<Long, String[]> byTid = new HashMap<>();
        List<String> advice = new ArrayList<>();
        for (String l : lines) {
            String[] f = l.split(" ", -1);
            switch (f[0]) {
                case "VERSION" -> checkEq("4", f[1], "the report's format version (\"numapin\")");
                case "ADVICE" -> {
                    check(f[1].equals("info") || f[1].equals("warning"), "an advice level: " + f[1]);
                    advice.add(unhex(f[2]));
                }
                case "ADVICE-NOT-A-LIST" -> check(false, "the report's \"advice\" is not a list but " + f[1]);
                case "ADVICE-BAD" -> check(false, "an advice entry not {\"level\",\"text\"}: " + unhex(f[1]));
                case "T" -> byTid.put(Long.parseLong(f[1]), f);
                default -> check(false, "the reader printed " + l);
            }
        }
        check(!advice.isEmpty(), "the report's \"advice\" lists no advice (the log gives some)");
        for (Map.Entry<String, Long> t : tids.entrySet()) {
            String name = NAMES.get(t.getKey());
            String[] f = byTid.get(t.getValue());
            if (f == null) {
                check(false, "the report has no entry for the " + t.getKey() + " name (tid " + t.getValue() + ")");
                continue;
            }
            checkEq("placed", f[2], "the report's outcome for the " + t.getKey() + " name");
            checkEq(text(name), unhex(f[3]), "the report's \"name\" for the " + t.getKey() + " name");
            String esc = f[4].equals("-") ? null : unhex(f[4]);
            checkEq(escaped(name), esc, "the report's \"name_escaped\" for the " + t.getKey() + " name");
            if (esc != null) {
                checkEq(name, unescape(esc), "the exact " + t.getKey() + " name from the report's \"name_escaped\"");
            }
        }
    }

    private void checkCheckJson(Path out, Map<String, Long> tids) {
        List<String> lines = python("check", out, "numapin check --json");
        if (lines == null) {
            return;
        }
        Map<Long, String[]> byTid = new HashMap<>();
        for (String l : lines) {
            String[] f = l.split(" ", -1);
            byTid.put(Long.parseLong(f[1]), f);
        }
        for (Map.Entry<String, Long> t : tids.entrySet()) {
            String name = NAMES.get(t.getKey());
            String[] f = byTid.get(t.getValue());
            if (f == null) {
                check(false, "numapin check --json has no entry for the " + t.getKey() + " name (tid " + t.getValue() + ")");
            } else if (f[2].equals("kernel") && name.contains("\n")) {
                // A name with a line break cannot be told from the thread
                // dump's lines (cli/check.c): its kernel name is given, as
                // text, which the strict reader has already checked.
                continue;
            } else {
                checkEq("jvm", f[2], "numapin check --json's name_from for the " + t.getKey() + " name");
                checkEq(text(name), unhex(f[3]), "numapin check --json's name for the " + t.getKey() + " name");
            }
        }
    }

    // ---- what a person reads ------------------------------------------------------------------------

    /** The shown form of a text, one piece per character: the character, or how it is written out. */
    static List<String> shownPieces(String text) {
        List<String> r = new ArrayList<>();
        text.codePoints().forEach(cp -> r.add(shown(new String(Character.toChars(cp)))));
        return r;
    }

    /**
     * A drawn or displayed name, for the name's text: its shown form, or
     * the start of it when the space given cuts it, cut after a whole
     * character's piece (never inside a written-out one), with a mark after
     * the cut ("...", "~") and maybe spaces before the mark.
     */
    static boolean showsName(String drawn, String text) {
        String shown = shown(text);
        if (drawn.equals(shown)) {
            return true;
        }
        String cut = drawn.replaceAll("(\\.\\.\\.|\u2026|~|>)$", "").stripTrailing();
        if (cut.length() < 6 || cut.length() >= shown.length()) {
            return false;
        }
        StringBuilder whole = new StringBuilder();
        for (String piece : shownPieces(text)) {
            if (whole.length() >= cut.length()) {
                break;
            }
            whole.append(piece);
        }
        return whole.toString().equals(cut);
    }

    /**
     * A name with a line break cannot be told from the lines of the JVM's
     * thread dump (cli/check.c), so `numapin check` shows the kernel's name
     * for it, cut at the line break: that start of the name's first line.
     */
    static boolean kernelLine(String drawn, String name) {
        int nl = name.indexOf('\n');
        return nl > 0 && drawn.length() >= 2 && name.substring(0, nl).startsWith(drawn.replaceAll("\\*$", ""));
    }

    private void xmllint(Path file, String what, boolean html) {
        List<String> cmd = new ArrayList<>(List.of(ViewTest.need(XMLLINT, "view"), "--noout"));
        if (html) {
            cmd.add("--html");
        }
        cmd.add(file.toString());
        ChildResult r = Launch.command(cmd).noPreload().run();
        List<String> errors = new ArrayList<>();
        for (String l : ChildResult.lines(r.stderr + "\n")) {
            // libxml2's HTML parser is HTML 4's: it names the HTML 5 and SVG
            // elements of the page as unknown, which is not an error here.
            Matcher m = Pattern.compile(".*HTML parser error : Tag (\\S+) invalid$").matcher(l);
            if (l.contains(" error") && !(html && m.matches() && ALLOWED_HTML5.contains(m.group(1)))) {
                errors.add(l);
            }
        }
        check(r.exitCode == 0 && errors.isEmpty(), "xmllint" + (html ? " --html" : "") + " refuses " + what + " ("
                + file + "): exit " + r.exitCode + ", " + brief(String.join(" | ", errors)));
    }

    static final Set<String> ALLOWED_HTML5 = Set.of("svg", "rect", "text", "g", "line", "path", "polygon",
            "polyline", "circle", "ellipse", "tspan", "title", "desc", "defs", "use", "section", "main", "header",
            "footer", "nav", "article", "aside", "figure", "figcaption", "details", "summary");

    /** Elements and attributes a name would bring, were it markup. */
    static final Set<String> NAME_TAGS = Set.of("script", "img", "hostile-el");
    static final Set<String> NAME_ATTRS = Set.of("onerror", "hostile-attr", "onclick");

    /** The page or DOM read by Python's html.parser: no element or attribute from a name; its text chunks. */
    private List<String> markup(Path file, String what) {
        List<String> lines = python("markup", file, what);
        List<String> texts = new ArrayList<>();
        if (lines == null) {
            return texts;
        }
        Set<String> bad = new TreeSet<>();
        for (String l : lines) {
            String[] f = l.split(" ", 2);
            if (f[0].equals("TAG") && NAME_TAGS.contains(f[1]) || f[0].equals("ATTR") && NAME_ATTRS.contains(f[1])) {
                bad.add(l);
            } else if (f[0].equals("TEXT")) {
                texts.add(unhex(f.length > 1 ? f[1] : ""));
            }
        }
        check(bad.isEmpty(), what + " holds elements or attributes from a name: " + bad);
        return texts;
    }

    private void namesShown(List<String> texts, Map<String, Long> tids, String what) {
        for (String label : tids.keySet()) {
            String text = text(NAMES.get(label));
            boolean found = texts.stream().anyMatch(t -> showsName(t.strip(), text));
            check(found, what + " does not show the " + label + " name as " + brief(shown(text)));
        }
    }

    /**
     * The globs of `check --svg --threads`, each naming at most the six
     * threads the picture names on one CPU (it counts the others), all the
     * names between them.
     */
    static final List<String> SVG_BATCHES = List.of("H-worker-*|H-<*|H-q *|H-line*|H-ctl*|H-bidi*",
            "H-zw*|H-sur-*|H-emoji*|H-nul*|H-comb*", "H-long-*|H-\u6F22*");

    private void checkSvg(Path svg, String glob) throws IOException {
        if (!Files.isRegularFile(svg)) {
            check(false, "numapin check --svg wrote no " + svg);
            return;
        }
        xmllint(svg, "check --svg", false);
        noHidden(utf8(svg, "check --svg"), "check --svg");
        Document d;
        try {
            d = ViewTest.xml(svg);
        } catch (Exception e) {
            check(false, "the JDK's XML parser refuses check --svg (" + svg + "): " + e);
            return;
        }
        Set<String> bad = new TreeSet<>();
        NodeList all = d.getElementsByTagNameNS("*", "*");
        for (int i = 0; i < all.getLength(); i++) {
            Element e = (Element) all.item(i);
            if (NAME_TAGS.contains(e.getLocalName())) {
                bad.add("element " + e.getLocalName());
            }
            for (String a : NAME_ATTRS) {
                if (e.hasAttribute(a)) {
                    bad.add("attribute " + a);
                }
            }
        }
        check(bad.isEmpty(), "check --svg holds elements or attributes from a name: " + bad);
        List<String> texts = ViewTest.texts(d);
        for (String label : NAMES.keySet()) {
            String name = NAMES.get(label);
            String[] globs = glob.split("\\|");
            boolean selected = false;
            for (String g : globs) {
                selected |= name.startsWith(g.substring(0, g.length() - 1));
            }
            if (selected) {
                String start = name.substring(0, 4);
                List<String> like = texts.stream().filter(t -> t.strip().startsWith(start)).toList();
                check(texts.stream().anyMatch(t -> showsName(t.strip(), text(name)) || kernelLine(t.strip(), name)),
                        "check --svg --threads '" + glob + "' does not draw the " + label + " name as "
                                + brief(shown(text(name))) + " (cut at a whole character); drawn: "
                                + like.stream().map(HostileNamesTest::brief).toList());
            }
        }
    }

    /** `numapin check PID --watch` in tmux, COLS columns wide: the screen at its third frame or later. */
    private String watch(String pid, int cols) throws InterruptedException {
        String socket = "numapin-names-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        try {
            String[] started = tmux(socket, "-f", "/dev/null", "new-session", "-d", "-s", "view", "-x",
                    String.valueOf(cols), "-y", "60", "sh", "-c",
                    Launch.shellQuote(List.of(cli(), "check", pid, "--watch", "0.3")) + "; sleep 120");
            assertEquals("0", started[0], started[1]);
            long deadline = System.nanoTime() + 60_000_000_000L;
            String screen = "";
            while (System.nanoTime() < deadline) {
                screen = tmux(socket, "capture-pane", "-p", "-t", "view")[1];
                // The third frame or any later one: frames come 0.3 s apart,
                // and a capture on a busy machine can take longer.
                Matcher frame = Pattern.compile("frame (\\d+),").matcher(screen);
                if (frame.find() && Integer.parseInt(frame.group(1)) >= 3) {
                    return screen;
                }
                Thread.sleep(200);
            }
            check(false, "the watch view at " + cols + " columns never showed its third frame:\n" + screen);
            return null;
        } finally {
            tmux(socket, "kill-server");
        }
    }

    private void checkScreen(String screen, int cols, Map<String, Long> tids, String pid) {
        if (screen == null) {
            return;
        }
        String what = "the watch view at " + cols + " columns";
        noHidden(screen, what);
        List<String> lines = screen.lines().toList();
        for (String l : lines) {
            check(cellsOf(l).size() <= cols, what + ": a line wider than the terminal: " + brief(l));
        }
        int h = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).matches("\\s*TID NAME .*")) {
                h = i;
            }
        }
        if (h < 0) {
            check(false, what + ": no column header (TID NAME ...):\n" + screen);
            return;
        }
        String header = lines.get(h);
        List<String> hc = cellsOf(header);
        int nameCol = header.indexOf("NAME");
        int kindCol = header.indexOf("KIND");
        int tidEnd = header.indexOf("TID") + 3;
        for (Map.Entry<String, Long> t : tids.entrySet()) {
            String row = null;
            for (String l : lines.subList(h + 1, lines.size())) {
                List<String> c = cellsOf(l);
                if (cellRange(c, 0, tidEnd).strip().equals(String.valueOf(t.getValue()))) {
                    row = l;
                }
            }
            if (row == null) {
                check(false, what + ": no row for the " + t.getKey() + " name (tid " + t.getValue() + ")");
                continue;
            }
            List<String> c = cellsOf(row);
            String tail = cellRange(c, kindCol, c.size());
            check(tail.matches("tier +\\S+ +\\d+ +\\d+ +\\d+% +\\d+ +(\\d+%|-) *") && cellRange(c, kindCol - 1, kindCol).equals(" "),
                    what + ": the " + t.getKey() + " name's row is not aligned with the header (KIND at cell "
                            + kindCol + "):\n" + header + "\n" + row);
            String cell = cellRange(c, nameCol, kindCol).strip();
            String name = NAMES.get(t.getKey());
            check(showsName(cell, text(name)) || kernelLine(cell, name),
                    what + ": the " + t.getKey() + " name shows as " + brief(cell) + ", not " + brief(shown(text(name))));
        }
        check(hc.size() <= cols, what + ": the header is wider than the terminal");
        check(screen.startsWith("numapin check " + pid + " "), what + ": not one frame in place:\n" + screen);
    }

    private void checkPage(Path dir, Path report, Map<String, Long> tids) throws IOException {
        Path page = dir.resolve("run.html");
        String[] r = Launch.tool(cli(), "report", report.toString(), "--html", page.toString(), "--synthetic",
                Launch.FAKE_TWO_NODES);
        checkEq("0", r[0], "numapin report --html exit status (" + brief(r[1]) + ")");
        if (!Files.isRegularFile(page)) {
            return;
        }
        String content = utf8(page, "the page");
        noHidden(content, "the page");
        xmllint(page, "the page", true);
        namesShown(markup(page, "the page"), tids, "the page");

        // Chromium's DOM of the page, as it loaded it.
        ChildResult dom = chromium(dir.resolve("profile-dom"), 900, "--dump-dom", page.toUri().toString());
        checkEq(0, dom.exitCode, "Chromium --dump-dom exit status");
        Path domFile = dir.resolve("dom.html");
        Files.copy(dom.dir.resolve("stdout.txt"), domFile);
        noHidden(utf8(domFile, "Chromium's DOM"), "Chromium's DOM");
        namesShown(markup(domFile, "Chromium's DOM"), tids, "Chromium's DOM");

        // The thread table measured in a 1,400 px window: every column's
        // header inside it, and each cell of the 10,000-character name's row.
        if (content != null && content.contains("</body>")) {
            Path measured = dir.resolve("measured.html");
            TestFiles.write(measured, content.replace("</body>", MEASURE + "</body>"), false);
            ChildResult m = chromium(dir.resolve("profile-measure"), 900, "--dump-dom", measured.toUri().toString());
            checkEq(0, m.exitCode, "Chromium --dump-dom (measured) exit status");
            Matcher mm = Pattern.compile("(?s)<pre id=\"numapin-measure\">(.*?)</pre>").matcher(m.stdout);
            if (!mm.find()) {
                check(false, "the measuring script wrote nothing (" + measured + ")");
            } else {
                checkMeasure(mm.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"));
            }
        }

        Path png = dir.resolve("page.png");
        // Tall enough to hold the thread table, for a person to look at.
        ChildResult shot = chromium(dir.resolve("profile-shot"), 2400, "--screenshot=" + png, page.toUri().toString());
        checkEq(0, shot.exitCode, "Chromium --screenshot exit status");
        if (Files.isRegularFile(png)) {
            BufferedImage img = ImageIO.read(new ByteArrayInputStream(Files.readAllBytes(png)));
            check(img != null && img.getWidth() == WINDOW, "the screenshot is not " + WINDOW + " px wide: " + png);
            if (img != null) {
                Set<Integer> colours = new java.util.HashSet<>();
                for (int y = 0; y < img.getHeight(); y += 2) {
                    for (int x = 0; x < img.getWidth(); x += 2) {
                        colours.add(img.getRGB(x, y) & 0xffffff);
                    }
                }
                check(colours.size() > 20, "a near-blank screenshot: " + colours.size() + " colours");
            }
        } else {
            check(false, "Chromium wrote no screenshot " + png);
        }
    }

    /** Measures table.threads in the window: lines "window W", "th NAME LEFT RIGHT", "td CLASS LEFT RIGHT". */
    static final String MEASURE = """
            <script>
            (() => {
              const out = ['window ' + window.innerWidth];
              document.querySelectorAll('table.threads').forEach(t => {
                const rows = t.querySelectorAll('tr');
                if (rows.length === 0) return;
                rows[0].querySelectorAll('th').forEach(c => {
                  const b = c.getBoundingClientRect();
                  out.push('th ' + c.textContent.replace(/\\s+/g, '_') + ' ' + Math.round(b.left) + ' ' + Math.round(b.right));
                });
                rows.forEach(r => {
                  const name = r.querySelector('td');
                  if (!name || !name.textContent.startsWith('H-long-')) return;
                  r.querySelectorAll('td').forEach((c, i) => {
                    const b = c.getBoundingClientRect();
                    out.push('td ' + i + ' ' + Math.round(b.left) + ' ' + Math.round(b.right));
                  });
                });
              });
              const pre = document.createElement('pre');
              pre.id = 'numapin-measure';
              pre.textContent = out.join('\\n');
              document.body.appendChild(pre);
            })();
            </script>
            """;

    private void checkMeasure(String m) {
        List<String> lines = ChildResult.lines(m + "\n");
        checkEq("window " + WINDOW, lines.get(0), "Chromium's window width");
        int th = 0, td = 0;
        for (String l : lines.subList(1, lines.size())) {
            String[] f = l.split(" ");
            int left = Integer.parseInt(f[2]), right = Integer.parseInt(f[3]);
            boolean inside = left >= 0 && right <= WINDOW && right > left;
            if (f[0].equals("th")) {
                th++;
                check(inside, "the page's thread table: column " + f[1] + " is not inside the " + WINDOW
                        + " px window (" + left + " to " + right + " px)");
            } else {
                td++;
                check(inside, "the page's thread table: cell " + f[1] + " of the 10,000-character name's row is "
                        + "not inside the " + WINDOW + " px window (" + left + " to " + right + " px)");
            }
        }
        check(th >= 10, "the page's thread table has " + th + " column headers: " + lines);
        check(td >= 10, "the page's thread table has no row of " + td + " cells for the 10,000-character name");
    }

    // ---- JFR ------------------------------------------------------------------------------------------

    private void checkJfr(Path recording, Map<String, Long> tids) {
        Path out = RunLogs.newRunDir().resolve("placements.json");
        ChildResult r = Launch.command(Build.jdkTool("jfr"), "print", "--json", "--events", "numapin.Placement",
                recording.toString()).env("LANG", "C.UTF-8").noPreload().run();
        checkEq(0, r.exitCode, "jfr print --json exit status (" + brief(r.stderr) + ")");
        try {
            Files.copy(r.dir.resolve("stdout.txt"), out);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        List<String> lines = python("jfr", out, "jfr print --json");
        ChildResult plain = Launch.command(Build.jdkTool("jfr"), "print", "--events", "numapin.Placement",
                recording.toString()).env("LANG", "C.UTF-8").noPreload().run();
        if (lines == null) {
            return;
        }
        Map<Long, String> byTid = new HashMap<>();
        for (String l : lines) {
            String[] f = l.split(" ", -1);
            byTid.put(Long.parseLong(f[1]), unhex(f[2]));
        }
        for (Map.Entry<String, Long> t : tids.entrySet()) {
            String want = text(NAMES.get(t.getKey()));
            String got = byTid.get(t.getValue());
            if (got == null) {
                check(false, "the recording has no numapin.Placement for the " + t.getKey() + " name");
                continue;
            }
            checkEq(want, got, "numapin.Placement's threadName for the " + t.getKey() + " name");
            check(plain.stdout.contains("threadName = \"" + want + "\""),
                    "jfr print does not show threadName = \"" + brief(want) + "\"");
        }
    }
}
