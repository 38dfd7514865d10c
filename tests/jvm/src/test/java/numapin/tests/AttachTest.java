package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import numapin.tests.ChildResult.Cpus;
import numapin.tests.ChildResult.Placed;

/**
 * Late attach with the JDK's own jcmd (docs/lifecycle.md#late-attach), on
 * the JDK under test: fork-join workers already running move to the group
 * (placed from outside, through HotSpot's VMStructs thread ids), new ones
 * are placed as they start. The target runs on the fake 2-node machine, so
 * group 1 is CPU 1 (its environment is the agent's: the agent runs inside
 * it). The workers themselves read where they run, before and after.
 */
@ExtendWith(RunLogs.class)
class AttachTest {
    static String all;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        all = Machine.allowedCpus();
    }

    /** jcmd PID JVMTI.agent_load LIB OPTIONS; the inner quotes: jcmd would otherwise split the options at '='. */
    static ChildResult agentLoad(long pid, String options) {
        return Launch.command(Build.jdkTool("jcmd"), String.valueOf(pid), "JVMTI.agent_load", Build.agent(),
                "\"" + options + "\"").run();
    }

    @Test
    void jcmdAttachPlacesRunningWorkersThenNewOnes() throws IOException {
        Path go = RunLogs.newRunDir().resolve("go");
        Launch target = Launch.program("AttachTarget", go.toString()).noAgent().fakeTwoNodes();
        boolean modern = Runtime.version().feature() >= 21;
        if (modern) {
            target.jvmArg("-XX:+EnableDynamicAgentLoading");
        }
        Launch.Running run = target.start();
        try {
            run.awaitLine(Pattern.compile("attach-ready pid=(\\d+)"));
            ChildResult first = agentLoad(run.pid(), "group=1,scope=threads");
            assertEquals(0, first.exitCode, "jcmd exit status\n" + first.describe());
            assertTrue(first.stdout.contains("return code: 0"), "jcmd: the agent's Agent_OnAttach failed\n"
                    + first.describe());
            // A second load: the copy already there goes on, this one does
            // nothing, and jcmd shows it failed (return code 3).
            ChildResult second = agentLoad(run.pid(), "group=0");
            assertEquals(0, second.exitCode, "second jcmd\n" + second.describe());
            assertTrue(second.stdout.contains("return code: 3"), "second jcmd: numapin already loaded\n"
                    + second.describe());
            Files.createFile(go);
        } finally {
            if (!Files.exists(go)) {
                run.kill();
            }
        }
        ChildResult r = run.finish().assertExit(0);
        String ctx = r.describe();

        List<Map<String, String>> before = Lines.of(r, "attach-before");
        List<Map<String, String>> after = Lines.of(r, "attach-after");
        List<Map<String, String>> fresh = Lines.of(r, "attach-new");
        assertEquals(3, before.size(), ctx);
        assertEquals(3, after.size(), ctx);
        assertEquals(2, fresh.size(), ctx);
        for (Map<String, String> b : before) {
            assertEquals(Cpus.parse(all), Cpus.parse(b.get("cpus")), "before the attach, nothing is placed: " + b + "\n"
                    + ctx);
        }
        Map<String, Placed> placed = r.placed().stream().collect(Collectors.toMap(Placed::name, p -> p));
        assertEquals(ChildResult.placedLike(r.logLines(), "placed"), r.placed().size(), ctx);
        for (Map<String, String> a : after) {
            String name = a.get("name");
            if (name.equals("Side")) {
                assertEquals(Cpus.parse(all), Cpus.parse(a.get("cpus")), "a plain thread is not placed\n" + ctx);
                assertTrue(!placed.containsKey("Side"), ctx);
                continue;
            }
            assertEquals("1", a.get("cpus"), "running worker " + name + " after the attach\n" + ctx);
            Placed p = placed.get(name);
            assertTrue(p != null, "no placed line for running worker " + name + "\n" + ctx);
            assertEquals(a.get("tid"), String.valueOf(p.tid()), "tid numapin found for " + name + " through VMStructs\n"
                    + ctx);
            assertEquals("1", p.cpus(), p.line());
            assertEquals("unchanged", p.mem(), p.line());
            assertTrue(p.line().endsWith(" how=attach"), p.line());
        }
        for (Map<String, String> n : fresh) {
            assertEquals("1", n.get("cpus"), "worker started after the attach\n" + ctx);
            Placed p = placed.get(n.get("name"));
            assertTrue(p != null, "no placed line for new worker " + n + "\n" + ctx);
            assertEquals(n.get("tid"), String.valueOf(p.tid()), ctx);
            assertTrue(!p.line().contains(" how="), "a new worker is placed at its start, by itself: " + p.line());
            // The fake node 1 is not in this kernel: the memory policy is refused, as anywhere on this machine.
            assertTrue(p.line().endsWith(" mem_error=EINVAL"), p.line());
        }
        assertEquals(Cpus.parse(all), Cpus.parse(Lines.one(r, "attach-main").get("cpus")), ctx);
        assertEquals(4, placed.size(), "placed lines: 2 running workers, 2 new ones\n" + ctx);

        List<String> again = r.levelLines("warning").stream().filter(l -> l.contains("already loaded")).toList();
        assertEquals(1, again.size(), "the second jcmd load: one warning\n" + ctx);
        assertEquals(1, r.logLines().stream().filter(l -> l.contains("][numapin] plan ")).count(),
                "the second load planned again\n" + ctx);
        Map<String, String> s = Lines.summary(r);
        assertEquals("4", s.get("placed"), ctx);
        assertEquals("0", s.get("failed"), ctx);
        assertEquals("1", s.get("group"), ctx);
        if (modern) {
            assertTrue(!r.stderr.contains("dynamically"), "-XX:+EnableDynamicAgentLoading: no JDK warning\n" + ctx);
        }
    }
}
