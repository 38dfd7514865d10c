package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import numapin.tests.ChildResult.Cpus;
import numapin.tests.ChildResult.Placed;

/**
 * Virtual threads (JDK 21 and later): they run on the carriers of the
 * default scheduler, fork-join workers that the default threads= places; a
 * threads= naming other pools leaves the carriers, and so the virtual
 * threads, on every CPU.
 */
@ExtendWith(RunLogs.class)
class VirtualThreadsTest {
    static String all;

    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        all = Machine.allowedCpus();
    }

    private static ChildResult virtualThreads(String options) {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21 or later");
        return Launch.program("Virtual", "8").fakeTwoNodes().options(options).run().assertExit(0);
    }

    @Test
    void virtualThreadsRunOnPlacedCarriersByDefault() {
        ChildResult r = virtualThreads("group=1,mem=none");
        String ctx = r.describe();
        List<Map<String, String>> v = Lines.exactly(r, "vthread", 24);
        Map<String, Placed> placed = new HashMap<>();
        for (Placed p : r.placed()) {
            placed.put(p.name(), p);
        }
        assertTrue(!placed.isEmpty(), "no carrier was placed\n" + ctx);
        for (Map<String, String> m : v) {
            assertEquals("1", m.get("cpus"), "a virtual thread's carrier runs on " + m.get("cpus") + "\n" + ctx);
            String carrier = m.get("carrier").substring(m.get("carrier").indexOf('@') + 1);
            assertTrue(carrier.matches("ForkJoinPool-\\d+-worker-\\d+"), "carrier " + carrier + "\n" + ctx);
            assertTrue(placed.containsKey(carrier), "no placed line for carrier " + carrier + "\n" + ctx);
        }
        for (Placed p : placed.values()) {
            assertTrue(p.name().matches("ForkJoinPool-\\d+-worker-\\d+"), p.line());
            assertEquals("1", p.cpus(), p.line());
        }
    }

    @Test
    void carriersStayOnEveryCpuWhenThreadsNamesOnlyOtherPools() {
        ChildResult r = virtualThreads("group=1,mem=none,scope=threads,threads=Custom-*");
        String ctx = r.describe();
        for (Map<String, String> m : Lines.exactly(r, "vthread", 24)) {
            assertEquals(Cpus.parse(all), Cpus.parse(m.get("cpus")), "a virtual thread's carrier is placed\n" + ctx);
        }
        assertEquals(List.of(), r.placed(), ctx);
        assertTrue(!Lines.of(r, "carrier").isEmpty(), ctx);
        for (Map<String, String> c : Lines.of(r, "carrier")) {
            assertEquals(Cpus.parse(all), Cpus.parse(c.get("cpus")), "carrier thread " + c + "\n" + ctx);
        }
    }
}
