/* np_agent without a JVM.  The topology is a fake two-node machine laid
 * over this one (HWLOC_SYNTHETIC "pack:1 numa:2 core:1 pu:1" with
 * HWLOC_THISSYSTEM=1): "node 0" is CPU 0, "node 1" CPU 1.  The test host
 * has exactly CPUs 0 and 1 and one real NUMA node, 0 (the tests need CPUs
 * 0 and 1, and no node 1).
 *
 * Placement binds the calling thread, so every placement runs on a fresh
 * pthread, which reads its own affinity back.  Every test runs in its own
 * process (Check's fork mode): setenv and the log are process-wide. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <numaif.h>

#include "np_agent.h"
#include "tests.h"

static char dir[256], log_path[512], err_path[512], out_path[512];
static int saved_stderr = -1, saved_stdout = -1;
/* The CPUs this process runs on (0-1 here): an unplaced thread keeps them. */
static char base[256];

/* The CPUs the calling thread may run on, as a cpulist. */
static void my_cpus(char *buf, size_t len)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &set))
            hwloc_bitmap_set(b, (unsigned)i);
    t_list(b, buf, len);
    hwloc_bitmap_free(b);
}

static void fake_machine(const char *desc)
{
    cpu_set_t set;
    ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
    ck_assert_msg(CPU_ISSET(0, &set) && CPU_ISSET(1, &set),
                  "these tests need a process allowed on CPUs 0 and 1");
    my_cpus(base, sizeof base);
    ck_assert_int_eq(setenv("HWLOC_SYNTHETIC", desc, 1), 0);
    ck_assert_int_eq(setenv("HWLOC_THISSYSTEM", "1", 1), 0);
    unsetenv("HWLOC_XMLFILE");
}

/* Fork-mode setup: a private directory, stderr and stdout captured. */
static void setup(void)
{
    t_tmpdir(dir, sizeof dir);
    snprintf(log_path, sizeof log_path, "%s/agent.log", dir);
    snprintf(err_path, sizeof err_path, "%s/stderr", dir);
    snprintf(out_path, sizeof out_path, "%s/stdout", dir);
    fflush(stdout);
    fflush(stderr);
    saved_stderr = dup(STDERR_FILENO);
    saved_stdout = dup(STDOUT_FILENO);
    int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, STDERR_FILENO);
    close(fd);
    fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    fake_machine("pack:1 numa:2 core:1 pu:1");
}

static void teardown(void)
{
    fflush(stdout);
    dup2(saved_stderr, STDERR_FILENO);
    dup2(saved_stdout, STDOUT_FILENO);
    close(saved_stderr);
    close(saved_stdout);
    t_rmdir(dir);
}

static char *slurp(const char *path)
{
    fflush(stdout);
    char *s = t_read_file(path, NULL);
    ck_assert_msg(s != NULL, "cannot read %s", path);
    return s;
}

