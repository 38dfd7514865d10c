package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import numapin.tests.ChildResult.Placed;

/**
 * 10,000 short-lived threads from 16 pools, at most 32 alive at once, so
 * that ThreadStart and ThreadEnd of different threads overlap all the time
 * and thread ids are reused (numapin.child.Stress). Half the pools match
 * threads=. The summary must count exactly the threads started: every Hot
 * thread placed once, every Cold thread skipped once, nothing failed; each
 * line of the log whole. `make test-asan` runs
 * this under ASan and UBSan too. No time is measured.
 */
@ExtendWith(RunLogs.class)
class ShortLivedThreadsTest {
    static final int POOLS = 16;
    static final int THREADS = 10_000;
    static final int LIVE = 32;
    static final Pattern DONE = Pattern.compile(
            "^stress-done started=(\\d+) hot=(\\d+) cold=(\\d+) checked=(\\d+) misplaced=(\\d+)$");
    static final Pattern SKIPPED_NAME = Pattern.compile("\\] skipped \"([^\"]*)\" tid=");

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
    }

    static Map<String, Integer> summaryFields(ChildResult r) {
        List<String> s = r.logLines().stream().filter(l -> l.contains("][numapin] summary ")).toList();
        assertEquals(1, s.size(), "summary lines\n" + r.describe());
        Map<String, Integer> f = new HashMap<>();
        Matcher m = ChildResult.FIELD.matcher(s.get(0));
        while (m.find()) {
            if (m.group(2).matches("\\d+")) {
                f.put(m.group(1), Integer.parseInt(m.group(2)));
            }
        }
        return f;
    }

    static Matcher done(ChildResult r) {
        for (String l : r.stdoutLines()) {
            Matcher m = DONE.matcher(l);
            if (m.matches()) {
                return m;
            }
        }
        throw new AssertionError("no stress-done line\n" + r.describe());
    }

    /**
     * Runs the stress program under the options; checks what holds whatever
     * the options: exit 0, no crash, every line whole, each Hot thread placed
     * (or would-be placed) and each Cold thread skipped, as the summary says.
     * Returns the placement lines by thread name.
     */
    static Map<String, Integer> stress(String options, String verb, String expectedCpus) {
        ChildResult r = Launch.program("Stress", String.valueOf(POOLS), String.valueOf(THREADS), String.valueOf(LIVE),
                expectedCpus).jvmArg("-XX:TieredStopAtLevel=1").fakeTwoNodes()
                .options("threads=Hot-*,log=debug," + options).run().assertExit(0);
        String ctx = r.describe();
        assertEquals(List.of(), r.hsErrFiles(), ctx);
        assertEquals(List.of(), r.stderrLogLines(), "numapin lines on stderr\n" + ctx);
        Matcher d = done(r);
        int hot = Integer.parseInt(d.group(2));
        int cold = Integer.parseInt(d.group(3));
        assertEquals(THREADS, hot + cold, ctx);
        assertEquals(0, Integer.parseInt(d.group(5)), "Hot threads on the wrong CPUs (of "
                + d.group(4) + " checked)\n" + ctx);
        assertTrue(Integer.parseInt(d.group(4)) > 0, ctx);

        // Every line whole: one write(2) per line, never mixed with another.
        for (String l : r.logLines()) {
            assertTrue(ChildResult.LOG_LINE.matcher(l).matches(), "numapin line of the wrong shape: " + l);
            assertEquals(l.indexOf("][numapin] "), l.lastIndexOf("][numapin] "), "two lines in one: " + l);
        }

        // Each Hot thread placed once, no other thread.
        Map<String, Integer> placedByName = new LinkedHashMap<>();
        for (Placed p : ChildResult.placed(r.logLines(), verb)) {
            placedByName.merge(p.name(), 1, Integer::sum);
        }
        assertEquals(ChildResult.placedLike(r.logLines(), verb), placedByName.values().stream().mapToInt(i -> i).sum(),
                "'" + verb + "' lines that do not parse\n" + ctx);
        Set<String> notHot = new HashSet<>();
        for (String n : placedByName.keySet()) {
            if (!n.startsWith("Hot-")) {
                notHot.add(n);
            }
        }
        assertEquals(Set.of(), notHot, "threads placed that threads=Hot-* does not match\n" + ctx);
        assertEquals(hot, placedByName.size(), "Hot threads with a '" + verb + "' line\n" + ctx);

        // Each Cold thread skipped once (and a few of the JVM's own threads).
        Map<String, Integer> skippedByName = new HashMap<>();
        int skippedLines = 0;
        for (String l : r.logLines()) {
            Matcher m = SKIPPED_NAME.matcher(l);
            if (m.find()) {
                skippedLines++;
                skippedByName.merge(m.group(1), 1, Integer::sum);
            }
        }
        long coldSkipped = skippedByName.entrySet().stream().filter(e -> e.getKey().startsWith("Cold-")).count();
        assertEquals(cold, coldSkipped, "Cold threads with a skipped line\n" + ctx);
        assertTrue(skippedByName.entrySet().stream().filter(e -> e.getKey().startsWith("Cold-"))
                .allMatch(e -> e.getValue() == 1), "a Cold thread skipped twice\n" + ctx);

        // The summary counts what the lines show.
        Map<String, Integer> s = summaryFields(r);
        String counted = verb.equals("placed") ? "placed" : "would_place";
        assertEquals(placedByName.values().stream().mapToInt(i -> i).sum(), s.get(counted),
                "summary " + counted + " vs. '" + verb + "' lines\n" + ctx);
        assertEquals(skippedLines, s.get("skipped"), "summary skipped vs. skipped lines\n" + ctx);
        assertEquals(0, s.get("failed"), ctx);
        return placedByName;
    }

    /** cpus=core on group 0 of the fake machine: every Hot thread on CPU 0, placed exactly once. */
    @Test
    void tenThousandShortLivedThreadsAreCountedExactly() {
        Map<String, Integer> placed = stress("group=0,cpus=core,rescan=0", "placed", "0");
        assertTrue(placed.values().stream().allMatch(n -> n == 1), "a Hot thread placed twice");
    }

    /** The same under dryrun: would-place lines, nothing bound. */
    @Test
    void tenThousandThreadsInADryRun() {
        Map<String, Integer> placed = stress("group=1,cpus=pu,dryrun,rescan=0", "would-place",
                Machine.allowedCpus());
        assertTrue(placed.values().stream().allMatch(n -> n == 1), "a Hot thread would-placed twice");
    }

    /**
     * The rescan thread (every 10 ms) lists the threads while they start and
     * end: numapin reads each one's OS id from HotSpot's memory (VMStructs)
     * as threads die, under ASan in `make test-asan`. Every Hot thread is
     * still placed once, on its group's CPU, none of the others; a thread
     * that ends while the rescan places it gets no placed line with an
     * empty cpus=.
     */
    @Test
    void tenThousandThreadsWithTheRescanThreadRacingThem() {
        Map<String, Integer> placed = stress("group=1,rescan=10,mem=none", "placed", "1");
        // A thread the rescan lists before its own ThreadStart ran must not
        // be placed, and counted, twice.
        long twice = placed.values().stream().filter(n -> n > 1).count();
        assertEquals(0, twice, "Hot threads placed twice (by the rescan, then at their start); the summary "
                + "counts " + placed.values().stream().mapToInt(i -> i).sum() + " placements for " + placed.size()
                + " threads");
    }
}
