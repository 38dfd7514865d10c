/* np_inspect: thread dumps of JDK 17 and 25, and this process seen from
 * outside on a fake 2-node machine laid over this one (CPU 0 is node 0,
 * CPU 1 node 1). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inspect.h"
#include "np_advise.h"
#include "tests.h"

/* Lines as `jcmd PID Thread.print` writes them: JDK 17 (nid in hex), then
 * JDK 25 (nid in decimal, the tid also in brackets); VM threads without
 * "#N"; a name holding quotes and spaces; lines that are no thread. */
static const char dump[] =
    "12345:\n"
    "2026-11-30 08:00:00\n"
    "Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1 mixed mode, sharing):\n"
    "\n"
    "Threads class SMR info:\n"
    "_java_thread_list=0x00007f2c38001f40, length=11, elements={\n"
    "0x00007f2c70024b00, 0x00007f2c700f3800\n"
    "}\n"
    "\n"
    "\"main\" #1 prio=5 os_prio=0 cpu=52.10ms elapsed=1.20s tid=0x00007f2c70024b00 nid=0x5d03 waiting on condition  [0x00007f2c76ffe000]\n"
    "   java.lang.Thread.State: TIMED_WAITING (sleeping)\n"
    "\tat java.lang.Thread.sleep(java.base@17.0.15/Native Method)\n"
    "\n"
    "\"ForkJoinPool-1-worker-1\" #14 daemon prio=5 os_prio=0 cpu=0.31ms elapsed=1.02s tid=0x00007f2c70120000 nid=0x5d1a waiting on condition  [0x00007f2c2e9fe000]\n"
    "\"say \"hi\" there\" #15 prio=5 os_prio=0 cpu=0.10ms elapsed=1.00s tid=0x00007f2c70121000 nid=0x5d1b runnable\n"
    "\"VM Thread\" os_prio=0 cpu=3.05ms elapsed=1.21s tid=0x00007f2c700d8000 nid=0x5d09 runnable\n"
    "\"GC Thread#0\" os_prio=0 cpu=0.05ms elapsed=1.21s tid=0x00007f2c70050000 nid=0x5d05 runnable\n"
    "\"ForkJoinPool-2-worker-3\" #31 [24001] daemon prio=5 os_prio=0 cpu=0.20ms elapsed=0.50s tid=0x00007f0d1c0a1000 nid=24001 waiting on condition  [0x00007f0cf3bfe000]\n"
    "\"C2 CompilerThread0\" #9 [23990] daemon prio=9 os_prio=0 cpu=40.00ms elapsed=1.10s tid=0x00007f0d1c0ce000 nid=23990 waiting on condition  [0x0000000000000000]\n"
    "\"no nid\" #40 prio=5 os_prio=0 tid=0x1\n"
    "\"bad nid\" #41 prio=5 os_prio=0 tid=0x1 nid=zz runnable\n"
    "JNI global refs: 15, weak refs: 0\n";

START_TEST(parses_jdk17_and_jdk25_dumps)
{
    struct np_named *n = NULL;
    int ambiguous = -1;
    int count = np_inspect_parse_dump(dump, &n, &ambiguous);
    ck_assert_int_eq(count, 7);
    ck_assert_int_eq(ambiguous, 0);
    /* By thread id. */
    struct { const char *name; int tid; } want[] = {
        {"main", 0x5d03}, {"GC Thread#0", 0x5d05}, {"VM Thread", 0x5d09},
        {"ForkJoinPool-1-worker-1", 0x5d1a}, {"say \"hi\" there", 0x5d1b},
        {"C2 CompilerThread0", 23990}, {"ForkJoinPool-2-worker-3", 24001},
    };
    for (int i = 0; i < count; i++) {
        ck_assert_str_eq(n[i].name, want[i].name);
        ck_assert_int_eq(n[i].tid, want[i].tid);
    }
    np_inspect_named_free(n, count);
    ck_assert_int_eq(np_inspect_parse_dump("", &n, NULL), 0);
    np_inspect_named_free(n, 0);
    ck_assert_int_eq(np_inspect_parse_dump("\"unterminated nid=0x10\n\"x\" nid=-5\n", &n, NULL), 0);
    np_inspect_named_free(n, 0);
}
END_TEST

/* The dump gives names in the JVM's modified UTF-8: they come out as
 * UTF-8 text, with the escaped form where the text is not exact. */
