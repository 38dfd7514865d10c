package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import numapin.tests.ChildResult.Cpus;
import numapin.tests.ChildResult.Placed;
import numapin.tests.ChildResult.ProbeLine;

/**
 * Faults (issue 7): a topology that cannot be loaded, system calls refused
 * with EPERM, a cpuset narrower than the plan, CPU-less memory nodes, a
 * log= file that cannot or must not be opened (missing or read-only
 * directory, symlink, FIFO, hard link, another user's file in /tmp), an
 * unsafe group=auto lock directory. Each gives the message docs/options.md,
 * docs/logging.md and docs/lifecycle.md document, and the JVM goes on, or,
 * under strict, does not start; never a crash.
 *
 * <p>EPERM comes from tests/jvm/tools/seccomp-deny.c (a seccomp filter, as
 * a container runtime installs), compiled here when it is there; the tests
 * that need it are skipped otherwise. Running as another user needs root
 * and setpriv; a read-only mount needs unshare and mount.
 */
@ExtendWith(RunLogs.class)
class FaultsTest {
    static final Pattern ERROR_LINE = Pattern.compile("^\\[\\d+\\.\\d{3}s\\]\\[error\\]\\[numapin\\] \\S.*");
    static String all;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        all = Machine.allowedCpus();
    }

    // ---- a child JVM with any environment and command prefix ------------------------------------

    /**
     * A child JVM like {@link ChildJvm}, with environment variables and a
     * command prefix (taskset, setpriv, the seccomp launcher). Its logs go
     * where ChildJvm's go ({@link RunLogs}).
     */
    static final class Child {
        private final List<String> prefix = new ArrayList<>();
        private final List<String> jvmArgs = new ArrayList<>();
        private final List<String> mainArgs = new ArrayList<>();
        private final Map<String, String> env = new LinkedHashMap<>();
        private String options;
        private boolean agent = true;
        private long limitS = ChildJvm.TIME_LIMIT_S;

        private Child() {
            ChildJvm.isolate(env);
            jvmArgs.add("-XX:+UseSerialGC");
        }

        static Child version() {
            Child c = new Child();
            c.mainArgs.add("-version");
            return c;
        }

        /** numapin.probe.Probe with these steps. */
        static Child probe(String... steps) {
            return main("numapin.probe.Probe", steps)
                    .jvmArg("-Djava.util.concurrent.ForkJoinPool.common.parallelism=2");
        }

        /** Any main class of the test programs' class path. */
        static Child main(String mainClass, String... args) {
            Child c = new Child();
            c.jvmArgs.addAll(List.of("-XX:TieredStopAtLevel=1", "-Xmx64m", "-cp", ChildJvm.probeClassPath()));
            c.mainArgs.add(mainClass);
            c.mainArgs.addAll(Arrays.asList(args));
            return c;
        }

        Child options(String o) {
            options = o;
            return this;
        }

        Child noAgent() {
            agent = false;
            return this;
        }

        Child env(String k, String v) {
            env.put(k, v);
            return this;
        }

        Child fakeTwoNodes() {
            return env("HWLOC_SYNTHETIC", ChildJvm.FAKE_TWO_NODES).env("HWLOC_THISSYSTEM", "1");
        }

        Child jvmArg(String a) {
            jvmArgs.add(a);
            return this;
        }

        Child prefix(String... cmd) {
            prefix.addAll(Arrays.asList(cmd));
            return this;
        }

        Child limit(long seconds) {
            limitS = seconds;
            return this;
        }

        ChildResult run() {
            Path dir = RunLogs.newRunDir();
            try {
                Path work = Files.createDirectories(dir.resolve("cwd"));
                // Another user (setpriv) may have to write its hs_err file here.
                Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwxrwxrwx"));
                List<String> cmd = new ArrayList<>(prefix);
                cmd.add(ChildJvm.java());
                if (agent) {
                    cmd.add("-agentpath:" + ChildJvm.agent() + (options == null ? "" : "=" + options));
                }
                cmd.addAll(jvmArgs);
                cmd.addAll(mainArgs);
                return Launch.spawn(dir, work, cmd, env).finish(limitS);
            } catch (IOException e) {
                throw new IllegalStateException("cannot run a child JVM (logs in " + dir + ")", e);
            }
        }
    }

    /** Runs a tool to its end, without the sanitizer runtime; returns its exit status. */
    static int tool(String... cmd) {
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            pb.environment().remove("LD_PRELOAD");
            pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            pb.redirectOutput(ProcessBuilder.Redirect.DISCARD);
            Process p = pb.start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            return p.exitValue();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    static boolean onPath(String name) {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            if (Files.isExecutable(Path.of(d, name))) {
                return true;
            }
        }
        return false;
    }

    /** The repository: the first directory above the test classes holding tests/jvm/. */
    static Path repo() {
        for (Path p = Path.of(ChildJvm.probeClassPath()).toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("tests/jvm/src"))) {
                return p;
            }
        }
        throw new IllegalStateException("no repository above " + ChildJvm.probeClassPath());
    }

    /** A topology of tests/golden/topologies. */
    static Path topology(String name) {
        Path p = repo().resolve("tests/golden/topologies").resolve(name);
        assertTrue(Files.isReadable(p), "no " + p);
        return p;
    }

    static boolean root() {
        return "root".equals(System.getProperty("user.name"));
    }

    // ---- shared assertions ---------------------------------------------------------------------

    /** Failure warnings (advice aside), each matching its pattern, in order. */
    static void assertWarnings(ChildResult r, String... patterns) {
        List<String> w = r.failureWarnings();
        assertEquals(patterns.length, w.size(), "warnings (advice aside)\n" + r.describe());
        for (int i = 0; i < patterns.length; i++) {
            assertTrue(Pattern.compile(patterns[i]).matcher(w.get(i)).find(),
                    "warning '" + w.get(i) + "' does not match " + patterns[i] + "\n" + r.describe());
        }
    }

    /** strict: exit 1 with one error line on stderr matching pattern; no program ran, no crash. */
    static void assertStrictStop(ChildResult r, String pattern) {
        String ctx = r.describe();
        assertTrue(r.exitCode != 0 && r.exitCode < 128, "strict: the JVM must not start, nor crash\n" + ctx);
        assertEquals(List.of(), r.probes(), "the program ran\n" + ctx);
        List<String> errors = r.stderrLogLines();
        assertEquals(1, errors.size(), "numapin lines on stderr\n" + ctx);
        assertTrue(ERROR_LINE.matcher(errors.get(0)).matches(), errors.get(0));
        assertTrue(Pattern.compile(pattern).matcher(errors.get(0)).find(), errors.get(0) + " vs. " + pattern);
        assertTrue((r.stdout + r.stderr).contains("Error occurred during initialization of VM"), ctx);
        assertEquals(List.of(), r.hsErrFiles(), "hs_err files: the JVM crashed\n" + ctx);
    }

    /** The JVM ran to its end, nothing on stderr from numapin, no crash. */
    static void assertRan(ChildResult r) {
        r.assertExit(0);
        assertTrue(r.stdout.contains("probe-done "), "the program did not finish\n" + r.describe());
        assertEquals(List.of(), r.stderrLogLines(), "numapin lines on stderr\n" + r.describe());
        assertEquals(List.of(), r.hsErrFiles(), r.describe());
    }

    /** Nothing placed: no placed line, and the workers kept every CPU of the JVM. */
    static void assertNothingPlaced(ChildResult r) {
        assertEquals(List.of(), r.placed(), "placed lines\n" + r.describe());
        r.assertCpus(all, r.probes("default"), "workers");
    }

    // ---- topology ------------------------------------------------------------------------------

    static Path writeFile(String name, byte[] content) throws IOException {
        Path dir = RunLogs.newRunDir();
        Path f = dir.resolve(name);
        Files.write(f, content);
        return f;
    }

    /** Topology files hwloc cannot load: one warning, nothing placed; under strict the JVM does not start. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"empty", "garbage", "truncated", "binary", "directory"})
    void unloadableTopologyIsOneWarningOrAStrictStop(String kind) throws IOException {
        Path xml = switch (kind) {
            case "empty" -> writeFile("topology.xml", new byte[0]);
            case "garbage" -> writeFile("topology.xml", "not xml at all\n".getBytes(StandardCharsets.UTF_8));
            case "truncated" -> writeFile("topology.xml",
                    "<?xml version=\"1.0\"?>\n<topology version=\"2.0\"><object type=\"Machine\" os_index=\"0\""
                            .getBytes(StandardCharsets.UTF_8));
            case "binary" -> {
                byte[] b = new byte[4096];
                new java.util.Random(7).nextBytes(b);
                yield writeFile("topology.xml", b);
            }
            default -> RunLogs.newRunDir();
        };
        ChildResult r = Child.probe("default:2").options("group=0,groups=2").env("HWLOC_XMLFILE", xml.toString())
                .run();
        assertRan(r);
        assertWarnings(r, "cannot load the topology \\(xml " + Pattern.quote(xml.toString())
                + "\\).*numapin places no thread in this JVM");
        assertNothingPlaced(r);
        assertTrue(r.logLines().stream().noneMatch(l -> l.contains("][numapin] plan ")), r.describe());

        assertStrictStop(Child.probe("default:2").options("group=0,groups=2,strict")
                .env("HWLOC_XMLFILE", xml.toString()).run(), "cannot load the topology \\(xml .*\\(strict");
    }

    /**
     * HWLOC_XMLFILE naming no file: hwloc falls back to this machine; numapin,
     * asked for that file's machine, must not place threads on another one
     * while its log says source=xml (also in HostileTest).
     */
    @Test
    void missingTopologyFileIsOneWarningAndNothingIsPlaced() {
        Path xml = RunLogs.newRunDir().resolve("no-such-topology.xml");
        ChildResult r = Child.probe("default:2").options("group=0,groups=2").env("HWLOC_XMLFILE", xml.toString())
                .run();
        assertRan(r);
        assertWarnings(r, "cannot load the topology \\(xml " + Pattern.quote(xml.toString()) + "\\)");
        assertNothingPlaced(r);
    }

    /**
     * A topology that is not this machine (an XML file, no
     * HWLOC_THISSYSTEM=1): hwloc's binding calls do nothing and report
     * success, so numapin must not claim "placed" (nor set a memory policy
     * on the numbering of another machine's nodes).
     */
    @Test
    void topologyOfAnotherMachinePlacesNothingForReal() {
        Path xml = topology("fakeheteromemtiers.xml");
        ChildResult r = Child.probe("default:2").options("group=1").env("HWLOC_XMLFILE", xml.toString()).run();
        assertRan(r);
        assertNothingPlaced(r);
        assertEquals(1, r.failureWarnings().size(), "one warning that nothing is bound\n" + r.describe());
    }

    // ---- EPERM (seccomp) -----------------------------------------------------------------------

    static String seccomp;

    /** java-tests/tools/seccomp-deny, built by make or here; null when its source is not there. */
    static synchronized String seccompLauncher() {
        if (seccomp != null) {
            return seccomp.isEmpty() ? null : seccomp;
        }
        seccomp = "";
        Path agentDir = Path.of(ChildJvm.agent()).toAbsolutePath().getParent();
        for (Path built : List.of(agentDir.resolve("tools/seccomp-deny"), repo().resolve("build/tools/seccomp-deny"))) {
            if (Files.isExecutable(built)) {
                return seccomp = built.toString();
            }
        }
        Path src = repo().resolve("tests/jvm/tools/seccomp-deny.c");
        if (!Files.exists(src)) {
            return null;
        }
        Path bin = RunLogs.root().resolve("tools/faults-seccomp-deny");
        try {
            Files.createDirectories(bin.getParent());
        } catch (IOException e) {
            return null;
        }
        if (tool("cc", "-O2", "-o", bin.toString(), src.toString()) != 0) {
            return null;
        }
        return seccomp = bin.toString();
    }

    static Child denied(String calls, String options) {
        String launcher = seccompLauncher();
        assumeTrue(launcher != null, "no seccomp launcher (tests/jvm/tools/seccomp-deny.c)");
        return Child.probe("default:2").fakeTwoNodes().options(options).prefix(launcher, calls, "--");
    }

    /** CPU binding and memory policy both refused: one warning, threads left as they were. */
    @Test
    void deniedAffinityAndMemoryPolicyIsOneWarningAndNothingMoves() {
        ChildResult r = denied("sched_setaffinity,set_mempolicy", "group=0,cpus=core,scope=threads,log=debug").run();
        assertRan(r);
        assertWarnings(r, "cannot bind \"ForkJoinPool-1-worker-\\d\" tid=\\d+ to cpus=0: Operation not permitted "
                + "\\(EPERM\\)");
        assertNothingPlaced(r);
        // Both workers counted as failed; a failed binding gives its core back.
        ChildResult.Summary s = r.summary();
        assertEquals(0, s.placed(), r.describe());
        assertEquals(2, s.failed(), r.describe());
        assertEquals("none", s.cpus(), "cpus= of the summary: no thread went anywhere\n" + r.describe());
    }

    @Test
    void deniedAffinityUnderStrictStopsTheJvm() {
        assertStrictStop(denied("sched_setaffinity", "group=0,scope=threads,strict").run(),
                "cannot bind threads to cpus=0: Operation not permitted \\(EPERM\\).*strict");
    }

    /** Memory policy refused, CPUs allowed: placed with mem_error=EPERM, one warning. */
    @Test
    void deniedMemoryPolicyKeepsTheCpusAndWarnsOnce() {
        ChildResult r = denied("set_mempolicy", "group=1,scope=threads").run();
        assertRan(r);
        assertWarnings(r, "cannot set memory policy preferred:1 for \"ForkJoinPool-1-worker-\\d\" tid=\\d+: "
                + "Operation not permitted \\(EPERM\\)");
        List<Placed> placed = r.placed();
        assertEquals(2, placed.size(), r.describe());
        for (Placed p : placed) {
            assertEquals("1", p.cpus(), r.describe());
            assertTrue(p.line().endsWith(" mem_error=EPERM"), p.line());
        }
        r.assertCpus("1", r.probes("default"), "workers");
        assertEquals(2, r.summary().memFailed(), r.describe());
        assertStrictStop(denied("set_mempolicy", "group=0,scope=threads,strict").run(),
                "cannot set memory policy preferred:0: Operation not permitted \\(EPERM\\).*strict");
    }

    // ---- a cpuset narrower than the plan -------------------------------------------------------

    /**
     * taskset -c 1 on the fake two-node machine: node 0 has no CPU this JVM
     * may use, so there is one node with CPUs and one group; groups=2 slices
     * that one CPU between both groups (warned), never binding to CPU 0.
     * mem=none: the kernel has no node 1 for a memory policy.
     */
    @Test
    void cpusetNarrowerThanThePlanPlansOnTheCpusLeft() {
        ChildResult r = Child.probe("default:2").fakeTwoNodes().options("log=debug,mem=none")
                .prefix("taskset", "-c", "1").run();
        assertRan(r);
        assertTrue(r.logLines().stream().anyMatch(l -> l.contains("] topology ") && l.contains(" allowed=1 ")),
                "topology line: allowed=1\n" + r.describe());
        assertTrue(r.logLines().stream().anyMatch(l -> l.contains("] plan group=0 groups=1 ") && l.contains(" cpus=1 ")),
                "plan: one group on CPU 1\n" + r.describe());
        for (Placed p : r.placed()) {
            assertEquals("1", p.cpus(), r.describe());
        }
        assertEquals(2, r.placed().size(), r.describe());
        r.assertCpus("1", r.probes("default"), "workers");
        assertWarnings(r);

        // Two groups on the one CPU left: both share it.
        ChildResult r2 = Child.probe("default:2").fakeTwoNodes().options("group=1,groups=2,mem=none")
                .prefix("taskset", "-c", "1").run();
        assertRan(r2);
        r2.assertCpus("1", r2.probes("default"), "workers of group 1");
        assertTrue(r2.logLines().stream().anyMatch(l -> l.contains("[warning][numapin] advice: ")),
                "the groups sharing a CPU are warned about\n" + r2.describe());
        assertWarnings(r2);
    }

    // ---- CPU-less memory nodes (fake machine, dry run) ------------------------------------------

    static final Pattern PLAN = Pattern.compile("\\] plan group=(\\d+) groups=(\\d+) domain=node node=(\\S+) .* cpus=(\\S+) "
            + "cpus_mode=\\S+ .* mem=(\\S+) ");

    /**
     * fakeheteromemtiers.xml: DRAM nodes 0-2 with CPUs, CPU-less HBM and NVM
     * nodes 4, 6, 8, 9. Groups go to the DRAM nodes only; mem= may name a
     * CPU-less node; a node the machine lacks is an option error.
     */
    @Test
    void cpuLessNodesNeverTakeAGroup() {
        Path xml = topology("fakeheteromemtiers.xml");
        String[][] expect = {{"0", "0-1"}, {"1", "2-3"}, {"2", "4-5"}};
        for (int g = 0; g < 3; g++) {
            ChildResult r = Child.probe("default:2").options("dryrun,group=" + g).env("HWLOC_XMLFILE", xml.toString())
                    .run();
            assertRan(r);
            Matcher m = planLine(r);
            assertEquals("3", m.group(2), "groups default to the 3 nodes with CPUs\n" + r.describe());
            assertEquals(expect[g][0], m.group(3), r.describe());
            assertEquals(expect[g][1], m.group(4), r.describe());
            List<Placed> would = r.wouldPlace();
            assertEquals(2, would.size(), r.describe());
            for (Placed p : would) {
                assertEquals(expect[g][1], p.cpus(), r.describe());
                assertEquals("preferred:" + expect[g][0], p.mem(), r.describe());
            }
            assertEquals(List.of(), r.placed(), r.describe());
            r.assertCpus(all, r.probes("default"), "workers (dry run)");
        }
        // Memory on the CPU-less HBM node 4, CPUs of group 1.
        ChildResult r = Child.probe("default:2").options("dryrun,group=1,mem=bind:4").env("HWLOC_XMLFILE",
                xml.toString()).run();
        assertRan(r);
        assertEquals("bind:4", planLine(r).group(5), r.describe());
        for (Placed p : r.wouldPlace()) {
            assertEquals("bind:4", p.mem(), r.describe());
            assertEquals("2-3", p.cpus(), r.describe());
        }
        // More groups than DRAM nodes: still none on a CPU-less node.
        for (int g = 0; g < 6; g++) {
            ChildResult s = Child.version().options("dryrun,groups=6,group=" + g)
                    .env("HWLOC_XMLFILE", xml.toString()).run().assertExit(0);
            String node = planLine(s).group(3);
            assertTrue(Set.of("0", "1", "2").contains(node), "group " + g + " on node " + node + "\n" + s.describe());
        }
        // A node this machine lacks.
        ChildResult e = Child.version().options("dryrun,mem=bind:3").env("HWLOC_XMLFILE", xml.toString()).run();
        assertEquals(1, e.exitCode, e.describe());
        assertEquals(1, e.stderrLogLines().size(), e.describe());
        assertTrue(e.stderrLogLines().get(0).contains("names node 3")
                && e.stderrLogLines().get(0).contains("0-2,4,6,8-9"), e.describe());
    }

    static Matcher planLine(ChildResult r) {
        for (String l : r.logLines()) {
            Matcher m = PLAN.matcher(l);
            if (m.find()) {
                return m;
            }
        }
        fail("no plan line\n" + r.describe());
        return null;
    }

    // ---- log= files ----------------------------------------------------------------------------

    /** The warning for a log file that cannot be opened, with the errno name. */
    static String logWarning(Path file, String errno) {
        return "cannot open log file '" + Pattern.quote(file.toString()) + "': .* \\(" + errno + "\\); logging to stdout";
    }

    /**
     * A log file refused: one warning on stdout, and the log goes on there
     * (plan, placements, summary); under strict, one error line and no JVM.
     */
    static void assertLogRefused(Child run, Child strict, Path file, String errno) {
        ChildResult r = run.run();
        assertRan(r);
        assertWarnings(r, logWarning(file, errno));
        assertTrue(r.logLines().stream().anyMatch(l -> l.contains("][numapin] plan ")), r.describe());
        assertEquals(2, r.placed().size(), "placement goes on\n" + r.describe());
        assertTrue(r.logLines().stream().anyMatch(l -> l.contains("][numapin] summary ")), r.describe());
        assertStrictStop(strict.run(), "cannot open log file '" + Pattern.quote(file.toString()) + "': .*\\(" + errno + "\\)");
    }

    static Child logTo(Path file, String extra) {
        return Child.probe("default:2").fakeTwoNodes().options("group=0,log=info:" + file + extra);
    }

    @Test
    void logFileInAMissingDirectory() {
        Path f = RunLogs.newRunDir().resolve("no/such/dir/numapin.log");
        assertLogRefused(logTo(f, ""), logTo(f, ",strict"), f, "ENOENT");
        assertFalse(Files.exists(f.getParent()), "the directory was created");
    }

    /** A directory in which nobody may create files, not even root (sysfs). */
    @Test
    void logFileInAnUnwritableSystemDirectory() {
        Path f = Path.of("/sys/numapin-test.log");
        assertLogRefused(logTo(f, ""), logTo(f, ",strict"), f, "E[A-Z]+");
    }

    /** A directory on a read-only mount (a private mount namespace: unshare, mount). */
    @Test
    void logFileOnAReadOnlyMount() throws IOException {
        assumeTrue(root() && onPath("unshare") && onPath("mount"), "needs root, unshare and mount");
        Path dir = RunLogs.newRunDir().resolve("ro");
        Files.createDirectories(dir);
        assumeTrue(tool("unshare", "-m", "sh", "-c", "mount --bind \"$0\" \"$0\" && mount -o remount,ro,bind \"$0\" \"$0\"",
                dir.toString()) == 0, "no read-only bind mount here");
        Path f = dir.resolve("numapin.log");
        String script = "mount --bind \"$0\" \"$0\" && mount -o remount,ro,bind \"$0\" \"$0\" && exec \"$@\"";
        assertLogRefused(logTo(f, "").prefix("unshare", "-m", "sh", "-c", script, dir.toString()),
                logTo(f, ",strict").prefix("unshare", "-m", "sh", "-c", script, dir.toString()), f, "EROFS");
        assertFalse(Files.exists(f), "a log file was created on the read-only mount");
    }

    /** Another user (setpriv) and a directory it may not write. */
    @Test
    void logFileInADirectoryTheUserMayNotWrite() throws IOException {
        assumeTrue(root() && onPath("setpriv"), "needs root and setpriv");
        Path dir = RunLogs.newRunDir().resolve("readonly");
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("r-xr-xr-x"));
        Path f = dir.resolve("numapin.log");
        String[] nobody = {"setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"};
        assertLogRefused(logTo(f, "").prefix(nobody), logTo(f, ",strict").prefix(nobody), f, "EACCES");
        assertFalse(Files.exists(f), "a log file was created");
    }

    /** A symlink, to a file or to none: refused, never followed (O_NOFOLLOW). */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"to-a-file", "dangling", "to-a-directory"})
    void logFileThatIsASymlinkIsRefused(String kind) throws IOException {
        Path dir = RunLogs.newRunDir();
        Path target = dir.resolve(kind.equals("to-a-directory") ? "targetdir" : "target.log");
        if (kind.equals("to-a-file")) {
            Files.writeString(target, "precious\n");
        } else if (kind.equals("to-a-directory")) {
            Files.createDirectories(target);
        }
        Path link = dir.resolve("numapin.log");
        Files.createSymbolicLink(link, target);
        assertLogRefused(logTo(link, ""), logTo(link, ",strict"), link, "ELOOP");
        if (kind.equals("to-a-file")) {
            assertEquals("precious\n", Files.readString(target), "the symlink's target was written");
        } else if (kind.equals("dangling")) {
            assertFalse(Files.exists(target, LinkOption.NOFOLLOW_LINKS), "the symlink's target was created");
        } else {
            try (var s = Files.list(target)) {
                assertEquals(0, s.count(), "something was created in the symlink's target directory");
            }
        }
    }

    /** A FIFO: refused at once (a blocking open would hang the JVM's start-up until a reader came). */
    @Test
    void logFileThatIsAFifoIsRefusedWithoutHanging() {
        Path f = RunLogs.newRunDir().resolve("numapin.fifo");
        assumeTrue(tool("mkfifo", f.toString()) == 0, "mkfifo failed");
        assertLogRefused(logTo(f, "").limit(60), logTo(f, ",strict").limit(60), f, "ENXIO");
    }

    @Test
    void logFileThatIsADirectoryOrADeviceIsRefused() throws IOException {
        Path d = RunLogs.newRunDir().resolve("numapin.log");
        Files.createDirectories(d);
        assertLogRefused(logTo(d, ""), logTo(d, ",strict"), d, "EISDIR");
        Path dev = Path.of("/dev/null");
        assertLogRefused(logTo(dev, ""), logTo(dev, ",strict"), dev, "EINVAL");
    }

    /** A hard link (it could be planted, in a shared directory, to any file the JVM's user may write). */
    @Test
    void logFileWithASecondHardLinkIsRefused() throws IOException {
        Path dir = RunLogs.newRunDir();
        Path target = dir.resolve("precious.txt");
        Files.writeString(target, "precious\n");
        Path link = dir.resolve("numapin.log");
        Files.createLink(link, target);
        assertLogRefused(logTo(link, ""), logTo(link, ",strict"), link, "EMLINK");
        assertEquals("precious\n", Files.readString(target), "the hard link's file was written");
    }

    /** In a world-writable sticky directory (like /tmp), another user's file is refused. */
    @Test
    void anotherUsersLogFileInAStickyDirectoryIsRefused() throws IOException {
        assumeTrue(root(), "needs root, to give a file to another user");
        Path dir = RunLogs.newRunDir().resolve("tmp");
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertEquals(0, tool("chmod", "1777", dir.toString()));
        Path f = dir.resolve("numapin.log");
        Files.writeString(f, "theirs\n");
        UserPrincipal nobody = f.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
        Files.setOwner(f, nobody);
        assertLogRefused(logTo(f, ""), logTo(f, ",strict"), f, "EACCES");
        assertEquals("theirs\n", Files.readString(f), "another user's file was written");
    }

    /** A new log file: mode 0600 whatever the umask; an existing one is appended to. */
    @Test
    void logFileIsCreatedOwnerOnlyAndAppendedTo() throws IOException {
        Path f = RunLogs.newRunDir().resolve("numapin.log");
        ChildResult r = Child.probe("default:2").fakeTwoNodes().options("group=0,log=debug:" + f)
                .prefix("sh", "-c", "umask 0; exec \"$@\"", "sh").run();
        assertRan(r);
        assertEquals(List.of(), r.logLines(), "log lines on stdout\n" + r.describe());
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(f, LinkOption.NOFOLLOW_LINKS);
        assertEquals("rw-------", PosixFilePermissions.toString(perms), "mode of a new log file");
        List<String> first = ChildResult.lines(Files.readString(f));
        assertTrue(first.stream().anyMatch(l -> l.contains("][numapin] summary ")), String.join("\n", first));
        assertRan(Child.probe("default:2").fakeTwoNodes().options("group=0,log=debug:" + f).run());
        List<String> both = ChildResult.lines(Files.readString(f));
        assertEquals(first, both.subList(0, first.size()), "the second JVM's lines were not appended");
        assertEquals(2, both.stream().filter(l -> l.contains("][numapin] summary ")).count(), String.join("\n", both));
        for (String l : both) {
            assertTrue(ChildResult.LOG_LINE.matcher(l).matches(), "log line of the wrong shape: " + l);
        }
    }

    // ---- group=auto lock directory ------------------------------------------------------------

    static Child auto(Path runtimeDir, String extra) {
        return Child.probe("default:2").fakeTwoNodes().options("group=auto,groups=2" + extra)
                .env("XDG_RUNTIME_DIR", runtimeDir.toString());
    }

    /** The lock directory and lock file numapin creates: 0700 and 0600, the lock file holding the pid. */
    @Test
    void lockDirectoryAndFileAreOwnerOnly() throws IOException {
        Path xdg = RunLogs.newRunDir().resolve("xdg");
        Files.createDirectories(xdg);
        ChildResult r = auto(xdg, "").prefix("sh", "-c", "umask 0; exec \"$@\"", "sh").run();
        assertRan(r);
        assertTrue(r.logLines().stream().anyMatch(l -> l.contains("] auto group=0 groups=2")), r.describe());
        Path dir = xdg.resolve("numapin");
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS)));
        Path lock = dir.resolve("groups-2.group-0.lock");
        assertTrue(Files.isRegularFile(lock, LinkOption.NOFOLLOW_LINKS), "no lock file " + lock);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(lock, LinkOption.NOFOLLOW_LINKS)));
    }

    /** An unsafe lock directory or lock file: one warning, nothing placed; a strict stop. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"directory-symlink", "directory-0755", "lock-file-symlink"})
    void unsafeLockDirectoryIsRefused(String kind) throws IOException {
        Path xdg = RunLogs.newRunDir().resolve("xdg");
        Files.createDirectories(xdg);
        Path dir = xdg.resolve("numapin");
        Path target = xdg.resolve("elsewhere");
        String pattern;
        switch (kind) {
            case "directory-symlink" -> {
                Files.createDirectories(target);
                Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwx------"));
                Files.createSymbolicLink(dir, target);
                pattern = "cannot open the group lock directory " + Pattern.quote(dir.toString()) + ": .*not a plain directory";
            }
            case "directory-0755" -> {
                Files.createDirectories(dir);
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
                pattern = "the group lock directory " + Pattern.quote(dir.toString()) + " must be owned by uid \\d+ with no "
                        + "access for others \\(it is uid \\d+, mode 755\\)";
            }
            default -> {
                Files.createDirectories(dir);
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
                Files.writeString(target, "precious\n");
                Files.createSymbolicLink(dir.resolve("groups-2.group-0.lock"), target);
                pattern = "cannot open " + Pattern.quote(dir.resolve("groups-2.group-0.lock").toString())
                        + ": Too many levels of symbolic links";
            }
        }
        ChildResult r = auto(xdg, "").run();
        assertRan(r);
        assertWarnings(r, pattern + ".*numapin places no thread in this JVM");
        assertNothingPlaced(r);
        assertStrictStop(auto(xdg, ",strict").run(), pattern + ".*strict");
        if (kind.equals("directory-symlink")) {
            try (var s = Files.list(target)) {
                assertEquals(0, s.count(), "a lock file was created through the symlinked directory");
            }
        } else if (kind.equals("lock-file-symlink")) {
            assertEquals("precious\n", Files.readString(target), "the symlinked lock file's target was written");
        }
    }

    // ---- helpers for other classes --------------------------------------------------------------

    /** The CPUs of each probe line, by name (for messages). */
    static Map<String, TreeSet<Integer>> cpusByName(ChildResult r) {
        return r.probes().stream().collect(Collectors.toMap(ProbeLine::name, p -> Cpus.parse(p.cpus()), (a, b) -> a,
                LinkedHashMap::new));
    }
}
