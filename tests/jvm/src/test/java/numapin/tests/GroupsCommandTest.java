package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import numapin.tests.ChildResult.Cpus;

/**
 * `numapin groups` (man/numapin.1): N copies of a command, each a JVM
 * group of its own through JAVA_TOOL_OPTIONS, NUMAPIN_GROUP(S) and {group}
 * in its arguments; their results merged into one table, their exit
 * statuses into one. Run on TierBench, whose tier threads must land on
 * their group's CPUs. Nothing here asserts a duration: the machine is
 * shared.
 */
@ExtendWith(RunLogs.class)
class GroupsCommandTest {
    /** numapin groups ARGS..., then the command CMD (none: empty). */
    static Launch groups(List<String> cmd, String... args) {
        List<String> all = new ArrayList<>(List.of(Build.numapin().toString(), "groups"));
        all.addAll(Arrays.asList(args));
        all.addAll(cmd);
        return Launch.command(all);
    }

    static Launch groups(String... args) {
        return groups(List.of(), args);
    }

    /** numapin groups' merged table: header keys, a row per group, the total row. */
    static final class Table {
        final List<String> keys = new ArrayList<>();
        final Map<Integer, Integer> exit = new TreeMap<>();
        final Map<Integer, Map<String, Double>> rows = new TreeMap<>();
        final Map<Integer, String> numapin = new TreeMap<>();
        Map<String, Double> total;
        String logs;

        Table(String stdout, String context) {
            List<String> lines = ChildResult.lines(stdout);
            assertFalse(lines.isEmpty(), "no table\n" + context);
            String[] head = lines.get(0).trim().split("\\s+");
            assertTrue(head.length >= 3 && head[0].equals("group") && head[1].equals("exit")
                    && head[head.length - 1].equals("numapin"), "table header: " + lines.get(0) + "\n" + context);
            keys.addAll(Arrays.asList(head).subList(2, head.length - 1));
            for (String l : lines.subList(1, lines.size())) {
                String[] f = l.trim().split("\\s+");
                if (l.startsWith("logs: ")) {
                    logs = l.substring(6);
                } else if (f[0].equals("total")) {
                    assertTrue(f.length >= 1 + keys.size(), "total row: " + l + "\n" + context);
                    total = values(f, 1, l, context);
                } else {
                    assertTrue(f[0].matches("\\d+") && f[1].matches("\\d+") && f.length >= 2 + keys.size(),
                            "group row: " + l + "\n" + context);
                    int g = Integer.parseInt(f[0]);
                    assertTrue(exit.put(g, Integer.parseInt(f[1])) == null, "two rows for group " + g + "\n"
                            + context);
                    rows.put(g, values(f, 2, l, context));
                    numapin.put(g, String.join(" ", Arrays.asList(f).subList(2 + keys.size(), f.length)));
                }
            }
        }

        private Map<String, Double> values(String[] f, int from, String line, String context) {
            Map<String, Double> v = new LinkedHashMap<>();
            for (int k = 0; k < keys.size(); k++) {
                String s = f[from + k];
                if (!s.equals("-")) {
                    try {
                        v.put(keys.get(k), Double.parseDouble(s));
                    } catch (NumberFormatException e) {
                        fail("not a number in column " + keys.get(k) + ": " + line + "\n" + context);
                    }
                }
            }
            return v;
        }
    }

    static String describeGroups(ChildResult r, Path logs, int groups) {
        StringBuilder sb = new StringBuilder(r.describe());
        for (int g = 0; g < groups; g++) {
            Path log = logs.resolve("group-" + g + ".log");
            sb.append("\n--- ").append(log).append(" ---\n")
                    .append(Files.exists(log) ? TestFiles.read(log) : "(missing)\n");
        }
        return sb.toString();
    }

