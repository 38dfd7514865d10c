package numapin.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Where the things under test are. run.sh sets them as system properties:
 * numapin.java (the java launcher the children run), numapin.agent
 * (libnumapin.so, in the build directory beside the numapin CLI and
 * TierBench), numapin.child.cp (the child programs' classes), numapin.repo
 * (the repository), numapin.runs (where RunLogs keeps logs).
 */
final class Build {
    static final String HDRHISTOGRAM = "/usr/share/java/hdrhistogram.jar";
    static final String TIERBENCH = "numapin.tierbench.TierBench";

    private Build() {}

    private static String required(String key) {
        String v = System.getProperty(key);
        if (v == null || v.isEmpty()) {
            throw new IllegalStateException("system property " + key + " is not set (run tests/jvm/run.sh)");
        }
        return v;
    }

    static String java() {
        return required("numapin.java");
    }

    /** A tool of the JDK under test (jcmd, jps, javac). */
    static String jdkTool(String name) {
        return Path.of(java()).getParent().resolve(name).toString();
    }

    static String agent() {
        return required("numapin.agent");
    }

    static String childClassPath() {
        return required("numapin.child.cp");
    }

    static Path repo() {
        return Path.of(required("numapin.repo"));
    }

    /** The agent's build directory (build/, or make's B=): numapin, tools/, tierbench/classes. */
    static Path dir() {
        return Path.of(agent()).toAbsolutePath().getParent();
    }

    /** The numapin command-line tool of that build. */
    static Path numapin() {
        return dir().resolve("numapin");
    }

    static String tierBenchClassPath() {
        Path classes = dir().resolve("tierbench/classes");
        assertTrue(Files.isRegularFile(classes.resolve("numapin/tierbench/TierBench.class")),
                "TierBench is not built in " + classes + " (make tierbench; make test-java does it)");
        assertTrue(Files.isRegularFile(Path.of(HDRHISTOGRAM)), HDRHISTOGRAM + " is missing (libhdrhistogram-java)");
        return classes + File.pathSeparator + HDRHISTOGRAM;
    }

    /** A topology file of tests/golden/topologies. */
    static Path topology(String name) {
        Path p = repo().resolve("tests/golden/topologies").resolve(name);
        assertTrue(Files.isReadable(p), "no " + p);
        return p;
    }

    private static String seccomp;

    /**
     * tests/jvm/tools/seccomp-deny: runs a command with chosen system calls
     * failing with EPERM, as under a container's seccomp filter. make builds
     * it into the build directory's tools/ (build/tools/ for a sanitizer
     * build's agent); without it, the first test that needs it compiles it
     * with cc into the run logs' tools/.
     */
    static synchronized String seccompLauncher() {
        if (seccomp != null) {
            return seccomp;
        }
        for (Path built : List.of(dir().resolve("tools/seccomp-deny"), repo().resolve("build/tools/seccomp-deny"))) {
            if (Files.isExecutable(built)) {
                return seccomp = built.toString();
            }
        }
        Path src = repo().resolve("tests/jvm/tools/seccomp-deny.c");
        Path bin = RunLogs.root().resolve("tools/seccomp-deny");
        try {
            Files.createDirectories(bin.getParent());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        ChildResult cc = Launch.command("cc", "-O2", "-o", bin.toString(), src.toString()).noPreload().run();
        if (cc.exitCode != 0) {
            fail("cannot build " + bin + " from " + src + " (make builds it)\n" + cc.describe());
        }
        return seccomp = bin.toString();
    }
}
