package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import numapin.tests.ChildResult.Cpus;

/**
 * TierBench on its own, without numapin: its output (step table, placement
 * block, result line), its options, and its usage errors. No timing is
 * asserted; only that the numbers it prints agree with each other.
 */
@ExtendWith(RunLogs.class)
class TierBenchTest {
    static final Pattern HEADER = Pattern.compile("^TierBench: tiers (\\d+)/(\\d+)/(\\d+) threads, working set (\\d+)"
            + " MiB, (\\d+) accesses per tier$");
    static final Pattern STEP = Pattern.compile("^\\s*(\\d+)\\s+(\\d+)\\s+([\\d.]+)\\s+([\\d.]+)\\s+([\\d.]+)$");

    static ChildResult tierBench(Map<String, String> env, String... args) {
        Launch l = Launch.tierBench(List.of(args));
        env.forEach(l::env);
        return l.run();
    }

    static Matcher header(ChildResult r) {
        for (String l : r.stdoutLines()) {
            Matcher m = HEADER.matcher(l);
            if (m.matches()) {
                return m;
            }
        }
        throw new AssertionError("no 'TierBench: tiers ...' line\n" + r.describe());
    }

    /**
     * The output of a run with given tier sizes: the header repeats the
     * options, one step row per step with achieved <= rate-ish numbers
     * that parse, every tier present in the placement block with indexes
     * within its pool size, unplaced threads on the process's CPUs, and a
     * consistent result line whose throughput is the best step's.
     */
    @Test
    void outputOfARunWithGivenTierSizes() {
        ChildResult r = tierBench(Map.of(), "--tier-threads", "2,1,1", "--steps", "2", "--duration-s", "1",
                "--working-set-mb", "8", "--accesses", "500", "--calibrate-ms", "300");
        r.assertExit(0);
        assertEquals("", r.stderr, "stderr of a good run\n" + r.describe());
        Matcher h = header(r);
        assertEquals(List.of("2", "1", "1", "8", "500"), List.of(h.group(1), h.group(2), h.group(3), h.group(4),
                h.group(5)), "header\n" + r.describe());
        assertTrue(r.stdout.contains("\ncapacity: "), "capacity line\n" + r.describe());

        List<Double> achieved = new ArrayList<>();
        for (String l : r.stdoutLines()) {
            Matcher m = STEP.matcher(l);
            if (m.matches()) {
                achieved.add(Double.parseDouble(m.group(2)));
                double p50 = Double.parseDouble(m.group(3));
                double p99 = Double.parseDouble(m.group(4));
                double p999 = Double.parseDouble(m.group(5));
                assertTrue(p50 <= p99 && p99 <= p999, "step percentiles in order: " + l + "\n" + r.describe());
            }
        }
        assertEquals(2, achieved.size(), "step rows\n" + r.describe());

        Bench b = new Bench(r.stdout, r.describe());
        b.checkResult();
        double best = achieved.stream().mapToDouble(Double::doubleValue).max().getAsDouble();
        // Rounded to whole requests in both places.
        assertEquals(best, b.result.get("throughput"), 1.0, "throughput = the best step\n" + r.describe());

        Map<String, String> tiers = b.tierPlacement();
        assertEquals(b.placement.keySet(), tiers.keySet(), "only tier threads in the placement block\n"
                + r.describe());
        assertEquals(Set.of("Tier1", "Tier2", "Tier3"), tiers.keySet().stream().map(n -> n.substring(0, 5))
                .collect(Collectors.toSet()), "all three tiers worked\n" + r.describe());
        int[] size = {2, 1, 1};
        for (String name : tiers.keySet()) {
            int tier = name.charAt(4) - '0';
            int index = Integer.parseInt(name.substring(name.lastIndexOf('-') + 1));
            assertTrue(index >= 1 && index <= size[tier - 1], name + " in a pool of " + size[tier - 1] + "\n"
                    + r.describe());
            assertEquals(Cpus.parse(Machine.allowedCpus()), Cpus.parse(tiers.get(name)), name
                    + " without numapin runs where the process may\n" + r.describe());
        }
        assertFalse(r.stdout.contains("[numapin]"), "numapin lines without the agent\n" + r.describe());
    }