    /**
     * Two groups of TierBench: both exit 0, the table has a row per group
     * and a total row (sums; worst group for *_ms), each group's tier
     * threads ran on its group's CPUs (CPU 0 and CPU 1 on this machine),
     * and {group} in the command's arguments reached each JVM as its group.
     */
    @Test
    void twoGroupsOfTierBench() {
        Path logs = RunLogs.newRunDir().resolve("logs");
        List<String> tierBench = Launch.tierBench(Bench.BRIEF).jvmArg("-Dnumapin.harness.group={group}",
                "-Dnumapin.harness.log=run-{group}.log", "-XshowSettings:properties").command();
        ChildResult r = groups(tierBench, "--groups", "2", "--options", "threads=Tier*-worker-*", "--logs",
                logs.toString(), "--").run();
        String ctx = describeGroups(r, logs, 2);
        r.assertExit(0);
        assertEquals("", r.stderr, "numapin groups wrote to stderr\n" + ctx);

        Table t = new Table(r.stdout, ctx);
        assertEquals(Set.of(0, 1), t.rows.keySet(), "group rows\n" + ctx);
        assertEquals(Map.of(0, 0, 1, 0), t.exit, "exit column\n" + ctx);
        assertNotNull(t.total, "no total row\n" + ctx);
        assertEquals(logs + "/group-N.log", t.logs, "logs line\n" + ctx);
        assertTrue(t.keys.containsAll(List.of("throughput", "p99_ms", "sla_geomean")), "columns " + t.keys + "\n"
                + ctx);
        for (String k : t.keys) {
            double a = t.rows.get(0).get(k);
            double b = t.rows.get(1).get(k);
            double want = k.endsWith("_ms") ? Math.max(a, b) : a + b;
            assertEquals(want, t.total.get(k), 0.011, "total " + k + " (groups " + a + ", " + b + ")\n" + ctx);
        }

        Set<Integer> seen = new TreeSet<>();
        Set<Integer> allCpus = new TreeSet<>();
        for (int g = 0; g < 2; g++) {
            String log = TestFiles.read(logs.resolve("group-" + g + ".log"));
            Bench b = new Bench(log, "group " + g + "\n" + ctx);
            b.checkResult();
            // The table holds this group's result line, to its 2 decimals.
            for (String k : t.keys) {
                assertEquals(b.result.get(k), t.rows.get(g).get(k), 0.006, "group " + g + " " + k + "\n" + ctx);
            }
            Map<String, String> plan = b.plan();
            assertEquals(String.valueOf(g), plan.get("group"), "plan line of group " + g + "\n" + ctx);
            assertEquals("2", plan.get("groups"), "plan line of group " + g + "\n" + ctx);
            String cpus = plan.get("cpus");
            if (Machine.isOneNodeTwoCpus()) {
                assertEquals(String.valueOf(g), cpus, "group " + g + "'s CPUs on this 1-node, 2-CPU machine\n"
                        + ctx);
            }
            TreeSet<Integer> mine = Cpus.parse(cpus);
            for (int c : mine) {
                assertTrue(allCpus.add(c), "CPU " + c + " in both groups\n" + ctx);
            }
            b.checkTiersPlacedOn(cpus);
            // The summary numapin logged is the one the table shows.
            ChildResult.Summary s = ChildResult.summary(b.logLines, ctx);
            assertEquals(b.placedNames("placed").size(), s.placed(), "summary placed=\n" + ctx);
            assertTrue(t.numapin.get(g).startsWith("placed=" + s.placed() + " cpus=" + s.cpus() + " mem_pages="),
                    "numapin column of group " + g + ": " + t.numapin.get(g) + "\n" + ctx);
            assertTrue(t.numapin.get(g).contains(" mem_local="), "numapin column of group " + g + "\n" + ctx);
            assertTrue(t.numapin.get(g).contains(" access_local="), "numapin column of group " + g + "\n" + ctx);
            assertEquals(Cpus.parse(cpus), Cpus.parse(s.cpus()), "summary cpus=\n" + ctx);
            // {group} in two arguments, as the JVM saw them (-XshowSettings:properties).
            assertTrue(log.contains("    numapin.harness.group = " + g + "\n"), "group " + g
                    + " did not get -Dnumapin.harness.group=" + g + "\n" + ctx);
            assertTrue(log.contains("    numapin.harness.log = run-" + g + ".log\n"), "group " + g
                    + " did not get -Dnumapin.harness.log=run-" + g + ".log\n" + ctx);
            // The agent came through JAVA_TOOL_OPTIONS, with the --options appended, after
            // the flag that sizes the JVM to its group's CPUs.
            assertTrue(log.contains("Picked up JAVA_TOOL_OPTIONS: -XX:ActiveProcessorCount=" + mine.size()
                    + " -agentpath:" + Build.agent() + "=group=" + g + ",groups=2,threads=Tier*-worker-*"),
                    "JAVA_TOOL_OPTIONS of group " + g + "\n" + ctx);
            seen.add(g);
        }
        assertEquals(Set.of(0, 1), seen);
    }