START_TEST(dump_names_become_utf8_text)
{
    static const char text[] =
        "\"emoji-\xed\xa0\xbd\xed\xb8\x80\" #20 prio=5 os_prio=0 tid=0x1 nid=0x10 runnable\n"
        "\"lone-\xed\xa0\x80\" #21 prio=5 os_prio=0 tid=0x2 nid=0x11 runnable\n"
        "\"nul-\xc0\x80\" #22 prio=5 os_prio=0 tid=0x3 nid=0x12 runnable\n";
    struct np_named *n = NULL;
    ck_assert_int_eq(np_inspect_parse_dump(text, &n, NULL), 3);
    ck_assert_str_eq(n[0].name, "emoji-\xf0\x9f\x98\x80");
    ck_assert_ptr_null(n[0].escaped);
    ck_assert_str_eq(n[1].name, "lone-\xef\xbf\xbd");
    ck_assert_str_eq(n[1].escaped, "lone-\\ud800");
    ck_assert_str_eq(n[2].name, "nul-\xef\xbf\xbd");
    ck_assert_str_eq(n[2].escaped, "nul-\\u0000");
    np_inspect_named_free(n, 3);
}
END_TEST

/* A thread may name itself anything, line breaks and " nid=" included;
 * what it writes into the dump must not relabel another thread. */
START_TEST(names_cannot_forge_records)
{
    static const char forged[] =
        "\"VM Thread\" os_prio=0 cpu=3.05ms elapsed=1.21s tid=0x00007f2c700d8000 nid=0x5d09 runnable\n"
        /* A thread named "x\n\n\"ForkJoinPool-9-worker-FAKE\" #99 ... nid=0x5d09\ny": */
        "\"x\n"
        "\n"
        "\"ForkJoinPool-9-worker-FAKE\" #99 prio=5 os_prio=0 tid=0x1 nid=0x5d09 runnable\n"
        "y\" #15 prio=5 os_prio=0 cpu=0.10ms elapsed=1.00s tid=0x00007f2c70121000 nid=0x5d1b runnable\n"
        /* A thread named "a\" nid=0x5d05 b", on one line. */
        "\"a\" nid=0x5d05 b\" #16 prio=5 os_prio=0 cpu=0.10ms elapsed=1.00s tid=0x1 nid=0x5d1c runnable\n"
        "\"GC Thread#0\" os_prio=0 cpu=0.05ms elapsed=1.21s tid=0x00007f2c70050000 nid=0x5d05 runnable\n";
    struct np_named *n = NULL;
    int ambiguous = -1;
    int count = np_inspect_parse_dump(forged, &n, &ambiguous);
    ck_assert_int_eq(ambiguous, 1); /* 0x5d09: the VM Thread and the forgery */
    for (int i = 0; i < count; i++) {
        ck_assert_int_ne(n[i].tid, 0x5d09);
        ck_assert_ptr_null(strstr(n[i].name, "FAKE"));
        if (n[i].tid == 0x5d05)
            ck_assert_str_eq(n[i].name, "GC Thread#0");
        if (n[i].tid == 0x5d1c)
            ck_assert_str_eq(n[i].name, "a\" nid=0x5d05 b");
    }
    ck_assert_int_eq(count, 2); /* GC Thread#0 and the one-line name; the other's name is cut */
    np_inspect_named_free(n, count);
}
END_TEST

/* A thread of this process bound to CPU 1, named, waiting to be seen. */
struct held {
    sem_t ready, done;
    pid_t tid;
};

static void *held_main(void *arg)
{
    struct held *h = arg;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(1, &one);
    ck_assert_int_eq(sched_setaffinity(0, sizeof one, &one), 0);
    h->tid = gettid();
    sem_post(&h->ready);
    while (sem_wait(&h->done) != 0)
        ;
    return NULL;
}

