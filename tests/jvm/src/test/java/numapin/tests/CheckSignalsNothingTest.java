package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * `numapin check PID` never signals a process that is not a HotSpot JVM
 * ready for attach: jcmd's attach handshake sends SIGQUIT, which ends a
 * process that leaves SIGQUIT at its default (any program that is not a
 * JVM, a JVM started with -Xrs whose attach listener is gone) and makes a
 * JVM that disables attach print a thread dump on its own stdout. For each
 * such target, check exits 0 with the kernel's names, says why on stderr,
 * and the target is still running afterwards, its stdout untouched; a
 * plain JVM is still asked (the control).
 */
@ExtendWith(RunLogs.class)
class CheckSignalsNothingTest {

    static ChildResult check(long pid) {
        return Launch.command(Build.numapin().toString(), "check", Long.toString(pid)).run();
    }

    /** Checks the target, then that it still runs and printed nothing since. */
    static void checkedAndAlive(Launch.Running t, String reason) throws InterruptedException {
        String before = t.stdout();
        ChildResult r = check(t.pid());
        String ctx = r.describe();
        assertEquals(0, r.exitCode, ctx);
        assertTrue(r.stderr.contains("not asking process " + t.pid() + " for Java thread names: " + reason),
                "check says why it asks nothing\n" + ctx);
        assertTrue(r.stderr.contains("the kernel's names are shown"), ctx);
        assertTrue(r.stdout.startsWith("process pid=" + t.pid() + " "), ctx);
        Thread.sleep(1000); // a SIGQUIT, had one been sent, has landed by now
        assertTrue(t.process.isAlive(), "the target died after check\n" + ctx);
        assertEquals(before, t.stdout(), "the target printed something after check\n" + ctx);
    }

    static Launch.Running attachTarget(String... jvmArgs) {
        Path go = RunLogs.newRunDir().resolve("go");
        Launch.Running t = Launch.program("AttachTarget", go.toString()).noAgent().jvmArg(jvmArgs).start();
        t.awaitLine(Pattern.compile("attach-ready pid=(\\d+)"));
        return t;
    }

    static void end(Launch.Running t) {
        t.process.destroyForcibly();
    }

    @Test
    void aProgramThatLeavesSigquitAtItsDefaultSurvives() throws Exception {
        // SIGQUIT at its default even where the test runner ignores it.
        Launch.Running t = Launch.command("env", "--default-signal=QUIT,INT", "/bin/sh", "-c",
                "trap - QUIT; echo target-ready; exec sleep 120").noPreload().start();
        try {
            t.awaitLine(Pattern.compile("target-ready"));
            Thread.sleep(300); // sh has exec'd sleep
            checkedAndAlive(t, "it is not a JVM (no libjvm.so mapped)");
        } finally {
            end(t);
        }
    }

    /**
     * HotSpot under -Xrs starts its attach listener at once (SIGQUIT cannot
     * wake it), so check attaches through the socket with no signal; with
     * the socket gone (a /tmp cleaner), check asks nothing.
     */
    @Test
    void aJvmStartedWithXrsSurvives() throws Exception {
        Launch.Running t = attachTarget("-Xrs");
        try {
            Path socket = Path.of("/tmp/.java_pid" + t.pid());
            assertTrue(Files.exists(socket), "-Xrs: the attach listener runs from the start");
            ChildResult r = check(t.pid());
            assertEquals(0, r.exitCode, r.describe());
            assertTrue(r.stdout.contains("thread \"Side\" "), "asked through the socket\n" + r.describe());
            assertTrue(t.process.isAlive(), r.describe());
            Files.delete(socket);
            checkedAndAlive(t, "it does not catch SIGQUIT");
        } finally {
            end(t);
        }
    }

    @Test
    void aJvmThatDisablesAttachIsNotSignalled() throws Exception {
        Launch.Running t = attachTarget("-XX:+DisableAttachMechanism");
        try {
            checkedAndAlive(t, "it does not allow attach (-XX:+DisableAttachMechanism)");
        } finally {
            end(t);
        }
    }

    @Test
    void aJvmWithoutPerformanceDataIsNotSignalled() throws Exception {
        Launch.Running t = attachTarget("-XX:-UsePerfData");
        try {
            checkedAndAlive(t, "its performance data (hsperfdata, absent under -XX:-UsePerfData) cannot be read");
        } finally {
            end(t);
        }
    }

    @Test
    void aPlainJvmIsAskedForItsThreadNames() {
        Launch.Running t = attachTarget();
        try {
            ChildResult r = check(t.pid());
            assertEquals(0, r.exitCode, r.describe());
            assertFalse(r.stderr.contains("not asking"), r.describe());
            assertTrue(r.stdout.contains("thread \"Side\" "), "the JVM's own name of a thread\n" + r.describe());
            assertTrue(t.process.isAlive(), r.describe());
        } finally {
            end(t);
        }
    }
}
