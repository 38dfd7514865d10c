/* np_bind: placing the calling thread (np_place_self) on this machine's
 * real CPUs 0 and 1 and its real node 0.
 *
 * np_place_self reads first and sets only what differs (NP_PLACE_CHECK;
 * NP_PLACE_SET_CPUS sets the CPUs unread, NP_PLACE_FORCE both).  To see which
 * system calls it made, the threads run under a seccomp filter that makes
 * sched_setaffinity and set_mempolicy fail with EPERM (as a container's
 * profile can): a placement that needs no change must succeed all the
 * same, one that needs a change must fail and leave the thread as it was.
 * Each test runs in its own process (Check's fork mode), and the filter is
 * installed in a child it forks, so nothing else runs under it. */
#define _GNU_SOURCE
#include <errno.h>
#include <numaif.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../jvm/tools/seccomp_filter.h"
#include "np_bind.h"
#include "tests.h"

static hwloc_topology_t topo;
static hwloc_bitmap_t cpu0, cpu1, both, node0;

static void setup(void)
{
    cpu_set_t set;
    ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
    ck_assert_msg(CPU_ISSET(0, &set) && CPU_ISSET(1, &set),
                  "these tests need a process allowed on CPUs 0 and 1");
    unsetenv("HWLOC_SYNTHETIC");
    unsetenv("HWLOC_XMLFILE");
    ck_assert_int_eq(hwloc_topology_init(&topo), 0);
    ck_assert_int_eq(hwloc_topology_load(topo), 0);
    cpu0 = t_bitmap("0");
    cpu1 = t_bitmap("1");
    both = t_bitmap("0-1");
    node0 = t_bitmap("0");
    ck_assert_int_eq(np_bind_init(), 0);
}

static void teardown(void)
{
    hwloc_bitmap_free(cpu0);
    hwloc_bitmap_free(cpu1);
    hwloc_bitmap_free(both);
    hwloc_bitmap_free(node0);
    hwloc_topology_destroy(topo);
}

/* From now on, in this thread and the threads it creates,
 * sched_setaffinity and set_mempolicy fail with EPERM. */
static void deny_setting(void)
{
    const int calls[] = {SYS_sched_setaffinity, SYS_set_mempolicy};
    ck_assert_int_eq(seccomp_deny(calls, 2, EPERM), 0);
}

/* A placement made on a fresh thread, and what that thread reads back. */
struct job {
    hwloc_const_bitmap_t cpus;
    const struct np_policy *policy;
    enum np_place_how how;
    int rc;
    struct np_bind_result r;
    struct np_actual after;
};

/* Set by the loop tests: placements compare CPUs through an np_cpumask
 * (the kernel's format) rather than through hwloc; the outcomes must be
 * the same. */
static bool with_mask;

static void *job_main(void *arg)
{
    struct job *j = arg;
    struct np_cpumask mask = {NULL, 0};
    if (with_mask) {
        ck_assert_int_eq(np_cpumask_init(&mask, j->cpus), 0);
        ck_assert_ptr_nonnull(mask.bits);
    }
    j->rc = np_place_self(topo, j->cpus, with_mask ? &mask : NULL, j->policy, j->how, &j->r);
    np_cpumask_destroy(&mask);
    np_read_self(topo, &j->after);
    return NULL;
}

