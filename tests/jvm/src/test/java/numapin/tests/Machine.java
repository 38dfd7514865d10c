package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import numapin.child.Self;

/** Facts about the machine the tests run on, read from /proc and /sys. */
final class Machine {
    private Machine() {}

    /** The CPUs this (test) JVM may run on: what an unplaced child thread keeps. */
    static String allowedCpus() {
        return Self.cpus().cpus();
    }

    /**
     * The fake 2-node machine maps its PUs 0 and 1 onto CPUs 0 and 1: they
     * must be there for the tests to mean anything.
     */
    static void requireCpus0And1() {
        TreeSet<Integer> cpus = ChildResult.Cpus.parse(allowedCpus());
        assertTrue(cpus.contains(0) && cpus.contains(1),
                "these tests need CPUs 0 and 1, this process may use only " + cpus);
    }

    /** NUMA nodes that have CPUs, from /sys. */
    static Set<Integer> nodesWithCpus() {
        Set<Integer> r = new TreeSet<>();
        try (Stream<Path> s = Files.list(Path.of("/sys/devices/system/node"))) {
            for (Path p : (Iterable<Path>) s::iterator) {
                String n = p.getFileName().toString();
                if (n.matches("node\\d+") && !Files.readString(p.resolve("cpulist")).isBlank()) {
                    r.add(Integer.parseInt(n.substring(4)));
                }
            }
        } catch (IOException e) {
            return Set.of(0);
        }
        return r;
    }

    /** True on the machine the real-topology tests are written for: 1 node, CPUs 0-1. */
    static boolean isOneNodeTwoCpus() {
        return nodesWithCpus().equals(Set.of(0)) && ChildResult.Cpus.parse(allowedCpus()).equals(Set.of(0, 1));
    }

    /** A command of that name on PATH. */
    static boolean onPath(String name) {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            if (Files.isExecutable(Path.of(d, name))) {
                return true;
            }
        }
        return false;
    }

    static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }
}
