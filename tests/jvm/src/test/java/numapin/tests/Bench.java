package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import numapin.tests.ChildResult.Cpus;
import numapin.tests.ChildResult.Placed;

/**
 * What a TierBench run printed: its result line, its placement block (each
 * thread's CPUs as the thread read them), and numapin's lines among them.
 */
final class Bench {
    /** TierBench's tier threads: Tier1-worker-1 and so on. */
    static final Pattern TIER_THREAD = Pattern.compile("Tier[123]-worker-\\d+");
    /** A brief TierBench run: three steps. */
    static final List<String> BRIEF = List.of("--duration-s", "3", "--steps", "3", "--working-set-mb", "16",
            "--calibrate-ms", "500");
    /** Briefer still, for runs that only need the tier threads to start and work. */
    static final List<String> SHORT = List.of("--duration-s", "1", "--steps", "1", "--working-set-mb", "16",
            "--calibrate-ms", "300");

    /**
     * TierBench's tier sizes when none are given, for a JVM that sees this
     * JVM's CPUs and is one of `groups` (NUMAPIN_GROUPS): its share of the
     * CPUs, half of it for tier 1 and a quarter for tiers 2 and 3, one at
     * least.
     */
    static List<Integer> defaultTiers(int groups) {
        int share = Math.max(1, Runtime.getRuntime().availableProcessors() / groups);
        return List.of(Math.max(1, share / 2), Math.max(1, share / 4), Math.max(1, share / 4));
    }

    final String text;
    final String context;
    final Map<String, Double> result = new LinkedHashMap<>();
    /** placement block: thread name -> the cpus it read itself. */
    final Map<String, String> placement = new TreeMap<>();
    final List<String> logLines;

    /** A TierBench run that ended well: exit 0, its output parsed, its result line whole and consistent. */
    static Bench of(ChildResult r) {
        r.assertExit(0);
        Bench b = new Bench(r.stdout, r.describe());
        b.checkResult();
        return b;
    }

    Bench(String text, String context) {
        this.text = text;
        this.context = context;
        List<String> lines = ChildResult.lines(text);
        String resultLine = null;
        boolean inPlacement = false;
        for (String l : lines) {
            if (l.startsWith("result ")) {
                resultLine = l;
            }
            if (l.equals("placement:")) {
                inPlacement = true;
                continue;
            }
            if (inPlacement && l.startsWith("  ")) {
                String[] f = l.trim().split("\\s+");
                assertEquals(3, f.length, "placement line: " + l + "\n" + context);
                assertTrue(f[1].startsWith("tid=") && f[2].startsWith("cpus="), "placement line: " + l
                        + "\n" + context);
                placement.put(f[0], f[2].substring(5));
                continue;
            }
            inPlacement = false;
        }
        assertNotNull(resultLine, "TierBench printed no result line\n" + context);
        for (String tok : resultLine.substring(7).trim().split(" ")) {
            int eq = tok.indexOf('=');
            assertTrue(eq > 0, "result field without '=': " + tok + " in " + resultLine + "\n" + context);
            try {
                result.put(tok.substring(0, eq), Double.parseDouble(tok.substring(eq + 1)));
            } catch (NumberFormatException e) {
                fail("result field " + tok + " is not a number: " + resultLine + "\n" + context);
            }
        }
        logLines = ChildResult.numapinLines(text);
    }

    /** Tier threads of the placement block (each ran at least one request). */
    Map<String, String> tierPlacement() {
        Map<String, String> r = new TreeMap<>();
        placement.forEach((k, v) -> {
            if (TIER_THREAD.matcher(k).matches()) {
                r.put(k, v);
            }
        });
        return r;
    }

    /** numapin's "plan" line, as key=value fields. */
    Map<String, String> plan() {
        List<String> plans = logLines.stream().filter(l -> l.contains("][info][numapin] plan "))
                .collect(Collectors.toList());
        assertEquals(1, plans.size(), "numapin plan lines\n" + context);
        Map<String, String> f = new LinkedHashMap<>();
        Matcher m = ChildResult.FIELD.matcher(plans.get(0));
        while (m.find()) {
            f.put(m.group(1), m.group(2));
        }
        return f;
    }