static struct np_agent *create(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static struct np_agent *create(const char *fmt, ...)
{
    char opts[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(opts, sizeof opts, fmt, ap);
    va_end(ap);
    struct np_agent *a = NULL;
    enum np_status st = np_agent_create(opts, &a);
    if (st != NP_OK) {
        char *e = slurp(err_path);
        ck_abort_msg("np_agent_create(\"%s\") = %d: %s", opts, st, e);
    }
    ck_assert_ptr_nonnull(a);
    return a;
}

static enum np_status create_fails(const char *opts)
{
    struct np_agent *a = (struct np_agent *)1;
    enum np_status st = np_agent_create(opts, &a);
    ck_assert_msg(st != NP_OK, "np_agent_create(\"%s\") succeeded", opts);
    ck_assert_ptr_null(a);
    return st;
}

/* A thread that starts under the agent, reads its CPUs back, and ends. */
struct job {
    struct np_agent *a;
    const char *name;
    char cpus[64];
    sem_t *placed, *may_end; /* optional: hold the thread alive */
};

static void *job_main(void *arg)
{
    struct job *j = arg;
    np_agent_thread_start(j->a, j->name, gettid());
    my_cpus(j->cpus, sizeof j->cpus);
    if (j->placed)
        sem_post(j->placed);
    if (j->may_end)
        while (sem_wait(j->may_end) != 0)
            ;
    np_agent_thread_end(j->a);
    return NULL;
}

/* Runs a whole thread; returns the CPUs it had after thread_start. */
static void run_thread(struct np_agent *a, const char *name, char *cpus, size_t len)
{
    struct job j = {a, name, "", NULL, NULL};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, job_main, &j), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    snprintf(cpus, len, "%s", j.cpus);
}

START_TEST(group0_places_on_cpu0)
{
    struct np_agent *a = create("group=0,mem=none,scope=threads,log=debug:%s", log_path);
    ck_assert(a->active);
    ck_assert_int_eq(a->opt.groups, 2); /* defaulted to the node count */
    char cpus[64];
    run_thread(a, "ForkJoinPool-1-worker-1", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "0");
    run_thread(a, "main", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, base); /* not a pool worker: left alone */
    my_cpus(cpus, sizeof cpus);
    ck_assert_str_eq(cpus, base); /* only the placed thread was bound */
    np_agent_summary(a);
    np_agent_destroy(a);

    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] topology nodes=2 packages=1 l3=0 cores=2 pus=2 smt=1 allowed=0-1 source=\"synthetic pack:1 numa:2 core:1 pu:1\""), 1);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] plan group=0 groups=2 domain=node node=0 slice=1/1 cpus=0 cpus_mode=node cpukind=performance slots=1 mem=none threads=\"" NP_DEFAULT_THREADS "\" dryrun=no strict=no scope=threads (given)"), 1);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] placed \"ForkJoinPool-1-worker-1\" tid="), 1);
    ck_assert_int_eq(t_count_lines(log, " group=0 node=0 cpus=0 mem=default"), 1); /* read back */
    ck_assert_int_eq(t_count_lines(log, "[debug][numapin] skipped \"main\" tid="), 1);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] summary group=0 placed=1 would_place=0 skipped=1 failed=0 mem_failed=0 cpus=0"), 1);
    ck_assert_int_eq(t_count_lines(log, "[warning]"), 0);
    free(log);
}
END_TEST

START_TEST(group1_places_on_cpu1)
{
    struct np_agent *a = create("group=1,mem=none,scope=threads,log=info:%s", log_path);
    char cpus[64];
    run_thread(a, "ForkJoinPool.commonPool-worker-7", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "1");
    run_thread(a, "ForkJoinPool-3-worker-2", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "1");
    run_thread(a, "Reference Handler", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, base);
    np_agent_summary(a);
    np_agent_destroy(a);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "] placed \"ForkJoinPool.commonPool-worker-7\""), 1);
    ck_assert_int_eq(t_count_lines(log, " group=1 node=1 cpus=1 mem=default"), 2);
    ck_assert_int_eq(t_count_lines(log, "] skipped"), 0); /* debug only */
    ck_assert_int_eq(t_count_lines(log, "] summary group=1 placed=2 would_place=0 skipped=1 failed=0 mem_failed=0 cpus=1"), 1);
    free(log);
}
END_TEST

/* report=FILE (%p expanded): the placements as JSON, read back with jq. */
START_TEST(report_lists_threads)
{
    char pattern[600], path[600];
    snprintf(pattern, sizeof pattern, "%s/report-%%p.json", dir);
    snprintf(path, sizeof path, "%s/report-%d.json", dir, (int)getpid());
    /* Group 1 is node 1, which this kernel lacks: its policy is refused. */
    struct np_agent *a = create("group=1,log=info:%s,report=%s", log_path, pattern);
    char cpus[64];
    run_thread(a, "ForkJoinPool-1-worker-1", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "1");
    run_thread(a, "Reference \"Handler\"", cpus, sizeof cpus);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0); /* opened at start */
    ck_assert_int_eq(st.st_size, 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    np_agent_summary(a);
    np_agent_report(a);
    np_agent_destroy(a);
    char *argv[] = {"/usr/bin/jq", "-r",
                    ".numapin, .plan.node, .plan.mem, .totals.placed, .totals.skipped, "
                    ".totals.mem_failed, (.threads[] | \"\\(.name)|\\(.outcome)|\\(.how)|"
                    "\\(.cpus)|\\(.mem)|\\(.verified)|\\(.cpu_error)|\\(.mem_error)|\\(.live)\")",
                    path, NULL};
    char *out = NULL, *err = NULL;
    ck_assert_msg(t_run(argv, &out, &err) == 0, "jq: %s", err);
    ck_assert_str_eq(out, "1\n1\npreferred:1\n1\n1\n1\n"
                          "ForkJoinPool-1-worker-1|placed|start|1|null|false|null|EINVAL|false\n"
                          "Reference \"Handler\"|skipped|start|null|null|null|null|null|false\n");
    free(out);
    free(err);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "] report "), 1);
    free(log);
}
END_TEST

