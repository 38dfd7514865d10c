import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Thread start and join throughput: starts threads one after another, each
 * joined before the next starts, and reports threads per second.
 *
 *   java ThreadBench WARMUP BATCH BATCHES
 *
 * Starts WARMUP threads untimed, then BATCHES batches of BATCH threads, each
 * timed. The threads are named "Bench-N" and do nothing. Prints
 *
 *   bench rate=R batches=R1,R2,... cpu_us=C self_us=S rss_kb=N
 *
 * R is the median of the batch rates (threads per second, wall clock); C is
 * the median over batches of the process's CPU time (all threads, user and
 * system) per thread started, in microseconds: on a busy machine the wall
 * clock also counts waiting for a CPU, CPU time does not. S is the median
 * over the timed threads of each thread's own CPU time when its run()
 * begins: creating and starting it, and the agent's ThreadStart callback
 * (numapin's, or the JVMTI floor's of floor_agent.c), which runs on the
 * thread before run(); precise (per-thread clock) and
 * hardly disturbed by other work. rss_kb is the
 * resident set size at the end (numapin keeps a record of every thread).
 *
 *   java -agentpath:libjvmti_pair.so=A#B ThreadBench pairs WARMUP BLOCK PAIRS
 *
 * Under the pair agent (pair_agent.c), which holds two agents and lets
 * one at a time see thread starts: WARMUP threads under each agent in
 * turn, untimed, then PAIRS pairs of blocks of BLOCK threads, one block
 * under each agent, in an order drawn at random for each pair. Prints
 *
 *   pairs ratio=G a=RA b=RB ratios=Q1,Q2,...
 *
 * Qi is pair i's throughput under B divided by its throughput under A (two
 * neighbouring blocks: what the machine does meanwhile hits both), G their
 * geometric mean, RA and RB the median block rates (threads per second).
 */
public final class ThreadBench {
    private ThreadBench() {}

    static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    static final java.lang.management.ThreadMXBean TMX = ManagementFactory.getThreadMXBean();

    /** Each timed thread's own CPU time (ns) when its run() began. */
    static long[] self;
    static int selfAt;

    static long batch(int n, long first) throws InterruptedException {
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            int k = selfAt < 0 ? -1 : selfAt++;
            Thread t = new Thread(() -> {
                if (k >= 0) {
                    self[k] = TMX.getCurrentThreadCpuTime();
                }
            }, "Bench-" + (first + i));
            t.start();
            t.join();
        }
        return System.nanoTime() - t0;
    }

    static String rssKb() throws IOException {
        for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (l.startsWith("VmRSS:")) {
                return l.substring(6).trim().split("\\s+")[0];
            }
        }
        return "?";
    }

    /** Lets agent 0 (A) or 1 (B) of the pair agent see the threads started next. */
    static native void turn(int agent);

    static void pairs(int warmup, int block, int pairs) throws InterruptedException {
        selfAt = -1;
        long next = 0;
        for (int w = 0; w < 4; w++) {
            turn(w % 2);
            batch(warmup / 2, next);
            next += warmup / 2;
        }
        java.util.Random order = new java.util.Random(13);
        double[] ratios = new double[pairs];
        double[][] rates = new double[2][pairs];
        for (int p = 0; p < pairs; p++) {
            int first = order.nextInt(2);
            for (int k = 0; k < 2; k++) {
                int agent = k == 0 ? first : 1 - first;
                turn(agent);
                rates[agent][p] = block / (batch(block, next) / 1e9);
                next += block;
            }
            ratios[p] = rates[1][p] / rates[0][p];
        }
        double logs = 0;
        StringBuilder sb = new StringBuilder();
        for (double q : ratios) {
            logs += Math.log(q);
            sb.append(sb.length() == 0 ? "" : ",").append(String.format(java.util.Locale.ROOT, "%.4f", q));
        }
        System.out.println("pairs ratio=" + String.format(java.util.Locale.ROOT, "%.4f", Math.exp(logs / pairs)) + " a="
                + Math.round(median(rates[0])) + " b=" + Math.round(median(rates[1])) + " ratios=" + sb);
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("pairs")) {
            pairs(Integer.parseInt(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]));
            return;
        }
        int warmup = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        int batches = Integer.parseInt(args[2]);
        long next = 0;
        selfAt = -1;
        batch(warmup, next);
        self = new long[n * batches];
        selfAt = 0;
        next += warmup;
        double[] rates = new double[batches];
        double[] cpu = new double[batches];
        for (int b = 0; b < batches; b++) {
            long c0 = OS.getProcessCpuTime();
            long ns = batch(n, next);
            cpu[b] = (OS.getProcessCpuTime() - c0) / 1e3 / n;
            next += n;
            rates[b] = n / (ns / 1e9);
        }
        StringBuilder sb = new StringBuilder();
        for (double r : rates) {
            sb.append(sb.length() == 0 ? "" : ",").append(Math.round(r));
        }
        double[] selfUs = new double[self.length];
        for (int i = 0; i < self.length; i++) {
            selfUs[i] = self[i] / 1e3;
        }
        System.out.println("bench rate=" + Math.round(median(rates)) + " batches=" + sb + " cpu_us="
                + String.format("%.2f", median(cpu)) + " self_us=" + String.format("%.2f", median(selfUs))
                + " rss_kb=" + rssKb());
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }
}
