package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import numapin.tests.ChildResult.Placed;

/**
 * One copy of numapin acts in a JVM, however many are loaded: a second
 * copy, from another path under another file name (the Debian package's
 * agent in JAVA_TOOL_OPTIONS and a build tree's on the command line), finds
 * the first one's process-wide mark, says which copy acts, and does
 * nothing; the JVM goes on. At late attach, jcmd shows a second copy's load
 * as failed (return code 3), and options jcmd has cut at '=' as refused
 * (return code 1) with the quoting to use in the JVM's stderr.
 */
@ExtendWith(RunLogs.class)
class OneCopyActsTest {

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
    }

    /** The agent under another name in another directory. */
    static Path copyOfAgent() throws IOException {
        Path copy = RunLogs.newRunDir().resolve("other-name-numapin.so");
        Files.copy(Path.of(Build.agent()), copy, StandardCopyOption.REPLACE_EXISTING);
        return copy;
    }

    @Test
    void aSecondCopyFromAnotherPathDoesNothing() throws IOException {
        Path copy = copyOfAgent();
        // The build tree's agent loads first, as group 1 (CPU 1); the copy
        // second, as group 0: only the first places.
        ChildResult r = Launch.program("Workers", "2").fakeTwoNodes().options("group=1,groups=2")
                .jvmArg("-agentpath:" + copy + "=group=0,groups=2").run().assertExit(0);
        String ctx = r.describe();
        List<Placed> placed = r.placed();
        assertEquals(2, placed.size(), "each worker placed once\n" + ctx);
        for (Placed p : placed) {
            assertEquals("1", p.cpus(), "placed by the copy that acts (group 1)\n" + ctx);
        }
        List<String> again = r.levelLines("warning").stream().filter(l -> l.contains("already loaded")).toList();
        assertEquals(1, again.size(), ctx);
        String w = again.get(0);
        assertTrue(w.contains(Build.agent() + " (options 'group=1,groups=2') acts"), "names the copy that acts: " + w);
        assertTrue(w.contains("this copy, " + copy + " (options 'group=0,groups=2'), does nothing"),
                "names the copy that does nothing: " + w);
        assertEquals(1, r.logLines().stream().filter(l -> l.contains("][numapin] summary ")).count(),
                "one summary\n" + ctx);
        assertEquals("1", Lines.summary(r).get("group"), ctx);
    }

    static ChildResult agentLoad(long pid, String lib, String options) {
        return Launch.command(Build.jdkTool("jcmd"), String.valueOf(pid), "JVMTI.agent_load", lib, options).run();
    }

    @Test
    void jcmdShowsLoadsThatDidNothing() throws IOException {
        Path go = RunLogs.newRunDir().resolve("go");
        Launch target = Launch.program("AttachTarget", go.toString()).noAgent().fakeTwoNodes();
        if (Runtime.version().feature() >= 21) {
            target.jvmArg("-XX:+EnableDynamicAgentLoading");
        }
        Launch.Running run = target.start();
        ChildResult unquoted, first, other;
        Path copy = copyOfAgent();
        try {
            run.awaitLine(Pattern.compile("attach-ready pid=(\\d+)"));
            // Without the inner quotes jcmd cuts the options at '='.
            unquoted = agentLoad(run.pid(), Build.agent(), "group=1,groups=2");
            first = agentLoad(run.pid(), Build.agent(), "\"group=1,groups=2\"");
            other = agentLoad(run.pid(), copy.toString(), "\"group=0,groups=2\"");
            Files.createFile(go);
        } finally {
            if (!Files.exists(go)) {
                run.kill();
            }
        }
        ChildResult r = run.finish().assertExit(0);
        String ctx = r.describe() + "\njcmd: " + unquoted.describe() + "\n" + first.describe() + "\n"
                + other.describe();
        assertTrue(unquoted.stdout.contains("return code: 1"), "bad options: 1\n" + ctx);
        assertTrue(first.stdout.contains("return code: 0"), ctx);
        assertTrue(other.stdout.contains("return code: 3"), "already loaded: 3\n" + ctx);
        List<String> errors = r.stderrLogLines().stream().filter(l -> l.contains("][error][numapin]")).toList();
        assertEquals(1, errors.size(), ctx);
        assertTrue(errors.get(0).contains("option 'group' needs a value")
                && errors.get(0).contains("jcmd splits its arguments at '='")
                && errors.get(0).contains("jcmd PID JVMTI.agent_load /path/libnumapin.so '\"group=1,groups=2\"'"),
                "the reason, and the quoting to use: " + errors.get(0));
        assertEquals("1", Lines.summary(r).get("group"), "the first load that worked acts\n" + ctx);
    }
}
