package numapin.child;

import java.util.Arrays;

/**
 * Keeps N MiB of the Java heap live, written to, through two collections,
 * then ends: the child of the tests of the memory numapin counts.
 *
 * <pre>
 *   heap kept=N                      after the collections
 * </pre>
 */
public final class Heap {
    private Heap() {}

    public static void main(String[] args) {
        byte[][] keep = new byte[Integer.parseInt(args[0])][];
        for (int i = 0; i < keep.length; i++) {
            keep[i] = new byte[1 << 20];
            Arrays.fill(keep[i], (byte) 1);
        }
        System.gc();
        System.gc();
        long kept = 0;
        for (byte[] b : keep) {
            kept += b[b.length - 1];
        }
        Self.out("heap kept=" + kept);
    }
}
