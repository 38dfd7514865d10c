package numapin.tests;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/** Files the tests read and write, an IOException failing the test. */
final class TestFiles {
    private TestFiles() {}

    static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + p, e);
        }
    }

    static void write(Path p, String text, boolean executable) {
        try {
            Files.writeString(p, text, StandardCharsets.UTF_8);
            if (executable) {
                Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + p, e);
        }
    }

    /** The directory, made with its parents; owner-only when private. */
    static Path mkdirs(Path p, boolean owner) {
        try {
            Files.createDirectories(p);
            if (owner) {
                Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx------"));
            }
            return p;
        } catch (IOException e) {
            throw new IllegalStateException("cannot make " + p, e);
        }
    }
}
