package numapin.tests;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every process a test starts: a child JVM, under numapin or not, running
 * one of the programs of numapin.child, TierBench or {@code java -version};
 * or any other command (the numapin CLI, a shell, jcmd, jq, a system tool).
 * One builder for all of them, with
 * <ul>
 * <li>one time limit ({@link #TIME_LIMIT_S}): a child that has not ended by
 * then is killed and the test fails;
 * <li>one list of variables a child must not inherit from the test JVM
 * ({@link #NOT_INHERITED}), so that only what a test sets reaches it;
 * <li>one place for its logs: a run directory of {@link RunLogs} holding its
 * command line with the environment it was given, its stdout and stderr,
 * and its working directory (cwd/, unless the test names one), kept when
 * the test fails.
 * </ul>
 * Its stdin is /dev/null. It runs in the foreground ({@link #run}) or in the
 * background ({@link #start}).
 */
final class Launch {
    /** Generous: a child normally ends within seconds. The system property numapin.child.timeout overrides it. */
    static final long TIME_LIMIT_S = Long.getLong("numapin.child.timeout", 120);

    /**
     * What a child must not inherit from the test JVM's environment: a fake
     * topology, JVM options (which could load numapin or change the JVM),
     * a group given by `numapin groups`. A test sets them itself.
     */
    static final List<String> NOT_INHERITED = List.of("HWLOC_SYNTHETIC", "HWLOC_THISSYSTEM", "HWLOC_XMLFILE",
            "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "NUMAPIN_GROUP", "NUMAPIN_GROUPS");

    /** HWLOC_SYNTHETIC for a fake 2-node machine whose PUs 0 and 1 are CPUs 0 and 1. */
    static final String FAKE_TWO_NODES = "pack:1 numa:2 core:1 pu:1";

    /** HWLOC_SYNTHETIC: one node of two cores, PUs 0 and 1 = this machine's CPUs 0 and 1. */
    static final String ONE_NODE_TWO_CORES = "pack:1 numa:1 core:2 pu:1";

    private final boolean jvm;
    /** A JVM: its options (agent aside) and main class with arguments; another command: all of it. */
    private final List<String> jvmArgs = new ArrayList<>();
    private final List<String> args = new ArrayList<>();
    private final List<String> prefix = new ArrayList<>();
    private final Map<String, String> env = new LinkedHashMap<>();
    private boolean withAgent;
    private String agentOptions;
    private Path cwd;
    private boolean cwdForAnyone;

    private Launch(boolean jvm, boolean withAgent) {
        this.jvm = jvm;
        this.withAgent = withAgent;
        for (String k : NOT_INHERITED) {
            env.put(k, null);
        }
    }

    // ---- what to run ---------------------------------------------------------------------------

    /** A child JVM with numapin: these JVM options, then the main class (or -version) and its arguments. */
    private static Launch jvm(List<String> jvmArgs, String main, List<String> args) {
        Launch l = new Launch(true, true);
        l.jvmArgs.addAll(jvmArgs);
        l.args.add(main);
        l.args.addAll(args);
        return l;
    }

    /**
     * numapin.child.Probe with these steps: every thread it starts reports
     * where it runs. C1 only, a small heap, and two common-pool workers
     * whatever the machine's CPU count.
     */
    static Launch probe(String... steps) {
        return jvm(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx64m",
                "-Djava.util.concurrent.ForkJoinPool.common.parallelism=2", "-cp", Build.childClassPath()),
                "numapin.child.Probe", Arrays.asList(steps));
    }

    /** numapin.child.NAME with these arguments (both compilers, as a JVM has by default). */
    static Launch program(String name, String... args) {
        return jvm(List.of("-XX:+UseSerialGC", "-Xmx64m", "-cp", Build.childClassPath()), "numapin.child." + name,
                Arrays.asList(args));
    }

    /** `java -version`: the JVM starts (or fails to) and ends at once. */
    static Launch version() {
        return jvm(List.of("-XX:+UseSerialGC"), "-version", List.of());
    }

    /** TierBench with these arguments, without numapin unless {@link #options} asks for it. */
    static Launch tierBench(List<String> args) {
        return jvm(List.of("-cp", Build.tierBenchClassPath()), Build.TIERBENCH, args).noAgent();
    }

    /** Any other command: the numapin CLI, a shell, a JDK or system tool. */
    static Launch command(List<String> cmd) {
        Launch l = new Launch(false, false);
        l.args.addAll(cmd);
        return l;
    }

    static Launch command(String... cmd) {
        return command(Arrays.asList(cmd));
    }

    /** A command run to its end: its exit status and its output (stdout, then stderr). */
    static String[] tool(String... cmd) {
        ChildResult r = command(cmd).run();
        return new String[] {String.valueOf(r.exitCode), r.stdout + r.stderr};
    }

    /** /bin/sh -c SCRIPT. */
    static Launch sh(String script) {
        return command("/bin/sh", "-c", script);
    }

    // ---- how --------------------------------------------------------------------------------------

    private Launch jvmOnly(String what) {
        if (!jvm) {
            throw new IllegalStateException(what + " is for a child JVM, not for " + args);
        }
        return this;
    }

    /** -agentpath:LIB=options; null for no "=options" at all. */
    Launch options(String options) {
        jvmOnly("options");
        this.withAgent = true;
        this.agentOptions = options;
        return this;
    }

    /** No -agentpath: the JVM without numapin (or with numapin from the environment). */
    Launch noAgent() {
        jvmOnly("noAgent");
        this.withAgent = false;
        return this;
    }

    /** Sets a variable of the child's environment; null removes it. */
    Launch env(String key, String value) {
        env.put(key, value);
        return this;
    }

    /** The fake 2-node machine: node 0 holds CPU 0, node 1 holds CPU 1. */
    Launch fakeTwoNodes() {
        return env("HWLOC_SYNTHETIC", FAKE_TWO_NODES).env("HWLOC_THISSYSTEM", "1");
    }

    /** One node with two cores, CPUs 0 and 1: a group with two slots for cpus=core|pu. */
    Launch fakeTwoCores() {
        return env("HWLOC_SYNTHETIC", ONE_NODE_TWO_CORES).env("HWLOC_THISSYSTEM", "1");
    }

    /** More JVM options, after the others. */
    Launch jvmArg(String... more) {
        jvmOnly("jvmArg");
        jvmArgs.addAll(Arrays.asList(more));
        return this;
    }

    /** Another collector than the default -XX:+UseSerialGC. */
    Launch gc(String flag) {
        jvmOnly("gc");
        jvmArgs.set(jvmArgs.indexOf("-XX:+UseSerialGC"), flag);
        return this;
    }

    /** Runs the command behind this one (taskset -c 1, numactl, the seccomp launcher, a shell that waits). */
    Launch prefix(String... cmd) {
        prefix.addAll(Arrays.asList(cmd));
        return this;
    }

    /** As another user, through setpriv; the working directory is then writable by anyone (for an hs_err file). */
    Launch asUser(String user, String group) {
        cwdForAnyone = true;
        return prefix("setpriv", "--reuid=" + user, "--regid=" + group, "--clear-groups", "--");
    }

    /** In this working directory instead of the run directory's cwd/. */
    Launch cwd(Path dir) {
        this.cwd = dir;
        return this;
    }

    /**
     * Without the sanitizer runtime that `make test-asan` preloads into
     * every process of the suite: for a system tool, which is not under test.
     */
    Launch noPreload() {
        return env("LD_PRELOAD", null);
    }

    /** The command line, prefix first. */
    List<String> command() {
        List<String> cmd = new ArrayList<>(prefix);
        if (jvm) {
            cmd.add(Build.java());
            if (withAgent) {
                cmd.add("-agentpath:" + Build.agent() + (agentOptions == null ? "" : "=" + agentOptions));
            }
            cmd.addAll(jvmArgs);
        }
        cmd.addAll(args);
        return cmd;
    }

    /** Runs it to its end. */
    ChildResult run() {
        return start().finish();
    }

    /** Starts it in the background, in a new run directory of {@link RunLogs}. */
    Running start() {
        List<String> cmd = command();
        Path dir = RunLogs.newRunDir();
        try {
            Path work = cwd != null ? cwd : Files.createDirectories(dir.resolve("cwd"));
            if (cwdForAnyone) {
                Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwxrwxrwx"));
            }
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.directory(work.toFile());
            StringBuilder envText = new StringBuilder();
            env.forEach((k, v) -> {
                if (v == null) {
                    pb.environment().remove(k);
                } else {
                    pb.environment().put(k, v);
                    envText.append(k).append('=').append(v).append('\n');
                }
            });
            Path out = dir.resolve("stdout.txt");
            Path err = dir.resolve("stderr.txt");
            pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            pb.redirectOutput(out.toFile());
            pb.redirectError(err.toFile());
            Files.writeString(dir.resolve("command.txt"), "cd " + work + "\n" + envText + shellQuote(cmd) + "\n");
            return new Running(pb.start(), dir, work, out, err);
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + cmd + " (logs in " + dir + ")", e);
        }
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

    /** A child started in the background. */
    static final class Running {
        final Process process;
        final Path dir;
        final Path work;
        final Path out;
        final Path err;

        Running(Process process, Path dir, Path work, Path out, Path err) {
            this.process = process;
            this.dir = dir;
            this.work = work;
            this.out = out;
            this.err = err;
        }

        long pid() {
            return process.pid();
        }

        String stdout() {
            try {
                return Files.readString(out, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        /**
         * Waits until a line of stdout matches (the first match, its groups
         * available); fails when the child ends or the time limit passes first.
         */
        Matcher awaitLine(Pattern p) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIME_LIMIT_S);
            while (true) {
                boolean alive = process.isAlive();
                for (String l : ChildResult.lines(stdout() + "\n")) {
                    Matcher m = p.matcher(l);
                    if (m.matches()) {
                        return m;
                    }
                }
                if (!alive) {
                    fail("the child ended (exit " + process.exitValue() + ") before printing a line matching " + p
                            + "; logs in " + dir + "\n" + finish().describe());
                }
                if (System.nanoTime() > deadline) {
                    fail("no line matching " + p + " within " + TIME_LIMIT_S + " s; logs in " + dir);
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
        }

        /**
         * Waits for the end, or kills it and fails when the time limit passes
         * first; then reads what it wrote (bytes that are not UTF-8, such as
         * an option string echoed raw, show as U+FFFD).
         */
        ChildResult finish() {
            try {
                if (!process.waitFor(TIME_LIMIT_S, TimeUnit.SECONDS)) {
                    kill();
                    fail("child did not end within " + TIME_LIMIT_S + " s; logs in " + dir);
                }
                return new ChildResult(dir, work, process.exitValue(),
                        new String(Files.readAllBytes(out), StandardCharsets.UTF_8),
                        new String(Files.readAllBytes(err), StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        /** SIGKILL, and waits until it is gone. */
        void kill() {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            try {
                process.waitFor(TIME_LIMIT_S, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