START_TEST(memory_preferred_on_real_node)
{
    /* Node 0 exists in the kernel: mem=preferred works and reads back. */
    struct np_agent *a = create("group=0,log=info:%s", log_path);
    char cpus[64];
    run_thread(a, "ForkJoinPool-1-worker-1", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "0");
    np_agent_summary(a);
    np_agent_destroy(a);
    char *log = slurp(log_path);
    /* The whole JVM (the default with 2 groups), then the worker. */
    ck_assert_int_eq(t_count_lines(log, "] jvm group=0 node=0 cpus=0 mem=preferred:0"), 1);
    ck_assert_int_eq(t_count_lines(log, "] placed \"ForkJoinPool-1-worker-1\" tid="), 1);
    ck_assert_int_eq(t_count_lines(log, " group=0 node=0 cpus=0 mem=preferred:0"), 2);
    ck_assert_int_eq(t_count_lines(log, "mem_failed=0"), 1);
    ck_assert_int_eq(t_count_lines(log, "[warning]"), 0);
    free(log);
}
END_TEST

START_TEST(dryrun_binds_nothing)
{
    struct np_agent *a = create("group=1,dryrun,log=info:%s", log_path);
    char cpus[64];
    run_thread(a, "ForkJoinPool-1-worker-1", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, base);
    np_agent_summary(a);
    np_agent_destroy(a);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "] would-place \"ForkJoinPool-1-worker-1\" tid="), 1);
    ck_assert_int_eq(t_count_lines(log, " group=1 node=1 cpus=1 mem=preferred:1"), 1);
    ck_assert_int_eq(t_count_lines(log, "] placed"), 0);
    ck_assert_int_eq(t_count_lines(log, "dryrun=yes"), 1);
    ck_assert_int_eq(t_count_lines(log, "] summary group=1 placed=0 would_place=1 skipped=0 failed=0 mem_failed=0 cpus=1"), 1);
    free(log);
}
END_TEST

START_TEST(bad_options)
{
    const char *bad[] = {"bogus", "group=x", "mem=everywhere", "groups=0", "group=1,groups=1",
                         "threads=a||b"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_int_eq(create_fails(bad[i]), NP_ERR_OPTIONS);
    char *e = slurp(err_path);
    ck_assert_int_eq(t_count_lines(e, "[error][numapin] unknown option 'bogus'"), 1);
    ck_assert_int_eq(t_count_lines(e, "[error][numapin] invalid value 'everywhere' for option 'mem'"), 1);
    ck_assert_int_eq(t_count_lines(e, "[error][numapin]"), 6);
    free(e);
}
END_TEST

START_TEST(bad_option_reaches_chosen_log)
{
    char opts[1024];
    snprintf(opts, sizeof opts, "cpus=numa,log=info:%s", log_path);
    ck_assert_int_eq(create_fails(opts), NP_ERR_OPTIONS);
    char *log = slurp(log_path), *e = slurp(err_path);
    ck_assert_int_eq(t_count_lines(log, "[error][numapin] invalid value 'numa' for option 'cpus': valid values are node, core, pu"), 1);
    ck_assert_int_eq(t_count_lines(e, "invalid value 'numa' for option 'cpus'"), 1);
    free(log);
    free(e);
}
END_TEST

START_TEST(group_beyond_nodes)
{
    /* Two nodes and no groups=: group=2 does not exist. */
    ck_assert_int_eq(create_fails("group=2,mem=none"), NP_ERR_OPTIONS);
    char *e = slurp(err_path);
    ck_assert_int_eq(t_count_lines(e, "option 'group=2' is out of range"), 1);
    ck_assert_int_eq(t_count_lines(e, "valid values are 0 to 1"), 1);
    free(e);
    /* With groups=4 it does: node 1's first slice, its one CPU shared. */
    char opts[1024];
    snprintf(opts, sizeof opts, "group=2,groups=4,mem=none,log=info:%s", log_path);
    struct np_agent *a = NULL;
    ck_assert_int_eq(np_agent_create(opts, &a), NP_OK);
    char cpus[64];
    run_thread(a, "ForkJoinPool-1-worker-1", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "1");
    np_agent_destroy(a);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "[warning][numapin] advice: node 1 has 1 CPUs for 2 groups: groups share CPUs"), 1);
    ck_assert_int_eq(t_count_lines(log, "node 0 has"), 0); /* not this group's */
    free(log);
}
END_TEST

