/* np_advise: the start-up advice functions, each triggered and not.
 *
 * The sizing tables below are HotSpot's own values, read from
 * `java -XX:ActiveProcessorCount=N -XX:+UseG1GC -XX:+PrintFlagsFinal -version`
 * on OpenJDK 17.0.15 and Temurin 25 (both agree), not recomputed from
 * np_advise.c:
 *   ParallelGCThreads = n <= 8 ? n : 8 + (n - 8) * 5 / 8
 *                       (WorkerPolicy::nof_parallel_worker_threads(5, 8, 8))
 *   ConcGCThreads     = max(1, (ParallelGCThreads + 2) / 4)   (G1)
 *   CICompilerCount   = max(2, log2(n) * log2(max(log2(n), 1)) * 3 / 2)
 *                       (tiered, CICompilerCountPerCPU; log2 rounds down) */
#define _GNU_SOURCE
#include <errno.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "np_advise.h"
#include "np_bind.h"
#include "np_topo.h"
#include "tests.h"

static const struct {
    int n;
    long parallel, conc, compiler;
} hotspot[] = {
    {1, 1, 1, 2},     {2, 2, 1, 2},      {3, 3, 1, 2},      {4, 4, 1, 3},
    {7, 7, 2, 3},     {8, 8, 2, 4},      {9, 8, 2, 4},      {15, 12, 3, 4},
    {16, 13, 3, 12},  {24, 18, 5, 12},   {31, 22, 6, 12},   {32, 23, 6, 15},
    {64, 43, 11, 18}, {128, 83, 21, 21}, {192, 123, 31, 21}, {256, 163, 41, 36},
    {2048, 1283, 321, 49},
};

START_TEST(hotspot_sizing)
{
    for (size_t i = 0; i < sizeof hotspot / sizeof *hotspot; i++) {
        int n = hotspot[i].n;
        ck_assert_msg(np_gc_threads_for(n) == hotspot[i].parallel,
                      "np_gc_threads_for(%d) = %ld, HotSpot's ParallelGCThreads is %ld", n,
                      np_gc_threads_for(n), hotspot[i].parallel);
        ck_assert_msg(np_conc_gc_threads_for(n) == hotspot[i].conc,
                      "np_conc_gc_threads_for(%d) = %ld, HotSpot's ConcGCThreads is %ld", n,
                      np_conc_gc_threads_for(n), hotspot[i].conc);
        ck_assert_msg(np_compiler_threads_for(n) == hotspot[i].compiler,
                      "np_compiler_threads_for(%d) = %ld, HotSpot's CICompilerCount is %ld", n,
                      np_compiler_threads_for(n), hotspot[i].compiler);
    }
}
END_TEST

/* The formulas themselves, over every n up to 4096. */
static int floor_log2(int n)
{
    int l = -1;
    for (long v = 1; v <= n; v *= 2)
        l++;
    return l < 0 ? 0 : l;
}

START_TEST(hotspot_formulas)
{
    for (int n = 1; n <= 4096; n++) {
        long p = n <= 8 ? n : 8 + (long)(n - 8) * 5 / 8;
        long c = (p + 2) / 4 > 1 ? (p + 2) / 4 : 1;
        int l = floor_log2(n), ll = floor_log2(l > 1 ? l : 1);
        long ci = (long)l * ll * 3 / 2 > 2 ? (long)l * ll * 3 / 2 : 2;
        ck_assert_msg(np_gc_threads_for(n) == p, "np_gc_threads_for(%d) = %ld, want %ld", n,
                      np_gc_threads_for(n), p);
        ck_assert_msg(np_conc_gc_threads_for(n) == c, "np_conc_gc_threads_for(%d) = %ld, want %ld",
                      n, np_conc_gc_threads_for(n), c);
        ck_assert_msg(np_compiler_threads_for(n) == ci,
                      "np_compiler_threads_for(%d) = %ld, want %ld", n, np_compiler_threads_for(n),
                      ci);
    }
}
END_TEST

static void has(const char *msg, const char *needle)
{
    ck_assert_msg(strstr(msg, needle) != NULL, "advice \"%s\" lacks \"%s\"", msg, needle);
}

static void lacks(const char *msg, const char *needle)
{
    ck_assert_msg(strstr(msg, needle) == NULL, "advice \"%s\" has \"%s\"", msg, needle);
}

