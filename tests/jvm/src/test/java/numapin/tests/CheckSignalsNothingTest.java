package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
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
 * `numapin check PID` never signals a process that is not a HotSpot JVM
 * ready for attach: jcmd's attach handshake sends SIGQUIT, which ends a
 * process that leaves SIGQUIT at its default (any program that is not a
 * JVM, a JVM started with -Xrs) and makes a JVM that disables attach print
 * a thread dump on its own stdout. For each such target, check exits 0
 * with the kernel's names, says why on stderr, and the target is still
 * running afterwards, its stdout untouched; a plain JVM is still asked
 * (the control).
 */
@ExtendWith(RunLogs.class)
class CheckSignalsNothingTest {

    /** A running target and what it printed. */
    static final class Target implements AutoCloseable {
        final Process p;
        final List<String> out = new ArrayList<>();
        final Thread reader;

        Target(List<String> cmd) throws IOException {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            Map<String, String> inherited = new HashMap<>();
            ChildJvm.isolate(inherited);
            inherited.keySet().forEach(pb.environment()::remove);
            p = pb.start();
            reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(
                        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String l; (l = r.readLine()) != null; ) {
                        synchronized (out) {
                            out.add(l);
                            out.notifyAll();
                        }
                    }
                } catch (IOException e) {
                    // the process ended
                }
            });
            reader.setDaemon(true);
            reader.start();
        }

        void awaitLine(String prefix, long seconds) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            synchronized (out) {
                while (out.stream().noneMatch(l -> l.startsWith(prefix))) {
                    long left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
                    assertTrue(left > 0 && p.isAlive(), "no line '" + prefix + "' from the target: " + out);
                    out.wait(Math.min(left, 200));
                }
            }
        }

        List<String> lines() {
            synchronized (out) {
                return new ArrayList<>(out);
            }
        }

        @Override
        public void close() throws InterruptedException {
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** `numapin check PID`: exit status, stdout, stderr. */
    static String[] check(long pid) throws IOException, InterruptedException {
        Path dir = RunLogs.newRunDir();
        Path out = dir.resolve("check.stdout"), err = dir.resolve("check.stderr");
        Process p = new ProcessBuilder(HarnessTest.numapin().toString(), "check", Long.toString(pid))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertTrue(p.waitFor(ChildJvm.TIME_LIMIT_S, TimeUnit.SECONDS), "numapin check did not end in time");
        return new String[] {String.valueOf(p.exitValue()), Files.readString(out), Files.readString(err)};
    }

    /** Checks the target, then that it still runs and printed nothing since. */
    static void checkedAndAlive(Target t, String reason) throws Exception {
        List<String> before = t.lines();
        String[] r = check(t.p.pid());
        String ctx = "check exit " + r[0] + "\nstdout:\n" + r[1] + "\nstderr:\n" + r[2];
        assertEquals("0", r[0], ctx);
        assertTrue(r[2].contains("not asking process " + t.p.pid() + " for Java thread names: " + reason),
                "check says why it asks nothing\n" + ctx);
        assertTrue(r[2].contains("the kernel's names are shown"), ctx);
        assertTrue(r[1].startsWith("process pid=" + t.p.pid() + " "), ctx);
        Thread.sleep(1000); // a SIGQUIT, had one been sent, has landed by now
        assertTrue(t.p.isAlive(), "the target died after check (exit " + (t.p.isAlive() ? "" : t.p.exitValue())
                + ")\n" + ctx);
        assertEquals(before, t.lines(), "the target printed something after check\n" + ctx);
    }

    static List<String> java(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ChildJvm.java());
        cmd.addAll(List.of(args));
        return cmd;
    }

    static Path go() throws IOException {
        return RunLogs.newRunDir().resolve("go");
    }

    @Test
    void aProgramThatLeavesSigquitAtItsDefaultSurvives() throws Exception {
        Path sh = RunLogs.newRunDir().resolve("target.sh");
        // SIGQUIT at its default even if the test runner ignores it.
        Files.writeString(sh, "trap - QUIT\necho target-ready\nexec sleep 120\n");
        try (Target t = new Target(List.of("env", "--default-signal=QUIT,INT", "/bin/sh", sh.toString()))) {
            t.awaitLine("target-ready", 30);
            Thread.sleep(300); // sh has exec'd sleep
            checkedAndAlive(t, "it is not a JVM (no libjvm.so mapped)");
        }
    }

    /**
     * HotSpot under -Xrs starts its attach listener at once (it cannot be
     * woken by SIGQUIT), so check attaches through the socket with no
     * signal; with the socket gone (a /tmp cleaner), check asks nothing.
     */
    @Test
    void aJvmStartedWithXrsSurvives() throws Exception {
        try (Target t = new Target(java("-Xrs", "-cp", ChildJvm.probeClassPath(),
                "numapin.lifecycle.AttachTarget", go().toString()))) {
            t.awaitLine("attach-ready", 60);
            Path socket = Path.of("/tmp/.java_pid" + t.p.pid());
            assertTrue(Files.exists(socket), "-Xrs: the attach listener runs from the start");
            String[] r = check(t.p.pid());
            String ctx = "check exit " + r[0] + "\nstdout:\n" + r[1] + "\nstderr:\n" + r[2];
            assertEquals("0", r[0], ctx);
            assertTrue(r[1].contains("thread \"Side\" "), "asked through the socket\n" + ctx);
            assertTrue(t.p.isAlive(), ctx);
            Files.delete(socket);
            checkedAndAlive(t, "it does not catch SIGQUIT");
        }
    }

    @Test
    void aJvmThatDisablesAttachIsNotSignalled() throws Exception {
        try (Target t = new Target(java("-XX:+DisableAttachMechanism", "-cp", ChildJvm.probeClassPath(),
                "numapin.lifecycle.AttachTarget", go().toString()))) {
            t.awaitLine("attach-ready", 60);
            checkedAndAlive(t, "it does not allow attach (-XX:+DisableAttachMechanism)");
        }
    }

    @Test
    void aJvmWithoutPerformanceDataIsNotSignalled() throws Exception {
        try (Target t = new Target(java("-XX:-UsePerfData", "-cp", ChildJvm.probeClassPath(),
                "numapin.lifecycle.AttachTarget", go().toString()))) {
            t.awaitLine("attach-ready", 60);
            checkedAndAlive(t, "its performance data (hsperfdata, absent under -XX:-UsePerfData) cannot be read");
        }
    }

    @Test
    void aPlainJvmIsAskedForItsThreadNames() throws Exception {
        try (Target t = new Target(java("-cp", ChildJvm.probeClassPath(), "numapin.lifecycle.AttachTarget",
                go().toString()))) {
            t.awaitLine("attach-ready", 60);
            String[] r = check(t.p.pid());
            String ctx = "check exit " + r[0] + "\nstdout:\n" + r[1] + "\nstderr:\n" + r[2];
            assertEquals("0", r[0], ctx);
            assertFalse(r[2].contains("not asking"), ctx);
            assertTrue(r[1].contains("thread \"Side\" "), "the JVM's own name of a thread\n" + ctx);
            assertTrue(t.p.isAlive(), ctx);
        }
    }
}
