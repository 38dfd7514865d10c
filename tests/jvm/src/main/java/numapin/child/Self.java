package numapin.child;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the child programs read about themselves, from the kernel:
 * a thread's OS id, allowed CPUs and memory policy, and every thread of the
 * process. Output goes to stdout one line per write(2), so that it never
 * interleaves with numapin's log lines.
 */
public final class Self {
    private static final FileOutputStream OUT = new FileOutputStream(FileDescriptor.out);

    private Self() {}

    /** The calling thread, as the kernel sees it. */
    public record Where(long tid, String cpus, String policy) {
        /** The fields the tests parse: tid=N cpus=LIST policy=P. */
        public String fields() {
            return "tid=" + tid + " cpus=" + cpus + " policy=" + policy;
        }
    }

    /** One thread of this process, read from /proc/self/task/TID/status. */
    public record Task(long tid, String comm, String cpus) {}

    public static synchronized void out(String line) {
        byte[] b = (line + "\n").getBytes(StandardCharsets.UTF_8);
        try {
            OUT.write(b);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Thread names, quoted as numapin quotes them for the simple names used here. */
    public static String q(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /**
     * A /proc file as text: the kernel cuts a thread's name at 15 bytes,
     * maybe inside a character, which Files.readString refuses; a cut
     * character reads as U+FFFD here.
     */
    static String text(Path p) throws IOException {
        return new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
    }

    static String field(String status, String key) {
        for (String line : status.split("\n")) {
            if (line.startsWith(key + ":")) {
                return line.substring(key.length() + 1).trim();
            }
        }
        return "?";
    }

    /** The calling thread's OS id and allowed CPUs (no memory policy: cheap). */
    public static Where cpus() {
        try {
            String stat = text(Path.of("/proc/thread-self/stat"));
            long tid = Long.parseLong(stat.substring(0, stat.indexOf(' ')));
            String status = text(Path.of("/proc/thread-self/status"));
            String cpus = field(status, "Cpus_allowed_list");
            if (cpus.equals("?")) {
                throw new IllegalStateException("no Cpus_allowed_list in /proc/thread-self/status");
            }
            return new Where(tid, cpus, "-");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The calling thread's OS id, allowed CPUs and memory policy. The policy
     * is the policy column of the first line of /proc/thread-self/numa_maps:
     * a mapping without a policy of its own shows the thread's ("default",
     * "prefer:0", "bind:1", ...).
     */
    public static Where where() {
        Where w = cpus();
        String policy = "?";
        try {
            String maps = Files.readString(Path.of("/proc/thread-self/numa_maps"));
            int nl = maps.indexOf('\n');
            String[] f = (nl < 0 ? maps : maps.substring(0, nl)).split(" ");
            if (f.length > 1) {
                policy = f[1];
            }
        } catch (IOException e) {
            policy = "unreadable";
        }
        return new Where(w.tid(), w.cpus(), policy);
    }

    /** Every thread of this process. */
    public static List<Task> tasks() {
        List<Task> r = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path t : ds) {
                String status;
                try {
                    status = text(t.resolve("status"));
                } catch (NoSuchFileException gone) {
                    continue;
                }
                r.add(new Task(Long.parseLong(t.getFileName().toString()), field(status, "Name"),
                        field(status, "Cpus_allowed_list")));
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return r;
    }

    /** Waits until the file exists; false after the time limit. */
    public static boolean awaitFile(Path p, long limitMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(limitMs);
        while (!Files.exists(p)) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }
}