/* A JVM sized for facts->cpus_seen CPUs by HotSpot's rules (G1). */
static struct np_jvm_facts jvm_for(int cpus)
{
    int i = 0;
    while (hotspot[i].n != cpus)
        i++;
    return (struct np_jvm_facts){-1, hotspot[i].parallel, hotspot[i].conc, hotspot[i].compiler,
                                 cpus};
}

START_TEST(threads_advised)
{
    char msg[1024];
    /* This test machine: a 2-CPU JVM whose group has 1 CPU.  Only
     * ParallelGCThreads (2 > 1) is too large; ConcGCThreads 1 and
     * CICompilerCount 2 already fit one CPU. */
    struct np_jvm_facts f = jvm_for(2);
    memset(msg, 0, sizeof msg);
    ck_assert_int_eq(np_advise_threads(&f, 1, msg, sizeof msg), 1);
    has(msg, "the 2 CPUs the JVM saw");
    has(msg, "(ParallelGCThreads=2)");
    has(msg, "this group has 1 CPUs");
    has(msg, ": -XX:ParallelGCThreads=1 fit the group, or -XX:ActiveProcessorCount=1 sizes all of them");
    lacks(msg, "ConcGCThreads");
    lacks(msg, "CICompilerCount");

    /* A 256-CPU JVM in a 32-CPU group: all three, with HotSpot's values
     * for 32 CPUs. */
    f = jvm_for(256);
    ck_assert_int_eq(np_advise_threads(&f, 32, msg, sizeof msg), 1);
    has(msg, "the 256 CPUs the JVM saw");
    has(msg, "(ParallelGCThreads=163, ConcGCThreads=41, CICompilerCount=36)");
    has(msg, "this group has 32 CPUs");
    has(msg, ": -XX:ParallelGCThreads=23 -XX:ConcGCThreads=6 -XX:CICompilerCount=15 fit");

    /* 64 CPUs, group of 16: 43 > 13, 11 > 3, 18 > 12. */
    f = jvm_for(64);
    ck_assert_int_eq(np_advise_threads(&f, 16, msg, sizeof msg), 1);
    has(msg, "-XX:ParallelGCThreads=13 -XX:ConcGCThreads=3 -XX:CICompilerCount=12");

    /* Serial GC: no GC worker threads to size (HotSpot leaves them 0); the
     * JIT still is. */
    f = (struct np_jvm_facts){-1, 0, 0, 18, 64};
    ck_assert_int_eq(np_advise_threads(&f, 16, msg, sizeof msg), 1);
    has(msg, "(CICompilerCount=18)");
    has(msg, ": -XX:CICompilerCount=12 fit");
    lacks(msg, "GCThreads=");

    /* The CPU count the JVM saw is unknown: said without a number. */
    f = jvm_for(8);
    f.cpus_seen = -1;
    ck_assert_int_eq(np_advise_threads(&f, 2, msg, sizeof msg), 1);
    has(msg, "sized for more CPUs than this group has");
    has(msg, "-XX:ParallelGCThreads=2 -XX:ConcGCThreads=1 -XX:CICompilerCount=2");
}
END_TEST

START_TEST(threads_not_advised)
{
    char msg[256] = "untouched";
    /* The group has every CPU the JVM saw. */
    struct np_jvm_facts f = jvm_for(64);
    ck_assert_int_eq(np_advise_threads(&f, 64, msg, sizeof msg), 0);
    /* Flags already set for the group (the advice followed). */
    f = (struct np_jvm_facts){-1, 1, 1, 2, 2};
    ck_assert_int_eq(np_advise_threads(&f, 1, msg, sizeof msg), 0);
    f = (struct np_jvm_facts){-1, 13, 3, 12, 64};
    ck_assert_int_eq(np_advise_threads(&f, 16, msg, sizeof msg), 0);
    /* Set lower than the group would get: not numapin's business. */
    f = (struct np_jvm_facts){-1, 1, 1, 2, 64};
    ck_assert_int_eq(np_advise_threads(&f, 16, msg, sizeof msg), 0);
    /* Nothing known (no VMStructs). */
    f = (struct np_jvm_facts){-1, -1, -1, -1, -1};
    ck_assert_int_eq(np_advise_threads(&f, 1, msg, sizeof msg), 0);
    ck_assert_str_eq(msg, "untouched");
}
END_TEST

