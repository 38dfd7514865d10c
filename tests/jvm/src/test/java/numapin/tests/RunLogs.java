package numapin.tests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.stream.Stream;

import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * Gives each test a directory for the logs of the child JVMs it runs:
 * numapin.runs/CLASS/METHOD[-INVOCATION]/run-N/{command,stdout,stderr}.txt
 * and cwd/. The directory is deleted when the test passes and kept when it
 * fails, and its path is printed.
 *
 * <p>Tests run one at a time (the suite does not enable parallel execution),
 * so the current directory is a plain static.
 */
public final class RunLogs implements BeforeEachCallback, TestWatcher {
    private static Path current;
    private static int runs;

    static Path root() {
        String r = System.getProperty("numapin.runs");
        return Path.of(r != null ? r : System.getProperty("java.io.tmpdir") + "/numapin-runs");
    }

    private static Path dirOf(ExtensionContext ctx) {
        String cls = ctx.getRequiredTestClass().getSimpleName();
        String method = ctx.getRequiredTestMethod().getName();
        String display = ctx.getDisplayName();
        String name = method;
        if (!display.startsWith(method + "(")) {
            // A parameterized invocation: "[3] group=abc" and the like.
            name = method + "-" + display.replaceAll("[^A-Za-z0-9=._-]+", "_");
            if (name.length() > 120) {
                name = name.substring(0, 120);
            }
        }
        return root().resolve(cls).resolve(name);
    }

    @Override
    public void beforeEach(ExtensionContext ctx) throws IOException {
        current = dirOf(ctx);
        runs = 0;
        deleteTree(current);
        Files.createDirectories(current);
    }

    /** A new directory for one child JVM of the current test. */
    static synchronized Path newRunDir() {
        if (current == null) {
            throw new IllegalStateException("RunLogs is not registered on this test class");
        }
        try {
            return Files.createDirectories(current.resolve("run-" + (++runs)));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void testSuccessful(ExtensionContext ctx) {
        try {
            deleteTree(dirOf(ctx));
        } catch (IOException e) {
            // Leaving the logs behind is harmless.
        }
    }

    @Override
    public void testFailed(ExtensionContext ctx, Throwable cause) {
        System.out.println("numapin-tests: logs of the failed test " + ctx.getDisplayName()
                + " kept in " + dirOf(ctx));
    }

    /** A test skipped by an assumption (e.g. virtual threads on JDK 17): nothing to keep. */
    @Override
    public void testAborted(ExtensionContext ctx, Throwable cause) {
        testSuccessful(ctx);
    }

    @Override
    public void testDisabled(ExtensionContext ctx, Optional<String> reason) {}

    static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path q : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(q);
            }
        }
    }
}
