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
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <numaif.h>

#include "np_agent.h"
#include "inspect.h"
#include "tests.h"

static char dir[256], log_path[512], err_path[512], out_path[512];
static int saved_stderr = -1, saved_stdout = -1;
/* The CPUs this process runs on (0-1 here): an unplaced thread keeps them. */
static char base[256];

/* The CPUs thread tid (0: the calling thread) may run on, as a cpulist. */
static const char *cpus_of(pid_t tid, char *buf, size_t len)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    ck_assert_int_eq(sched_getaffinity(tid, sizeof set, &set), 0);
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &set))
            hwloc_bitmap_set(b, (unsigned)i);
    t_list(b, buf, len);
    hwloc_bitmap_free(b);
    return buf;
}

static void my_cpus(char *buf, size_t len)
{
    cpus_of(0, buf, len);
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
    pid_t tid;
    int start_on; /* 1 + the CPU the thread starts on, 0: any */
    bool own_policy; /* the thread drops the memory policy it inherited */
    int mode;        /* its policy's mode after thread_start */
    bool no_end;     /* it returns without np_agent_thread_ended, as in the
                        JVM where ThreadEnd is not wanted */
    const char *escaped; /* the name's escaped form (np_text), or NULL */
};

static void *job_main(void *arg)
{
    struct job *j = arg;
    j->tid = gettid();
    if (j->start_on > 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(j->start_on - 1, &one);
        ck_assert_int_eq(sched_setaffinity(0, sizeof one, &one), 0);
    }
    if (j->own_policy)
        ck_assert_int_eq(set_mempolicy(MPOL_DEFAULT, NULL, 0), 0);
    np_agent_thread_start(j->a, j->name, j->escaped, gettid());
    my_cpus(j->cpus, sizeof j->cpus);
    ck_assert_int_eq(get_mempolicy(&j->mode, NULL, 0, NULL, 0), 0);
    if (j->placed)
        sem_post(j->placed);
    if (j->may_end)
        while (sem_wait(j->may_end) != 0)
            ;
    if (!j->no_end)
        np_agent_thread_ended(j->a, j->tid);
    return NULL;
}

/* Runs the whole thread of job j, which holds what it saw. */
static void run_job(struct job *j)
{
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, job_main, j), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
}

/* Runs a whole thread; returns the CPUs it had after thread_start. */
static void run_thread(struct np_agent *a, const char *name, char *cpus, size_t len)
{
    struct job j = {a, name, "", NULL, NULL, 0, 0, false, -1, false, NULL};
    run_job(&j);
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

/* At log=warning the summary is written nowhere, and the process's pages
 * (numa_maps: a walk of every mapping's page tables) are not read for it;
 * at info they are. */
START_TEST(summary_reads_pages_only_when_written)
{
    struct np_agent *a = create("group=0,mem=none,scope=threads,log=warning:%s", log_path);
    ck_assert(a->active);
    char cpus[64];
    run_thread(a, "ForkJoinPool-1-worker-1", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "0");
    np_agent_summary(a);
    ck_assert_ptr_null(a->exit_memory.pages);
    ck_assert_ptr_null(a->exit_threads);
    np_agent_destroy(a);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "summary"), 0);
    free(log);

    a = create("group=0,mem=none,scope=threads,log=info:%s", log_path);
    run_thread(a, "ForkJoinPool-1-worker-1", cpus, sizeof cpus);
    np_agent_summary(a);
    ck_assert_ptr_nonnull(a->exit_memory.pages);
    np_agent_destroy(a);
    log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] summary group=0 placed=1 "), 1);
    ck_assert_int_eq(t_count_lines(log, " mem_pages=0:"), 1);
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

/* report=FILE (%p expanded): the placements as JSON, read back with jq;
 * a name whose text is not exact keeps its escaped form, and the advice
 * given is there. */
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
    struct job lone = {a, "ForkJoinPool-1-worker-\xef\xbf\xbd\\", "", NULL, NULL, 0, 0, false, -1, false,
                       "ForkJoinPool-1-worker-\\ud800\\\\"};
    run_job(&lone);
    np_agent_advise(a, NP_LOG_WARNING, "use \"fewer\" groups");
    struct stat st;
    ck_assert_int_eq(stat(path, &st), -1); /* checked at start, written at exit */
    np_agent_summary(a);
    np_agent_report(a);
    np_agent_destroy(a);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    ck_assert_int_eq(t_count_files(dir, ".numapin-"), 0); /* no temporary file left */
    char *argv[] = {"/usr/bin/jq", "-r",
                    ".numapin, .plan.node, .plan.mem, .totals.placed, .totals.skipped, "
                    ".totals.mem_failed, (.threads[] | \"\\(.name)|\\(.outcome)|\\(.how)|"
                    "\\(.cpus)|\\(.mem)|\\(.verified)|\\(.cpu_error)|\\(.mem_error)|\\(.live)|"
                    "\\(.name_escaped)\"), (.advice[] | \"\\(.level) \\(.text)\"), .advice_dropped, "
                    ".access.sampled, .access.unsampled",
                    path, NULL};
    char *out = NULL, *err = NULL;
    ck_assert_msg(t_run(argv, &out, &err) == 0, "jq: %s", err);
    /* The kernel samples no access under mem=preferred: the report says
     * why as the log's line does. */
    char *log = slurp(log_path);
    const char *why = strstr(log, "] access: no access locality for this JVM: ");
    ck_assert_ptr_nonnull(why);
    why = strstr(why, "JVM: ") + strlen("JVM: ");
    char want[4096];
    snprintf(want, sizeof want, "4\n1\npreferred:1\n2\n1\n2\n"
                          "ForkJoinPool-1-worker-1|placed|start|1|null|false|null|EINVAL|false|null\n"
                          "Reference \"Handler\"|skipped|start|null|null|null|null|null|false|null\n"
                          "ForkJoinPool-1-worker-\xef\xbf\xbd\\|placed|start|1|null|false|null|EINVAL|false|"
                          "ForkJoinPool-1-worker-\\ud800\\\\\n"
                          "warning use \"fewer\" groups\n0\nfalse\n%.*s\n",
             (int)strcspn(why, "\n"), why);
    ck_assert_str_eq(out, want);
    free(out);
    free(err);
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

/* The memory policy mode of a placed thread after its start, the thread
 * having dropped its inherited policy first when own_policy. */
static int placed_mode(struct np_agent *a, bool own_policy)
{
    struct job j = {a, "ForkJoinPool-1-worker-1", "", NULL, NULL, 0, 0, own_policy, -1, false, NULL};
    run_job(&j);
    ck_assert_str_eq(j.cpus, "0");
    return j.mode;
}

/* Loaded at start-up, scope=jvm gives the loading thread the group's
 * policy, and every thread inherits it: a placed thread's CPUs are read
 * back, its policy is taken as the JVM's (the report says so), and a
 * thread that changed its own is left with it.  Attached late, the running
 * threads kept theirs: each placed thread's is read and set. */