START_TEST(use_numa)
{
    char msg[1024] = "untouched";
    hwloc_bitmap_t one = t_bitmap("1"), all = t_bitmap("0-3"), only0 = t_bitmap("0");
    struct np_jvm_facts f = {-1, -1, -1, -1, -1};
    /* Unknown: nothing to say. */
    ck_assert_int_eq(np_advise_use_numa(&f, one, all, false, msg, sizeof msg), 0);
    ck_assert_str_eq(msg, "untouched");

    /* Off (HotSpot's decision, whatever the command line said). */
    f.use_numa = 0;
    ck_assert_int_eq(np_advise_use_numa(&f, one, all, false, msg, sizeof msg), 1);
    has(msg, "UseNUMA is off in this JVM");
    has(msg, "placed threads: node 1");
    lacks(msg, "-XX:-UseNUMA");

    /* On, and the group is the whole machine: nothing to fix. */
    f.use_numa = 1;
    ck_assert_int_eq(np_advise_use_numa(&f, all, all, false, msg, sizeof msg), 1);
    has(msg, "UseNUMA is on in this JVM");
    lacks(msg, "-XX:-UseNUMA");
    ck_assert_int_eq(np_advise_use_numa(&f, only0, only0, true, msg, sizeof msg), 1);
    lacks(msg, "-XX:-UseNUMA");

    /* On, for a group on one node of four: the heap is split over all. */
    ck_assert_int_eq(np_advise_use_numa(&f, one, all, false, msg, sizeof msg), 1);
    has(msg, "UseNUMA is on in this JVM");
    has(msg, "to each of nodes 0-3, not only to this group's node 1");
    has(msg, "measured on 3 nodes");
    has(msg, "-XX:-UseNUMA");
    has(msg, "numactl --membind=1");
    /* The whole JVM placed, too late to turn it off (a late attach). */
    ck_assert_int_eq(np_advise_use_numa(&f, one, all, true, msg, sizeof msg), 1);
    has(msg, "it was too late to turn it off");
    has(msg, "-XX:-UseNUMA");
    lacks(msg, "numactl");
    f.use_numa = 0;
    ck_assert_int_eq(np_advise_use_numa(&f, one, all, true, msg, sizeof msg), 1);
    has(msg, "the whole JVM: node 1");
    hwloc_bitmap_free(one);
    hwloc_bitmap_free(all);
    hwloc_bitmap_free(only0);
}
END_TEST

/* Two nodes: node 0 holds CPUs 0-1, node 1 CPUs 2-3.  Marked as this
 * system by hand: alignment advice is only given about a real start-up
 * binding. */
static void two_nodes(struct np_topo *t)
{
    char err[256];
    ck_assert_msg(np_topo_load(t, NULL, "pack:1 numa:2 core:2 pu:1", err, sizeof err) == 0, "%s",
                  err);
    ck_assert_int_eq(t->nnodes, 2);
    t->thissystem = 1;
}

static int align(const struct np_topo *t, const char *cpus, int mode, const char *nodes,
                 char *msg, size_t len)
{
    struct np_actual a;
    ck_assert_int_eq(np_actual_init(&a), 0);
    hwloc_bitmap_t c = t_bitmap(cpus), n = t_bitmap(nodes);
    hwloc_bitmap_copy(a.cpus, c);
    hwloc_bitmap_copy(a.mem_nodes, n);
    a.mem_mode = mode;
    int r = np_advise_alignment(t, &a, msg, len);
    hwloc_bitmap_free(c);
    hwloc_bitmap_free(n);
    np_actual_destroy(&a);
    return r;
}

START_TEST(alignment_advised)
{
    struct np_topo t;
    char msg[1024];
    two_nodes(&t);
    /* numactl --membind=0 taskset -c 2-3: CPUs on node 1, memory on 0. */
    ck_assert_int_eq(align(&t, "2-3", MPOL_BIND, "0", msg, sizeof msg), 1);
    has(msg, "CPUs 2-3 (node 1)");
    has(msg, "memory policy bind:0");
    has(msg, "UseNUMA off");
    has(msg, "numactl --cpunodebind=1 --membind=1");
    /* preferred and interleave name memory nodes too. */
    ck_assert_int_eq(align(&t, "0", MPOL_PREFERRED, "1", msg, sizeof msg), 1);
    has(msg, "CPUs 0 (node 0)");
    has(msg, "memory policy preferred:1");
    ck_assert_int_eq(align(&t, "3", MPOL_INTERLEAVE, "0-1", msg, sizeof msg), 1);
    has(msg, "interleave:0-1");
    /* CPUs on both nodes, memory on one. */
    ck_assert_int_eq(align(&t, "0-3", MPOL_BIND, "0", msg, sizeof msg), 1);
    has(msg, "CPUs 0-3 (node 0-1)");
    np_topo_destroy(&t);
}
END_TEST

