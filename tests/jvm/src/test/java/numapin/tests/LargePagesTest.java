package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * -XX:+UseLargePages (hugetlbfs) under the whole JVM placed: numapin reads
 * at load what HotSpot will reserve in 2 MiB huge pages (the code cache and
 * the whole maximum heap) and checks the free pages of the group's node
 * (docs/heap.md, "Large pages"). The host's own node 0 pool is set for
 * each case and put back afterwards; where that cannot be done (not root,
 * more than one node, a pool the kernel cannot fill) the test is skipped.
 */
@ExtendWith(RunLogs.class)
class LargePagesTest {
    static final Path POOL = Path.of("/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages");
    static final String OPTIONS = "groups=1,scope=jvm";
    /** HotSpot's own warning when a reservation in huge pages fails (JDK 17 and 25 word it alike). */
    static final String HOTSPOT_FAILED = "Failed to reserve and commit memory";

    static long readPool() throws IOException {
        return Long.parseLong(Files.readString(POOL).trim());
    }

    /** Sets node 0's pool to n pages; skips the test when the kernel cannot reserve them. */
    static void setPool(long n) throws IOException {
        Files.writeString(POOL, Long.toString(n));
        long got = readPool();
        assumeTrue(got == n, "the kernel reserved " + got + " of " + n + " huge pages of 2 MiB on node 0");
    }

    static ChildResult run(String options) {
        return Launch.version().jvmArg("-XX:+UseLargePages", "-Xms64m", "-Xmx64m").options(options).run();
    }

    static List<String> largePageLines(ChildResult r, String level) {
        return r.levelLines(level).stream().filter(l -> l.contains("][numapin] large pages: ")).toList();
    }

    @Test
    void aShortPoolIsOneWarningAndAnEnoughPoolOneInfoLine() throws IOException {
        assumeTrue(Machine.isRoot(), "needs root to set the huge page pool");
        assumeTrue(Files.isWritable(POOL), POOL + " cannot be written");
        assumeTrue(Machine.nodesWithCpus().equals(Set.of(0)), "needs a machine of one node");
        long saved = readPool();
        try {
            // Short: 20 pages, fewer than the code cache alone takes.
            setPool(20);
            ChildResult s = run(OPTIONS).assertExit(0);
            String ctx = s.describe();
            List<String> w = largePageLines(s, "warning");
            assertEquals(1, w.size(), ctx);
            assertEquals(List.of(), largePageLines(s, "info"), ctx);
            Map<String, String> f = Lines.fields(w.get(0));
            assertEquals("20", f.get("free"), w.get(0));
            assertEquals("2M", f.get("size"), w.get(0));
            assertEquals("0", f.get("nodes"), w.get(0));
            assertEquals(Long.toString((64L << 20) / (2L << 20)), f.get("heap_pages"), w.get(0));
            long needed = Long.parseLong(f.get("needed"));
            assertEquals(needed, Long.parseLong(f.get("heap_pages")) + Long.parseLong(f.get("code_pages")), w.get(0));
            assertTrue(w.get(0).contains("echo " + needed + " > " + POOL), w.get(0));
            assertTrue(w.get(0).contains("hugepagesz=2M hugepages=0:" + needed), w.get(0));
            // What the warning says HotSpot does: it cannot reserve them.
            assertTrue(s.stdout.contains(HOTSPOT_FAILED) || s.stderr.contains(HOTSPOT_FAILED), ctx);

            // strict: the JVM does not start, and says why.
            ChildResult strict = run(OPTIONS + ",strict");
            assertNotEquals(0, strict.exitCode, strict.describe());
            List<String> e = largePageLines(strict, "error");
            assertEquals(1, e.size(), strict.describe());
            assertTrue(e.get(0).endsWith(" (strict: the JVM does not start)"), e.get(0));

            // Exactly what numapin counts: HotSpot gets every page it asks for.
            setPool(needed);
            ChildResult ok = run(OPTIONS + ",strict").assertExit(0);
            ctx = ok.describe();
            List<String> i = largePageLines(ok, "info");
            assertEquals(1, i.size(), ctx);
            assertEquals(Long.toString(needed), Lines.fields(i.get(0)).get("free"), i.get(0));
            assertEquals(Long.toString(needed), Lines.fields(i.get(0)).get("needed"), i.get(0));
            assertEquals(List.of(), ok.failureWarnings(), ctx);
            // Under the sanitizer runtime (make test-asan), whose shadow
            // memory holds the addresses HotSpot asks for its heap first,
            // HotSpot's reservations differ: there numapin's count is
            // checked, HotSpot's use of it not.
            String preload = System.getenv("LD_PRELOAD");
            if (preload == null || !preload.contains("libasan")) {
                assertTrue(!ok.stdout.contains(HOTSPOT_FAILED) && !ok.stderr.contains(HOTSPOT_FAILED),
                        "numapin counted enough, HotSpot did not get them\n" + ctx);
            }
        } finally {
            Files.writeString(POOL, Long.toString(saved));
        }
    }
}