static void need_no_node1(void)
{
    ck_assert_msg(access("/sys/devices/system/node/node1", F_OK) != 0,
                  "this test needs a host without NUMA node 1");
}

START_TEST(strict_bind_to_missing_node_fails)
{
    need_no_node1();
    /* Node 1 does not exist in the real kernel: set_mempolicy fails. */
    char opts[1024];
    snprintf(opts, sizeof opts, "group=1,mem=bind,strict,scope=threads,log=info:%s", log_path);
    ck_assert_int_eq(create_fails(opts), NP_ERR_RUNTIME);
    char cpus[64];
    my_cpus(cpus, sizeof cpus);
    ck_assert_str_eq(cpus, base); /* the start-up probe put things back */
    char *e = slurp(err_path), *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(e, "[error][numapin] cannot set memory policy bind:1: "), 1);
    ck_assert_int_eq(t_count_lines(e, "EINVAL"), 1);
    ck_assert_int_eq(t_count_lines(e, "(strict: the JVM does not start)"), 1);
    ck_assert_int_eq(t_count_lines(log, "cannot set memory policy bind:1"), 1);
    free(e);
    free(log);
}
END_TEST

START_TEST(bind_to_missing_node_warns_once)
{
    need_no_node1();
    /* Without strict: threads keep their CPUs, memory fails, warned once. */
    struct np_agent *a = create("group=1,mem=bind,scope=threads,log=debug:%s", log_path);
    char cpus[64];
    run_thread(a, "ForkJoinPool-1-worker-1", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "1");
    run_thread(a, "ForkJoinPool-1-worker-2", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "1");
    np_agent_summary(a);
    np_agent_destroy(a);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "[warning][numapin] cannot set memory policy bind:1 for \"ForkJoinPool-1-worker-1\""), 1);
    ck_assert_int_eq(t_count_lines(log, "[debug][numapin] cannot set memory policy bind:1 for \"ForkJoinPool-1-worker-2\""), 1);
    ck_assert_int_eq(t_count_lines(log, "mem_error=EINVAL"), 2);
    ck_assert_int_eq(t_count_lines(log, "] summary group=1 placed=2 would_place=0 skipped=0 failed=0 mem_failed=2 cpus=1"), 1);
    free(log);
}
END_TEST

START_TEST(cpus_core_least_loaded)
{
    /* One node of two cores over this machine's two CPUs: cpus=core gives
     * each placed thread the core with the fewest live placed threads. */
    fake_machine("pack:1 numa:1 core:2 pu:1");
    struct np_agent *a = create("mem=none,cpus=core,log=info:%s", log_path);
    ck_assert_int_eq(a->nslots, 2);
    sem_t placed, end_a;
    sem_init(&placed, 0, 0);
    sem_init(&end_a, 0, 0);
    struct job ja = {a, "ForkJoinPool-1-worker-1", "", &placed, &end_a};
    pthread_t ta;
    ck_assert_int_eq(pthread_create(&ta, NULL, job_main, &ja), 0);
    while (sem_wait(&placed) != 0)
        ;
    ck_assert_str_eq(ja.cpus, "0");
    char cpus[64];
    /* A still holds core 0, so B gets core 1; B ends; C again gets core 1,
     * the free one. */
    run_thread(a, "ForkJoinPool-1-worker-2", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "1");
    run_thread(a, "ForkJoinPool-1-worker-3", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "1");
    sem_post(&end_a);
    ck_assert_int_eq(pthread_join(ta, NULL), 0);
    /* A ended too: both free, the lowest wins. */
    run_thread(a, "ForkJoinPool-1-worker-4", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "0");
    np_agent_summary(a);
    np_agent_destroy(a);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "cpus_mode=core cpukind=performance slots=2"), 1);
    ck_assert_int_eq(t_count_lines(log, "] summary group=0 placed=4 would_place=0 skipped=0 failed=0 mem_failed=0 cpus=0-1"), 1);
    free(log);
    sem_destroy(&placed);
    sem_destroy(&end_a);
}
END_TEST

