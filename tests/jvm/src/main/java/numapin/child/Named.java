package numapin.child;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * A JVM whose threads carry the names it is given, whatever they hold:
 * markup, quotes, line breaks, controls, bidirectional and zero-width
 * characters, lone surrogates, U+0000, supplementary characters, 10,000
 * characters. Each name comes as its UTF-16 code units in hex (four digits
 * a unit), since a command line can hold neither U+0000 nor a lone
 * surrogate. Every thread stays alive, busy now and then, until GO_FILE
 * exists.
 *
 * <pre>
 *   Named GO_FILE HEX...
 * </pre>
 * Output (ASCII only, whatever the names):
 * <pre>
 *   named i=I tid=N units=HEX     each thread, from inside it: its index among
 *                                 the arguments, OS id, and name as Java has it
 *   named-ready pid=PID           then waits (up to 120 s) for GO_FILE
 *   named-done
 * </pre>
 */
public final class Named {
    private Named() {}

    private static volatile boolean done;

    static String fromHex(String hex) {
        if (hex.length() % 4 != 0) {
            throw new IllegalArgumentException("not UTF-16 units in hex: " + hex);
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < hex.length(); i += 4) {
            sb.append((char) Integer.parseInt(hex.substring(i, i + 4), 16));
        }
        return sb.toString();
    }

    static String toHex(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            sb.append(String.format("%04x", (int) s.charAt(i)));
        }
        return sb.toString();
    }

    /**
     * The calling thread's OS id, from /proc/thread-self/stat. Read as
     * bytes: the kernel's copy of the thread's name (in the same file) is
     * cut at 15 bytes, maybe inside a character.
     */
    static long tid() throws IOException {
        String stat = new String(Files.readAllBytes(Path.of("/proc/thread-self/stat")), StandardCharsets.ISO_8859_1);
        return Long.parseLong(stat.substring(0, stat.indexOf(' ')));
    }

    public static void main(String[] args) throws Exception {
        List<Thread> threads = new ArrayList<>();
        CountDownLatch started = new CountDownLatch(args.length - 1);
        for (int i = 1; i < args.length; i++) {
            int index = i - 1;
            Thread t = new Thread(() -> {
                try {
                    Self.out("named i=" + index + " tid=" + tid() + " units=" + toHex(Thread.currentThread().getName()));
                } catch (IOException e) {
                    Self.out("named-error i=" + index + " " + e);
                }
                started.countDown();
                long x = 0;
                while (!done) {
                    for (int k = 0; k < 100_000; k++) {
                        x += k ^ (x >>> 3);
                    }
                    try {
                        Thread.sleep(10);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (x == 42) {
                    Self.out("unlikely");
                }
            }, fromHex(args[i]));
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        started.await();
        Self.out("named-ready pid=" + ProcessHandle.current().pid());
        if (!Self.awaitFile(Path.of(args[0]), 120_000)) {
            Self.out("named-error no go file");
            System.exit(3);
        }
        done = true;
        for (Thread t : threads) {
            t.join();
        }
        Self.out("named-done");
    }
}