static void run(struct job *j)
{
    pthread_t t;
    ck_assert_int_eq(np_actual_init(&j->after), 0);
    ck_assert_int_eq(pthread_create(&t, NULL, job_main, j), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
}

static void policy(struct np_policy *p, hwloc_const_bitmap_t cpus, enum np_mem_mode mem)
{
    struct np_target t = {cpus, node0, mem};
    ck_assert_int_eq(np_policy_init(p, &t), 0);
}

/* A thread on other CPUs with the default policy gets both set. */
START_TEST(sets_what_differs)
{
    with_mask = _i == 1;
    struct np_policy p;
    policy(&p, cpu1, NP_MEM_BIND);
    ck_assert_int_eq(hwloc_set_cpubind(topo, cpu0, HWLOC_CPUBIND_THREAD), 0);
    struct job j = {cpu1, &p, NP_PLACE_CHECK, -2, {0}, {0}};
    run(&j); /* inherits CPU 0 and the default policy */
    ck_assert_int_eq(j.rc, 0);
    ck_assert(j.r.cpu_ok && j.r.mem_ok);
    ck_assert_int_eq(j.r.cpu_errno + j.r.mem_errno, 0);
    ck_assert(hwloc_bitmap_isequal(j.after.cpus, cpu1));
    ck_assert_int_eq(j.after.mem_mode, MPOL_BIND);
    ck_assert(hwloc_bitmap_isequal(j.after.mem_nodes, node0));
    np_actual_destroy(&j.after);
    /* Set without a read first: the same outcome. */
    struct job k = {cpu1, &p, NP_PLACE_SET_CPUS, -2, {0}, {0}};
    run(&k); /* inherits CPU 0 */
    ck_assert_int_eq(k.rc, 0);
    ck_assert(k.r.cpu_ok && k.r.mem_ok);
    ck_assert(hwloc_bitmap_isequal(k.after.cpus, cpu1));
    ck_assert_int_eq(k.after.mem_mode, MPOL_BIND);
    np_actual_destroy(&k.after);
    np_policy_destroy(&p);
}
END_TEST

/* The check made in a child process under the filter: returns the number
 * of failed expectations as its exit status. */
static int under_filter(void)
{
    int bad = 0;
    struct np_policy bind, interleave, none;
    policy(&bind, cpu1, NP_MEM_BIND);
    policy(&interleave, cpu1, NP_MEM_INTERLEAVE);
    policy(&none, cpu1, NP_MEM_NONE);
    /* This thread is placed first; its threads inherit the placement. */
    struct np_bind_result r;
    if (np_place_self(topo, cpu1, NULL, &bind, NP_PLACE_FORCE, &r) != 0)
        return 100;
    deny_setting();

    /* Inherited, right: nothing to set, verified by reading. */
    struct job same = {cpu1, &bind, NP_PLACE_CHECK, -2, {0}, {0}};
    run(&same);
    bad += same.rc != 0 || !same.r.cpu_ok || !same.r.mem_ok || same.r.cpu_errno || same.r.mem_errno;
    /* The same, forced: the refused calls show. */
    struct job forced = {cpu1, &bind, NP_PLACE_FORCE, -2, {0}, {0}};
    run(&forced);
    bad += forced.rc == 0 || forced.r.cpu_errno != EPERM;
    /* CPUs set without a read first: refused, but there already. */
    struct job set_same = {cpu1, &bind, NP_PLACE_SET_CPUS, -2, {0}, {0}};
    run(&set_same);
    bad += set_same.rc != 0 || !set_same.r.cpu_ok || set_same.r.cpu_errno || !set_same.r.mem_ok;
    /* ... and elsewhere: refused, left as it was. */
    struct job set_other = {both, &bind, NP_PLACE_SET_CPUS, -2, {0}, {0}};
    run(&set_other);
    bad += set_other.rc == 0 || set_other.r.cpu_ok || set_other.r.cpu_errno != EPERM ||
           set_other.r.mem_ok || set_other.r.mem_errno != 0;
    bad += !hwloc_bitmap_isequal(set_other.after.cpus, cpu1);
    /* Other CPUs: refused, and the thread is left as it was, memory
     * policy untouched. */
    struct job cpus = {both, &bind, NP_PLACE_CHECK, -2, {0}, {0}};
    run(&cpus);
    bad += cpus.rc == 0 || cpus.r.cpu_errno != EPERM || cpus.r.mem_errno != 0 || cpus.r.mem_ok;
    bad += !hwloc_bitmap_isequal(cpus.after.cpus, cpu1) || cpus.after.mem_mode != MPOL_BIND;
    /* Same CPUs, another policy: CPUs verified, the policy refused. */
    struct job mem = {cpu1, &interleave, NP_PLACE_CHECK, -2, {0}, {0}};
    run(&mem);
    bad += mem.rc == 0 || !mem.r.cpu_ok || mem.r.cpu_errno != 0 || mem.r.mem_errno != EPERM;
    bad += mem.after.mem_mode != MPOL_BIND;
    /* mem=none: the policy is not looked at. */
    struct job nomem = {cpu1, &none, NP_PLACE_CHECK, -2, {0}, {0}};
    run(&nomem);
    bad += nomem.rc != 0 || !nomem.r.mem_ok || nomem.r.mem_errno != 0;
    bad += nomem.r.mem_inherited;
    /* A policy every thread inherits is taken as the thread's: neither
     * read (this thread has bind, not interleave) nor set (refused here);
     * the CPUs are still read. */
    interleave.inherited = true;
    struct job inherit = {cpu1, &interleave, NP_PLACE_CHECK, -2, {0}, {0}};
    run(&inherit);
    bad += inherit.rc != 0 || !inherit.r.cpu_ok || !inherit.r.mem_ok || !inherit.r.mem_inherited ||
           inherit.r.mem_errno != 0 || inherit.after.mem_mode != MPOL_BIND;
    struct job inherit_other = {both, &interleave, NP_PLACE_CHECK, -2, {0}, {0}};
    run(&inherit_other);
    bad += inherit_other.rc == 0 || inherit_other.r.cpu_errno != EPERM || inherit_other.r.mem_ok;
    bad += same.r.mem_inherited;
    return bad;
}

START_TEST(sets_nothing_when_inherited)
{
    with_mask = _i == 1;
    fflush(stdout);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        _exit(under_filter());
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status), "the child did not exit (status %d)", status);
    ck_assert_msg(WEXITSTATUS(status) == 0, "%d expectations failed under the filter (100: the "
                  "first placement failed)", WEXITSTATUS(status));
}
END_TEST