START_TEST(help_does_nothing)
{
    struct np_agent *a = NULL;
    ck_assert_int_eq(np_agent_create("help", &a), NP_OK);
    ck_assert_ptr_nonnull(a);
    ck_assert(!a->active);
    char cpus[64];
    run_thread(a, "ForkJoinPool-1-worker-1", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, base);
    np_agent_summary(a);
    np_agent_destroy(a);
    char *out = slurp(out_path);
    ck_assert_ptr_nonnull(strstr(out, "usage: -agentpath:"));
    ck_assert_ptr_null(strstr(out, "summary"));
    free(out);
    /* help does nothing but print, also with a log file that cannot be
     * opened, even under strict: a warning, and the JVM runs. */
    char opts[1024];
    snprintf(opts, sizeof opts, "help,strict,log=info:%s/missing/dir.log", dir);
    ck_assert_int_eq(np_agent_create(opts, &a), NP_OK);
    ck_assert(!a->active);
    np_agent_destroy(a);
    out = slurp(out_path);
    ck_assert_int_eq(t_count_lines(out, "[warning][numapin] cannot open log file"), 1);
    free(out);
}
END_TEST

START_TEST(unopenable_log)
{
    char opts[1024];
    snprintf(opts, sizeof opts, "mem=none,log=info:%s/missing/dir.log", dir);
    /* Not strict: a warning on stdout, and the agent works. */
    struct np_agent *a = NULL;
    ck_assert_int_eq(np_agent_create(opts, &a), NP_OK);
    char cpus[64];
    run_thread(a, "ForkJoinPool-1-worker-1", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "0");
    np_agent_destroy(a);
    char *out = slurp(out_path);
    ck_assert_int_eq(t_count_lines(out, "[warning][numapin] cannot open log file"), 1);
    ck_assert_int_eq(t_count_lines(out, "ENOENT"), 1);
    ck_assert_int_eq(t_count_lines(out, "] placed \"ForkJoinPool-1-worker-1\""), 1);
    free(out);
    /* Strict: the JVM must not start. */
    snprintf(opts, sizeof opts, "strict,mem=none,log=info:%s/missing/dir.log", dir);
    ck_assert_int_eq(create_fails(opts), NP_ERR_RUNTIME);
}
END_TEST

/* ---- the whole JVM (np_agent_jvm.c) ----------------------------------------- */

/* With more than one group the whole JVM is placed by default: the process
 * is bound (this test process stands for it), threads that do not match
 * stay on the group, and the plan line says which scope and why. */
START_TEST(default_scope_places_the_whole_jvm)
{
    struct np_agent *a = create("group=1,mem=none,log=debug:%s", log_path);
    ck_assert_int_eq(a->opt.scope, NP_SCOPE_JVM);
    ck_assert(a->jvm_placed);
    char cpus[64];
    my_cpus(cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "1"); /* the loading thread, and the process */
    run_thread(a, "ForkJoinPool-1-worker-1", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "1");
    run_thread(a, "GC Thread#0", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "1"); /* not placed, and on the group all the same */
    np_agent_summary(a);
    np_agent_destroy(a);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "dryrun=no strict=no scope=jvm (the default with more than one group)"), 1);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] jvm group=1 node=1 cpus=1 mem=default"), 1);
    ck_assert_int_eq(t_count_lines(log, "] placed \"ForkJoinPool-1-worker-1\" tid="), 1);
    ck_assert_int_eq(t_count_lines(log, "] skipped \"GC Thread#0\" tid="), 1);
    ck_assert_int_eq(t_count_lines(log, "] summary group=1 placed=1 would_place=0 skipped=1 failed=0 "
                                        "mem_failed=0 cpus=1 mem_pages="), 1);
    ck_assert_int_eq(t_count_lines(log, " mem_local="), 1);
    ck_assert_int_eq(t_count_lines(log, "[warning]"), 0);
    free(log);
}
END_TEST

/* One group is the whole machine: only the matching threads are placed. */
START_TEST(one_group_keeps_scope_threads)
{
    struct np_agent *a = create("groups=1,mem=none,log=info:%s", log_path);
    ck_assert_int_eq(a->opt.scope, NP_SCOPE_THREADS);
    ck_assert(!a->jvm_placed);
    np_agent_destroy(a);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "scope=threads (the default with one group)"), 1);
    ck_assert_int_eq(t_count_lines(log, "] jvm "), 0);
    free(log);
}
END_TEST