START_TEST(whole_jvm_policy_inherited_at_load)
{
    char pattern[600], path[600];
    snprintf(pattern, sizeof pattern, "%s/report-%%p.json", dir);
    snprintf(path, sizeof path, "%s/report-%d.json", dir, (int)getpid());
    struct np_agent *a = create("group=0,log=info:%s,report=%s", log_path, pattern);
    ck_assert(a->jvm_mem_set);
    ck_assert_int_eq(placed_mode(a, false), MPOL_PREFERRED);
    ck_assert_int_eq(placed_mode(a, true), MPOL_DEFAULT);
    np_agent_summary(a);
    np_agent_report(a);
    np_agent_destroy(a);
    char *argv[] = {"/usr/bin/jq", "-r",
                    ".plan.mem_inherited, (.threads[] | \"\\(.mem)|\\(.verified)|\\(.mem_inherited)\")",
                    path, NULL};
    char *out = NULL, *err = NULL;
    ck_assert_msg(t_run(argv, &out, &err) == 0, "jq: %s", err);
    ck_assert_str_eq(out, "true\npreferred:0|true|true\npreferred:0|true|true\n");
    free(out);
    free(err);
    unplace();

    struct np_start late = {true, NULL};
    ck_assert_int_eq(np_agent_start("group=0,log=info", &late, &a), NP_OK);
    ck_assert(a->jvm_placed && !a->jvm_mem_set);
    ck_assert_int_eq(placed_mode(a, true), MPOL_PREFERRED);
    np_agent_destroy(a);
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
    ck_assert_int_eq(np_agent_targets(a)->nslots, 2);
    sem_t placed, end_a;
    sem_init(&placed, 0, 0);
    sem_init(&end_a, 0, 0);
    struct job ja = {a, "ForkJoinPool-1-worker-1", "", &placed, &end_a, 0, 1, false, -1, false, NULL};
    pthread_t ta;
    ck_assert_int_eq(pthread_create(&ta, NULL, job_main, &ja), 0);
    while (sem_wait(&placed) != 0)
        ;
    ck_assert_str_eq(ja.cpus, "0");
    char cpus[64];
    /* A still holds core 0, so B gets core 1, even when it starts on CPU
     * 0; B ends; C again gets core 1, the free one. */
    struct job jb = {a, "ForkJoinPool-1-worker-2", "", NULL, NULL, 0, 1, false, -1, false, NULL};
    run_job(&jb);
    ck_assert_str_eq(jb.cpus, "1");
    run_thread(a, "ForkJoinPool-1-worker-3", cpus, sizeof cpus);
    ck_assert_str_eq(cpus, "1");
    sem_post(&end_a);
    ck_assert_int_eq(pthread_join(ta, NULL), 0);
    /* A ended too: both free, and a thread gets the core it runs on, so
     * that it need not move. */
    for (int cpu = 0; cpu < 2; cpu++)
        for (int again = 0; again < 2; again++) {
            struct job j = {a, "ForkJoinPool-1-worker-4", "", NULL, NULL, 0, cpu + 1, false, -1, false, NULL};
            run_job(&j);
            ck_assert_str_eq(j.cpus, cpu == 0 ? "0" : "1");
        }
    np_agent_summary(a);
    np_agent_destroy(a);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "cpus_mode=core cpukind=performance slots=2"), 1);
    ck_assert_int_eq(t_count_lines(log, "] summary group=0 placed=7 would_place=0 skipped=0 failed=0 mem_failed=0 cpus=0-1"), 1);
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


/* A report that would overwrite the log is refused at start-up, like a
 * bad option: the same path, or the same file through a symlink. */
START_TEST(report_and_log_must_differ)
{
    char link[600], opts[1600];
    snprintf(opts, sizeof opts, "log=info:%s,report=%s", log_path, log_path);
    ck_assert_int_eq(create_fails(opts), NP_ERR_OPTIONS);
    snprintf(link, sizeof link, "%s/link.json", dir);
    ck_assert_int_eq(symlink(log_path, link), 0);
    snprintf(opts, sizeof opts, "log=info:%s,report=%s", log_path, link);
    ck_assert_int_eq(create_fails(opts), NP_ERR_OPTIONS);
    char *e = slurp(err_path);
    ck_assert_int_eq(t_count_lines(e, "options 'log=' and 'report=' name the same file"), 2);
    free(e);
    /* The log is untouched: two lines of refusal, nothing overwritten. */
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "] "), 2);
    free(log);
}
END_TEST

/* A file numapin refuses by its own rules is explained, not just named by
 * its errno. */
START_TEST(refused_files_say_why)
{
    char sym[600], fifo[600], hard[600], opts[1600];
    snprintf(sym, sizeof sym, "%s/link.log", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo.log", dir);
    snprintf(hard, sizeof hard, "%s/hard.log", dir);
    ck_assert_int_eq(symlink("/tmp/elsewhere.log", sym), 0);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    int fd = open(log_path, O_WRONLY | O_CREAT, 0600);
    close(fd);
    ck_assert_int_eq(link(log_path, hard), 0);
    const char *paths[] = {sym, fifo, hard, "/dev/null"};
    for (int i = 0; i < 4; i++) {
        snprintf(opts, sizeof opts, "strict,log=info:%s", paths[i]);
        ck_assert_int_eq(create_fails(opts), NP_ERR_RUNTIME);
    }
    snprintf(opts, sizeof opts, "strict,report=%s", sym);
    ck_assert_int_eq(create_fails(opts), NP_ERR_RUNTIME);
    char *e = slurp(err_path);
    char want[1200];
    snprintf(want, sizeof want, "cannot open log file '%s': is a symbolic link, which numapin does "
             "not follow (ELOOP)", sym);
    ck_assert_int_eq(t_count_lines(e, want), 1);
    snprintf(want, sizeof want, "cannot open log file '%s': is not a regular file (a FIFO, device "
             "or socket) (ENXIO)", fifo);
    ck_assert_int_eq(t_count_lines(e, want), 1);
    snprintf(want, sizeof want, "cannot open log file '%s': has more than one hard link (EMLINK)", hard);
    ck_assert_int_eq(t_count_lines(e, want), 1);
    ck_assert_int_eq(t_count_lines(e, "cannot open log file '/dev/null': is not a regular file "
                                      "(a FIFO, device or socket) (EINVAL)"), 1);
    snprintf(want, sizeof want, "cannot write report file '%s': is a symbolic link, which numapin "
             "does not follow (ELOOP)", sym);
    ck_assert_int_eq(t_count_lines(e, want), 1);
    free(e);
}
END_TEST

/* A full disk: one warning on stderr when the log first loses a line, the
 * summary on stderr too saying how many were lost, and no report rather
 * than part of one.  Needs root (a private tmpfs of one page). */
START_TEST(full_disk_loses_nothing_silently)
{
    if (geteuid() != 0)
        return;
    char fs[600], log[700], report[700], opts[1600];
    snprintf(fs, sizeof fs, "%s/full", dir);
    t_full_tmpfs(fs);
    snprintf(log, sizeof log, "%s/agent.log", fs);
    snprintf(report, sizeof report, "%s/report.json", fs);
    snprintf(opts, sizeof opts, "group=1,log=info:%s,report=%s", log, report);
    struct np_agent *a = create("%s", opts);
    char cpus[64];
    run_thread(a, "ForkJoinPool-1-worker-1", cpus, sizeof cpus);
    run_thread(a, "ForkJoinPool-1-worker-2", cpus, sizeof cpus);
    np_agent_summary(a);
    np_agent_report(a);
    np_agent_destroy(a);
    struct stat st;
    ck_assert_int_eq(stat(report, &st), -1); /* no report, not a part of one */
    ck_assert_int_eq(t_count_files(fs, ".numapin-"), 0);
    char *e = slurp(err_path);
    char want[1200];
    snprintf(want, sizeof want, "cannot write to the log (%s): No space left on device (ENOSPC)", log);
    ck_assert_int_eq(t_count_lines(e, want), 1);
    ck_assert_int_eq(t_count_lines(e, "cannot write to the log"), 1);
    ck_assert_int_eq(t_count_lines(e, "] summary group=1 placed=2 "), 1);
    ck_assert_int_eq(t_count_lines(e, " log_error=ENOSPC"), 1);
    ck_assert_int_eq(t_count_lines(e, "cannot write report file"), 1);
    free(e);
    umount(fs);
}
END_TEST

/* The plan line echoes mem= as the option is written ('+' between nodes),
 * so it can be given back as it is. */
START_TEST(plan_line_echoes_options_as_written)
{
    unsetenv("HWLOC_THISSYSTEM");
    setenv("HWLOC_SYNTHETIC", "pack:1 numa:3 core:1 pu:1", 1);
    struct np_agent *a = create("dryrun=yes,mem=bind:0+2,log=info:%s", log_path);
    np_agent_destroy(a);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, " mem=bind:0+2 "), 1);
    ck_assert_int_eq(t_count_lines(log, " dryrun=yes "), 1);
    free(log);
}
END_TEST

