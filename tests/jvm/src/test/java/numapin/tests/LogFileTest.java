package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.List;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * log=LEVEL:FILE (docs/logging.md, docs/security.md): a new file is created
 * owner-only and appended to by later JVMs; a file that cannot or must not
 * be opened (a missing or read-only directory, a symlink, a FIFO, a
 * directory or a device, a second hard link, another user's file in a
 * sticky directory) is never written, and is one warning, the log going on
 * to stdout; under strict the JVM does not start.
 *
 * <p>Running as another user needs root and setpriv; a read-only mount
 * needs unshare and mount.
 */
@ExtendWith(RunLogs.class)
class LogFileTest {
    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
    }

    /** Runs a system tool to its end; its exit status. */
    static int tool(String... cmd) {
        return Launch.command(cmd).noPreload().run().exitCode;
    }

    /** The command under umask 0: what a new file's mode would be without numapin's own. */
    static final String[] UMASK_0 = {"sh", "-c", "umask 0; exec \"$@\"", "sh"};

    /**
     * A new log file: mode 0600 whatever the umask, numapin's lines only (none
     * on stdout or stderr), each whole, agreeing with what the threads read;
     * a second JVM appends to it, and the mode stays.
     */
    @Test
    void logFileIsCreatedOwnerOnlyAndAppendedTo() throws IOException {
        Path file = RunLogs.newRunDir().resolve("numapin.log");
        ChildResult r1 = Launch.probe("default:2", "plain:Side").fakeTwoNodes().options("group=0,log=info:" + file)
                .prefix(UMASK_0).run().assertRan();
        assertEquals(List.of(), r1.logLines(), "numapin lines on stdout with log=info:FILE\n" + r1.describe());
        assertTrue(Files.exists(file, LinkOption.NOFOLLOW_LINKS), "no log file " + file + "\n" + r1.describe());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file,
                LinkOption.NOFOLLOW_LINKS)), "mode of a new log file");
        String first = Files.readString(file);
        List<String> lines1 = ChildResult.lines(first);
        assertEquals(lines1.size(), ChildResult.numapinLines(first).size(),
                "lines in the log file that are not numapin's:\n" + first);
        r1.assertPlacementLinesMatchProbe(lines1, PlacementTest.DEFAULT_THREADS, "placed", true);
        assertEquals(2, ChildResult.summary(lines1, first).placed(), first);

        ChildResult r2 = Launch.probe("default:2").fakeTwoNodes().options("group=0,log=debug:" + file).run()
                .assertRan();
        assertEquals(List.of(), r2.logLines(), r2.describe());
        String both = Files.readString(file);
        assertTrue(both.startsWith(first), "the second JVM's lines were not appended:\n" + both);
        List<String> lines2 = ChildResult.lines(both.substring(first.length()));
        r2.assertPlacementLinesMatchProbe(lines2, PlacementTest.DEFAULT_THREADS, "placed", true);
        assertEquals(2, lines2.stream().filter(l -> l.contains("[numapin] placed \"")).count(), both);
        assertEquals(2, ChildResult.lines(both).stream().filter(l -> l.contains("][numapin] summary ")).count(), both);
        for (String l : ChildResult.lines(both)) {
            assertTrue(ChildResult.LOG_LINE.matcher(l).matches(), "log line of the wrong shape: " + l);
        }
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file,
                LinkOption.NOFOLLOW_LINKS)), "log file mode after appending");
    }

    /** The placed lines in the log file (none while it does not exist). */
    static List<String> placedLines(Path file) throws IOException {
        if (!Files.exists(file)) {
            return List.of();
        }
        return ChildResult.lines(Files.readString(file)).stream().filter(l -> l.contains("][numapin] placed \""))
                .toList();
    }

    /** The tasks of process pid named `comm`: their /proc/PID/task/TID directories. */
    static List<Path> tasksNamed(long pid, String comm) throws IOException {
        try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            return tasks.filter(t -> {
                try {
                    return Files.readString(t.resolve("comm")).strip().equals(comm);
                } catch (IOException e) {
                    return false; /* the thread ended */
                }
            }).toList();
        }
    }

    /** Three workers placed, still running (until `hold` exists). */
    static Launch.Running threeWorkers(Path hold, String options) {
        Launch.Running run = Launch.program("Workers", "3", hold.toString()).fakeTwoNodes().options(options)
                .start();
        run.awaitLine(Pattern.compile("workers-ready pid=\\d+"));
        return run;
    }

    /**
     * The default: numapin's log thread ("numapin-log", every signal the JVM
     * handles blocked) writes the workers' placed lines while the JVM runs,
     * without waiting for its exit; at exit each is there once.
     */
    @Test
    void theLogThreadWritesPlacementLinesWhileTheJvmRuns() throws Exception {
        Path dir = RunLogs.newRunDir();
        Path file = dir.resolve("numapin.log");
        Path hold = dir.resolve("hold");
        Launch.Running run = threeWorkers(hold, "group=0,log=info:" + file);
        try {
            List<Path> writer = tasksNamed(run.pid(), "numapin-log");
            assertEquals(1, writer.size(), "one numapin-log thread in " + run.pid());
            String status = Files.readString(writer.get(0).resolve("status"));
            var blocked = java.util.regex.Pattern.compile("(?m)^SigBlk:\\s+([0-9a-f]+)$").matcher(status);
            assertTrue(blocked.find(), status);
            long mask = Long.parseUnsignedLong(blocked.group(1), 16);
            for (int sig : new int[] {1, 2, 3, 10, 12, 15}) { /* HUP INT QUIT USR1 USR2 TERM */
                assertTrue((mask & (1L << (sig - 1))) != 0, "numapin-log takes signal " + sig + ": SigBlk "
                        + blocked.group(1));
            }
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (placedLines(file).size() < 3 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(3, placedLines(file).size(), "placed lines while the JVM runs, in " + file);
            Files.createFile(hold);
        } finally {
            if (!Files.exists(hold)) {
                run.kill();
            }
        }
        ChildResult r = run.finish().assertExit(0);
        List<String> placed = placedLines(file);
        assertEquals(3, placed.size(), "placed lines after exit\n" + Files.readString(file));
        assertEquals(3, placed.stream().distinct().count(), "a placed line written twice\n" + Files.readString(file));
        assertEquals(3, ChildResult.summary(ChildResult.lines(Files.readString(file)), r.describe()).placed());
    }

    /**
     * logsync: each worker's line is in the log before its run() reports,
     * with no log thread; a SIGKILL then loses none of them.
     */
    @Test
    void logsyncWritesEachLineBeforeTheThreadRuns() throws Exception {
        Path dir = RunLogs.newRunDir();
        Path file = dir.resolve("numapin.log");
        Path hold = dir.resolve("hold");
        Launch.Running run = threeWorkers(hold, "group=0,logsync,log=info:" + file);
        try {
            assertEquals(3, placedLines(file).size(), "placed lines when the workers had run, in " + file);
            assertEquals(List.of(), tasksNamed(run.pid(), "numapin-log"), "a log thread under logsync");
        } finally {
            run.kill();
        }
        String text = Files.readString(file);
        assertEquals(3, placedLines(file).size(), text);
        assertFalse(text.contains("][numapin] summary "), "killed before its exit, yet a summary:\n" + text);
    }

    /** The warning for a log file that cannot be opened, with the errno name. */
    static String logWarning(Path file, String errno) {
        return "cannot open log file '" + Pattern.quote(file.toString()) + "': .* \\(" + errno
                + "\\); logging to stdout";
    }

    /**
     * A log file refused: one warning on stdout, and the log goes on there
     * (plan, placements, summary); under strict, one error line and no JVM.
     */
    static void assertLogRefused(Launch run, Launch strict, Path file, String errno) {
        ChildResult r = run.run().assertRan();
        r.assertWarnings(logWarning(file, errno));
        assertTrue(r.logLines().stream().anyMatch(l -> l.contains("][numapin] plan ")), r.describe());
        assertEquals(2, r.placed().size(), "placement goes on\n" + r.describe());
        assertTrue(r.logLines().stream().anyMatch(l -> l.contains("][numapin] summary ")), r.describe());
        strict.run().assertStrictStop("cannot open log file '" + Pattern.quote(file.toString()) + "': .*\\(" + errno
                + "\\)");
    }

    static Launch logTo(Path file, String extra) {
        return Launch.probe("default:2").fakeTwoNodes().options("group=0,log=info:" + file + extra);
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
        assumeTrue(Machine.isRoot() && Machine.onPath("unshare") && Machine.onPath("mount"),
                "needs root, unshare and mount");
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
        assumeTrue(Machine.isRoot() && Machine.onPath("setpriv"), "needs root and setpriv");
        Path dir = RunLogs.newRunDir().resolve("readonly");
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("r-xr-xr-x"));
        Path f = dir.resolve("numapin.log");
        assertLogRefused(logTo(f, "").asUser("nobody", "nogroup"), logTo(f, ",strict").asUser("nobody", "nogroup"), f,
                "EACCES");
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
        assertLogRefused(logTo(f, ""), logTo(f, ",strict"), f, "ENXIO");
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
        assumeTrue(Machine.isRoot(), "needs root, to give a file to another user");
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
}