/* Node 1 is missing in this kernel: the JVM's policy is refused once, and
 * the placed threads, refused the same, say so at debug level only. */
START_TEST(whole_jvm_on_missing_node_warns_once)
{
    need_no_node1();
    struct np_agent *a = create("group=1,log=debug:%s", log_path);
    char cpus[64];
    run_thread(a, "ForkJoinPool-1-worker-1", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "1");
    run_thread(a, "ForkJoinPool-1-worker-2", cpus, sizeof cpus);
    np_agent_summary(a);
    np_agent_destroy(a);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "[warning][numapin] scope=jvm: cannot set memory policy "
                                        "preferred:1 for the JVM: Invalid argument (EINVAL); it runs "
                                        "on the group's CPUs"), 1);
    ck_assert_int_eq(t_count_lines(log, "[warning]"), 1);
    ck_assert_int_eq(t_count_lines(log, "[debug][numapin] cannot set memory policy preferred:1 for"), 2);
    ck_assert_int_eq(t_count_lines(log, " mem_failed=2 "), 1);
    free(log);
}
END_TEST

START_TEST(whole_jvm_strict_on_missing_node_fails)
{
    need_no_node1();
    char opts[1024];
    snprintf(opts, sizeof opts, "group=1,mem=bind,strict,log=info:%s", log_path);
    ck_assert_int_eq(create_fails(opts), NP_ERR_RUNTIME);
    char *e = slurp(err_path);
    ck_assert_int_eq(t_count_lines(e, "[error][numapin] scope=jvm: cannot set memory policy bind:1 "
                                      "for the JVM: Invalid argument (EINVAL) (strict: the JVM does "
                                      "not start)"), 1);
    free(e);
}
END_TEST

/* Puts this process back as it started (all of `base`, the default memory
 * policy) after an agent placed it whole, so that the next agent sees the
 * whole machine again. */
static void unplace(void)
{
    hwloc_bitmap_t b = t_bitmap(base);
    cpu_set_t set;
    CPU_ZERO(&set);
    int i;
    hwloc_bitmap_foreach_begin(i, b)
        CPU_SET(i, &set);
    hwloc_bitmap_foreach_end();
    hwloc_bitmap_free(b);
    ck_assert_int_eq(sched_setaffinity(0, sizeof set, &set), 0);
    ck_assert_int_eq(set_mempolicy(MPOL_DEFAULT, NULL, 0), 0);
}

static char set_names[256];
static int set_result;

static int fake_set_false(const char *flag)
{
    strncat(set_names, flag, sizeof set_names - strlen(set_names) - 2);
    strcat(set_names, " ");
    return set_result;
}

/* UseNUMA, decided by HotSpot from the whole machine, is turned off once
 * the JVM is placed on a group of it; UseNUMAInterleaving too when HotSpot
 * turned it on for UseNUMA, never when it was given. */
START_TEST(use_numa_turned_off_for_a_group)
{
    struct np_agent *a = create("group=1,mem=none,log=info:%s", log_path);
    struct np_numa_flags on = {1, 1, 1};
    set_names[0] = '\0';
    set_result = 0;
    np_agent_use_numa_at_load(a, &on, fake_set_false);
    ck_assert_str_eq(set_names, "UseNUMA UseNUMAInterleaving ");
    ck_assert(a->numa_turned_off);
    np_agent_destroy(a);
    unplace();
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] UseNUMA turned off, and UseNUMAInterleaving "
                                        "with it: HotSpot decided it for the whole machine (nodes "
                                        "0-1) before numapin placed the JVM on node 1"), 1);
    free(log);

    /* Given on the command line: left, and warned about. */
    a = create("group=0,mem=none,log=info:%s", log_path);
    struct np_numa_flags given = {1, 1, 0};
    set_names[0] = '\0';
    np_agent_use_numa_at_load(a, &given, fake_set_false);
    ck_assert_str_eq(set_names, "UseNUMA ");
    np_agent_destroy(a);
    unplace();
    log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "[warning][numapin] UseNUMAInterleaving is on: HotSpot "
                                        "interleaves the heap over every node (0-1), not only node 0"), 1);
    free(log);

    /* Off already, unknown, or a JVM not placed whole: nothing to do. */
    struct np_numa_flags off = {0, 0, 0}, unknown = {-1, -1, -1};
    a = create("group=0,mem=none,scope=threads,log=info:%s", log_path);
    set_names[0] = '\0';
    np_agent_use_numa_at_load(a, &on, fake_set_false);
    np_agent_destroy(a);
    unplace();
    a = create("group=0,mem=none,log=info:%s", log_path);
    np_agent_use_numa_at_load(a, &off, fake_set_false);
    np_agent_use_numa_at_load(a, &unknown, fake_set_false);
    np_agent_destroy(a);
    ck_assert_str_eq(set_names, "");
}
END_TEST