/* A JDK tool keeps its stdout: numapin's lines go to stderr, warnings
 * only, unless log= says otherwise. */
START_TEST(jdk_tools_keep_their_stdout)
{
    ck_assert(np_jdk_tool("jdk.jcmd/sun.tools.jps.Jps -l"));
    ck_assert(np_jdk_tool("jdk.compiler/com.sun.tools.javac.Main A.java"));
    ck_assert(np_jdk_tool("java.base/sun.security.tools.keytool.Main"));
    ck_assert(!np_jdk_tool("com.example.Server --port 8080"));
    ck_assert(!np_jdk_tool("com.example/com.example.Main"));
    ck_assert(!np_jdk_tool("app.jar"));
    ck_assert(!np_jdk_tool(NULL));
    struct np_agent *a = NULL;
    struct np_start tool = {false, "jdk.jcmd/sun.tools.jps.Jps"};
    ck_assert_int_eq(np_agent_start("group=1", &tool, &a), NP_OK);
    np_agent_summary(a);
    np_agent_destroy(a);
    unplace();
    char *out = slurp(out_path), *err = slurp(err_path);
    ck_assert_int_eq(t_count_lines(out, "[numapin]"), 0);
    ck_assert_int_eq(t_count_lines(err, "][info][numapin]"), 0);
    free(out);
    free(err);
    ck_assert_int_eq(np_agent_start("group=1,log=info", &tool, &a), NP_OK);
    np_agent_destroy(a);
    out = slurp(out_path);
    ck_assert_int_eq(t_count_lines(out, "][info][numapin] plan group=1 "), 1);
    free(out);
}
END_TEST

/* A topology file taken for this machine (HWLOC_THISSYSTEM=1) that has CPUs
 * this machine lacks: one warning naming them, not a silent collapse. */
START_TEST(foreign_topology_is_warned_about)
{
    char xml[4096];
    snprintf(xml, sizeof xml, "%s/xeon-6972p-snc3.xml", getenv("NUMAPIN_TOPOLOGIES"));
    unsetenv("HWLOC_SYNTHETIC");
    setenv("HWLOC_XMLFILE", xml, 1);
    long have = sysconf(_SC_NPROCESSORS_CONF);
    struct np_agent *a = create("log=info:%s", log_path);
    np_agent_destroy(a);
    char *log = slurp(log_path), want[4400];
    snprintf(want, sizeof want, "][warning][numapin] the topology (xml %s) has CPUs this machine does "
             "not (%ld-191; it has %ld): HWLOC_THISSYSTEM=1 takes it for this machine", xml, have, have);
    ck_assert_msg(t_count_lines(log, want) == 1, "%s", log);
    free(log);
}
END_TEST


/* ---- the rescan thread's checks (np_drift.c) ------------------------- */

/* A thread held alive after its placement, until release() or
 * release_all(). */
struct held {
    struct job j;
    sem_t placed, end;
    pthread_t t;
};

static void hold(struct held *h, struct np_agent *a, const char *name)
{
    sem_init(&h->placed, 0, 0);
    sem_init(&h->end, 0, 0);
    h->j = (struct job){a, name, "", &h->placed, &h->end, 0, 0, false, -1, false, NULL};
    ck_assert_int_eq(pthread_create(&h->t, NULL, job_main, &h->j), 0);
    while (sem_wait(&h->placed) != 0)
        ;
}

/* Lets n held threads end at once, and joins them. */
static void release_all(struct held *h, int n)
{
    for (int k = 0; k < n; k++)
        sem_post(&h[k].end);
    for (int k = 0; k < n; k++) {
        ck_assert_int_eq(pthread_join(h[k].t, NULL), 0);
        sem_destroy(&h[k].placed);
        sem_destroy(&h[k].end);
    }
}

static void release(struct held *h)
{
    release_all(h, 1);
}

/* What an operator's `taskset -p -c CPU TID` does. */
static void move(pid_t tid, int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    ck_assert_int_eq(sched_setaffinity(tid, sizeof set, &set), 0);
}

static int drift_total(struct np_agent *a)
{
    struct np_counts c;
    np_record_counts(a->record, &c);
    return c.drift;
}

START_TEST(drift_is_put_back)
{
    struct np_agent *a = create("group=1,mem=none,log=info:%s", log_path);
    struct held w;
    hold(&w, a, "ForkJoinPool-1-worker-1");
    ck_assert_str_eq(w.j.cpus, "1");
    char cpus[64], line[256];
    np_agent_check(a); /* nothing drifted: nothing done */
    ck_assert_int_eq(drift_total(a), 0);
    move(w.j.tid, 0);
    np_agent_check(a);
    ck_assert_str_eq(cpus_of(w.j.tid, cpus, sizeof cpus), "1");
    ck_assert_int_eq(drift_total(a), 1);
    np_agent_check(a); /* back already: no second line */
    move(w.j.tid, 0);
    np_agent_check(a);
    ck_assert_str_eq(cpus_of(w.j.tid, cpus, sizeof cpus), "1");
    ck_assert_int_eq(drift_total(a), 2);
    release(&w);
    np_agent_summary(a);
    np_agent_destroy(a);
    char *log = slurp(log_path);
    snprintf(line, sizeof line, "[info][numapin] placed \"ForkJoinPool-1-worker-1\" tid=%d group=1 "
             "node=1 cpus=1 mem=unchanged how=drift was=0", (int)w.j.tid);
    ck_assert_int_eq(t_count_lines(log, line), 2);
    ck_assert_int_eq(t_count_lines(log, "] summary group=1 placed=1 would_place=0 skipped=0 failed=0 "
                                        "mem_failed=0 cpus=1 drift=2 replans=0"), 1);
    ck_assert_int_eq(t_count_lines(log, "[warning]"), 0);
    free(log);
}
END_TEST

START_TEST(drift_log_leaves_it)
{
    struct np_agent *a = create("group=1,mem=none,drift=log,scope=threads,log=info:%s", log_path);
    struct held w;
    hold(&w, a, "ForkJoinPool-1-worker-1");
    char cpus[64], line[256];
    move(w.j.tid, 0);
    np_agent_check(a);
    np_agent_check(a); /* noted once */
    ck_assert_str_eq(cpus_of(w.j.tid, cpus, sizeof cpus), "0");
    ck_assert_int_eq(drift_total(a), 1);
    move(w.j.tid, 1); /* back: forgotten; away again: noted again */
    np_agent_check(a);
    move(w.j.tid, 0);
    np_agent_check(a);
    ck_assert_int_eq(drift_total(a), 2);
    /* A re-plan (the cpuset allows CPU 0 alone: group 1 shares it) moves
     * the other placed thread, not the one left where it was put. */
    struct held v;
    hold(&v, a, "ForkJoinPool-1-worker-2");
    ck_assert_str_eq(v.j.cpus, "1");
    cpu_set_t both;
    CPU_ZERO(&both);
    CPU_SET(0, &both);
    CPU_SET(1, &both);
    ck_assert_int_eq(sched_setaffinity(w.j.tid, sizeof both, &both), 0);
    np_agent_check(a); /* still away from CPU 1: not noted again */
    hwloc_bitmap_t zero = t_bitmap("0");
    ck_assert_int_eq(np_agent_replan(a, zero), 1);
    hwloc_bitmap_free(zero);
    ck_assert_str_eq(cpus_of(v.j.tid, cpus, sizeof cpus), "0");
    ck_assert_str_eq(cpus_of(w.j.tid, cpus, sizeof cpus), "0-1");
    release(&v);
    release(&w);
    np_agent_destroy(a);
    char *log = slurp(log_path);
    snprintf(line, sizeof line, "[info][numapin] drifted \"ForkJoinPool-1-worker-1\" tid=%d group=1 "
             "node=1 cpus=0 planned=1", (int)w.j.tid);
    ck_assert_int_eq(t_count_lines(log, line), 2);
    ck_assert_int_eq(t_count_lines(log, "] drifted "), 2);
    ck_assert_int_eq(t_count_lines(log, "how=drift"), 0);
    ck_assert_int_eq(t_count_lines(log, "how=replan"), 1);
    free(log);
}
END_TEST