    /**
     * A group that fails makes numapin groups fail: group 0's TierBench gets
     * --steps 0 (a usage error, exit 2), group 1 runs. The table shows each
     * group's own status, and the total holds the group that printed a result.
     */
    @Test
    void aFailingGroupFailsTheRun() {
        Path logs = RunLogs.newRunDir().resolve("logs");
        List<String> tierBench = Launch.tierBench(List.of("--steps", "{group}", "--duration-s", "1",
                "--working-set-mb", "16", "--calibrate-ms", "300")).command();
        ChildResult r = groups(tierBench, "--groups", "2", "--options", "threads=Tier*-worker-*", "--logs",
                logs.toString(), "--").run();
        String ctx = describeGroups(r, logs, 2);
        assertEquals(1, r.exitCode, "numapin groups' exit status with a failed group\n" + ctx);
        Table t = new Table(r.stdout, ctx);
        assertEquals(Map.of(0, 2, 1, 0), t.exit, "exit column\n" + ctx);
        assertTrue(TestFiles.read(logs.resolve("group-0.log")).contains("TierBench: durations, steps and sizes must be"
                + " positive"), "group 0's usage error\n" + ctx);
        Bench one = new Bench(TestFiles.read(logs.resolve("group-1.log")), ctx);
        one.checkResult();
        assertEquals(one.result.get("throughput"), t.total.get("throughput"), 0.006, "total = group 1\n" + ctx);
        assertTrue(t.rows.get(0).isEmpty(), "group 0 printed no result, its row should be '-'\n" + ctx);
    }

    /** Children that cannot be run, or die by a signal: their status in the table, exit 1. */
    @Test
    void unrunnableAndKilledChildren() {
        Path dir = RunLogs.newRunDir();
        ChildResult missing = groups("--groups", "2", "--logs", dir.resolve("missing").toString(), "--",
                "/nonexistent/command").run();
        String ctx = describeGroups(missing, dir.resolve("missing"), 2);
        assertEquals(1, missing.exitCode, "exit status\n" + ctx);
        assertEquals(Map.of(0, 127, 1, 127), new Table(missing.stdout, ctx).exit, "exit column\n" + ctx);
        assertTrue(TestFiles.read(dir.resolve("missing/group-0.log")).contains("cannot run /nonexistent/command"), ctx);

        ChildResult killed = groups("--groups", "2", "--logs", dir.resolve("killed").toString(), "--", "/bin/sh", "-c",
                "if [ \"$NUMAPIN_GROUP\" = 1 ]; then kill -9 $$; fi; echo result n=$NUMAPIN_GROUPS").run();
        ctx = describeGroups(killed, dir.resolve("killed"), 2);
        assertEquals(1, killed.exitCode, "exit status\n" + ctx);
        Table t = new Table(killed.stdout, ctx);
        assertEquals(Map.of(0, 0, 1, 128 + 9), t.exit, "exit column: 128+SIGKILL for group 1\n" + ctx);
        assertEquals(Map.of("n", 2.0), t.rows.get(0), "group 0's result (NUMAPIN_GROUPS)\n" + ctx);
    }

