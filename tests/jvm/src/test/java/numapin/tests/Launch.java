package numapin.tests;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A child JVM running one of the numapin.lifecycle programs (or any class),
 * optionally under numapin, behind a command prefix (taskset, the seccomp
 * launcher, a shell that waits for a start signal), in the foreground
 * ({@link #run}) or in the background ({@link #start}). Logs go where
 * {@link ChildJvm}'s go (see {@link RunLogs}): command, environment, stdout
 * and stderr of every run, kept when the test fails.
 */
final class Launch {
    /** HWLOC_SYNTHETIC: one node of two cores, PUs 0 and 1 = this machine's CPUs 0 and 1. */
    static final String ONE_NODE_TWO_CORES = "pack:1 numa:1 core:2 pu:1";

    private final List<String> prefix = new ArrayList<>();
    private final List<String> jvmArgs = new ArrayList<>();
    private final List<String> mainArgs = new ArrayList<>();
    private final Map<String, String> env = new LinkedHashMap<>();
    private String agentOptions;
    private boolean withAgent = true;
    private String java = ChildJvm.java();

    private Launch(String mainClass, String... args) {
        ChildJvm.isolate(env);
        jvmArgs.addAll(List.of("-XX:+UseSerialGC", "-Xmx64m", "-cp", ChildJvm.probeClassPath()));
        mainArgs.add(mainClass);
        mainArgs.addAll(Arrays.asList(args));
    }

    /** numapin.lifecycle.NAME with these arguments. */
    static Launch program(String name, String... args) {
        return new Launch("numapin.lifecycle." + name, args);
    }

    Launch options(String options) {
        this.agentOptions = options;
        return this;
    }

    Launch noAgent() {
        this.withAgent = false;
        return this;
    }

    Launch env(String key, String value) {
        env.put(key, value);
        return this;
    }

    /** The fake 2-node machine: node 0 holds CPU 0, node 1 holds CPU 1. */
    Launch fakeTwoNodes() {
        return env("HWLOC_SYNTHETIC", ChildJvm.FAKE_TWO_NODES).env("HWLOC_THISSYSTEM", "1");
    }

    /** One node with two cores, CPUs 0 and 1: a group with two slots for cpus=core|pu. */
    Launch fakeTwoCores() {
        return env("HWLOC_SYNTHETIC", ONE_NODE_TWO_CORES).env("HWLOC_THISSYSTEM", "1");
    }

    /** Another collector than the default -XX:+UseSerialGC. */
    Launch gc(String flag) {
        jvmArgs.set(jvmArgs.indexOf("-XX:+UseSerialGC"), flag);
        return this;
    }

    Launch jvmArg(String... args) {
        jvmArgs.addAll(0, Arrays.asList(args));
        return this;
    }

    /** Runs the JVM behind this command (e.g. taskset -c 1). */
    Launch prefix(String... cmd) {
        prefix.addAll(Arrays.asList(cmd));
        return this;
    }

    List<String> command() {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(java);
        if (withAgent) {
            cmd.add("-agentpath:" + ChildJvm.agent() + (agentOptions == null ? "" : "=" + agentOptions));
        }
        cmd.addAll(jvmArgs);
        cmd.addAll(mainArgs);
        return cmd;
    }

    /** Runs to the end (with ChildJvm's time limit). */
    ChildResult run() {
        return start().finish();
    }

    /** Starts it in the background. */
    Running start() {
        return spawn(command(), env, null);
    }

    /**
     * Starts a command in the background, in a new run directory of
     * {@link RunLogs} (command, environment, stdout and stderr kept there), in
     * {@code cwd} or the run directory's cwd/, with {@code env} laid over the
     * inherited environment (a null value removes the variable) and stdin
     * from /dev/null. The one way every test here starts a process.
     */
    static Running spawn(List<String> cmd, Map<String, String> env, Path cwd) {
        Path dir = RunLogs.newRunDir();
        try {
            return spawn(dir, cwd != null ? cwd : Files.createDirectories(dir.resolve("cwd")), cmd, env);
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + cmd + " (logs in " + dir + ")", e);
        }
    }

    /** The same in a run directory and working directory made by the caller. */
    static Running spawn(Path dir, Path work, List<String> cmd, Map<String, String> env) {
        try {
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
            pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            pb.redirectOutput(out.toFile());
            pb.redirectError(err.toFile());
            Files.writeString(dir.resolve("command.txt"),
                    "cd " + work + "\n" + envText + ChildJvm.shellQuote(cmd) + "\n");
            return new Running(pb.start(), dir, work, out, err);
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + cmd + " (logs in " + dir + ")", e);
        }
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
        Matcher awaitLine(Pattern p, long limitS) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(limitS);
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
                    fail("no line matching " + p + " within " + limitS + " s; logs in " + dir);
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
        }

        /** Waits for the end (ChildJvm's time limit) and reads what it wrote. */
        ChildResult finish() {
            return finish(ChildJvm.TIME_LIMIT_S);
        }

        /**
         * Waits up to limitS for the end, else kills it and fails; then reads
         * what it wrote (bytes that are not UTF-8, such as an option string
         * echoed raw, show as U+FFFD).
         */
        ChildResult finish(long limitS) {
            try {
                if (!process.waitFor(limitS, TimeUnit.SECONDS)) {
                    kill();
                    fail("child did not end within " + limitS + " s; logs in " + dir);
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
                process.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Runs a tool (jcmd, cc, mkfifo) to its end; returns its exit status and output. */
    static String[] tool(Path dir, String... cmd) {
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            Path log = Files.createTempFile(dir, "tool-", ".txt");
            pb.redirectOutput(log.toFile());
            Process p = pb.start();
            if (!p.waitFor(ChildJvm.TIME_LIMIT_S, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail(String.join(" ", cmd) + " did not end in time");
            }
            String text = Files.readString(log, StandardCharsets.UTF_8);
            Files.writeString(log, ChildJvm.shellQuote(Arrays.asList(cmd)) + "\nexit " + p.exitValue() + "\n" + text);
            return new String[] {String.valueOf(p.exitValue()), text};
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