/* The process's cpuset changes: group 0 of 2 (node 0, CPU 0) is planned
 * again on CPU 1 alone, node 1; then on both again. */
START_TEST(replan_follows_the_cpuset)
{
    char pattern[600], path[600], line[300], cpus[64];
    snprintf(pattern, sizeof pattern, "%s/report.json", dir);
    snprintf(path, sizeof path, "%s/report.json", dir);
    struct np_agent *a = create("group=0,groups=2,scope=threads,log=info:%s,report=%s", log_path, pattern);
    run_thread(a, "ForkJoinPool-1-worker-1", cpus, sizeof cpus); /* ends under plan 0 */
    ck_assert_str_eq(cpus, "0");
    struct held w;
    hold(&w, a, "ForkJoinPool-1-worker-2");
    ck_assert_str_eq(w.j.cpus, "0");
    const struct np_targets *t0 = np_agent_targets(a);
    hwloc_bitmap_t one = t_bitmap("1"), both = t_bitmap("0-1");
    ck_assert_int_eq(np_agent_replan(a, one), 1);
    const struct np_targets *t1 = np_agent_targets(a);
    ck_assert_ptr_ne(t1, t0);
    ck_assert_ptr_eq(t1->older, t0); /* kept: a callback may still read it */
    ck_assert_int_eq(t1->gen, 1);
    ck_assert_str_eq(t1->place_cpus_str, "1");
    ck_assert_str_eq(t1->node_list, "1");
    ck_assert_str_eq(cpus_of(w.j.tid, cpus, sizeof cpus), "1"); /* moved from outside */
    ck_assert_int_eq(np_agent_replan(a, one), 0); /* the same again: nothing */
    ck_assert_ptr_eq(np_agent_targets(a), t1);
    run_thread(a, "ForkJoinPool-1-worker-3", cpus, sizeof cpus); /* under plan 1 */
    ck_assert_str_eq(cpus, "1");
    np_agent_summary(a);
    np_agent_report(a);
    ck_assert_int_eq(np_agent_replan(a, both), 1);
    ck_assert_str_eq(cpus_of(w.j.tid, cpus, sizeof cpus), "0");
    release(&w);
    np_agent_destroy(a);
    hwloc_bitmap_free(one);
    hwloc_bitmap_free(both);

    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] replan group=0 groups=2 domain=node node=1 "
                                        "slice=1/2 cpus=1 cpus_mode=node cpukind=performance slots=1 "
                                        "mem=preferred:1 allowed=1 was_node=0 was_cpus=0"), 1);
    ck_assert_int_eq(t_count_lines(log, "[warning][numapin] group 0 moved from node 0 to node 1: "
                                        "threads placed before keep their memory policy preferred:0 "
                                        "(Linux lets only a thread itself change its policy), and "
                                        "numapin moves no memory already allocated"), 1);
    snprintf(line, sizeof line, "] placed \"ForkJoinPool-1-worker-2\" tid=%d group=0 node=1 cpus=1 "
             "mem=unchanged how=replan was=0", (int)w.j.tid);
    ck_assert_int_eq(t_count_lines(log, line), 1);
    ck_assert_int_eq(t_count_lines(log, "] replan group=0 groups=2 domain=node node=0 slice=1/1 cpus=0 "), 1);
    ck_assert_int_eq(t_count_lines(log, "group 0 moved from node 1 to node 0"), 1);
    ck_assert_int_eq(t_count_lines(log, "] summary group=0 placed=3 would_place=0 skipped=0 failed=0 "
                                        "mem_failed=1 cpus=0-1 drift=0 replans=1"), 1);
    free(log);
    /* The report (written under plan 1): each thread with the CPUs of its
     * own plan, and the policy it set itself. */
    char *argv[] = {"/usr/bin/jq", "-r",
                    ".plan.replans, .plan.node, .plan.cpus, .totals.drift, "
                    "(.threads[] | \"\\(.name)|\\(.cpus)|\\(.mem)|\\(.live)|\\(.drift)\")",
                    path, NULL};
    char *out = NULL, *err = NULL;
    ck_assert_msg(t_run(argv, &out, &err) == 0, "jq: %s", err);
    ck_assert_str_eq(out, "1\n1\n1\n0\n"
                          "ForkJoinPool-1-worker-1|0|preferred:0|false|0\n"
                          "ForkJoinPool-1-worker-2|1|preferred:0|true|0\n"
                          "ForkJoinPool-1-worker-3|1|null|false|0\n");
    free(out);
    free(err);
}
END_TEST

/* hold(), the thread started on CPU `cpu`. */
static void hold_on(struct held *h, struct np_agent *a, const char *name, int cpu)
{
    sem_init(&h->placed, 0, 0);
    sem_init(&h->end, 0, 0);
    h->j = (struct job){a, name, "", &h->placed, &h->end, 0, 1 + cpu, false, -1, false, NULL};
    ck_assert_int_eq(pthread_create(&h->t, NULL, job_main, &h->j), 0);
    while (sem_wait(&h->placed) != 0)
        ;
}

/* cpus=core over two cores; the cpuset narrowed to CPU 1 and widened
 * again, the kernel having moved the threads itself before numapin looks
 * (it leaves a thread on the CPUs it had that the cpuset still allows, or
 * gives it the whole cpuset): a thread whose CPUs the re-plan changes has
 * its `placed ... how=replan` line whoever moved it, `was=` the CPUs it
 * was found on; one whose CPUs stay has none. */
START_TEST(replan_logs_each_thread_it_gives_other_cpus)
{
    fake_machine("pack:1 numa:1 core:2 pu:1");
    struct np_agent *a = create("groups=1,cpus=core,mem=none,log=info:%s", log_path);
    /* v first, on core 0 (started there: a thread takes the core it runs
     * on when that is one of the least loaded), w on core 1; a re-plan
     * gives the live threads slots in the order they came. */
    struct held h[2], *v = &h[0], *w = &h[1];
    hold_on(v, a, "ForkJoinPool-1-worker-1", 0);
    hold(w, a, "ForkJoinPool-1-worker-2");
    ck_assert_str_eq(v->j.cpus, "0");
    ck_assert_str_eq(w->j.cpus, "1");
    char cpus[64], line[300];
    hwloc_bitmap_t one = t_bitmap("1"), both = t_bitmap("0-1");
    move(v->j.tid, 1); /* the kernel: CPU 0 is no longer allowed */
    ck_assert_int_eq(np_agent_replan(a, one), 1);
    ck_assert_str_eq(cpus_of(v->j.tid, cpus, sizeof cpus), "1");
    ck_assert_str_eq(cpus_of(w->j.tid, cpus, sizeof cpus), "1");
    move(v->j.tid, 0); /* the kernel again: v's own CPU 0 is allowed again */
    ck_assert_int_eq(np_agent_replan(a, both), 1);
    ck_assert_str_eq(cpus_of(v->j.tid, cpus, sizeof cpus), "0");
    ck_assert_str_eq(cpus_of(w->j.tid, cpus, sizeof cpus), "1");
    /* Narrowed once more, the kernel leaving v where it was: numapin
     * moves it. */
    ck_assert_int_eq(np_agent_replan(a, one), 1);
    ck_assert_str_eq(cpus_of(v->j.tid, cpus, sizeof cpus), "1");
    release(&h[0]);
    release(&h[1]);
    np_agent_destroy(a);
    hwloc_bitmap_free(one);
    hwloc_bitmap_free(both);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "how=replan"), 3);
    snprintf(line, sizeof line, "] placed \"%s\" tid=%d ", w->j.name, (int)w->j.tid);
    ck_assert_int_eq(t_count_lines(log, line), 1); /* at its start only */
    const char *lines[] = {"cpus=1 mem=unchanged how=replan was=1", "cpus=0 mem=unchanged how=replan was=0",
                           "cpus=1 mem=unchanged how=replan was=0"};
    for (int i = 0; i < 3; i++) {
        snprintf(line, sizeof line, "[info][numapin] placed \"%s\" tid=%d group=0 node=0 %s", v->j.name,
                 (int)v->j.tid, lines[i]);
        ck_assert_msg(t_count_lines(log, line) == 1, "no line '%s' in\n%s", line, log);
    }
    ck_assert_int_eq(t_count_lines(log, "[warning]"), 0);
    free(log);
}
END_TEST