    List<Placed> placed(String verb) {
        List<Placed> r = ChildResult.placed(logLines, verb);
        assertEquals(ChildResult.placedLike(logLines, verb), r.size(), "unparsed '" + verb + "' lines\n"
                + context);
        return r;
    }

    Set<String> placedNames(String verb) {
        return placed(verb).stream().map(Placed::name).collect(Collectors.toCollection(TreeSet::new));
    }

    /** The result line is whole and its SLA fields agree with each other. */
    void checkResult() {
        checkSla(result, context);
    }

    /**
     * Every tier thread that worked was placed by numapin on `cpus`, and
     * read back exactly those CPUs itself; numapin placed nothing else.
     */
    void checkTiersPlacedOn(String cpus) {
        Map<String, String> tiers = tierPlacement();
        assertEquals(Set.of("Tier1", "Tier2", "Tier3"), tiers.keySet().stream()
                .map(n -> n.substring(0, 5)).collect(Collectors.toSet()),
                "tier threads in the placement block\n" + context);
        tiers.forEach((name, got) -> assertEquals(Cpus.parse(cpus), Cpus.parse(got),
                name + " read cpus=" + got + ", expected its group's " + cpus + "\n" + context));
        Map<String, Placed> byName = new TreeMap<>();
        for (Placed p : placed("placed")) {
            assertTrue(byName.put(p.name(), p) == null, "two placed lines for " + p.name() + "\n" + context);
            assertTrue(TIER_THREAD.matcher(p.name()).matches(), "numapin placed a thread that is not a tier"
                    + " thread: " + p.line() + "\n" + context);
            assertEquals(Cpus.parse(cpus), Cpus.parse(p.cpus()), "numapin's line: " + p.line() + "\n"
                    + context);
        }
        assertTrue(byName.keySet().containsAll(tiers.keySet()), "tier threads that worked " + tiers.keySet()
                + " but numapin placed " + byName.keySet() + "\n" + context);
    }

    static final String[] SLA = {"sla10", "sla25", "sla50", "sla75", "sla100"};

    /**
     * TierBench's result fields: all there, none negative, percentiles in
     * order, sla10 <= sla25 <= ... <= sla100 <= throughput, and sla_geomean
     * between the least and the greatest SLA throughput (and, when none is
     * 0, their geometric mean, within the rounding of the printed values).
     */
    static void checkSla(Map<String, Double> r, String context) {
        for (String k : List.of("throughput", "p50_ms", "p99_ms", "p999_ms", "sla10", "sla25", "sla50", "sla75",
                "sla100", "sla_geomean")) {
            assertTrue(r.containsKey(k), "result has no " + k + ": " + r + "\n" + context);
            assertTrue(r.get(k) >= 0 && !r.get(k).isNaN(), k + " = " + r.get(k) + "\n" + context);
        }
        String fields = "result " + r + "\n" + context;
        assertTrue(r.get("throughput") > 0, "throughput 0: " + fields);
        assertTrue(r.get("p50_ms") <= r.get("p99_ms") && r.get("p99_ms") <= r.get("p999_ms"),
                "p50 <= p99 <= p99.9: " + fields);
        double min = Double.MAX_VALUE;
        double max = 0;
        double logSum = 0;
        for (int i = 0; i < SLA.length; i++) {
            double v = r.get(SLA[i]);
            if (i > 0) {
                assertTrue(r.get(SLA[i - 1]) <= v, SLA[i - 1] + " <= " + SLA[i] + ": " + fields);
            }
            min = Math.min(min, v);
            max = Math.max(max, v);
            logSum += Math.log(Math.max(v, 1e-9));
        }
        assertTrue(r.get("sla100") <= r.get("throughput"), "sla100 <= throughput: " + fields);
        double geo = r.get("sla_geomean");
        assertTrue(min - 0.5 <= geo && geo <= max + 0.5, "min(sla) <= sla_geomean <= max(sla): " + fields);
        if (min > 0) {
            double expected = Math.exp(logSum / SLA.length);
            assertTrue(Math.abs(geo - expected) <= 1 + 1e-3 * expected, "sla_geomean " + geo
                    + " vs. the geometric mean of the printed SLA values " + expected + ": " + fields);
        }
    }
}
