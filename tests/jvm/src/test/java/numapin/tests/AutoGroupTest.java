package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import numapin.tests.ChildResult.Cpus;

/**
 * group=auto (docs/lifecycle.md#groupauto): JVMs started at the same moment
 * claim distinct groups through flock'ed files in $XDG_RUNTIME_DIR/numapin,
 * a directory numapin creates owner-only and refuses when it is not; a
 * killed JVM frees its group. Every test points XDG_RUNTIME_DIR at a fresh
 * private directory. The
 * machine is one node of two cores (CPUs 0 and 1): groups=4 puts groups 0
 * and 2 on CPU 0, groups 1 and 3 on CPU 1.
 */
@ExtendWith(RunLogs.class)
class AutoGroupTest {
    static final Pattern AUTO = Pattern.compile("^\\[\\d+\\.\\d{3}s\\]\\[info\\]\\[numapin\\] auto group=(\\d+) groups=(\\d+)$");
    static String all;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        all = Machine.allowedCpus();
    }

    static Path privateDir(String name) {
        return TestFiles.mkdirs(RunLogs.newRunDir().resolve(name), true);
    }

    static Launch workers(Path xdg, String options, String... args) {
        List<String> a = new ArrayList<>(List.of("1"));
        a.addAll(List.of(args));
        return Launch.program("Workers", a.toArray(new String[0])).fakeTwoCores().env("XDG_RUNTIME_DIR", xdg.toString())
                .options(options);
    }

    /** The group of an "auto group=N groups=M" line; -1 when there is none. */
    static int autoGroup(List<String> logLines, int groups) {
        int g = -1;
        for (String l : logLines) {
            Matcher m = AUTO.matcher(l);
            if (m.matches()) {
                assertEquals(-1, g, "two 'auto' lines: " + logLines);
                assertEquals(String.valueOf(groups), m.group(2), l);
                g = Integer.parseInt(m.group(1));
            }
        }
        return g;
    }

    static int autoGroup(Launch.Running run, int groups) {
        return autoGroup(ChildResult.numapinLines(run.stdout()), groups);
    }

    /** A worker of a JVM placed as group g of groups=4 reads CPU g % 2. */
    static void assertPlacedAs(ChildResult r, int g) {
        Map<String, String> w = Lines.one(r, "worker");
        assertEquals(String.valueOf(g % 2), w.get("cpus"), "worker of group " + g + "\n" + r.describe());
        assertEquals(1, r.placed().size(), r.describe());
        assertEquals(g, r.placed().get(0).group(), r.placed().get(0).line());
        assertEquals(String.valueOf(g), Lines.summary(r).get("group"), r.describe());
    }

    static String lockFile(int groups, int g) {
        return "groups-" + groups + ".group-" + g + ".lock";
    }

    @Test
    void jvmsStartedTogetherClaimDistinctGroupsAndAKilledOneFreesItsGroup() throws Exception {
        Path xdg = privateDir("xdg");
        Path gate = xdg.getParent().resolve("gate");
        Path hold = xdg.getParent().resolve("hold");
        // Four JVMs behind a shell that execs java once the gate file exists: they start within milliseconds.
        List<Launch.Running> four = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            four.add(workers(xdg, "group=auto,groups=4", hold.toString())
                    .prefix("sh", "-c", "while [ ! -e \"$0\" ]; do sleep 0.005; done; exec \"$@\"", gate.toString())
                    .start());
        }
        Map<Integer, Launch.Running> byGroup = new TreeMap<>();
        try {
            Thread.sleep(200);
            Files.createFile(gate);
            for (Launch.Running run : four) {
                run.awaitLine(Pattern.compile("workers-ready pid=(\\d+)"));
                int g = autoGroup(run, 4);
                assertTrue(g >= 0, "no 'auto group=' line; logs in " + run.dir);
                assertTrue(byGroup.put(g, run) == null, "two JVMs claimed group " + g + "; logs in " + run.dir);
            }
            assertEquals(Set.of(0, 1, 2, 3), byGroup.keySet(), "the groups the four JVMs claimed");

            // The lock directory and files: owner only; each file names its holder (its pid, with the PID
            // namespace the pid means something in).
            Path dir = xdg.resolve("numapin");
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir,
                    LinkOption.NOFOLLOW_LINKS)));
            for (Map.Entry<Integer, Launch.Running> e : byGroup.entrySet()) {
                Path f = dir.resolve(lockFile(4, e.getKey()));
                assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)), f.toString());
                assertEquals(String.valueOf(e.getValue().pid()), Lines.fields(" " + Files.readString(f).trim()).get("pid"),
                        "pid in " + f);
            }

            // A fifth JVM: every group is held; one warning, nothing placed, the JVM runs.
            ChildResult fifth = workers(xdg, "group=auto,groups=4").run().assertExit(0);
            List<String> w = fifth.failureWarnings();
            assertEquals(1, w.size(), fifth.describe());
            assertTrue(w.get(0).contains("all 4 groups are held"), w.get(0));
            assertEquals(List.of(), fifth.placed(), fifth.describe());
            assertEquals(Cpus.parse(all), Cpus.parse(Lines.one(fifth, "worker").get("cpus")), fifth.describe());
            assertEquals(-1, autoGroup(fifth.logLines(), 4), fifth.describe());
            // Under strict it does not start.
            workers(xdg, "group=auto,groups=4,strict").run().assertStrictStop("all 4 groups are held");
            // Another layout (groups=2) has locks of its own: it gets its group 0.
            ChildResult other = workers(xdg, "group=auto,groups=2").run().assertExit(0);
            assertEquals(0, autoGroup(other.logLines(), 2), other.describe());

            // SIGKILL the holder of group 2: the next JVM gets group 2 at once.
            Launch.Running victim = byGroup.remove(2);
            victim.kill();
            ChildResult next = workers(xdg, "group=auto,groups=4").run().assertExit(0);
            assertEquals(2, autoGroup(next.logLines(), 4), "after the holder of group 2 was killed\n" + next.describe());
            assertPlacedAs(next, 2);
        } finally {
            if (!Files.exists(gate)) {
                Files.createFile(gate);
            }
            Files.createFile(hold);
        }
        for (Map.Entry<Integer, Launch.Running> e : byGroup.entrySet()) {
            assertPlacedAs(e.getValue().finish().assertExit(0), e.getKey());
        }
    }

    /** The lock directory and lock file numapin creates: 0700 and 0600 whatever the umask. */
    @Test
    void lockDirectoryAndFileAreOwnerOnly() throws IOException {
        Path xdg = privateDir("xdg");
        ChildResult r = workers(xdg, "group=auto,groups=2").prefix("sh", "-c", "umask 0; exec \"$@\"", "sh").run()
                .assertRan();
        assertEquals(0, autoGroup(r.logLines(), 2), r.describe());
        Path dir = xdg.resolve("numapin");
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir,
                LinkOption.NOFOLLOW_LINKS)));
        Path lock = dir.resolve(lockFile(2, 0));
        assertTrue(Files.isRegularFile(lock, LinkOption.NOFOLLOW_LINKS), "no lock file " + lock);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(lock,
                LinkOption.NOFOLLOW_LINKS)));
    }

    /** The owner of path: for a directory the test made, the user the JVMs run as. */
    static int uid(Path path) throws IOException {
        return (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * An unsafe lock directory or lock file: one warning, nothing placed, the
     * JVM runs; under strict it does not start. The warning names what is
     * wrong (whose access to the directory, or its owner) and the command
     * that fixes it. The targets of symlinks are left as they were.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"directory-symlink", "directory-0755", "directory-0750", "directory-0703",
        "directory-of-another-user", "lock-file-symlink"})
    void unsafeLockDirectoryIsRefused(String kind) throws IOException {
        Path xdg = privateDir("xdg");
        Path dir = xdg.resolve("numapin");
        Path target = xdg.resolve("elsewhere");
        String pattern;
        switch (kind) {
            case "directory-symlink" -> {
                Files.createDirectories(target);
                Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwx------"));
                Files.createSymbolicLink(dir, target);
                pattern = "cannot open the group lock directory " + Pattern.quote(dir.toString())
                        + ": .*not a plain directory";
            }
            case "directory-0755", "directory-0750", "directory-0703" -> {
                // Which access is the problem, and the command that ends it.
                String mode = kind.substring(kind.length() - 3);
                String who = Map.of("755", "its group and others have read and search access",
                        "750", "its group has read and search access",
                        "703", "others have write and search access").get(mode);
                Files.createDirectories(dir);
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(Map.of("755", "rwxr-xr-x",
                        "750", "rwxr-x---", "703", "rwx----wx").get(mode)));
                pattern = Pattern.quote("the group lock directory " + dir + " must allow no access for group or "
                        + "others, but " + who + " (mode " + mode + "): make it private to uid " + uid(xdg)
                        + " with chmod 700 " + dir);
            }
            case "directory-of-another-user" -> {
                Assumptions.assumeTrue(uid(xdg) == 0, "needs root (chown)");
                Files.createDirectories(dir);
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
                Files.setAttribute(dir, "unix:uid", 65534);
                pattern = Pattern.quote("the group lock directory " + dir + " must be owned by uid 0, the JVM's "
                        + "user, but it is owned by uid 65534: chown 0 " + dir + ", or give lockdir= a directory "
                        + "of uid 0");
            }
            default -> {
                Files.createDirectories(dir);
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
                Files.writeString(target, "precious\n");
                Files.createSymbolicLink(dir.resolve(lockFile(2, 0)), target);
                pattern = "cannot open " + Pattern.quote(dir.resolve(lockFile(2, 0)).toString())
                        + ": Too many levels of symbolic links";
            }
        }
        ChildResult r = workers(xdg, "group=auto,groups=2").run().assertRan();
        r.assertWarnings(pattern + ".*numapin places no thread in this JVM");
        assertEquals(List.of(), r.placed(), r.describe());
        assertEquals(Cpus.parse(all), Cpus.parse(Lines.one(r, "worker").get("cpus")), r.describe());
        workers(xdg, "group=auto,groups=2,strict").run().assertStrictStop(pattern + ".*strict");
        if (kind.equals("directory-symlink")) {
            try (var s = Files.list(target)) {
                assertEquals(0, s.count(), "a lock file was created through the symlinked directory");
            }
        } else if (kind.equals("lock-file-symlink")) {
            assertEquals("precious\n", Files.readString(target), "the symlinked lock file's target was written");
        }
    }

    @Test
    void withoutOtherJvmsTheLowestGroupIsClaimedAndFreedAtExit() throws IOException {
        Path xdg = privateDir("xdg");
        for (int i = 0; i < 2; i++) {
            ChildResult r = workers(xdg, "group=auto,groups=4").run().assertExit(0);
            assertEquals(0, autoGroup(r.logLines(), 4), "run " + (i + 1) + ": group 0 is free again\n" + r.describe());
            assertPlacedAs(r, 0);
        }
        Set<String> files = new TreeSet<>();
        try (var s = Files.list(xdg.resolve("numapin"))) {
            s.forEach(p -> files.add(p.getFileName().toString()));
        }
        assertEquals(Set.of(lockFile(4, 0)), files, "lock files");
    }
}