/* Under scope=jvm a re-plan onto another node gives placed threads
 * another policy, which the threads they create inherit: from then on each
 * placed thread's policy is read and set, back on the first node too. */
START_TEST(replan_ends_the_inherited_policy)
{
    struct np_agent *a = create("group=0,groups=2,log=info:%s", log_path);
    ck_assert(np_agent_targets(a)->policy.inherited);
    hwloc_bitmap_t one = t_bitmap("1"), both = t_bitmap("0-1");
    ck_assert_int_eq(np_agent_replan(a, one), 1);
    ck_assert_str_eq(np_agent_targets(a)->node_list, "1");
    ck_assert(!np_agent_targets(a)->policy.inherited);
    ck_assert_int_eq(np_agent_replan(a, both), 1);
    ck_assert_str_eq(np_agent_targets(a)->node_list, "0");
    ck_assert(!np_agent_targets(a)->policy.inherited);
    ck_assert_int_eq(placed_mode(a, true), MPOL_PREFERRED);
    np_agent_destroy(a);
    hwloc_bitmap_free(one);
    hwloc_bitmap_free(both);
}
END_TEST

/* Started bound to CPU 0 (taskset), in a cpuset that later allows only
 * CPU 1: no CPUs for the group, one warning, threads left alone; when the
 * cpuset allows CPU 0 again, the rescan places what started meanwhile. */
START_TEST(replan_to_no_cpus_and_back)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    ck_assert_int_eq(sched_setaffinity(0, sizeof set, &set), 0);
    struct np_agent *a = create("mem=none,log=debug:%s", log_path);
    ck_assert_int_eq(a->opt.groups, 1); /* one node has a CPU this process may use */
    hwloc_bitmap_t one = t_bitmap("1"), both = t_bitmap("0-1");
    ck_assert_int_eq(np_agent_replan(a, one), 1);
    ck_assert(np_agent_targets(a)->none);
    ck_assert_int_eq(np_agent_replan(a, one), 0); /* still none: nothing more */
    /* The thread runs where it was (on CPU 0, inherited): not placed. */
    struct held w;
    hold(&w, a, "ForkJoinPool-1-worker-1");
    np_agent_seen(a, "ForkJoinPool-1-worker-1", NULL, w.j.tid, NP_HOW_RESCAN); /* nothing while none */
    ck_assert_int_eq(np_agent_replan(a, both), 1);
    ck_assert(!np_agent_targets(a)->none);
    ck_assert_int_eq(np_agent_targets(a)->gen, 2);
    np_agent_seen(a, "ForkJoinPool-1-worker-1", NULL, w.j.tid, NP_HOW_RESCAN);
    char cpus[64];
    ck_assert_str_eq(cpus_of(w.j.tid, cpus, sizeof cpus), "0");
    release(&w);
    np_agent_summary(a);
    np_agent_destroy(a);
    hwloc_bitmap_free(one);
    hwloc_bitmap_free(both);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "[warning][numapin] the cpuset now allows cpus=1, which leaves "
                                        "group 0 no CPUs (the JVM started bound to cpus=0): threads are "
                                        "left where the kernel puts them"), 1);
    ck_assert_int_eq(t_count_lines(log, "[debug][numapin] skipped \"ForkJoinPool-1-worker-1\" tid="), 1);
    ck_assert_int_eq(t_count_lines(log, " cpuset=none"), 1);
    ck_assert_int_eq(t_count_lines(log, "] replan group=0 groups=1 domain=node node=0 slice=1/1 cpus=0 "
                                        "cpus_mode=node cpukind=performance slots=1 mem=none allowed=0-1 "
                                        "was_node=0 was_cpus=0"), 1);
    ck_assert_int_eq(t_count_lines(log, "] placed \"ForkJoinPool-1-worker-1\" "), 1);
    ck_assert_int_eq(t_count_lines(log, " mem=unchanged how=rescan"), 1);
    ck_assert_int_eq(t_count_lines(log, "] summary group=0 placed=1 would_place=0 skipped=0 "), 1);
    free(log);
}
END_TEST

/* The marker, as `numapin check` reads it through /proc: the CPUs numapin
 * set for each placed thread, and which ones drifted. */
START_TEST(marker_shows_planned_cpus_and_drift)
{
    struct np_agent *a = create("group=1,mem=none,drift=log,log=info:%s", log_path);
    struct held w, v;
    hold(&w, a, "ForkJoinPool-1-worker-1");
    hold(&v, a, "ForkJoinPool-1-worker-2");
    struct np_topo t;
    char err[512];
    ck_assert_msg(np_topo_load(&t, NULL, NULL, err, sizeof err) == 0, "%s", err);
    struct np_inspect c;
    ck_assert_int_eq(np_inspect_collect(&t, getpid(), NULL, 0, &c, err, sizeof err), 0);
    ck_assert_int_eq(c.marker_state, NP_MARKER_NONE); /* the first check writes it */
    np_inspect_free(&c);
    np_agent_check(a);
    move(w.j.tid, 0);
    np_agent_check(a);
    ck_assert_int_eq(np_inspect_collect(&t, getpid(), NULL, 0, &c, err, sizeof err), 0);
    ck_assert_int_eq(c.marker_state, NP_MARKER_FOUND);
    ck_assert_int_eq(c.marker.group, 1);
    ck_assert_int_eq(c.marker.groups, 2);
    ck_assert_int_eq(c.marker.drift, 1);
    int found = 0;
    char planned[64];
    for (int i = 0; i < c.nthreads; i++) {
        const struct np_seen *s = &c.threads[i];
        if (s->tid == w.j.tid || s->tid == v.j.tid) {
            ck_assert_ptr_nonnull(s->planned);
            ck_assert_str_eq(t_list(s->planned, planned, sizeof planned), "1");
            found++;
        } else {
            ck_assert_ptr_null(s->planned); /* not placed by numapin */
        }
        ck_assert_int_eq(s->ns_tid, s->tid); /* one PID namespace */
    }
    ck_assert_int_eq(found, 2);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    np_inspect_print(&c, NULL, false, out);
    fclose(out);
    char line[200];
    snprintf(line, sizeof line, " tid=%d cpus=0 nodes=0 ", (int)w.j.tid);
    ck_assert_int_eq(t_count_lines(text, line), 1);
    ck_assert_int_eq(t_count_lines(text, " planned=1 drift=yes"), 1);
    ck_assert_int_eq(t_count_lines(text, " planned=1 drift=no"), 1);
    ck_assert_int_eq(t_count_lines(text, "numapin group=1 groups=2 replans=0 cpus=1 nodes=1 placed=2 "
                                         "drifted=1 agent_drift=1 age_s="), 1);
    free(text);
    np_inspect_free(&c);
    np_topo_destroy(&t);
    release(&w);
    release(&v);
    np_agent_destroy(a);
    /* Gone with the agent. */
    ck_assert_msg(np_topo_load(&t, NULL, NULL, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(np_inspect_collect(&t, getpid(), NULL, 0, &c, err, sizeof err), 0);
    ck_assert_int_eq(c.marker_state, NP_MARKER_NONE);
    np_inspect_free(&c);
    np_topo_destroy(&t);
}
END_TEST

/* group=auto with one group: group 0, and no lock file anywhere. */
START_TEST(auto_with_one_group_takes_no_lock)
{
    char lockdir[600];
    snprintf(lockdir, sizeof lockdir, "%s/locks", dir);
    struct np_agent *a = create("group=auto,groups=1,lockdir=%s,mem=none,log=info:%s", lockdir,
                                log_path);
    ck_assert(a->active);
    ck_assert_int_eq(a->opt.group, 0);
    ck_assert_int_eq(a->lock_fd, -1);
    ck_assert_int_eq(access(lockdir, F_OK), -1); /* not even created */
    np_agent_destroy(a);
    a = create("group=auto,groups=2,lockdir=%s,mem=none,log=info:%s", lockdir, log_path);
    ck_assert_int_ge(a->lock_fd, 0);
    char lock[700];
    snprintf(lock, sizeof lock, "%s/groups-2.group-0.lock", lockdir);
    char *holder = slurp(lock);
    char want[64];
    snprintf(want, sizeof want, "pid=%d pidns=pid:[", (int)getpid());
    ck_assert_msg(strncmp(holder, want, strlen(want)) == 0, "lock file holds: %s", holder);
    free(holder);
    np_agent_destroy(a);
    t_rmdir(lockdir);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] auto group=0 groups=1 lock=none"), 1);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] auto group=0 groups=2"), 1);
    free(log);
}
END_TEST

