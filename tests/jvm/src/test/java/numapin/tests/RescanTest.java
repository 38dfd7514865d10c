package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import numapin.tests.ChildResult.Cpus;
import numapin.tests.ChildResult.Placed;

/**
 * The rescan (rescan=MS, docs/lifecycle.md): a thread renamed to a matching
 * name after its start is placed within a period, one renamed away keeps
 * its placement, rescan=0 places no renamed thread; and a rescan racing
 * threads that start and end does not place one twice nor lose a slot.
 */
@ExtendWith(RunLogs.class)
class RescanTest {
    static String all;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        all = Machine.allowedCpus();
    }

    private static ChildResult rename(String rescan, long waitMs) {
        return Launch.program("Rename", String.valueOf(waitMs)).fakeTwoNodes()
                .options("group=1,mem=none,scope=threads,threads=Renamed-*" + (rescan == null ? "" : ",rescan=" + rescan)).run()
                .assertExit(0);
    }

    private static Map<String, String> line(ChildResult r, String word, String name) {
        List<Map<String, String>> l = Lines.of(r, word).stream().filter(m -> name.equals(m.get("name"))).toList();
        assertEquals(1, l.size(), word + " lines for " + name + "\n" + r.describe());
        return l.get(0);
    }

    /** rescan=100 and the default (1000): placed once renamed, within a few seconds, by the rescan. */
    @ParameterizedTest(name = "rescan={0}")
    @ValueSource(strings = {"100", "default"})
    void renamedThreadIsPlacedByTheRescan(String rescan) {
        ChildResult r = rename(rescan.equals("default") ? null : rescan, 15_000);
        String ctx = r.describe();
        Map<String, String> start = line(r, "rename-start", "plain");
        Map<String, String> end = line(r, "rename-end", "Renamed-1");
        assertEquals(Cpus.parse(all), Cpus.parse(start.get("cpus")), "before the rename: not placed\n" + ctx);
        assertEquals("1", end.get("cpus"), "after the rename (waited " + end.get("waited_ms") + " ms)\n" + ctx);
        List<Placed> renamed = r.placed().stream().filter(p -> p.name().equals("Renamed-1")).toList();
        assertEquals(1, renamed.size(), ctx);
        Placed p = renamed.get(0);
        assertEquals(end.get("tid"), String.valueOf(p.tid()), p.line());
        assertEquals("1", p.cpus(), p.line());
        assertEquals("unchanged", p.mem(), p.line());
        assertTrue(p.line().endsWith(" how=rescan"), p.line());

        // renamed away from a matching name: keeps its placement
        assertEquals("1", line(r, "rename-start", "Renamed-2").get("cpus"), ctx);
        assertEquals("1", line(r, "rename-end", "plain-2").get("cpus"), ctx);
        assertEquals(2, r.placed().size(), "placed lines: Renamed-2 at its start, Renamed-1 after its rename\n" + ctx);
        assertEquals(List.of(), r.failureWarnings(), ctx);
    }

    @Test
    void renamedThreadStaysUnplacedWithoutRescan() {
        ChildResult r = rename("0", 1_500);
        String ctx = r.describe();
        Map<String, String> end = line(r, "rename-end", "Renamed-1");
        assertEquals(Cpus.parse(all), Cpus.parse(end.get("cpus")), "rescan=0: a renamed thread is not placed\n" + ctx);
        assertEquals("false", end.get("changed"), ctx);
        assertTrue(r.logLines().stream().noneMatch(l -> l.contains(" how=rescan")), ctx);
        assertEquals("1", line(r, "rename-end", "plain-2").get("cpus"), ctx);
    }

    /**
     * The rescan runs while threads start and end all the time (10000 short
     * threads, rescan every 10 ms): a thread it sees before its ThreadStart
     * has run, or after its ThreadEnd, is not placed a second time, and
     * cpus=core slots are not lost. Two threads alive together afterwards
     * get one CPU each.
     */
    @Test
    void rescanLeavesStartingAndEndingThreadsAlone() {
        int n = 10_000;
        ChildResult r = Launch.program("Starts", String.valueOf(n)).fakeTwoCores()
                .options("groups=1,cpus=core,mem=none,rescan=10,threads=Short-*|Long-*").run().assertExit(0);
        String ctx = r.describe();
        List<String> rescanned = r.logLines().stream().filter(l -> l.contains(" how=rescan")).toList();
        assertEquals(List.of(), rescanned, "threads whose names matched from their start, placed again by the rescan\n"
                + ctx);
        Map<String, String> s = Lines.summary(r);
        assertEquals(String.valueOf(n + 2), s.get("placed"), "summary placed= for " + n + " + 2 threads\n" + ctx);
        assertEquals("0", s.get("failed"), ctx);
        assertEquals(List.of(), r.failureWarnings(), ctx);
        assertTrue(r.levelLines("warning").stream().noneMatch(l -> l.contains("placed threads are live")),
                "at most two threads were ever live at once\n" + ctx);
        Set<String> longCpus = Lines.of(r, "starts-long").stream().map(m -> m.get("cpus")).collect(Collectors.toSet());
        assertEquals(Set.of("0", "1"), longCpus, "two live threads under cpus=core on two cores\n" + ctx);
    }
}