    static final String USAGE =
            "usage: numapin groups --groups N [--agent LIB] [--options OPTS] [--logs DIR] [--html OUT.html]";

    /**
     * Bad arguments: exit 2, nothing run, no log directory made, nothing on
     * stdout; on stderr one line "numapin groups: ..." naming what is wrong
     * and what to give, then the usage (a missing agent: the line says
     * --agent).
     */
    @Test
    void badArgumentsExit2() {
        Path dir = RunLogs.newRunDir();
        Path logs = dir.resolve("logs");
        Path marker = dir.resolve("ran");
        String agent = dir.resolve("no-such-lib.so").toString();
        Map<List<String>, String> bad = new LinkedHashMap<>();
        for (String n : List.of("0", "abc", "-1", "2x", "4097", "")) {
            bad.put(List.of("--groups", n), "--groups takes a number from 1 to 4096, not '" + n + "'");
        }
        bad.put(List.of(), "--groups is required");
        bad.put(List.of("--bogus", "--groups", "2"), "unrecognized option '--bogus'");
        bad.put(List.of("--groups", "2", "--agent", agent),
                "agent " + agent + ": No such file or directory (use --agent)");
        bad.forEach((args, message) -> {
            List<String> all = new ArrayList<>(List.of("--logs", logs.toString()));
            all.addAll(args);
            all.addAll(List.of("--", "/bin/sh", "-c", "touch " + marker));
            ChildResult r = groups(all.toArray(new String[0])).run();
            String ctx = "arguments " + args + "\n" + r.describe();
            assertEquals(2, r.exitCode, "exit status\n" + ctx);
            List<String> err = r.stderrLines();
            assertEquals("numapin groups: " + message, err.get(0), "the message on stderr\n" + ctx);
            if (!args.contains("--agent")) {
                assertEquals(USAGE, err.get(1), "the usage after the message\n" + ctx);
            }
            assertEquals("", r.stdout, "stdout\n" + ctx);
        });
        // No command at all, and --groups without a value.
        ChildResult noCmd = groups("--logs", logs.toString(), "--groups", "2").run();
        assertEquals(2, noCmd.exitCode, noCmd.describe());
        assertTrue(noCmd.stderr.startsWith("numapin groups: ") && noCmd.stderr.contains("no command given")
                && noCmd.stderr.contains(USAGE), noCmd.describe());
        ChildResult noValue = groups("--groups").run();
        assertEquals(2, noValue.exitCode, noValue.describe());
        assertTrue(noValue.stderr.startsWith("numapin groups: ") && noValue.stderr.contains(USAGE),
                noValue.describe());
        assertFalse(Files.exists(marker), "a command ran despite bad arguments");
        assertFalse(Files.exists(logs), "a log directory was made despite bad arguments");

        ChildResult help = groups("--help").run();
        assertEquals(0, help.exitCode, help.describe());
        assertTrue(help.stdout.startsWith(USAGE + "\n"), help.describe());
    }

    /** Every "{group}" in an argument of CMD becomes the group's index, not only the first. */
    @Test
    void everyGroupPlaceholderOfAnArgumentIsReplaced() {
        Path logs = RunLogs.newRunDir().resolve("logs");
        ChildResult r = groups("--groups", "2", "--logs", logs.toString(), "--", "/bin/sh", "-c",
                "echo result a={group} b={group}").run();
        String ctx = describeGroups(r, logs, 2);
        r.assertExit(0);
        Table t = new Table(r.stdout, ctx);
        assertEquals(Map.of("a", 1.0, "b", 1.0), t.rows.get(1), ctx);
    }
}
