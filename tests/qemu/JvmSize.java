/**
 * Prints what the JVM sized itself for: "jvm available=N", N being
 * Runtime.availableProcessors() (HotSpot's ActiveProcessorCount when set,
 * else the CPUs the process may use). Run with -XX:+PrintFlagsFinal for the
 * GC and JIT thread counts.
 */
public final class JvmSize {
    public static void main(String[] args) {
        System.out.println("jvm available=" + Runtime.getRuntime().availableProcessors());
    }
}
