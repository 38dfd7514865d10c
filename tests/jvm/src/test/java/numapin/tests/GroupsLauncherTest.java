package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * `numapin groups` as a launcher: it refuses a command whose JVMs already
 * load numapin (every group would be that copy's), totals only the groups
 * that exited 0, and ends groups stuck after a SIGTERM, saying so.
 */
@ExtendWith(RunLogs.class)
class GroupsLauncherTest {

    record Run(int exit, String stdout, String stderr, Path dir) {
        String describe() {
            return "exit " + exit + "\nstdout:\n" + stdout + "\nstderr:\n" + stderr;
        }
    }

    static ProcessBuilder groups(Path dir, Map<String, String> env, String... args) {
        List<String> cmd = new ArrayList<>(List.of(HarnessTest.numapin().toString(), "groups", "--logs",
                dir.resolve("logs").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectOutput(dir.resolve("stdout").toFile()).redirectError(dir.resolve("stderr").toFile());
        Map<String, String> inherited = new HashMap<>();
        ChildJvm.isolate(inherited);
        inherited.keySet().forEach(pb.environment()::remove);
        pb.environment().putAll(env);
        return pb;
    }

    static Run finish(Process p, Path dir) throws IOException, InterruptedException {
        assertTrue(p.waitFor(ChildJvm.TIME_LIMIT_S, TimeUnit.SECONDS), "numapin groups did not end");
        return new Run(p.exitValue(), Files.readString(dir.resolve("stdout")), Files.readString(dir.resolve("stderr")),
                dir);
    }

    static Run run(Map<String, String> env, String... args) throws IOException, InterruptedException {
        Path dir = RunLogs.newRunDir();
        return finish(groups(dir, env, args).start(), dir);
    }

    @Test
    void refusesJvmsThatLoadNumapinAlready() throws Exception {
        Path ran = RunLogs.newRunDir().resolve("ran");
        String touch = "touch " + ran;
        Run inEnv = run(Map.of("JAVA_TOOL_OPTIONS", "-Xss1m -agentpath:/usr/lib/x86_64-linux-gnu/numapin/libnumapin.so=group=0"),
                "--groups", "2", "--", "/bin/sh", "-c", touch);
        assertEquals(2, inEnv.exit(), inEnv.describe());
        assertEquals("numapin groups: JAVA_TOOL_OPTIONS already loads numapin "
                + "(-agentpath:/usr/lib/x86_64-linux-gnu/numapin/libnumapin.so=group=0), so every JVM would act as "
                + "that one's group: remove it from JAVA_TOOL_OPTIONS (numapin groups gives each group its own "
                + "agent)\n", inEnv.stderr(), inEnv.describe());
        Run inCommand = run(Map.of(), "--groups", "2", "--", "java", "-agentpath:" + ChildJvm.agent() + "=group=1",
                "-version");
        assertEquals(2, inCommand.exit(), inCommand.describe());
        assertTrue(inCommand.stderr().startsWith("numapin groups: the command already loads numapin (-agentpath:"),
                inCommand.describe());
        assertEquals(1, inCommand.stderr().lines().count(), inCommand.describe());
        // Under another file name, the same library is recognised.
        Path copy = RunLogs.newRunDir().resolve("agent.so");
        Files.createSymbolicLink(copy, Path.of(ChildJvm.agent()));
        Run renamed = run(Map.of("JDK_JAVA_OPTIONS", "-agentpath:" + copy), "--groups", "2", "--agent",
                ChildJvm.agent(), "--", "/bin/sh", "-c", touch);
        assertEquals(2, renamed.exit(), renamed.describe());
        assertTrue(renamed.stderr().startsWith("numapin groups: JDK_JAVA_OPTIONS already loads numapin"),
                renamed.describe());
        assertFalse(Files.exists(ran), "no group was started");
    }

    @Test
    void totalsLeaveOutGroupsThatFailed() throws Exception {
        Run r = run(Map.of(), "--groups", "3", "--", "/bin/sh", "-c",
                "echo result ops=10 p99_ms={group}; [ {group} != 1 ]");
        assertEquals(1, r.exit(), r.describe());
        String total = r.stdout().lines().filter(l -> l.startsWith("total ")).findFirst().orElse("");
        assertEquals(List.of("20.00", "2.00", "(sums", "of", "the", "2", "groups", "that", "exited", "0;", "worst",
                "of", "them", "for", "*_ms)"), List.of(total.split("\\s+")).subList(1, 16), r.describe());
    }

    @Test
    void groupsStuckAfterSigtermAreKilledAndSaid() throws Exception {
        Path dir = RunLogs.newRunDir();
        Path pids = dir.resolve("pids");
        // Each group ignores SIGTERM and SIGINT, as a JVM stuck in a shutdown hook does.
        Process p = groups(dir, Map.of(), "--groups", "2", "--", "/bin/sh", "-c",
                "trap '' TERM INT; echo $$ >> " + pids + "; while :; do sleep 1; done").start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while ((!Files.exists(pids) || Files.readAllLines(pids).size() < 2) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        List<String> started = Files.readAllLines(pids);
        assertEquals(2, started.size(), "both groups started");
        long signalled = System.nanoTime();
        p.destroy(); // SIGTERM
        Run r = finish(p, dir);
        long took = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - signalled);
        assertTrue(took >= 9, "the groups got their grace period first (" + took + " s)\n" + r.describe());
        assertEquals(1, r.exit(), r.describe());
        for (int g = 0; g < 2; g++) {
            assertTrue(r.stderr().contains("numapin groups: group " + g + " (pid "),
                    "says group " + g + " was killed\n" + r.describe());
        }
        assertTrue(r.stderr().contains("still running 10 s after SIGTERM: killed"), r.describe());
        for (String pid : started) {
            assertFalse(Files.exists(Path.of("/proc", pid.trim())), "group process " + pid + " ended");
        }
    }
}
