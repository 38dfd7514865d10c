package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * `numapin groups` as a launcher: it refuses a command whose JVMs already
 * load numapin (every group would be that copy's), totals only the groups
 * that ended well (exit 0, or stopped by the signal passed on to them), and
 * ends groups stuck after a SIGTERM, saying so.
 */
@ExtendWith(RunLogs.class)
class GroupsLauncherTest {

    static Launch groups(Path logs, String... args) {
        List<String> cmd = new ArrayList<>(List.of(Build.numapin().toString(), "groups", "--logs", logs.toString()));
        cmd.addAll(List.of(args));
        return Launch.command(cmd);
    }

    static ChildResult run(Map<String, String> env, String... args) {
        Launch l = groups(RunLogs.newRunDir().resolve("logs"), args);
        env.forEach(l::env);
        return l.run();
    }

    @Test
    void refusesJvmsThatLoadNumapinAlready() throws Exception {
        Path ran = RunLogs.newRunDir().resolve("ran");
        String touch = "touch " + ran;
        ChildResult inEnv = run(Map.of("JAVA_TOOL_OPTIONS", "-Xss1m -agentpath:/usr/lib/x86_64-linux-gnu/numapin/libnumapin.so=group=0"),
                "--groups", "2", "--", "/bin/sh", "-c", touch);
        assertEquals(2, inEnv.exitCode, inEnv.describe());
        assertEquals("numapin groups: JAVA_TOOL_OPTIONS already loads numapin "
                + "(-agentpath:/usr/lib/x86_64-linux-gnu/numapin/libnumapin.so=group=0), so every JVM would act as "
                + "that one's group: remove it from JAVA_TOOL_OPTIONS (numapin groups gives each group its own "
                + "agent)\n", inEnv.stderr, inEnv.describe());
        ChildResult inCommand = run(Map.of(), "--groups", "2", "--", "java", "-agentpath:" + Build.agent() + "=group=1",
                "-version");
        assertEquals(2, inCommand.exitCode, inCommand.describe());
        assertTrue(inCommand.stderr.startsWith("numapin groups: the command already loads numapin (-agentpath:"),
                inCommand.describe());
        assertEquals(1, inCommand.stderr.lines().count(), inCommand.describe());
        // Under another file name, the same library is recognised.
        Path copy = RunLogs.newRunDir().resolve("agent.so");
        Files.createSymbolicLink(copy, Path.of(Build.agent()));
        ChildResult renamed = run(Map.of("JDK_JAVA_OPTIONS", "-agentpath:" + copy), "--groups", "2", "--agent",
                Build.agent(), "--", "/bin/sh", "-c", touch);
        assertEquals(2, renamed.exitCode, renamed.describe());
        assertTrue(renamed.stderr.startsWith("numapin groups: JDK_JAVA_OPTIONS already loads numapin"),
                renamed.describe());
        assertFalse(Files.exists(ran), "no group was started");
    }

    @Test
    void totalsLeaveOutGroupsThatFailed() throws Exception {
        ChildResult r = run(Map.of(), "--groups", "3", "--", "/bin/sh", "-c",
                "echo result ops=10 p99_ms={group}; [ {group} != 1 ]");
        assertEquals(1, r.exitCode, r.describe());
        String total = r.stdout.lines().filter(l -> l.startsWith("total ")).findFirst().orElse("");
        assertEquals(List.of("20.00", "2.00", "(sums", "of", "the", "2", "groups", "that", "ended", "well;", "worst",
                "of", "them", "for", "*_ms)"), List.of(total.split("\\s+")).subList(1, 16), r.describe());
    }

    /** Servers stopped by the SIGTERM passed on to them (exit 143) count in the total. */
    @Test
    void groupsStoppedBySigtermAreTotalled() throws Exception {
        Path dir = RunLogs.newRunDir();
        Path ready = dir.resolve("ready");
        Launch.Running p = groups(dir.resolve("logs"), "--groups", "2", "--", "/bin/sh", "-c",
                "trap 'echo result requests=5{group} p99_ms=1{group}; exit 143' TERM; echo {group} >> " + ready
                        + "; while :; do sleep 0.1; done").start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while ((!Files.exists(ready) || Files.readAllLines(ready).size() < 2) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(2, Files.readAllLines(ready).size(), "both groups started");
        p.process.destroy(); // SIGTERM
        ChildResult r = p.finish();
        assertEquals(1, r.exitCode, "a forwarded signal: exit 1\n" + r.describe());
        List<String> rows = r.stdout.lines().filter(l -> l.matches("[01] +143 .*")).toList();
        assertEquals(2, rows.size(), "both groups exited 143\n" + r.describe());
        String total = r.stdout.lines().filter(l -> l.startsWith("total ")).findFirst().orElse("");
        assertEquals(List.of("total", "101.00", "11.00", "(sums;", "worst", "group", "for", "*_ms)"),
                List.of(total.trim().split("\\s+")), r.describe());
    }

    @Test
    void groupsStuckAfterSigtermAreKilledAndSaid() throws Exception {
        Path dir = RunLogs.newRunDir();
        Path pids = dir.resolve("pids");
        // Each group ignores SIGTERM and SIGINT, as a JVM stuck in a shutdown hook does.
        Launch.Running p = groups(dir.resolve("logs"), "--groups", "2", "--", "/bin/sh", "-c",
                "trap '' TERM INT; echo $$ >> " + pids + "; while :; do sleep 1; done").start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while ((!Files.exists(pids) || Files.readAllLines(pids).size() < 2) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        List<String> started = Files.readAllLines(pids);
        assertEquals(2, started.size(), "both groups started");
        long signalled = System.nanoTime();
        p.process.destroy(); // SIGTERM
        ChildResult r = p.finish();
        long took = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - signalled);
        assertTrue(took >= 9, "the groups got their grace period first (" + took + " s)\n" + r.describe());
        assertEquals(1, r.exitCode, r.describe());
        for (int g = 0; g < 2; g++) {
            assertTrue(r.stderr.contains("numapin groups: group " + g + " (pid "),
                    "says group " + g + " was killed\n" + r.describe());
        }
        assertTrue(r.stderr.contains("still running 10 s after SIGTERM: killed"), r.describe());
        for (String pid : started) {
            assertFalse(Files.exists(Path.of("/proc", pid.trim())), "group process " + pid + " ended");
        }
    }
}