/* A group that is every node: HotSpot's UseNUMA serves it, left alone; a
 * flag that cannot be set leaves the warning to the advice at VMInit. */
START_TEST(use_numa_left_or_warned)
{
    struct np_agent *a = create("groups=1,scope=jvm,mem=none,log=info:%s", log_path);
    struct np_numa_flags on = {1, 1, 1};
    set_names[0] = '\0';
    set_result = 0;
    np_agent_use_numa_at_load(a, &on, fake_set_false);
    ck_assert_str_eq(set_names, "");
    np_agent_destroy(a);
    unplace();
    a = create("group=1,mem=none,log=info:%s", log_path);
    set_result = -1;
    np_agent_use_numa_at_load(a, &on, fake_set_false);
    ck_assert(!a->numa_turned_off);
    /* Then VMInit reads it on, and warns. */
    struct np_jvm_facts facts = {1, -1, -1, -1, -1};
    np_agent_jvm_facts(a, &facts);
    np_agent_destroy(a);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "UseNUMA turned off"), 0);
    ck_assert_int_eq(t_count_lines(log, "[warning][numapin] advice: UseNUMA is on in this JVM: HotSpot "
                                        "binds parts of the heap to each of nodes 0-1, not only to this "
                                        "group's node 1, and it was too late to turn it off"), 1);
    free(log);
}
END_TEST

/* A late attach with the whole JVM placed moves its memory: on node 0,
 * which this kernel has, every resident page is there already. */
START_TEST(attach_moves_memory)
{
    struct np_agent *a = create("group=0,log=info:%s", log_path);
    np_agent_attached(a);
    np_agent_destroy(a);
    unplace();
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] attach: moved memory pages=0 mib=0.0 node=0 ms="), 1);
    ck_assert_int_eq(t_count_lines(log, " left=0 mappings="), 1);
    ck_assert_int_eq(t_count_lines(log, "[warning]"), 0);
    free(log);
    /* mem=none: left where it is; node 1 (missing here): one warning. */
    a = create("group=0,mem=none,log=info:%s", log_path);
    np_agent_attached(a);
    np_agent_destroy(a);
    unplace();
    need_no_node1();
    a = create("group=1,log=info:%s", log_path);
    np_agent_attached(a);
    np_agent_destroy(a);
    log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] attach: mem=none, so the JVM's memory stays where it is"), 1);
    ck_assert_int_eq(t_count_lines(log, "[warning][numapin] attach: cannot move this JVM's memory to node 1: "), 1);
    free(log);
}
END_TEST

Suite *agent_suite(void)
{
    Suite *s = suite_create("agent");
    TCase *tc = tcase_create("agent");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, group0_places_on_cpu0);
    tcase_add_test(tc, group1_places_on_cpu1);
    tcase_add_test(tc, memory_preferred_on_real_node);
    tcase_add_test(tc, dryrun_binds_nothing);
    tcase_add_test(tc, bad_options);
    tcase_add_test(tc, bad_option_reaches_chosen_log);
    tcase_add_test(tc, group_beyond_nodes);
    tcase_add_test(tc, strict_bind_to_missing_node_fails);
    tcase_add_test(tc, bind_to_missing_node_warns_once);
    tcase_add_test(tc, cpus_core_least_loaded);
    tcase_add_test(tc, help_does_nothing);
    tcase_add_test(tc, unopenable_log);
    tcase_add_test(tc, report_lists_threads);
    tcase_add_test(tc, default_scope_places_the_whole_jvm);
    tcase_add_test(tc, one_group_keeps_scope_threads);
    tcase_add_test(tc, whole_jvm_on_missing_node_warns_once);
    tcase_add_test(tc, whole_jvm_strict_on_missing_node_fails);
    tcase_add_test(tc, use_numa_turned_off_for_a_group);
    tcase_add_test(tc, use_numa_left_or_warned);
    tcase_add_test(tc, attach_moves_memory);
    suite_add_tcase(s, tc);
    return s;
}