    /** Default pool sizes follow this group's share of the CPUs: availableProcessors / NUMAPIN_GROUPS. */
    @Test
    void defaultTierSizesFollowTheGroupsShare() {
        int cpus = Runtime.getRuntime().availableProcessors();
        for (int groups : new int[] {1, 2}) {
            ChildResult r = tierBench(Map.of("NUMAPIN_GROUPS", String.valueOf(groups)), "--steps", "1",
                    "--duration-s", "0.3", "--working-set-mb", "4", "--calibrate-ms", "200");
            r.assertExit(0);
            Matcher h = header(r);
            assertEquals(Bench.defaultTiers(groups), List.of(Integer.parseInt(h.group(1)),
                    Integer.parseInt(h.group(2)), Integer.parseInt(h.group(3))),
                    "tiers for " + cpus + " CPUs and NUMAPIN_GROUPS=" + groups + "\n" + r.describe());
            new Bench(r.stdout, r.describe()).checkResult();
        }
    }

    /** --max-rate skips the calibration: the one step runs at that rate. */
    @Test
    void maxRateSetsTheInjectionRate() {
        ChildResult r = tierBench(Map.of(), "--max-rate", "500", "--steps", "1", "--duration-s", "0.5",
                "--working-set-mb", "4");
        r.assertExit(0);
        assertTrue(r.stdout.contains("\ncapacity: 500 requests/s\n"), r.describe());
        List<String> steps = r.stdoutLines().stream().filter(l -> STEP.matcher(l).matches())
                .collect(Collectors.toList());
        assertEquals(1, steps.size(), r.describe());
        Matcher m = STEP.matcher(steps.get(0));
        assertTrue(m.matches());
        assertEquals("500", m.group(1), "step rate\n" + r.describe());
        new Bench(r.stdout, r.describe()).checkResult();
    }

    /** Usage errors: exit 2, one "TierBench: ..." message on stderr, no stack trace, nothing run. */
    @Test
    void usageErrorsExit2() {
        List<List<String>> bad = List.of(
                List.of("--bogus"),
                List.of("--steps"),
                List.of("--steps", "0"),
                List.of("--duration-s", "0"),
                List.of("--working-set-mb", "0"),
                List.of("--accesses", "-1"),
                List.of("--duration-s", "abc"),
                List.of("--tier-threads", "1,2"),
                List.of("--tier-threads", "a,b,c"));
        for (List<String> args : bad) {
            ChildResult r = tierBench(Map.of(), args.toArray(new String[0]));
            assertEquals(2, r.exitCode, "exit status for " + args + "\n" + r.describe());
            assertTrue(r.stderr.startsWith("TierBench: "), "message for " + args + "\n" + r.describe());
            assertFalse(r.stderr.contains("Exception") || r.stderr.contains("\tat "), "stack trace for " + args
                    + "\n" + r.describe());
            assertFalse(r.stdout.contains("capacity:"), "ran despite " + args + "\n" + r.describe());
        }
    }

    /**
     * Values that parse as numbers but that a run cannot use are usage
     * errors too: a tier of 0 threads (which ForkJoinPool would refuse with
     * a stack trace), a calibration of 0 ms (which would measure a capacity
     * of 0 and inject for ever), a negative rate (which would mean
     * "calibrate").
     */
    @Test
    void unusableValuesAreUsageErrors() {
        for (List<String> args : List.of(List.of("--tier-threads", "0,1,1"), List.of("--calibrate-ms", "0"),
                List.of("--max-rate", "-5"))) {
            List<String> all = new ArrayList<>(args);
            all.addAll(List.of("--steps", "1", "--duration-s", "0.3", "--working-set-mb", "4"));
            ChildResult r = tierBench(Map.of(), all.toArray(new String[0]));
            assertEquals(2, r.exitCode, "exit status for " + args + "\n" + r.describe());
            assertTrue(r.stderr.startsWith("TierBench: "), "message for " + args + "\n" + r.describe());
        }
    }
}