/* A sink that writes down what it is told, one line an event. */
struct fake_sink {
    struct np_sink s;
    pthread_mutex_t lock;
    char told[64][512];
    int n;
};

static void fake_add(struct np_sink *s, const char *line)
{
    struct fake_sink *f = (struct fake_sink *)s;
    pthread_mutex_lock(&f->lock);
    if (f->n < 64)
        snprintf(f->told[f->n++], sizeof f->told[0], "%s", line);
    pthread_mutex_unlock(&f->lock);
}

static void fake_plan(struct np_sink *s, const struct np_report_plan *p)
{
    char line[512];
    snprintf(line, sizeof line, "plan group=%d groups=%d node=%s cpus=%s mem=%s", p->group,
             p->groups, p->node, p->cpus, p->mem);
    fake_add(s, line);
}

static void fake_placement(struct np_sink *s, const struct np_placement_event *e)
{
    char line[512];
    snprintf(line, sizeof line, "placement %s group=%d nodes=%s cpus=%s mem=%s mem_error=%s how=%s "
             "verified=%d live=%d earlier=%d",
             e->name, e->group, e->nodes, e->cpus, e->mem ? e->mem : "null",
             e->mem_error ? e->mem_error : "null", np_how_name(e->how), e->verified, e->live,
             e->earlier);
    fake_add(s, line);
}

static void fake_advice(struct np_sink *s, enum np_level level, const char *text)
{
    char line[512];
    snprintf(line, sizeof line, "advice %s %.40s", np_level_name(level), text);
    fake_add(s, line);
}

static struct fake_sink *fake_sink(struct np_agent *a)
{
    struct fake_sink *f = calloc(1, sizeof *f);
    f->s.plan = fake_plan;
    f->s.placement = fake_placement;
    f->s.advice = fake_advice;
    pthread_mutex_init(&f->lock, NULL);
    np_agent_set_sink(a, &f->s);
    return f;
}

/* Takes what the sink was told since the last call, joined by newlines. */
static char *fake_take(struct fake_sink *f)
{
    size_t len = 1;
    for (int i = 0; i < f->n; i++)
        len += strlen(f->told[i]) + 1;
    char *all = calloc(1, len), *p = all;
    for (int i = 0; i < f->n; i++)
        p += sprintf(p, "%s\n", f->told[i]);
    f->n = 0;
    return all;
}

#define EXPECT_TOLD(f, want)                                                                      \
    do {                                                                                          \
        char *got_ = fake_take(f);                                                                \
        ck_assert_str_eq(got_, want);                                                             \
        free(got_);                                                                               \
    } while (0)

/* The sink hears of placements as they happen while it listens, and of
 * those before when it starts listening; nothing in between. */
START_TEST(sink_told_now_and_later)
{
    /* Group 1 is node 1, which this kernel lacks: its policy is refused. */
    struct np_agent *a = create("group=1,log=warning:%s", log_path);
    struct fake_sink *f = fake_sink(a);
    char cpus[64];
    run_thread(a, "ForkJoinPool-1-worker-1", cpus, sizeof cpus);
    run_thread(a, "main", cpus, sizeof cpus);
    /* An info advice line is kept though log=warning does not show it. */
    struct np_jvm_facts facts = {0, 8, 2, 3, 2};
    np_agent_jvm_facts(a, &facts);
    EXPECT_TOLD(f, "");
    ck_assert_int_eq(np_agent_listen(a), 1);
    EXPECT_TOLD(f, "plan group=1 groups=2 node=1 cpus=1 mem=preferred:1\n"
                   "advice info UseNUMA is off in this JVM: the heap is \n"
                   "advice warning GC and JIT threads are sized for the 2 C\n"
                   "placement ForkJoinPool-1-worker-1 group=1 nodes=1 cpus=1 mem=null "
                   "mem_error=EINVAL how=start verified=0 live=0 earlier=1\n");
    run_thread(a, "ForkJoinPool-1-worker-2", cpus, sizeof cpus);
    run_thread(a, "Signal Dispatcher", cpus, sizeof cpus);
    EXPECT_TOLD(f, "placement ForkJoinPool-1-worker-2 group=1 nodes=1 cpus=1 mem=null "
                   "mem_error=EINVAL how=start verified=0 live=1 earlier=0\n");
    np_agent_unlisten(a);
    run_thread(a, "ForkJoinPool-1-worker-3", cpus, sizeof cpus);
    EXPECT_TOLD(f, "");
    /* A new epoch: everything again, once. */
    ck_assert_int_eq(np_agent_listen(a), 3);
    char *got = fake_take(f);
    ck_assert_int_eq(t_count_lines(got, "plan "), 1);
    ck_assert_int_eq(t_count_lines(got, "advice "), 2);
    ck_assert_int_eq(t_count_lines(got, "earlier=1"), 3);
    ck_assert_int_eq(t_count_lines(got, "placement ForkJoinPool-1-worker-3 "), 1);
    free(got);
    np_agent_destroy(a);
    free(f);
}
END_TEST

struct idle {
    pid_t tid;
    sem_t ready, done;
};

static void *idle_main(void *arg)
{
    struct idle *i = arg;
    i->tid = gettid();
    sem_post(&i->ready);
    while (sem_wait(&i->done) != 0)
        ;
    return NULL;
}

static int live_entries(struct np_agent *a)
{
    struct np_counts c;
    np_record_counts(a->record, &c);
    return c.live;
}

static void *start_twice(void *arg)
{
    struct np_agent *a = arg;
    np_agent_thread_start(a, "ForkJoinPool-1-worker-2", NULL, gettid());
    np_agent_thread_start(a, "ForkJoinPool-1-worker-3", NULL, gettid());
    ck_assert_int_eq(live_entries(a), 1);
    return NULL;
}

/* Under cpus=node, loaded at start-up, the JVM need not post ThreadEnd: a
 * thread's entry ends as its OS thread exits.  cpus=core frees a core at
 * ThreadEnd, and a late attach places threads from outside, so both
 * still want it. */
