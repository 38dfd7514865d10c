package numapin.tests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A cgroup v1 cpuset of a test's own under /sys/fs/cgroup/cpuset (root
 * only), named uniquely (other test runs share the machine), what a
 * container runtime gives a pod; {@link #close} ends what still runs in it
 * and removes it, also when the test failed.
 */
final class Cpuset implements AutoCloseable {
    static final Path ROOT = Path.of("/sys/fs/cgroup/cpuset");
    private static final AtomicInteger COUNT = new AtomicInteger();

    final Path dir;

    /** True where cgroup v1 cpusets can be made here. */
    static boolean available() {
        return Files.isWritable(ROOT.resolve("cgroup.procs")) && Files.isRegularFile(ROOT.resolve("cpuset.cpus"));
    }

    Cpuset(String cpus) throws IOException {
        dir = ROOT.resolve("numapin-test-" + ProcessHandle.current().pid() + "-" + COUNT.incrementAndGet());
        Files.createDirectory(dir);
        write("cpuset.mems", Files.readString(ROOT.resolve("cpuset.mems")).trim());
        cpus(cpus);
    }

    private void write(String file, String value) throws IOException {
        Files.writeString(dir.resolve(file), value + "\n");
    }

    /** Rewrites the CPUs, as kubelet or an NRI plugin does. */
    void cpus(String cpus) throws IOException {
        write("cpuset.cpus", cpus);
    }

    /** A command prefix that moves itself into the cpuset, then runs the rest. */
    List<String> prefix() {
        return List.of("sh", "-c", "echo $$ > \"$0\"/cgroup.procs && exec \"$@\"", dir.toString());
    }

    @Override
    public void close() throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            for (String p : Files.readAllLines(dir.resolve("cgroup.procs"))) {
                ProcessHandle.of(Long.parseLong(p.trim())).ifPresent(ProcessHandle::destroyForcibly);
            }
            try {
                Files.delete(dir);
                return;
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        }
    }
}
