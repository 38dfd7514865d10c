package numapin.child;

/**
 * What the JVM sized itself for, as a program running in it sees it: the
 * child of the tests of numapin groups' and numapin plan's JVM flags. Run
 * with -XX:+PrintFlagsFinal for HotSpot's own counts.
 *
 * <pre>
 *   sized available=N cpus=LIST     Runtime.availableProcessors(), and main's CPUs
 * </pre>
 */
public final class Sized {
    private Sized() {}

    public static void main(String[] args) {
        Self.out("sized available=" + Runtime.getRuntime().availableProcessors() + " cpus=" + Self.cpus().cpus());
    }
}