START_TEST(thread_end_only_where_needed)
{
    struct np_agent *a = create("group=0,groups=1,log=off");
    ck_assert(!np_agent_wants_thread_end(a));
    struct job j = {a, "ForkJoinPool-1-worker-1", "", NULL, NULL, 0, 0, false, -1, true, NULL};
    run_job(&j);
    ck_assert_int_eq(live_entries(a), 0);
    struct np_counts c;
    np_record_counts(a->record, &c);
    ck_assert_int_eq(c.placed, 1);
    /* A thread that starts twice (a native thread attached again) has one
     * live entry at a time; its exit ends the second. */
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, start_twice, a), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    np_record_counts(a->record, &c);
    ck_assert_int_eq(c.placed, 3);
    ck_assert_int_eq(c.live, 0);
    np_agent_destroy(a);
    /* The exit key goes with its agent: the next one takes it. */
    a = create("group=0,groups=1,log=off");
    ck_assert(!np_agent_wants_thread_end(a));
    np_agent_destroy(a);

    a = create("group=0,groups=1,cpus=core,log=off");
    ck_assert(np_agent_wants_thread_end(a));
    j.a = a;
    run_job(&j);
    ck_assert_int_eq(live_entries(a), 1); /* until its ThreadEnd */
    np_agent_thread_ended(a, j.tid);
    ck_assert_int_eq(live_entries(a), 0);
    np_agent_destroy(a);

    struct np_start late = {true, NULL};
    ck_assert_int_eq(np_agent_start("group=0,groups=1,log=off", &late, &a), NP_OK);
    ck_assert(np_agent_wants_thread_end(a));
    np_agent_destroy(a);
    unplace();
}
END_TEST

/* Under cpus=node a thread is live until it exits, after its join():
 * more placed threads live than CPUs at a thread's start is advice only
 * once the next exit, or np_agent_confirm_advice, counts them still
 * there. */
START_TEST(oversubscription_confirmed_later)
{
    struct np_agent *a = create("group=0,log=info:%s", log_path); /* one CPU */
    ck_assert(!np_agent_wants_thread_end(a));
    sem_t placed, may_end;
    sem_init(&placed, 0, 0);
    sem_init(&may_end, 0, 0);
    struct job held = {a, "ForkJoinPool-1-worker-1", "", &placed, &may_end, 0, 0, false, -1, true, NULL};
    pthread_t t1, t2;
    ck_assert_int_eq(pthread_create(&t1, NULL, job_main, &held), 0);
    while (sem_wait(&placed) != 0)
        ;
    /* One that starts while the first is live, then exits: gone by the
     * time the count is looked at again. */
    struct job brief = {a, "ForkJoinPool-1-worker-2", "", NULL, NULL, 0, 0, false, -1, true, NULL};
    run_job(&brief);
    np_agent_confirm_advice(a);
    np_log_flush();
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "placed threads are live on"), 0);
    free(log);
    /* One that stays: two live on one CPU. */
    struct job stays = {a, "ForkJoinPool-1-worker-3", "", &placed, &may_end, 0, 0, false, -1, true, NULL};
    ck_assert_int_eq(pthread_create(&t2, NULL, job_main, &stays), 0);
    while (sem_wait(&placed) != 0)
        ;
    /* A third that exits finds the two still there: confirmed, and told
     * where a JNI environment is (here: at exit). */
    struct job brief2 = {a, "ForkJoinPool-1-worker-4", "", NULL, NULL, 0, 0, false, -1, true, NULL};
    run_job(&brief2);
    log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "placed threads are live on"), 0);
    free(log);
    np_agent_summary(a); /* at exit, as at the periodic check */
    log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "[warning][numapin] advice: 2 placed threads are live on "
                                        "this group's 1 CPUs"), 1);
    ck_assert_int_eq(t_count_lines(log, "threads like \"ForkJoinPool-1-worker-3\""), 1);
    free(log);
    sem_post(&may_end);
    sem_post(&may_end);
    ck_assert_int_eq(pthread_join(t1, NULL), 0);
    ck_assert_int_eq(pthread_join(t2, NULL), 0);
    ck_assert_int_eq(live_entries(a), 0);
    np_agent_destroy(a);
    unplace();
}
END_TEST

/* Threads that end at once, gone from the JVM's list together (a pool
 * shut down just before exit) or exiting together, answer a suspicion as
 * exits one after another: the first counts the others still live. */
START_TEST(oversubscription_answered_by_threads_ending_at_once)
{
    for (int round = 0; round < 2; round++) {
        bool listed = round == 0;
        char path[600];
        snprintf(path, sizeof path, "%s/round%d.log", dir, round);
        struct np_agent *a = create("group=0,log=info:%s", path); /* one CPU */
        struct held h[3];
        for (int k = 0; k < 3; k++)
            hold(&h[k], a, "ForkJoinPool-1-worker-1");
        if (listed) /* none of the three is in the JVM's list */
            np_agent_running(a, np_agent_listing(a), NULL, 0);
        release_all(h, 3);
        ck_assert_int_eq(live_entries(a), 0);
        np_agent_summary(a);
        char *log = slurp(path);
        ck_assert_msg(t_count_lines(log, "[warning][numapin] advice: 2 placed threads are live on "
                                         "this group's 1 CPUs") == 1,
                      "%s: %s", listed ? "the list" : "the exits", log);
        free(log);
        np_agent_destroy(a);
        unplace();
    }

    /* A loop's thread joined but not yet exited, and the next one, both
     * gone from the list: the first counts only the second. */
    struct np_agent *a = create("group=0,log=info:%s", log_path);
    struct held h[2];
    for (int k = 0; k < 2; k++)
        hold(&h[k], a, "ForkJoinPool-1-worker-1");
    np_agent_running(a, np_agent_listing(a), NULL, 0);
    np_agent_summary(a);
    char *log = slurp(log_path);
    ck_assert_int_eq(t_count_lines(log, "placed threads are live on"), 0);
    free(log);
    release_all(h, 2);
    np_agent_destroy(a);
    unplace();
}
END_TEST

/* The JVM's list of running threads ends the entries it lacks (a thread
 * joined but not yet exited), except those added after it was taken. */
START_TEST(running_list_ends_the_absent)
{
    struct np_agent *a = create("group=0,groups=1,log=off");
    sem_t placed, may_end;
    sem_init(&placed, 0, 0);
    sem_init(&may_end, 0, 0);
    struct job j[3];
    pthread_t t[3];
    unsigned long since = 0;
    for (int k = 0; k < 3; k++) {
        if (k == 2)
            since = np_agent_listing(a); /* the list is taken after this */
        j[k] = (struct job){a, "ForkJoinPool-1-worker-1", "", &placed, &may_end, 0, 0, false, -1, true, NULL};
        ck_assert_int_eq(pthread_create(&t[k], NULL, job_main, &j[k]), 0);
        while (sem_wait(&placed) != 0)
            ;
    }
    ck_assert_int_eq(live_entries(a), 3);
    pid_t listed[] = {j[0].tid};
    np_agent_running(a, since, listed, 1); /* j[1] gone from it; j[2] newer */
    ck_assert_int_eq(live_entries(a), 2);
    ck_assert_ptr_null(np_record_find_live(a->record, j[1].tid).e);
    ck_assert_ptr_nonnull(np_record_find_live(a->record, j[0].tid).e);
    ck_assert_ptr_nonnull(np_record_find_live(a->record, j[2].tid).e);
    for (int k = 0; k < 3; k++)
        sem_post(&may_end);
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq(pthread_join(t[k], NULL), 0);
    ck_assert_int_eq(live_entries(a), 0);
    np_agent_destroy(a);

    /* Where ThreadEnd is seen, the list is not needed and ends nothing. */
    a = create("group=0,groups=1,cpus=core,log=off");
    struct job c = {a, "ForkJoinPool-1-worker-1", "", &placed, &may_end, 0, 0, false, -1, true, NULL};
    pthread_t ct;
    ck_assert_int_eq(pthread_create(&ct, NULL, job_main, &c), 0);
    while (sem_wait(&placed) != 0)
        ;
    np_agent_running(a, np_agent_listing(a), NULL, 0);
    ck_assert_int_eq(live_entries(a), 1);
    sem_post(&may_end);
    ck_assert_int_eq(pthread_join(ct, NULL), 0);
    np_agent_thread_ended(a, c.tid);
    np_agent_destroy(a);
    unplace();
}
END_TEST

