package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
 * The recipes of docs/harness/ that can run on this machine, run as
 * written: each recipe's tested snippet is read from its document (the
 * fenced block after a {@code <!-- test: NAME -->} line) and run on
 * TierBench, so the documents cannot drift from what is tested. Nothing
 * here asserts a duration: the machine is shared.
 */
@ExtendWith(RunLogs.class)
class HarnessRecipesTest {
    /** The fenced block after the line {@code <!-- test: NAME -->} in docs/harness/FILE (DocSamples). */
    static String docBlock(String file, String name) {
        return DocSamples.block("docs/harness/" + file, name);
    }

    /** The documents' install paths, made this build's. */
    static String localPaths(String text) {
        return text.replace("/opt/numapin/", Build.dir() + "/");
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
        // (1) Which threads does a run create?
        ChildResult list = Launch.tierBench(Bench.SHORT).options("group=1,groups=2,dryrun,log=debug").run();
        Bench b1 = Bench.of(list);
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
        TestFiles.write(dir.resolve("Group1.Backend.beJVM.log"), list.stdout, false);
        ChildResult names = Launch.sh(docBlock("specjbb2015-multijvm.md", "thread-names")).cwd(dir).run();
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
        ChildResult check = Launch.tierBench(Bench.SHORT).options("group=1,groups=2,dryrun,log=debug,threads="
                + threads).run();
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
        ChildResult run = Launch.tierBench(Bench.SHORT).options("group=1,groups=2,threads=" + threads).run();
        Bench b3 = Bench.of(run);
        String cpus = b3.plan().get("cpus");
        if (Machine.isOneNodeTwoCpus()) {
            assertEquals("1", cpus, "group 1 of 2 on this machine\n" + run.describe());
        }
        b3.checkTiersPlacedOn(cpus);
        assertEquals(b3.tierPlacement().keySet(), b3.placedNames("placed"), "placed exactly the tier threads\n"
                + run.describe());
        b3.placement.forEach((name, got) -> {
            if (!Bench.TIER_THREAD.matcher(name).matches()) {
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
        Path work = TestFiles.mkdirs(dir.resolve("work"), false);
        Path stub = dir.resolve("java-stub");
        TestFiles.write(stub, "#!/bin/sh\n"
                + "agent=\n"
                + "for a in \"$@\"; do\n"
                + "    printf 'arg: %s\\n' \"$a\"\n"
                + "    case \"$a\" in -agentpath:*) agent=$a ;; esac\n"
                + "done\n"
                + "[ -n \"$agent\" ] || exit 0\n"
                + "exec '" + Build.java() + "' \"$agent\" -XX:+UseSerialGC -version\n", true);
        // A file a stray unquoted glob could expand to, were the agent argument left unquoted.
        TestFiles.write(work.resolve("ForkJoinPool-1-worker-1"), "", false);
        String loop = localPaths(docBlock("specjbb2015-multijvm.md", "run-multi-loop"));
        ChildResult r = Launch.command("/bin/bash", "-c", loop + "\nwait\n").cwd(work)
                .env("JAVA", stub.toString())
                .env("GROUP_COUNT", "2").env("TI_JVM_COUNT", "1")
                .env("JAVA_OPTS_BE", "-Xms1g -Xmx1g").env("JAVA_OPTS_TI", "-Xmx256m")
                .env("SPEC_OPTS_BE", "").env("SPEC_OPTS_TI", "").env("MODE_ARGS_BE", "").env("MODE_ARGS_TI", "")
                .run();
        r.assertExit(0);
        String controller = TestFiles.read(work.resolve("controller.log"));
        assertTrue(controller.contains("arg: MULTICONTROLLER\n") && !controller.contains("arg: -agentpath:"),
                "the Controller: no agent\n" + controller + r.describe());
        for (int gnum = 1; gnum <= 2; gnum++) {
            int group = gnum - 1;
            for (String jvm : List.of("Backend.beJVM", "TxInjector.txiJVM1")) {
                Path log = work.resolve("Group" + gnum + "." + jvm + ".log");
                assertTrue(Files.exists(log), log + " missing\n" + r.describe());
                String text = TestFiles.read(log);
                String ctx = log + ":\n" + text + "\n" + r.describe();
                List<String> args = ChildResult.lines(text).stream().filter(l -> l.startsWith("arg: "))
                        .map(l -> l.substring(5)).collect(Collectors.toList());
                List<String> agents = args.stream().filter(a -> a.startsWith("-agentpath:"))
                        .collect(Collectors.toList());
                assertEquals(1, agents.size(), "one -agentpath argument\n" + ctx);
                String a = agents.get(0);
                assertTrue(a.startsWith("-agentpath:" + Build.agent() + "=group=" + group + ",groups=2"),
                        "agent argument " + a + "\n" + ctx);
                String mode = jvm.startsWith("Backend") ? "BACKEND" : "TXINJECTOR";
                int m = args.indexOf("-m");
                assertTrue(m >= 0 && args.get(m + 1).equals(mode) && args.contains("-G=Group" + gnum),
                        "SPECjbb arguments\n" + ctx);
                assertTrue(args.indexOf(a) < args.indexOf("-jar"), "the agent before -jar\n" + ctx);
                // numapin plan --java-flags: sized to the group (one CPU each on this machine).
                List<String> sized = args.stream().filter(x -> x.startsWith("-XX:ActiveProcessorCount="))
                        .collect(Collectors.toList());
                assertEquals(1, sized.size(), "one -XX:ActiveProcessorCount\n" + ctx);
                if (Machine.isOneNodeTwoCpus()) {
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

    /**
     * The SPECjbb recipe's huge page reservation, run as written against a
     * copy of the nodes' sysfs tree, on planned 3-node machines: each node's
     * nr_hugepages holds the heaps of the groups placed on it, split over a
     * group's nodes, plus the code cache's pages for 2 MiB pages.
     */
    @Test
    void reserveHugePagesGivesEachNodeItsGroupsHeaps() {
        String fragment = localPaths(docBlock("specjbb2015-multijvm.md", "reserve-huge-pages"));
        // machine, groups, heap MiB, page KiB, the pages each node must hold
        Object[][] cases = {
            {"pack:1 numa:3 core:2 pu:1", 3, 256, 2048, new int[] {136, 136, 136}},
            {"pack:1 numa:3 core:2 pu:1", 6, 256, 2048, new int[] {272, 272, 272}},
            {"pack:1 numa:3 core:2 pu:1", 3, 1024, 1048576, new int[] {1, 1, 1}},
            {"pack:1 numa:3 core:2 pu:1", 3, 1500, 1048576, new int[] {2, 2, 2}},
            // two groups over four nodes: each group's 129 pages split over its two nodes
            {"pack:2 numa:2 core:2 pu:1", 2, 257, 2048, new int[] {73, 73, 73, 73}},
        };
        for (Object[] c : cases) {
            Path dir = RunLogs.newRunDir();
            Path nodes = TestFiles.mkdirs(dir.resolve("node"), false);
            int[] want = (int[]) c[4];
            for (int n = 0; n < want.length; n++) {
                for (int kb : new int[] {2048, 1048576}) {
                    Path h = TestFiles.mkdirs(nodes.resolve("node" + n + "/hugepages/hugepages-" + kb + "kB"), false);
                    TestFiles.write(h.resolve("nr_hugepages"), "0\n", false);
                }
            }
            ChildResult r = Launch.command("/bin/bash", "-c", "set -eu\n" + fragment).cwd(dir)
                    .env("HWLOC_SYNTHETIC", (String) c[0]).env("GROUP_COUNT", String.valueOf(c[1]))
                    .env("HEAP_MB", String.valueOf(c[2])).env("PAGE_KB", String.valueOf(c[3]))
                    .env("NODE_SYSFS", nodes.toString()).run();
            String ctx = java.util.Arrays.toString(c) + "\n" + r.describe();
            r.assertExit(0);
            for (int n = 0; n < want.length; n++) {
                String got = TestFiles.read(nodes.resolve("node" + n + "/hugepages/hugepages-" + c[3] + "kB/nr_hugepages"));
                assertEquals(String.valueOf(want[n]), got.trim(), "node " + n + "\n" + ctx);
                int other = (int) c[3] == 2048 ? 1048576 : 2048;
                assertEquals("0", TestFiles.read(nodes.resolve("node" + n + "/hugepages/hugepages-" + other + "kB/nr_hugepages"))
                        .trim(), "the other size untouched, node " + n + "\n" + ctx);
            }
        }
    }

    // =====================================================================
    // docs/harness/java-tool-options.md
    // =====================================================================

    /** A launcher that cannot be edited: it runs TierBench with fixed arguments. */
    static Path writeLauncher(Path dir) {
        Path launcher = dir.resolve("launcher.sh");
        List<String> cmd = Launch.tierBench(Bench.SHORT).command();
        TestFiles.write(launcher, "#!/bin/sh\n# A vendor's start script: no place for JVM options.\nexec "
                + Launch.shellQuote(cmd) + "\n", true);
        return launcher;
    }

    /** JAVA_TOOL_OPTIONS alone places a JVM started by a script that cannot be edited. */
    @Test
    void javaToolOptionsPlacesAJvmStartedByAnUneditableLauncher() {
        Path dir = RunLogs.newRunDir();
        Path work = TestFiles.mkdirs(dir.resolve("work"), false);
        writeLauncher(work);
        String snippet = localPaths(docBlock("java-tool-options.md", "launcher"));
        ChildResult r = Launch.sh(snippet).cwd(work).run();
        r.assertExit(0);
        assertTrue(r.stderr.contains("Picked up JAVA_TOOL_OPTIONS: -agentpath:" + Build.agent()
                + "=group=1,groups=2,threads=Tier*-worker-*"), "the JVM's 'Picked up' line\n" + r.describe());
        Bench b = new Bench(r.stdout, r.describe());
        b.checkResult();
        Map<String, String> plan = b.plan();
        assertEquals("1", plan.get("group"), r.describe());
        if (Machine.isOneNodeTwoCpus()) {
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
        Path work = TestFiles.mkdirs(dir.resolve("work"), false);
        Path runtime = TestFiles.mkdirs(dir.resolve("xdg"), true);
        writeLauncher(work);
        String snippet = localPaths(docBlock("java-tool-options.md", "group-auto"));
        ChildResult r = Launch.sh(snippet).cwd(work).env("XDG_RUNTIME_DIR", runtime.toString()).run();
        r.assertExit(0);
        Set<String> groups = new TreeSet<>();
        Set<Integer> cpus = new TreeSet<>();
        for (String f : List.of("jvm-a.out", "jvm-b.out")) {
            String text = TestFiles.read(work.resolve(f));
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
        String agent = "-agentpath:" + Build.agent();

        // A JDK tool keeps its stdout for its own output; with log= it logs as asked.
        ChildResult jps = Launch.command(Build.jdkTool("jps")).env("JAVA_TOOL_OPTIONS", agent + "=group=1,groups=2")
                .run();
        jps.assertExit(0);
        assertEquals(List.of(), ChildResult.numapinLines(jps.stdout), "jps's stdout is its own\n" + jps.describe());
        ChildResult loud = Launch.command(Build.jdkTool("jps")).env("JAVA_TOOL_OPTIONS",
                agent + "=group=1,groups=2,log=info").run();
        loud.assertExit(0);
        assertTrue(loud.stdout.contains("][info][numapin] plan group=1 groups=2 "), "jps loaded numapin\n"
                + loud.describe());

        ChildResult both = Launch.version().options("group=1,groups=2").env("JAVA_TOOL_OPTIONS", agent + "=group=0,groups=2").run();
        both.assertExit(0);
        List<String> plans = ChildResult.numapinLines(both.stdout).stream()
                .filter(l -> l.contains("][info][numapin] plan ")).collect(Collectors.toList());
        assertEquals(1, plans.size(), "one plan\n" + both.describe());
        assertTrue(plans.get(0).contains(" plan group=0 groups=2 "), "the environment's group\n" + both.describe());
        assertTrue(both.stderr.contains("][warning][numapin] numapin is already loaded in this JVM: " + Build.agent()
                + " (options 'group=0,groups=2') acts; this copy, " + Build.agent()
                + " (options 'group=1,groups=2'), does nothing"),
                "the command line's copy says which copy acts and that it does nothing\n" + both.describe());

        ChildResult java = Launch.version().noAgent().env("JDK_JAVA_OPTIONS", agent + "=group=1,groups=2").run();
        java.assertExit(0);
        assertTrue(java.stderr.contains("NOTE: Picked up JDK_JAVA_OPTIONS: " + agent), java.describe());
        assertTrue(java.stdout.contains("][info][numapin] plan group=1 groups=2 "), java.describe());
        ChildResult javac = Launch.command(Build.jdkTool("javac"), "-version").env("JDK_JAVA_OPTIONS", agent + "=group=1,groups=2").run();
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
        return unit.replace(DOC_JAVA, Build.java());
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
    static Launch unitProcess(List<String> files, String instance, List<String> prefix) {
        List<String> cmd = new ArrayList<>(prefix);
        List<String> exec = execStart(files, instance);
        int main = exec.indexOf(Build.TIERBENCH);
        assertTrue(main > 0, "the unit runs TierBench: " + exec);
        cmd.addAll(exec.subList(0, main + 1));
        cmd.addAll(Bench.SHORT);
        Launch p = Launch.command(cmd);
        unitEnvironment(files).forEach(p::env);
        return p;
    }

    /** systemd's own check of the unit, and of the unit with the drop-in, where systemd-analyze is installed. */
    @Test
    void systemdUnitVerifies() {
        Path analyze = List.of("/usr/bin/systemd-analyze", "/bin/systemd-analyze").stream().map(Path::of)
                .filter(Files::isExecutable).findFirst().orElse(null);
        Assumptions.assumeTrue(analyze != null, "systemd-analyze is not installed");
        Path dir = TestFiles.mkdirs(RunLogs.newRunDir().resolve("units"), false);
        TestFiles.write(dir.resolve("numapin-jvm@.service"), localUnit("unit"), false);
        ChildResult r = Launch.command(analyze.toString(), "verify", dir.resolve("numapin-jvm@1.service").toString())
                .cwd(dir).run();
        r.assertExit(0);
        assertEquals("", r.stdout + r.stderr, "systemd-analyze verify printed warnings\n" + r.describe());

        Path dropIn = TestFiles.mkdirs(dir.resolve("numapin-jvm@1.service.d"), false);
        TestFiles.write(dropIn.resolve("numa.conf"), localUnit("drop-in"), false);
        ChildResult d = Launch.command(analyze.toString(), "verify", dir.resolve("numapin-jvm@1.service").toString())
                .cwd(dir).run();
        d.assertExit(0);
        assertEquals("", d.stdout + d.stderr, "systemd-analyze verify printed warnings for the drop-in\n"
                + d.describe());
    }

    /** The unit's ExecStart for instance 1, run as systemd would: group 1's tier threads on group 1's CPUs. */
    @Test
    void systemdExecStartForInstance1PlacesGroup1() {
        ChildResult r = unitProcess(List.of(localUnit("unit")), "1", List.of()).run();
        Bench b = Bench.of(r);
        Map<String, String> plan = b.plan();
        assertEquals("1", plan.get("group"), r.describe());
        assertEquals("2", plan.get("groups"), r.describe());
        if (Machine.isOneNodeTwoCpus()) {
            assertEquals("1", plan.get("cpus"), r.describe());
        }
        b.checkTiersPlacedOn(plan.get("cpus"));
        List<Integer> tiers = Bench.defaultTiers(2);
        assertTrue(r.stdout.contains("TierBench: tiers " + tiers.get(0) + "/" + tiers.get(1) + "/" + tiers.get(2)
                + " threads"), "TierBench sized for one of 2 groups (NUMAPIN_GROUPS=2): " + tiers + "\n" + r.describe());
    }

    /**
     * A TierBench run confined to CPU 1 before it started, numapin given no
     * group: one group, on CPU 1, the tier threads placed there.
     */
    static Bench assertOneGroupOnCpu1(ChildResult r) {
        Bench b = Bench.of(r);
        Map<String, String> plan = b.plan();
        assertEquals("0", plan.get("group"), r.describe());
        assertEquals("1", plan.get("groups"), r.describe());
        assertEquals("1", plan.get("cpus"), r.describe());
        b.checkTiersPlacedOn("1");
        return b;
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
        assertOneGroupOnCpu1(r);
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
        ChildResult r = Launch.tierBench(Bench.SHORT).prefix("taskset", "-c", "1")
                .env("JAVA_TOOL_OPTIONS", podJavaToolOptions()).run();
        Bench b = assertOneGroupOnCpu1(r);
        assertTrue(b.logLines.stream().anyMatch(l -> l.contains("][info][numapin] topology ")
                && l.contains(" allowed=1 ")), "topology allowed=1\n" + r.describe());
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
            List<String> cmd = new ArrayList<>(List.of(Build.numapin().toString()));
            cmd.addAll(args);
            ChildResult r = Launch.command(cmd).run();
            r.assertExit(0);
            assertEquals(String.join("\n", lines.subList(1, lines.size())) + "\n", r.stdout + r.stderr,
                    "kubernetes.md's transcript " + name + "\n" + r.describe());
        }
    }
}