/* Two policies are the same when their modes and nodes are. */
START_TEST(policies_compared)
{
    struct np_policy a, b, c, none;
    policy(&a, cpu1, NP_MEM_BIND);
    policy(&b, cpu0, NP_MEM_BIND);
    policy(&c, cpu1, NP_MEM_INTERLEAVE);
    policy(&none, cpu1, NP_MEM_NONE);
    ck_assert(np_policy_same(&a, &b));
    ck_assert(!np_policy_same(&a, &c));
    ck_assert(!np_policy_same(&a, &none));
    hwloc_bitmap_t far = t_bitmap("1");
    struct np_target t = {cpu1, far, NP_MEM_BIND};
    struct np_policy other;
    ck_assert_int_eq(np_policy_init(&other, &t), 0);
    ck_assert_msg(!np_policy_same(&a, &other), "node 0 and node 1 compare the same");
    np_policy_destroy(&other);
    hwloc_bitmap_free(far);
    np_policy_destroy(&a);
    np_policy_destroy(&b);
    np_policy_destroy(&c);
}
END_TEST

/* A policy the kernel cannot name (node beyond its node mask) is prepared
 * with its error, reported when placing, and the CPUs are still set. */
START_TEST(unnameable_node)
{
    hwloc_bitmap_t far = t_bitmap("100000");
    struct np_target t = {cpu1, far, NP_MEM_BIND};
    struct np_policy p;
    ck_assert_int_eq(np_policy_init(&p, &t), 0);
    ck_assert_int_eq(p.error, EINVAL);
    struct job j = {cpu1, &p, NP_PLACE_CHECK, -2, {0}, {0}};
    run(&j);
    ck_assert_int_eq(j.rc, -1);
    ck_assert(j.r.cpu_ok);
    ck_assert_int_eq(j.r.mem_errno, EINVAL);
    ck_assert(!j.r.mem_ok);
    ck_assert(hwloc_bitmap_isequal(j.after.cpus, cpu1));
    np_actual_destroy(&j.after);
    np_policy_destroy(&p);
    hwloc_bitmap_free(far);
}
END_TEST