START_TEST(this_process_from_outside)
{
    ck_assert_int_eq(setenv("HWLOC_SYNTHETIC", "pack:1 numa:2 core:1 pu:1", 1), 0);
    ck_assert_int_eq(setenv("HWLOC_THISSYSTEM", "1", 1), 0);
    struct np_topo t;
    char err[512];
    ck_assert_msg(np_topo_load(&t, NULL, NULL, err, sizeof err) == 0, "%s", err);
    struct held h;
    sem_init(&h.ready, 0, 0);
    sem_init(&h.done, 0, 0);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, held_main, &h), 0);
    ck_assert_int_eq(pthread_setname_np(th, "kernel-name-x"), 0);
    while (sem_wait(&h.ready) != 0)
        ;
    /* The JVM's name for this process's main thread; the other keeps the
     * kernel's. */
    struct np_named names[] = {{getpid(), "main thread", NULL}};
    struct np_inspect c;
    ck_assert_msg(np_inspect_collect(&t, getpid(), names, 1, &c, err, sizeof err) == 0, "%s", err);
    sem_post(&h.done);
    pthread_join(th, NULL);
    ck_assert_int_eq(c.nthreads, 2);
    const struct np_seen *mine = NULL, *held = NULL;
    for (int i = 0; i < c.nthreads; i++) {
        if (c.threads[i].tid == getpid())
            mine = &c.threads[i];
        if (c.threads[i].tid == h.tid)
            held = &c.threads[i];
    }
    ck_assert_ptr_nonnull(mine);
    ck_assert_ptr_nonnull(held);
    char buf[64];
    ck_assert_str_eq(mine->name, "main thread");
    ck_assert(mine->jvm_name);
    ck_assert_str_eq(held->name, "kernel-name-x");
    ck_assert(!held->jvm_name);
    ck_assert_str_eq(t_list(held->cpus, buf, sizeof buf), "1");
    ck_assert_str_eq(t_list(held->nodes, buf, sizeof buf), "1");
    ck_assert_int_eq(held->last_cpu, 1);
    ck_assert_int_eq(held->last_node, 1);
    ck_assert_str_eq(t_list(mine->nodes, buf, sizeof buf), "0-1");
    /* Memory: all of it on the kernel's one node, 0. */
    ck_assert_ptr_nonnull(c.node_kb);
    ck_assert_int_ge(c.nnode_kb, 1);
    ck_assert_int_gt(c.node_kb[0], 0);

    /* The text: one line per thread, filtered by glob. */
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct np_globs filter = {0};
    ck_assert_int_eq(np_globs_parse("kernel-*", &filter), 0);
    np_inspect_print(&c, &filter, false, out);
    np_globs_free(&filter);
    fclose(out);
    char want[256];
    snprintf(want, sizeof want,
             "thread \"kernel-name-x\" tid=%d cpus=1 nodes=1 last_cpu=1 last_node=1 name=kernel\n"
             "matched threads=1\n", (int)h.tid);
    ck_assert_ptr_nonnull(strstr(text, want));
    ck_assert_ptr_null(strstr(text, "main thread"));
    /* Access locality: with balancing off (as on every machine of one
     * node), one line says so, and the thread lines have no share. */
    if (np_read_numa_balancing(NULL) == 0)
        ck_assert_msg(strstr(text, "\naccess unsampled: kernel.numa_balancing=0: ") != NULL, "%s",
                      text);
    else
        ck_assert_msg(strstr(text, "\naccess_local nodes=") != NULL ||
                          strstr(text, "\naccess unsampled: ") != NULL, "%s", text);
    free(text);
    np_inspect_free(&c);
    ck_assert_int_eq(np_inspect_collect(&t, 999999999, NULL, 0, &c, err, sizeof err), -1);
    ck_assert_str_eq(err, "process 999999999 ended while being looked at");
    np_topo_destroy(&t);
}
END_TEST

/* Samples of a JVM that numapin placed whole under a policy the kernel
 * does not sample (its marker says mem=preferred) are no share of its
 * accesses: check says unsampled, as the agent's summary does; under
 * mem=balancing, with no marker, or with a marker of version 1 (policy
 * unknown), the samples are the share. */
START_TEST(a_policy_the_kernel_does_not_sample_is_unsampled)
{
    long long faults[2] = {60, 9};
    struct np_inspect c = {0};
    c.balancing = 1;
    c.access = (struct np_access){faults, 2, 0, true};
    char why[512];
    ck_assert(np_inspect_access_sampled(&c, why, sizeof why));
    c.marker_state = NP_MARKER_FOUND;
    c.marker.mem = NP_MEM_PREFERRED;
    ck_assert(!np_inspect_access_sampled(&c, why, sizeof why));
    ck_assert_msg(strstr(why, "mem=preferred") != NULL, "%s", why);
    c.marker.mem = NP_MEM_BALANCING;
    ck_assert(np_inspect_access_sampled(&c, why, sizeof why));
    c.marker.mem = NP_MEM_NONE;
    ck_assert(np_inspect_access_sampled(&c, why, sizeof why));
    c.marker.mem = -1;
    ck_assert(np_inspect_access_sampled(&c, why, sizeof why));
}
END_TEST

Suite *inspect_suite(void)
{
    Suite *s = suite_create("inspect");
    TCase *tc = tcase_create("inspect");
    tcase_add_test(tc, parses_jdk17_and_jdk25_dumps);
    tcase_add_test(tc, names_cannot_forge_records);
    tcase_add_test(tc, dump_names_become_utf8_text);
    tcase_add_test(tc, this_process_from_outside);
    tcase_add_test(tc, a_policy_the_kernel_does_not_sample_is_unsampled);
    suite_add_tcase(s, tc);
    return s;
}
