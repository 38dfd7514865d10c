package numapin.tests;

import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One child JVM, launched with numapin as an agent, with a time limit.
 * Its command line, environment changes, stdout and stderr are kept in a
 * directory of its own under the current test's log directory (see
 * {@link RunLogs}); its working directory is a fresh directory there too.
 *
 * <p>Configured by system properties set by run.sh:
 * numapin.java (the java launcher the children run), numapin.agent
 * (libnumapin.so), numapin.probe.cp (the probe's classes), numapin.runs
 * (where run logs go).
 */
public final class ChildJvm {
    /** Generous: a child normally takes well under a second. */
    static final long TIME_LIMIT_S = Long.getLong("numapin.child.timeout", 90);

    /** HWLOC_SYNTHETIC for a fake 2-node machine whose PUs 0 and 1 are CPUs 0 and 1. */
    static final String FAKE_TWO_NODES = "pack:1 numa:2 core:1 pu:1";

    static String java() {
        return required("numapin.java");
    }

    static String agent() {
        return required("numapin.agent");
    }

    static String probeClassPath() {
        return required("numapin.probe.cp");
    }

    private static String required(String key) {
        String v = System.getProperty(key);
        if (v == null || v.isEmpty()) {
            throw new IllegalStateException("system property " + key + " is not set (run tests/jvm/run.sh)");
        }
        return v;
    }

    private final List<String> jvmArgs = new ArrayList<>();
    private final List<String> mainArgs = new ArrayList<>();
    private final Map<String, String> env = new LinkedHashMap<>();
    private String agentOptions;
    private boolean withAgent = true;

    private ChildJvm() {
        isolate(env);
    }

    /**
     * Marks for removal (null values, as Launch.spawn reads them) the
     * variables a child must not inherit from the caller: a fake topology
     * and JVM options.
     */
    static void isolate(Map<String, String> env) {
        for (String k : List.of("HWLOC_SYNTHETIC", "HWLOC_THISSYSTEM", "HWLOC_XMLFILE", "JAVA_TOOL_OPTIONS",
                "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS")) {
            env.put(k, null);
        }
    }

    /** The probe program with these steps (see numapin.probe.Probe). */
    static ChildJvm probe(String... steps) {
        ChildJvm c = new ChildJvm();
        c.jvmArgs.addAll(List.of(
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx64m",
                // Two common-pool workers whatever the machine's CPU count.
                "-Djava.util.concurrent.ForkJoinPool.common.parallelism=2",
                "-cp", probeClassPath()));
        c.mainArgs.add("numapin.probe.Probe");
        c.mainArgs.addAll(Arrays.asList(steps));
        return c;
    }

    /** `java -version`: the JVM starts (or fails to) and ends at once. */
    static ChildJvm version() {
        ChildJvm c = new ChildJvm();
        c.jvmArgs.add("-XX:+UseSerialGC");
        c.mainArgs.add("-version");
        return c;
    }

    /** -agentpath:LIB=options; null for no "=options" at all. */
    ChildJvm options(String options) {
        this.agentOptions = options;
        return this;
    }

    ChildJvm noAgent() {
        this.withAgent = false;
        return this;
    }

    /** The fake 2-node machine: node 0 holds CPU 0, node 1 holds CPU 1. */
    ChildJvm fakeTwoNodes() {
        env.put("HWLOC_SYNTHETIC", FAKE_TWO_NODES);
        env.put("HWLOC_THISSYSTEM", "1");
        return this;
    }

    ChildJvm jvmArg(String arg) {
        jvmArgs.add(arg);
        return this;
    }

    String agentArg() {
        return "-agentpath:" + agent() + (agentOptions == null ? "" : "=" + agentOptions);
    }

    ChildResult run() {
        List<String> cmd = new ArrayList<>();
        cmd.add(java());
        if (withAgent) {
            cmd.add(agentArg());
        }
        cmd.addAll(jvmArgs);
        cmd.addAll(mainArgs);
        return Launch.spawn(cmd, env, null).finish(TIME_LIMIT_S);
    }

    static String shellQuote(List<String> cmd) {
        StringBuilder sb = new StringBuilder();
        for (String a : cmd) {
            if (sb.length() > 0) {
                sb.append(' ');
            }
            if (a.matches("[A-Za-z0-9_@%+=:,./-]+")) {
                sb.append(a);
            } else {
                sb.append('\'').append(a.replace("'", "'\\''")).append('\'');
            }
        }
        return sb.toString();
    }
}