/* A thread placed from outside (late attach) is told at once, its memory
 * policy unchanged; a warn-once advice is told once. */
START_TEST(sink_told_of_outside_placements)
{
    struct np_agent *a = create("group=0,mem=none,log=info:%s", log_path);
    struct fake_sink *f = fake_sink(a);
    ck_assert_int_eq(np_agent_listen(a), 0);
    EXPECT_TOLD(f, "plan group=0 groups=2 node=0 cpus=0 mem=none\n");
    struct idle i;
    sem_init(&i.ready, 0, 0);
    sem_init(&i.done, 0, 0);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, idle_main, &i), 0);
    while (sem_wait(&i.ready) != 0)
        ;
    np_agent_seen(a, "ForkJoinPool-9-worker-1", NULL, i.tid, NP_HOW_ATTACH);
    np_agent_seen(a, "ForkJoinPool-9-worker-1", NULL, i.tid, NP_HOW_RESCAN); /* placed already */
    EXPECT_TOLD(f, "placement ForkJoinPool-9-worker-1 group=0 nodes=0 cpus=0 mem=unchanged "
                   "mem_error=null how=attach verified=1 live=1 earlier=0\n");
    sem_post(&i.done);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    np_agent_thread_ended(a, i.tid); /* its ThreadEnd */
    /* Three placed threads live on the group's one CPU: advice, once, when
     * confirmed (cpus=node sees ends at exit: np_agent_confirm_advice). */
    struct job j[3];
    sem_t placed, may_end;
    sem_init(&placed, 0, 0);
    sem_init(&may_end, 0, 0);
    pthread_t jt[3];
    for (int k = 0; k < 3; k++) {
        j[k] = (struct job){a, "ForkJoinPool-2-worker-1", "", &placed, &may_end, 0, 0, false, -1, false, NULL};
        ck_assert_int_eq(pthread_create(&jt[k], NULL, job_main, &j[k]), 0);
        while (sem_wait(&placed) != 0)
            ;
    }
    char *got = fake_take(f);
    ck_assert_int_eq(t_count_lines(got, "advice "), 0);
    ck_assert_int_eq(t_count_lines(got, "placement ForkJoinPool-2-worker-1 "), 3);
    free(got);
    np_agent_confirm_advice(a);
    np_agent_confirm_advice(a);
    for (int k = 0; k < 3; k++)
        sem_post(&may_end);
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq(pthread_join(jt[k], NULL), 0);
    got = fake_take(f);
    ck_assert_int_eq(t_count_lines(got, "advice warning 3 placed threads are live on"), 1);
    ck_assert_int_eq(t_count_lines(got, "advice "), 1);
    free(got);
    np_agent_destroy(a);
    free(f);
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
                                        "mem_failed=0 cpus=1 drift=0 replans=0 mem_pages="), 1);
    ck_assert_int_eq(t_count_lines(log, " mem_local="), 1);
    ck_assert_int_eq(t_count_lines(log, " mem_huge=none"), 1); /* no hugetlb pages reserved here */
    ck_assert_int_eq(t_count_lines(log, "[warning]"), 0);
    free(log);
}
END_TEST

/* The summary gives the kernel's sampled access locality, or says once why
 * there is none: here, as on every host where it is off, because
 * kernel.numa_balancing is 0; where it is on, because mem=preferred
 * memory is not sampled. */
START_TEST(summary_says_why_no_access_is_sampled)
{
    struct np_agent *a = create("group=1,log=debug:%s", log_path);
    char cpus[64];
    run_thread(a, "ForkJoinPool-1-worker-1", cpus, sizeof cpus);
    np_agent_summary(a);
    np_agent_destroy(a);
    char *log = slurp(log_path);
    int balancing = np_read_numa_balancing(NULL);
    ck_assert_int_eq(t_count_lines(log, "] access: no access locality for this JVM: "), 1);
    if (balancing == 0)
        ck_assert_int_eq(t_count_lines(log, "for this JVM: kernel.numa_balancing=0: the kernel "
                                            "samples no memory access (sysctl -w "
                                            "kernel.numa_balancing=1 turns its sampling on)"), 1);
    else if (balancing == 1 && access("/proc/self/sched", R_OK) == 0)
        ck_assert_int_eq(t_count_lines(log, "under a preferred policy (mem=preferred)"), 1);
    ck_assert_int_eq(t_count_lines(log, " mem_huge=none access_local=unsampled"), 1);
    ck_assert_int_eq(t_count_lines(log, " access_samples="), 0);
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
    ck_assert_int_eq(t_count_lines(log, " left=0 left_aliased=0 mappings="), 1);
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
    tcase_add_test(tc, whole_jvm_policy_inherited_at_load);
    tcase_add_test(tc, dryrun_binds_nothing);
    tcase_add_test(tc, bad_options);
    tcase_add_test(tc, bad_option_reaches_chosen_log);
    tcase_add_test(tc, group_beyond_nodes);
    tcase_add_test(tc, strict_bind_to_missing_node_fails);
    tcase_add_test(tc, bind_to_missing_node_warns_once);
    tcase_add_test(tc, cpus_core_least_loaded);
    tcase_add_test(tc, help_does_nothing);
    tcase_add_test(tc, summary_reads_pages_only_when_written);
    tcase_add_test(tc, unopenable_log);
    tcase_add_test(tc, report_lists_threads);
    tcase_add_test(tc, sink_told_now_and_later);
    tcase_add_test(tc, sink_told_of_outside_placements);
    tcase_add_test(tc, thread_end_only_where_needed);
    tcase_add_test(tc, oversubscription_confirmed_later);
    tcase_add_test(tc, oversubscription_answered_by_threads_ending_at_once);
    tcase_add_test(tc, running_list_ends_the_absent);
    tcase_add_test(tc, report_and_log_must_differ);
    tcase_add_test(tc, refused_files_say_why);
    tcase_add_test(tc, full_disk_loses_nothing_silently);
    tcase_add_test(tc, plan_line_echoes_options_as_written);
    tcase_add_test(tc, jdk_tools_keep_their_stdout);
    tcase_add_test(tc, foreign_topology_is_warned_about);
    tcase_add_test(tc, drift_is_put_back);
    tcase_add_test(tc, drift_log_leaves_it);
    tcase_add_test(tc, replan_follows_the_cpuset);
    tcase_add_test(tc, replan_ends_the_inherited_policy);
    tcase_add_test(tc, replan_to_no_cpus_and_back);
    tcase_add_test(tc, replan_logs_each_thread_it_gives_other_cpus);
    tcase_add_test(tc, marker_shows_planned_cpus_and_drift);
    tcase_add_test(tc, auto_with_one_group_takes_no_lock);
    tcase_add_test(tc, default_scope_places_the_whole_jvm);
    tcase_add_test(tc, summary_says_why_no_access_is_sampled);
    tcase_add_test(tc, one_group_keeps_scope_threads);
    tcase_add_test(tc, whole_jvm_on_missing_node_warns_once);
    tcase_add_test(tc, whole_jvm_strict_on_missing_node_fails);
    tcase_add_test(tc, use_numa_turned_off_for_a_group);
    tcase_add_test(tc, use_numa_left_or_warned);
    tcase_add_test(tc, attach_moves_memory);
    suite_add_tcase(s, tc);
    return s;
}