/* mem=balancing: MPOL_BIND with MPOL_F_NUMA_BALANCING, read back with its
 * flag (a bind without it is not the same policy), written as
 * mem=balancing writes it, and put back whole by np_restore_self. */
START_TEST(balancing_is_bind_with_its_flag)
{
    struct np_policy p, plain;
    policy(&p, cpu1, NP_MEM_BALANCING);
    policy(&plain, cpu1, NP_MEM_BIND);
    ck_assert_int_eq(p.mode, MPOL_BIND | MPOL_F_NUMA_BALANCING);
    ck_assert(!np_policy_same(&p, &plain));
    struct job j = {cpu1, &p, NP_PLACE_CHECK, -2, {0}, {0}};
    run(&j);
    ck_assert_msg(j.rc == 0 && j.r.mem_ok, "mem_errno %d", j.r.mem_errno);
    ck_assert_int_eq(j.after.mem_mode, MPOL_BIND);
    ck_assert_int_eq(j.after.mem_flags, MPOL_F_NUMA_BALANCING);
    char buf[64];
    np_mem_actual_str(buf, sizeof buf, &j.after);
    ck_assert_str_eq(buf, "balancing:0");
    struct np_target t = {cpu1, node0, NP_MEM_BALANCING};
    np_mem_target_str(buf, sizeof buf, &t);
    ck_assert_str_eq(buf, "balancing:0");
    /* the thread that has it now reads as bound, not the same as balancing */
    struct job k = {cpu1, &plain, NP_PLACE_CHECK, -2, {0}, {0}};
    run(&k);
    ck_assert_int_eq(k.after.mem_flags, 0);
    np_mem_actual_str(buf, sizeof buf, &k.after);
    ck_assert_str_eq(buf, "bind:0");
    /* restored with its flag */
    ck_assert_int_eq(np_restore_self(topo, &j.after), 0);
    struct np_actual now;
    ck_assert_int_eq(np_actual_init(&now), 0);
    ck_assert_int_eq(np_read_self(topo, &now), 0);
    ck_assert_int_eq(now.mem_mode | now.mem_flags, MPOL_BIND | MPOL_F_NUMA_BALANCING);
    np_actual_destroy(&now);
    np_actual_destroy(&j.after);
    np_actual_destroy(&k.after);
    np_policy_destroy(&p);
    np_policy_destroy(&plain);
}
END_TEST

/* The nodes the kernel lets this process use are the cpuset's mems, as
 * /proc/self/status lists them. */
START_TEST(mems_allowed_are_the_cpusets)
{
    char line[256], want[256] = "";
    FILE *f = fopen("/proc/self/status", "r");
    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "Mems_allowed_list: %255s", want) == 1)
            break;
    fclose(f);
    ck_assert_str_ne(want, "");
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    hwloc_bitmap_set(nodes, 63); /* cleared by the call */
    ck_assert_int_eq(np_bind_mems_allowed(nodes), 0);
    char got[256];
    hwloc_bitmap_list_snprintf(got, sizeof got, nodes);
    ck_assert_str_eq(got, want);
    hwloc_bitmap_free(nodes);
}
END_TEST

Suite *bind_suite(void)
{
    Suite *s = suite_create("bind");
    TCase *tc = tcase_create("bind");
    tcase_add_test(tc, balancing_is_bind_with_its_flag);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, sets_what_differs, 0, 2);
    tcase_add_loop_test(tc, sets_nothing_when_inherited, 0, 2);
    tcase_add_test(tc, policies_compared);
    tcase_add_test(tc, unnameable_node);
    tcase_add_test(tc, mems_allowed_are_the_cpusets);
    suite_add_tcase(s, tc);
    return s;
}