START_TEST(alignment_not_advised)
{
    struct np_topo t;
    char msg[256] = "untouched";
    two_nodes(&t);
    /* Same nodes. */
    ck_assert_int_eq(align(&t, "0-1", MPOL_BIND, "0", msg, sizeof msg), 0);
    ck_assert_int_eq(align(&t, "2", MPOL_PREFERRED, "1", msg, sizeof msg), 0);
    ck_assert_int_eq(align(&t, "0-3", MPOL_INTERLEAVE, "0-1", msg, sizeof msg), 0);
    /* No memory binding: default, local, or a preferred without a node. */
    ck_assert_int_eq(align(&t, "2-3", MPOL_DEFAULT, "", msg, sizeof msg), 0);
    ck_assert_int_eq(align(&t, "2-3", MPOL_LOCAL, "", msg, sizeof msg), 0);
    ck_assert_int_eq(align(&t, "2-3", MPOL_PREFERRED, "", msg, sizeof msg), 0);
    ck_assert_int_eq(align(&t, "2-3", -1, "0", msg, sizeof msg), 0);
    /* CPUs the topology does not know (no home node): nothing to compare. */
    ck_assert_int_eq(align(&t, "9", MPOL_BIND, "0", msg, sizeof msg), 0);
    /* A topology that is not this machine: its start-up binding means
     * nothing. */
    t.thissystem = 0;
    ck_assert_int_eq(align(&t, "2-3", MPOL_BIND, "0", msg, sizeof msg), 0);
    ck_assert_str_eq(msg, "untouched");
    np_topo_destroy(&t);
}
END_TEST

START_TEST(numa_balancing)
{
    char msg[1024] = "untouched";
    bool warn = true;
    /* Off, unknown, and mode 2 (memory tiering only: no task migration). */
    ck_assert_int_eq(np_advise_numa_balancing(0, NP_MEM_PREFERRED, true, &warn, msg, sizeof msg), 0);
    ck_assert_int_eq(np_advise_numa_balancing(-1, NP_MEM_PREFERRED, true, &warn, msg, sizeof msg), 0);
    ck_assert_int_eq(np_advise_numa_balancing(2, NP_MEM_NONE, false, &warn, msg, sizeof msg), 0);
    ck_assert_str_eq(msg, "untouched");
    /* The whole JVM under a policy: neither sampled nor migrated, said as
     * information, with what mem=balancing would give. */
    ck_assert_int_eq(np_advise_numa_balancing(1, NP_MEM_PREFERRED, true, &warn, msg, sizeof msg), 1);
    ck_assert(!warn);
    has(msg, "kernel automatic NUMA balancing is on (kernel.numa_balancing=1)");
    has(msg, "under mem=preferred it neither samples nor migrates this JVM's memory");
    has(msg, "mem=balancing lets it sample the accesses");
    /* What was measured: docs/access.md. */
    has(msg, "some 130 hint faults a second at its default scan rates and no CPU cost measured");
    ck_assert_int_eq(np_advise_numa_balancing(1, NP_MEM_BIND, true, &warn, msg, sizeof msg), 1);
    ck_assert(!warn);
    has(msg, "under mem=bind it neither");
    /* mem=balancing: what it does, as information. */
    ck_assert_int_eq(np_advise_numa_balancing(1, NP_MEM_BALANCING, true, &warn, msg, sizeof msg), 1);
    ck_assert(!warn);
    has(msg, "under mem=balancing it samples this JVM's memory accesses");
    /* Threads without a policy: a warning, with the fixes. */
    ck_assert_int_eq(np_advise_numa_balancing(1, NP_MEM_PREFERRED, false, &warn, msg, sizeof msg), 1);
    ck_assert(warn);
    has(msg, "the threads without numapin's memory policy (those it does not place, or that ran "
             "before it loaded)");
    has(msg, "sysctl -w kernel.numa_balancing=0");
    ck_assert_int_eq(np_advise_numa_balancing(3, NP_MEM_NONE, true, &warn, msg, sizeof msg), 1);
    ck_assert(warn);
    has(msg, "kernel.numa_balancing=3");
    has(msg, "every thread (mem=none sets no policy)");
}
END_TEST

