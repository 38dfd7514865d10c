package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import javax.imageio.ImageIO;
import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import numapin.tests.ChildResult.Placed;

/**
 * The pictures, the live view and the page of a run, on real JVMs
 * (numapin.child.Viewed: tier threads, one named with markup and
 * quotes, a plain thread), with the real renderer, terminal and browser:
 * lstopo-no-graphics (hwloc-nox), tmux and headless Chromium from Debian
 * (`make test-java` installs them: scripts/install-deps.sh view).
 *
 * - `check PID --svg`: the SVG parses as XML, holds one PU rectangle per
 *   CPU, the JVM's group in its colour with the tier threads' Java names,
 *   the JVM's own threads counted;
 * - `check PID --watch --count N`: N plain frames naming each tier thread,
 *   its CPUs and the CPU it runs on; through tmux, the view drawn in place
 *   at 80 columns and `q` quitting it; and the view ending by itself when
 *   the JVM exits;
 * - `report --html` and `groups --html`: Chromium loads the page, its DOM
 *   holds every placed thread's name and each group's CPU list, and its
 *   screenshot is neither blank nor without the groups' colours.
 */
@ExtendWith(RunLogs.class)
class ViewTest {
    static final String ODD = "Odd<&>\"q'";
    static final String THREADS = "threads=Tier*|Odd*";
    /** The colours of groups 0 and 1 (cli/draw.c). */
    static final int GROUP0 = 0x66c2a5, GROUP1 = 0xfc8d62;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
    }

    static String cli() {
        return Build.numapin().toString();
    }

    static String need(String path, String set) {
        if (!Files.isExecutable(Path.of(path))) {
            fail(path + " is missing: scripts/install-deps.sh " + set + " installs it (make test-java does)");
        }
        return path;
    }

    /** A Viewed JVM of group g of the fake 2-node machine, until its go file appears. */
    static Launch.Running viewed(Path go, int g, String extra) {
        return Launch.program("Viewed", go.toString(), "TierA-1", "TierA-2", "TierB-1", ODD, "Side")
                .options("group=" + g + ",groups=2," + THREADS + extra).fakeTwoNodes().start();
    }

    static String pidOf(Launch.Running run) {
        return run.awaitLine(Pattern.compile("viewed-ready pid=(\\d+)")).group(1);
    }

    static Document xml(Path file) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        f.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
        return f.newDocumentBuilder().parse(file.toFile());
    }

    static List<String> texts(Document d) {
        List<String> r = new ArrayList<>();
        NodeList t = d.getElementsByTagNameNS("*", "text");
        for (int i = 0; i < t.getLength(); i++) {
            r.add(t.item(i).getTextContent());
        }
        return r;
    }

    static Map<String, String> puFills(Document d) {
        Map<String, String> r = new HashMap<>();
        NodeList rects = d.getElementsByTagNameNS("*", "rect");
        for (int i = 0; i < rects.getLength(); i++) {
            Element e = (Element) rects.item(i);
            if ("PU".equals(e.getAttribute("class"))) {
                r.put(e.getAttribute("id"), e.getAttribute("fill"));
            }
        }
        return r;
    }

    static String rgb(int c) {
        return "rgb(" + (c >> 16) + "," + ((c >> 8) & 0xff) + "," + (c & 0xff) + ")";
    }

    @Test
    void planSvgAndTheDocsPictureParseWithOnePuRectanglePerCpu() throws Exception {
        Path root = Build.repo();
        Path svg = RunLogs.newRunDir().resolve("plan.svg");
        String[] r = Launch.tool(cli(), "plan", "--groups", "3", "--topology",
                root.resolve("tests/golden/topologies/xeon-6972p-snc3.xml").toString(), "--svg", svg.toString());
        assertEquals("0", r[0], r[1]);
        for (Path p : List.of(svg, root.resolve("docs/pictures/xeon-6972p-snc3-3groups.svg"))) {
            Map<String, String> fills = puFills(xml(p));
            assertEquals(192, fills.size(), p.toString());
            // Logical PUs 0-63 are node 0's (group 0), 64-127 node 1's, 128-191 node 2's.
            int[] colours = {GROUP0, GROUP1, 0x8da0cb};
            for (int i = 0; i < 192; i++) {
                assertEquals(rgb(colours[i / 64]), fills.get("PU_" + i + "_rect"), p + " PU L#" + i);
            }
            List<String> texts = texts(xml(p));
            assertTrue(texts.contains("group 2: nodes 2, CPUs 64-95,160-191"), texts.toString());
        }
    }

    @Test
    void checkSvgDrawsTheJvmOnTheMachine() throws Exception {
        Path go = RunLogs.newRunDir().resolve("go");
        Launch.Running run = viewed(go, 1, "");
        Path svg = RunLogs.newRunDir().resolve("jvm.svg");
        String[] r;
        String pid;
        try {
            pid = pidOf(run);
            r = Launch.tool(cli(), "check", pid, "--svg", svg.toString());
            Files.createFile(go);
        } finally {
            if (!Files.exists(go)) {
                run.kill();
            }
        }
        run.finish().assertExit(0);
        assertEquals("0", r[0], r[1]);
        Document d = xml(svg);
        Map<String, String> fills = puFills(d);
        // One PU rectangle per CPU of this machine (CPUs 0 and 1 here).
        assertEquals(Machine.allowedCpus().equals("0-1") ? 2 : fills.size(), fills.size(), fills.toString());
        // This JVM is group 1: CPU 1 (the second PU) in group 1's colour.
        assertEquals(rgb(GROUP1), fills.get("PU_1_rect"), fills.toString());
        assertEquals(rgb(GROUP0), fills.get("PU_0_rect"), fills.toString());
        List<String> texts = texts(d);
        String all = String.join("\n", texts);
        for (String name : List.of("TierA-1", "TierA-2", "TierB-1", ODD)) {
            assertTrue(texts.contains(name), name + " is not drawn:\n" + all);
        }
        assertTrue(!texts.contains("Side"), "a plain thread is counted, not drawn:\n" + all);
        assertTrue(all.contains("group 1 (this JVM): "), all);
        assertTrue(all.matches("(?s).*the JVM's own threads \\(GC, JIT, VM\\): [1-9][0-9]*, on CPUs.*"), all);
        assertTrue(all.matches("(?s).*other threads: [1-9].*Side.*"), all);
        assertTrue(all.matches("(?s).*resident memory: node 0 [0-9.]+ MiB.*"), all);
        assertTrue(all.contains("tier threads (Tier*|Odd*): 4"), all);
        // The kernel's sampled accesses, or why it samples none.
        assertTrue(texts.stream().anyMatch(t -> t.startsWith("access_local nodes=1 access_local=")
                || t.matches("access unsampled(: [^:(]+)? \\(numapin check " + pid + " says why\\)")), all);
    }

    @Test
    void watchCountPrintsPlainFramesAndEndsWithTheJvm() throws Exception {
        Path go = RunLogs.newRunDir().resolve("go");
        Launch.Running run = viewed(go, 1, "");
        String[] r;
        Launch.Running watch = null;
        String pid = null;
        try {
            pid = pidOf(run);
            r = Launch.tool(cli(), "check", pid, "--watch", "0.3", "--count", "3");
            // Without --count, the view ends when the JVM does.
            watch = Launch.command(cli(), "check", pid, "--watch", "0.2").start();
            watch.awaitLine(Pattern.compile("frame 2, .*"));
            Files.createFile(go);
        } finally {
            if (!Files.exists(go)) {
                run.kill();
                if (watch != null) {
                    watch.kill();
                }
            }
        }
        ChildResult jvm = run.finish().assertExit(0);
        ChildResult ended = watch.finish();
        assertEquals(0, ended.exitCode, ended.describe());
        assertTrue(ended.stdout.contains("numapin check: process " + pid + " exited"), ended.describe());

        assertEquals("0", r[0], r[1]);
        String out = r[1];
        assertTrue(!out.contains("\u001b"), "escapes in a pipe:\n" + out);
        assertEquals(3, out.lines().filter(l -> l.startsWith("numapin check ")).count(), out);
        assertTrue(out.contains("group 1 of 2: "), out);
        // Each frame says what the kernel sampled of the JVM's accesses, or
        // that it samples none and where the reason is given.
        String says = " (numapin check " + pid + " says why)";
        assertEquals(3, out.lines().filter(l -> l.startsWith("access_local nodes=")
                || l.equals("access unsampled" + says)
                || l.startsWith("access unsampled: ") && l.endsWith(says)
                        && !l.substring(18, l.length() - says.length()).matches(".*[:(].*")).count(), out);
        List<Placed> placed = jvm.placed();
        assertEquals(4, placed.size(), jvm.describe());
        for (Placed p : placed) {
            String row = out.lines().filter(l -> l.matches("\\s*" + p.tid() + " .*")).findFirst().orElse(null);
            assertTrue(row != null, p + " has no row:\n" + out);
            String[] f = row.substring(row.indexOf(" tier ")).trim().split("\\s+");
            assertEquals("tier", f[0], row);
            assertEquals("1", f[1], "its CPUs: " + row);
            assertEquals("1", f[2], "the CPU it runs on: " + row);
        }
        for (String l : out.lines().toList()) {
            assertTrue(l.length() <= 80, "wider than 80 columns: " + l);
        }
    }

    /** tmux on a private socket: the command's exit status, its output. */
    static String[] tmux(Path dir, String socket, String... args) {
        List<String> cmd = new ArrayList<>(List.of(need("/usr/bin/tmux", "view"), "-L", socket));
        cmd.addAll(List.of(args));
        return Launch.tool(cmd.toArray(new String[0]));
    }

    static String awaitPane(Path dir, String socket, String needle, long limitS) throws InterruptedException {
        long deadline = System.nanoTime() + limitS * 1_000_000_000L;
        String screen = "";
        while (System.nanoTime() < deadline) {
            screen = tmux(dir, socket, "capture-pane", "-p", "-t", "view")[1];
            if (screen.contains(needle)) {
                return screen;
            }
            Thread.sleep(200);
        }
        fail("the pane never showed '" + needle + "':\n" + screen);
        return screen;
    }

    /**
     * The pane once it shows frame `n` or a later one: frames come a second
     * apart, and a capture on a busy machine can miss one.
     */
    static String awaitFrame(Path dir, String socket, int n, long limitS) throws InterruptedException {
        long deadline = System.nanoTime() + limitS * 1_000_000_000L;
        String screen = "";
        java.util.regex.Pattern frame = java.util.regex.Pattern.compile("frame (\\d+),");
        while (System.nanoTime() < deadline) {
            screen = tmux(dir, socket, "capture-pane", "-p", "-t", "view")[1];
            java.util.regex.Matcher m = frame.matcher(screen);
            if (m.find() && Integer.parseInt(m.group(1)) >= n) {
                return screen;
            }
            Thread.sleep(200);
        }
        fail("the pane never showed frame " + n + " or a later one:\n" + screen);
        return screen;
    }

    @Test
    void watchInATerminalRedrawsInPlaceAndQuitsOnQ() throws Exception {
        Path go = RunLogs.newRunDir().resolve("go");
        Launch.Running run = viewed(go, 1, "");
        Path dir = RunLogs.newRunDir();
        String socket = "numapin-view-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        try {
            String pid = pidOf(run);
            String[] started = tmux(dir, socket, "-f", "/dev/null", "new-session", "-d", "-s", "view", "-x", "80",
                    "-y", "16", "sh", "-c", Launch.shellQuote(List.of(cli(), "check", pid, "--watch"))
                            + "; echo watch-exit=$?; sleep 120");
            assertEquals("0", started[0], started[1]);
            String screen = awaitFrame(dir, socket, 3, 60);
            // One frame on the screen, drawn in place: its header on the top
            // line (16 rows: the rows that do not fit are counted instead).
            assertTrue(screen.startsWith("numapin check " + pid + " "), screen);
            assertEquals(1, screen.lines().filter(l -> l.startsWith("numapin check " + pid)).count(), screen);
            assertTrue(screen.contains(" more threads ("), screen);
            assertTrue(screen.contains("(q quits)"), screen);
            assertTrue(screen.contains("group 1 of 2: "), screen);
            for (String name : List.of("TierA-1", "TierA-2", "TierB-1", "Odd<&>\"q'")) {
                assertTrue(screen.contains(name), name + " not on screen:\n" + screen);
            }
            for (String l : screen.lines().toList()) {
                assertTrue(l.length() <= 80, "wider than 80 columns: " + l);
            }
            tmux(dir, socket, "send-keys", "-t", "view", "q");
            screen = awaitPane(dir, socket, "watch-exit=", 30);
            assertTrue(screen.contains("watch-exit=0"), screen);
            // The alternate screen is left: the frame is gone with it.
            assertTrue(!screen.contains("(q quits)"), screen);
        } finally {
            tmux(dir, socket, "kill-server");
            Files.createFile(go);
        }
        run.finish().assertExit(0);
    }

    static List<String> chromium(Path profile, String... args) {
        List<String> cmd = new ArrayList<>(List.of(need("/usr/bin/chromium", "view"), "--headless", "--no-sandbox",
                "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--user-data-dir=" + profile));
        cmd.addAll(List.of(args));
        return cmd;
    }

    /** Loads the page in Chromium: its DOM, and a screenshot checked not blank. */
    static String browse(Path page, Set<Integer> colours) throws IOException {
        Path dir = RunLogs.newRunDir();
        String url = page.toUri().toString();
        // --dump-dom writes the DOM on stdout, Chromium's own noise on stderr.
        ChildResult dom = Launch.command(chromium(dir.resolve("profile-dom"), "--dump-dom", url)).noPreload().run();
        assertEquals(0, dom.exitCode, dom.describe());
        Path png = dir.resolve("page.png");
        ChildResult shot = Launch.command(chromium(dir.resolve("profile-shot"), "--window-size=1200,900",
                "--screenshot=" + png, url)).noPreload().run();
        assertEquals(0, shot.exitCode, shot.describe());
        BufferedImage img = ImageIO.read(new ByteArrayInputStream(Files.readAllBytes(png)));
        assertTrue(img != null, "not a PNG: " + png);
        assertEquals(1200, img.getWidth());
        assertEquals(900, img.getHeight());
        Map<Integer, Integer> seen = new HashMap<>();
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                seen.merge(img.getRGB(x, y) & 0xffffff, 1, Integer::sum);
            }
        }
        assertTrue(seen.size() > 50, "a near-blank screenshot: " + seen.size() + " colours");
        int white = seen.getOrDefault(0xffffff, 0);
        assertTrue(white < img.getWidth() * img.getHeight() * 95L / 100, "the screenshot is almost all white");
        for (int c : colours) {
            assertTrue(seen.getOrDefault(c, 0) > 200, String.format("colour #%06x: %d pixels", c, seen.getOrDefault(c, 0)));
        }
        return dom.stdout;
    }

    static String html(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    @Test
    void reportPageLoadsInChromiumWithEveryThreadAndGroup() throws Exception {
        Path dir = RunLogs.newRunDir();
        List<ChildResult> jvms = new ArrayList<>();
        List<String> args = new ArrayList<>(List.of(cli(), "report"));
        for (int g = 0; g < 2; g++) {
            Path go = dir.resolve("go-" + g);
            Files.createFile(go); // run to the end at once
            Path report = dir.resolve("r" + g + ".json");
            jvms.add(viewed(go, g, ",report=" + report).finish().assertExit(0));
            args.add(report.toString());
        }
        Path page = dir.resolve("run.html");
        args.addAll(List.of("--html", page.toString(), "--synthetic", Launch.FAKE_TWO_NODES));
        String[] r = Launch.tool(args.toArray(new String[0]));
        assertEquals("0", r[0], r[1]);
        String dom = browse(page, Set.of(GROUP0, GROUP1));
        for (int g = 0; g < 2; g++) {
            List<Placed> placed = jvms.get(g).placed();
            assertEquals(4, placed.size(), jvms.get(g).describe());
            for (Placed p : placed) {
                assertTrue(dom.contains(">" + html(p.name()) + "<"), p.name() + " not in the DOM");
            }
            assertTrue(dom.contains("<b class=\"cpulist\">" + g + "</b>"), "group " + g + "'s CPUs not in the DOM");
        }
        assertTrue(dom.contains("<svg"), "no machine picture in the DOM");
    }

    @Test
    void groupsWritesThePageOfItsRun() throws Exception {
        Path dir = RunLogs.newRunDir();
        Path go = dir.resolve("go");
        Files.createFile(go);
        Path page = dir.resolve("groups.html");
        ChildResult r = Launch.command(cli(), "groups", "--groups", "2", "--agent", Build.agent(),
                "--options", "threads=Tier*", "--logs", dir.resolve("logs").toString(), "--html", page.toString(),
                "--", Build.java(), "-XX:+UseSerialGC", "-Xmx64m", "-cp", Build.childClassPath(),
                "numapin.child.Viewed", go.toString(), "TierA-1", "Side")
                .fakeTwoNodes().run();
        assertEquals(0, r.exitCode, r.describe());
        assertTrue(r.stdout.contains("page: " + page), r.describe());
        String dom = browse(page, Set.of(GROUP0, GROUP1));
        assertTrue(dom.contains("<b class=\"cpulist\">0</b>") && dom.contains("<b class=\"cpulist\">1</b>"), dom);
        assertEquals(2, dom.split(">TierA-1<", -1).length - 1, "TierA-1 of each group");
        Set<String> reports = new HashSet<>();
        try (var s = Files.list(dir.resolve("logs"))) {
            s.filter(p -> p.toString().endsWith(".json")).forEach(p -> reports.add(p.getFileName().toString()));
        }
        assertEquals(2, reports.size(), reports.toString());
        String html = new String(Files.readAllBytes(page), StandardCharsets.UTF_8);
        assertTrue(html.contains("<svg"));
        // The run's table, as numapin groups printed it, under the groups'.
        String table = r.stdout.substring(r.stdout.indexOf("group  exit"), r.stdout.indexOf("page: "));
        int at = html.indexOf("<pre class=\"results\">");
        assertTrue(at > 0 && html.indexOf("<table class=\"summary\">") < at, html);
        String shown = html.substring(at + "<pre class=\"results\">".length(), html.indexOf("</pre>", at))
                .replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'")
                .replace("&amp;", "&");
        assertEquals(table, shown, html);
    }
}
