package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * group=auto across containers (docs/lifecycle.md#groupauto): JVMs in
 * different PID and mount namespaces (`unshare --pid --fork --mount-proc`,
 * with the lock directory bind-mounted at another path in each) share
 * lockdir= and take distinct groups; the lock files say who holds them
 * with the PID namespace their pid belongs to. Needs root (unshare, mount).
 */
@ExtendWith(RunLogs.class)
class LockDirTest {
    @BeforeAll
    static void machine() {
        Machine.requireCpus0And1();
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root (unshare --mount, mount --bind)");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/unshare")), "needs unshare (util-linux)");
    }

    /** Workers 1 [HOLD] under group=auto,groups=2 with this lockdir, behind prefix. */
    static Launch workers(Path hold, String lockdir, String... prefix) {
        String[] args = hold != null ? new String[] {"1", hold.toString()} : new String[] {"1"};
        return Launch.program("Workers", args).fakeTwoCores().prefix(prefix)
                .options("group=auto,groups=2,mem=none,lockdir=" + lockdir);
    }

    /** In a PID namespace and a mount namespace of its own, with `shared` bind-mounted at `at`. */
    static String[] namespaced(Path shared, Path at) {
        return new String[] {"unshare", "--pid", "--fork", "--mount-proc", "sh", "-c",
            "mount --bind \"$0\" \"$1\" && shift && exec \"$@\"", shared.toString(), at.toString()};
    }

    static String pidns() throws IOException {
        return Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
    }

    @Test
    void locksHoldAcrossPidAndMountNamespaces() throws Exception {
        Path shared = AutoGroupTest.privateDir("shared");
        Path at1 = AutoGroupTest.privateDir("at1");
        Path at2 = AutoGroupTest.privateDir("at2");
        Path hold = shared.getParent().resolve("hold");
        List<Launch.Running> runs = new ArrayList<>();
        try {
            // Group 0 from here; group 1 from another PID and mount namespace, through another path.
            runs.add(workers(hold, shared.toString()).start());
            runs.get(0).awaitLine(Pattern.compile("workers-ready pid=(\\d+)"));
            assertEquals(0, AutoGroupTest.autoGroup(runs.get(0), 2), runs.get(0).stdout());
            runs.add(workers(hold, at1.toString(), namespaced(shared, at1)).start());
            String nsPid = runs.get(1).awaitLine(Pattern.compile("workers-ready pid=(\\d+)")).group(1);
            assertEquals(1, AutoGroupTest.autoGroup(runs.get(1), 2), runs.get(1).stdout());
            assertEquals("1", nsPid, "the JVM is pid 1 of its own PID namespace");

            // A third, namespaced too: both groups are held.
            ChildResult third = workers(null, at2.toString(), namespaced(shared, at2)).run().assertExit(0);
            List<String> w = third.failureWarnings();
            assertEquals(1, w.size(), third.describe());
            assertTrue(w.get(0).contains("all 2 groups are held"), w.get(0));
            assertEquals(List.of(), third.placed(), third.describe());

            // Who holds what: a pid and its namespace; the pids alone would not tell.
            Map<String, String> h0 = Lines.fields(" " + Files.readString(shared.resolve("groups-2.group-0.lock")).trim());
            Map<String, String> h1 = Lines.fields(" " + Files.readString(shared.resolve("groups-2.group-1.lock")).trim());
            assertEquals(String.valueOf(runs.get(0).pid()), h0.get("pid"));
            assertEquals(pidns(), h0.get("pidns"));
            assertEquals("1", h1.get("pid"));
            assertNotEquals(pidns(), h1.get("pidns"), "the namespaced holder's PID namespace");

            // The holder of group 0 is killed: a namespaced JVM gets group 0 at once.
            runs.remove(0).kill();
            ChildResult next = workers(null, at2.toString(), namespaced(shared, at2)).run().assertExit(0);
            assertEquals(0, AutoGroupTest.autoGroup(next.logLines(), 2), next.describe());
            AutoGroupTest.assertPlacedAs(next, 0);
        } finally {
            if (!Files.exists(hold)) {
                Files.createFile(hold);
            }
            for (Launch.Running r : runs) {
                r.finish();
            }
        }
        // The bind mounts were the namespaces' own.
        for (Path at : List.of(at1, at2)) {
            try (Stream<Path> s = Files.list(at)) {
                assertEquals(0, s.count(), at + " is empty here: the mount was private to the namespace");
            }
        }
    }
}