START_TEST(read_numa_balancing)
{
    char dir[4096], path[4200];
    t_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/numa_balancing", dir);
    static const struct {
        const char *content;
        int want;
    } c[] = {{"0\n", 0}, {"1\n", 1}, {"2\n", 2}, {"3", 3}, {"", -1}, {"on\n", -1}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        ck_assert_int_eq(t_write_file(path, c[i].content, strlen(c[i].content)), 0);
        ck_assert_msg(np_read_numa_balancing(path) == c[i].want,
                      "file \"%s\": np_read_numa_balancing = %d, want %d", c[i].content,
                      np_read_numa_balancing(path), c[i].want);
    }
    unlink(path);
    ck_assert_int_eq(np_read_numa_balancing(path), -1);
    t_rmdir(dir);
    /* NULL reads the kernel's file: the same value as reading it here. */
    char *sys = t_read_file("/proc/sys/kernel/numa_balancing", NULL);
    int want = sys != NULL && sys[0] >= '0' && sys[0] <= '9' ? atoi(sys) : -1;
    ck_assert_int_eq(np_read_numa_balancing(NULL), want);
    free(sys);
}
END_TEST

/* The pool named in the advice is the pool the thread belongs to. */
START_TEST(oversubscription_names_the_pool)
{
    char buf[512];
    bool compute;
    ck_assert_int_eq(np_advise_oversubscribed(2, 2, "ForkJoinPool-1-worker-3", &compute, buf, sizeof buf), 0);
    static const struct {
        const char *name, *fix;
        bool compute;
    } c[] = {
        {"ForkJoinPool-1-worker-3", "new ForkJoinPool(2)", true},
        {"ForkJoinPool.commonPool-worker-1", "-Djava.util.concurrent.ForkJoinPool.common.parallelism=2", true},
        {"nioEventLoopGroup-3-1", "Netty: new NioEventLoopGroup(2)", true},
        {"qtp1867083167-17", "Jetty's QueuedThreadPool: setMaxThreads(2)", false},
        {"http-nio-8080-exec-4", "Tomcat's connector: maxThreads=\"2\"", false},
        {"pool-2-thread-7", "Executors.newFixedThreadPool(2)", false},
        {"Tier1-worker", "the pool that starts them to at most 2 threads", false},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        ck_assert_int_eq(np_advise_oversubscribed(3, 2, c[i].name, &compute, buf, sizeof buf), 1);
        ck_assert_msg(strstr(buf, c[i].fix) != NULL, "%s: %s", c[i].name, buf);
        ck_assert_msg(strstr(buf, "3 placed threads are live on this group's 2 CPUs") == buf, "%s", buf);
        ck_assert_msg(compute == c[i].compute, "%s", c[i].name);
        if (i > 1)
            ck_assert_msg(strstr(buf, "ForkJoinPool") == NULL, "%s names ForkJoinPool: %s", c[i].name, buf);
        if (!compute)
            ck_assert_msg(strstr(buf, "for CPU-bound work") != NULL, "%s", buf);
    }
    /* The name is quoted and escaped as the log writes names: a line
     * break or a bidi override in it cannot break or turn the line. */
    ck_assert_int_eq(np_advise_oversubscribed(3, 2, "Tier1-\n[info][numapin] fake\xe2\x80\xae", &compute, buf,
                                              sizeof buf), 1);
    ck_assert_msg(strstr(buf, "(threads like \"Tier1-\\x0a[info][numapin] fake\\xe2\\x80\\xae\": ") != NULL,
                  "%s", buf);
    for (const char *p = buf; *p; p++)
        ck_assert_msg((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f, "raw byte in: %s", buf);
}
END_TEST

Suite *advise_suite(void)
{
    Suite *s = suite_create("advise");
    TCase *tc = tcase_create("advise");
    tcase_add_test(tc, hotspot_sizing);
    tcase_add_test(tc, hotspot_formulas);
    tcase_add_test(tc, threads_advised);
    tcase_add_test(tc, threads_not_advised);
    tcase_add_test(tc, use_numa);
    tcase_add_test(tc, alignment_advised);
    tcase_add_test(tc, alignment_not_advised);
    tcase_add_test(tc, numa_balancing);
    tcase_add_test(tc, read_numa_balancing);
    tcase_add_test(tc, oversubscription_names_the_pool);
    suite_add_tcase(s, tc);
    return s;
}
