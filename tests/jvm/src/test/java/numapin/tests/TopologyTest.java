package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import numapin.tests.ChildResult.Placed;

/**
 * The machine numapin plans on (docs/lifecycle.md#hostile-environments): a
 * topology file hwloc cannot load, or none where HWLOC_XMLFILE points, is
 * one warning and nothing placed, a strict stop under strict; another
 * machine's topology places nothing for real; CPU-less memory nodes never
 * take a group; a cpuset narrower than the machine plans on the CPUs left.
 * Never a crash.
 */
@ExtendWith(RunLogs.class)
class TopologyTest {
    static String all;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        all = Machine.allowedCpus();
    }

    /** Nothing placed: no placed line, and the workers kept every CPU of the JVM. */
    static void assertNothingPlaced(ChildResult r) {
        assertEquals(List.of(), r.placed(), "placed lines\n" + r.describe());
        r.assertCpus(all, r.probes("default"), "workers");
    }

    static Path writeFile(String name, byte[] content) throws IOException {
        Path dir = RunLogs.newRunDir();
        Path f = dir.resolve(name);
        Files.write(f, content);
        return f;
    }

    /**
     * Topology files hwloc cannot load: one warning, nothing placed; under
     * strict the JVM does not start. HWLOC_XMLFILE naming no file at all is
     * one of them: hwloc falls back to this machine, and numapin, asked for
     * that file's machine, must not place threads on another one while its
     * log says source=xml.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"empty", "garbage", "truncated", "binary", "directory", "missing"})
    void unloadableTopologyIsOneWarningOrAStrictStop(String kind) throws IOException {
        Path xml = switch (kind) {
            case "empty" -> writeFile("topology.xml", new byte[0]);
            case "garbage" -> writeFile("topology.xml", "not xml at all\n".getBytes(StandardCharsets.UTF_8));
            case "truncated" -> writeFile("topology.xml",
                    "<?xml version=\"1.0\"?>\n<topology version=\"2.0\"><object type=\"Machine\" os_index=\"0\""
                            .getBytes(StandardCharsets.UTF_8));
            case "binary" -> {
                byte[] b = new byte[4096];
                new java.util.Random(7).nextBytes(b);
                yield writeFile("topology.xml", b);
            }
            case "directory" -> RunLogs.newRunDir();
            default -> RunLogs.newRunDir().resolve("no-such-topology.xml");
        };
        ChildResult r = Launch.probe("default:2").options("group=0,groups=2").env("HWLOC_XMLFILE", xml.toString())
                .run().assertRan();
        r.assertWarnings("cannot load the topology \\(xml " + Pattern.quote(xml.toString())
                + "\\).*numapin places no thread in this JVM");
        assertNothingPlaced(r);
        assertTrue(r.logLines().stream().noneMatch(l -> l.contains("][numapin] plan ")), r.describe());

        Launch.probe("default:2").options("group=0,groups=2,strict").env("HWLOC_XMLFILE", xml.toString()).run()
                .assertStrictStop("cannot load the topology \\(xml .*\\(strict");
    }

    /**
     * A topology that is not this machine (an XML file, no
     * HWLOC_THISSYSTEM=1): hwloc's binding calls do nothing and report
     * success, so numapin must not claim "placed" (nor set a memory policy
     * on the numbering of another machine's nodes).
     */
    @Test
    void topologyOfAnotherMachinePlacesNothingForReal() {
        Path xml = Build.topology("fakeheteromemtiers.xml");
        ChildResult r = Launch.probe("default:2").options("group=1").env("HWLOC_XMLFILE", xml.toString()).run();
        r.assertRan();
        assertNothingPlaced(r);
        assertEquals(1, r.failureWarnings().size(), "one warning that nothing is bound\n" + r.describe());
    }

    /**
     * taskset -c 1: numapin plans on the CPUs left. On this machine, one
     * group on CPU 1, the workers and main there. On the fake two-node
     * machine node 0 keeps no CPU this JVM may use, so there is one node with
     * CPUs and one group; groups=2 slices that one CPU between both groups
     * (warned), never binding to CPU 0. mem=none there: the kernel has no
     * node 1 for a memory policy.
     */
    @Test
    void cpusetNarrowerThanTheMachinePlansOnTheCpusLeft() {
        ChildResult r = Launch.program("Workers", "2").options("groups=1,cpus=pu").prefix("taskset", "-c", "1").run()
                .assertRan();
        String ctx = r.describe();
        for (Map<String, String> w : Lines.exactly(r, "worker", 2)) {
            assertEquals("1", w.get("cpus"), "the only CPU this JVM may use\n" + ctx);
        }
        assertEquals("1", Lines.one(r, "main").get("cpus"), ctx);
        String topo = r.logLines().stream().filter(l -> l.contains("][numapin] topology ")).findFirst().orElse("");
        assertEquals("1", Lines.fields(topo).get("allowed"), topo + "\n" + ctx);
        String plan = r.logLines().stream().filter(l -> l.contains("][numapin] plan ")).findFirst().orElse("");
        assertEquals("1", Lines.fields(plan).get("cpus"), plan);
        assertEquals("1", Lines.fields(plan).get("slots"), plan);
        for (Placed p : r.placed()) {
            assertEquals("1", p.cpus(), p.line());
        }
        assertEquals(2, r.placed().size(), ctx);
        assertEquals(List.of(), r.levelLines("error"), ctx);
        assertTrue(r.failureWarnings().stream().noneMatch(l -> l.contains("cannot bind")), ctx);

        // The fake two-node machine.
        ChildResult f = Launch.probe("default:2").fakeTwoNodes().options("log=debug,mem=none")
                .prefix("taskset", "-c", "1").run();
        f.assertRan();
        assertTrue(f.logLines().stream().anyMatch(l -> l.contains("] topology ") && l.contains(" allowed=1 ")),
                "topology line: allowed=1\n" + f.describe());
        assertTrue(f.logLines().stream().anyMatch(l -> l.contains("] plan group=0 groups=1 ") && l.contains(" cpus=1 ")),
                "plan: one group on CPU 1\n" + f.describe());
        for (Placed p : f.placed()) {
            assertEquals("1", p.cpus(), f.describe());
        }
        assertEquals(2, f.placed().size(), f.describe());
        f.assertCpus("1", f.probes("default"), "workers");
        f.assertWarnings();

        // Two groups on the one CPU left: both share it.
        ChildResult f2 = Launch.probe("default:2").fakeTwoNodes().options("group=1,groups=2,mem=none")
                .prefix("taskset", "-c", "1").run();
        f2.assertRan();
        f2.assertCpus("1", f2.probes("default"), "workers of group 1");
        assertTrue(f2.logLines().stream().anyMatch(l -> l.contains("[warning][numapin] advice: ")),
                "the groups sharing a CPU are warned about\n" + f2.describe());
        f2.assertWarnings();
    }

    static final Pattern PLAN = Pattern.compile("\\] plan group=(\\d+) groups=(\\d+) domain=node node=(\\S+) .* cpus=(\\S+) "
            + "cpus_mode=\\S+ .* mem=(\\S+) ");

    /**
     * fakeheteromemtiers.xml: DRAM nodes 0-2 with CPUs, CPU-less HBM and NVM
     * nodes 4, 6, 8, 9. Groups go to the DRAM nodes only; mem= may name a
     * CPU-less node; a node the machine lacks is an option error.
     */
    @Test
    void cpuLessNodesNeverTakeAGroup() {
        Path xml = Build.topology("fakeheteromemtiers.xml");
        String[][] expect = {{"0", "0-1"}, {"1", "2-3"}, {"2", "4-5"}};
        for (int g = 0; g < 3; g++) {
            ChildResult r = Launch.probe("default:2").options("dryrun,group=" + g).env("HWLOC_XMLFILE", xml.toString())
                    .run();
            r.assertRan();
            Matcher m = planLine(r);
            assertEquals("3", m.group(2), "groups default to the 3 nodes with CPUs\n" + r.describe());
            assertEquals(expect[g][0], m.group(3), r.describe());
            assertEquals(expect[g][1], m.group(4), r.describe());
            List<Placed> would = r.wouldPlace();
            assertEquals(2, would.size(), r.describe());
            for (Placed p : would) {
                assertEquals(expect[g][1], p.cpus(), r.describe());
                assertEquals("preferred:" + expect[g][0], p.mem(), r.describe());
            }
            assertEquals(List.of(), r.placed(), r.describe());
            r.assertCpus(all, r.probes("default"), "workers (dry run)");
        }
        // Memory on the CPU-less HBM node 4, CPUs of group 1.
        ChildResult r = Launch.probe("default:2").options("dryrun,group=1,mem=bind:4").env("HWLOC_XMLFILE",
                xml.toString()).run();
        r.assertRan();
        assertEquals("bind:4", planLine(r).group(5), r.describe());
        for (Placed p : r.wouldPlace()) {
            assertEquals("bind:4", p.mem(), r.describe());
            assertEquals("2-3", p.cpus(), r.describe());
        }
        // More groups than DRAM nodes: still none on a CPU-less node.
        for (int g = 0; g < 6; g++) {
            ChildResult s = Launch.version().options("dryrun,groups=6,group=" + g)
                    .env("HWLOC_XMLFILE", xml.toString()).run().assertExit(0);
            String node = planLine(s).group(3);
            assertTrue(Set.of("0", "1", "2").contains(node), "group " + g + " on node " + node + "\n" + s.describe());
        }
        // A node this machine lacks.
        ChildResult e = Launch.version().options("dryrun,mem=bind:3").env("HWLOC_XMLFILE", xml.toString()).run();
        assertEquals(1, e.exitCode, e.describe());
        assertEquals(1, e.stderrLogLines().size(), e.describe());
        assertTrue(e.stderrLogLines().get(0).contains("names node 3")
                && e.stderrLogLines().get(0).contains("0-2,4,6,8-9"), e.describe());
    }

    static Matcher planLine(ChildResult r) {
        for (String l : r.logLines()) {
            Matcher m = PLAN.matcher(l);
            if (m.find()) {
                return m;
            }
        }
        fail("no plan line\n" + r.describe());
        return null;
    }

    /** The topology line's cache= field of a run. */
    static String cacheField(ChildResult r) {
        String topo = r.logLines().stream().filter(l -> l.contains("][numapin] topology ")).findFirst().orElse("");
        return Lines.fields(topo).getOrDefault("cache", "(no cache field in: " + topo + ")");
    }

    /**
     * The topology cache (docs/options.md#topocachedirOff) across JVMs of
     * this machine: the first discovers the machine and writes the file, the
     * next reads it and plans and places the same; a file stamped with
     * another boot is not used, the JVM places as before and the file is
     * replaced; topocache=off writes nothing.
     */
    @Test
    void theNextJvmReadsTheTopologyTheFirstCached() throws IOException {
        Path xdg = TestFiles.mkdirs(RunLogs.newRunDir().resolve("xdg"), true);
        Path dir = xdg.resolve("numapin");
        ChildResult first = Launch.probe("default:2").env("XDG_RUNTIME_DIR", xdg.toString()).run().assertRan();
        String c1 = cacheField(first);
        assertTrue(c1.startsWith("discovered; written to " + dir + "/topology-"), c1 + "\n" + first.describe());
        Path file = Path.of(c1.substring("discovered; written to ".length()));
        ChildResult second = Launch.probe("default:2").env("XDG_RUNTIME_DIR", xdg.toString()).run().assertRan();
        assertEquals("read from " + file, cacheField(second), second.describe());
        assertEquals(first.placed().stream().map(Placed::cpus).toList(),
                second.placed().stream().map(Placed::cpus).toList(), "the same placements\n" + second.describe());
        assertEquals(2, second.placed().size(), second.describe());

        String xml = Files.readString(file, StandardCharsets.UTF_8);
        Matcher boot = Pattern.compile("name=\"numapin.cache.boot\" value=\"([^\"]*)\"").matcher(xml);
        assertTrue(boot.find(), "no boot stamp in " + file);
        Files.writeString(file, xml.replace(boot.group(1), "00000000-0000-0000-0000-000000000000"));
        ChildResult third = Launch.probe("default:2").env("XDG_RUNTIME_DIR", xdg.toString()).run().assertRan();
        assertEquals("discovered; the cache " + file + " was made on another boot, so it was not used; replaced",
                cacheField(third), third.describe());
        assertEquals(2, third.placed().size(), third.describe());
        assertEquals(List.of(), third.failureWarnings(), third.describe());
        assertTrue(Files.readString(file, StandardCharsets.UTF_8).contains(boot.group(1)), "not replaced: " + file);

        Path offXdg = TestFiles.mkdirs(RunLogs.newRunDir().resolve("xdg"), true);
        ChildResult off = Launch.probe("default:2").options("topocache=off").env("XDG_RUNTIME_DIR", offXdg.toString())
                .run().assertRan();
        assertEquals("discovered (topocache=off)", cacheField(off), off.describe());
        assertTrue(!Files.exists(offXdg.resolve("numapin")), "topocache=off made " + offXdg.resolve("numapin"));
    }
}
