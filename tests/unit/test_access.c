/* np_access: the kernel's sampled NUMA faults of a task, read from sched
 * files in the kernel's format (6.1's, as the 3-node guest prints it), and
 * what they say of locality; and why a policy is not sampled. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "np_access.h"
#include "np_report.h"
#include "tests.h"

/* A task's sched file as Linux 6.1 writes it, with these counts. */
static FILE *sched_file(const long long (*f)[2], int nodes, long long migrated)
{
    FILE *s = tmpfile();
    ck_assert_ptr_nonnull(s);
    fprintf(s, "java (1234, #threads: 25)\n"
               "-------------------------------------------------------------------\n"
               "se.exec_start                                :        123456.789012\n"
               "nr_switches                                  :                   42\n"
               "mm->numa_scan_seq                            :                    3\n"
               "numa_pages_migrated                          :%21lld\n"
               "numa_preferred_nid                           :                    1\n"
               "total_numa_faults                            :                  999\n"
               "current_node=1, numa_group_id=0\n", migrated);
    for (int n = 0; n < nodes; n++)
        fprintf(s, "numa_faults node=%d task_private=%lld task_shared=%lld group_private=0 "
                   "group_shared=0\n", n, f[n][0], f[n][1]);
    rewind(s);
    return s;
}

START_TEST(counts_by_node_and_migrations_are_read)
{
    static const long long f[3][2] = {{3, 1}, {900, 86}, {10, 0}};
    FILE *s = sched_file(f, 3, 17);
    struct np_access a;
    ck_assert_int_eq(np_access_parse(s, &a), 0);
    fclose(s);
    ck_assert(a.listed);
    ck_assert_int_eq(a.nnodes, 3);
    ck_assert_int_eq(a.faults[0], 4);
    ck_assert_int_eq(a.faults[1], 986);
    ck_assert_int_eq(a.faults[2], 10);
    ck_assert_int_eq(a.migrated, 17);
    ck_assert_int_eq(np_access_total(&a), 1000);
    hwloc_bitmap_t one = hwloc_bitmap_alloc();
    hwloc_bitmap_set(one, 1);
    ck_assert_int_eq(np_access_on(&a, one), 986);
    char buf[128];
    np_access_fields(buf, sizeof buf, &a, one);
    ck_assert_str_eq(buf, " access_local=98.6% access_samples=1000 access_migrated=17");
    hwloc_bitmap_set(one, 2);
    np_access_fields(buf, sizeof buf, &a, one);
    ck_assert_str_eq(buf, " access_local=99.6% access_samples=1000 access_migrated=17");
    hwloc_bitmap_free(one);
    np_access_free(&a);
}
END_TEST

START_TEST(a_share_is_truncated_never_rounded_up_to_all)
{
    static const long long f[2][2] = {{1, 0}, {9998, 1}};
    FILE *s = sched_file(f, 2, 0);
    struct np_access a;
    ck_assert_int_eq(np_access_parse(s, &a), 0);
    fclose(s);
    hwloc_bitmap_t one = hwloc_bitmap_alloc();
    hwloc_bitmap_set(one, 1);
    char buf[128];
    np_access_fields(buf, sizeof buf, &a, one);
    ck_assert_str_eq(buf, " access_local=99.9% access_samples=10000 access_migrated=0");
    hwloc_bitmap_free(one);
    np_access_free(&a);
}
END_TEST

START_TEST(no_sample_is_none_not_a_share)
{
    static const long long f[2][2] = {{0, 0}, {0, 0}};
    FILE *s = sched_file(f, 2, 0);
    struct np_access a;
    ck_assert_int_eq(np_access_parse(s, &a), 0);
    fclose(s);
    ck_assert(a.listed);
    hwloc_bitmap_t one = hwloc_bitmap_alloc();
    hwloc_bitmap_set(one, 1);
    char buf[128];
    np_access_fields(buf, sizeof buf, &a, one);
    ck_assert_str_eq(buf, " access_local=none access_samples=0 access_migrated=0");
    hwloc_bitmap_free(one);
    np_access_free(&a);
}
END_TEST

START_TEST(a_kernel_without_the_lines_lists_nothing)
{
    FILE *s = tmpfile();
    fprintf(s, "java (1234, #threads: 25)\nse.exec_start : 1.0\nnr_switches : 42\n"
               "numa_faults node=x task_private=1 task_shared=1\n"
               "numa_faults node=-1 task_private=1 task_shared=1\n"
               "numa_faults node=4096 task_private=1 task_shared=1\n");
    rewind(s);
    struct np_access a;
    ck_assert_int_eq(np_access_parse(s, &a), 0);
    fclose(s);
    ck_assert(!a.listed);
    ck_assert_int_eq(np_access_total(&a), 0);
    np_access_free(&a);
}
END_TEST

START_TEST(tasks_add_up_by_node)
{
    static const long long f1[1][2] = {{5, 5}};
    static const long long f3[3][2] = {{1, 0}, {2, 0}, {3, 4}};
    struct np_access sum = {0}, a, b;
    FILE *s = sched_file(f1, 1, 2);
    ck_assert_int_eq(np_access_parse(s, &a), 0);
    fclose(s);
    s = sched_file(f3, 3, 5);
    ck_assert_int_eq(np_access_parse(s, &b), 0);
    fclose(s);
    ck_assert_int_eq(np_access_add(&sum, &a), 0);
    ck_assert_int_eq(np_access_add(&sum, &b), 0);
    ck_assert(sum.listed);
    ck_assert_int_eq(sum.nnodes, 3);
    ck_assert_int_eq(sum.faults[0], 11);
    ck_assert_int_eq(sum.faults[1], 2);
    ck_assert_int_eq(sum.faults[2], 7);
    ck_assert_int_eq(sum.migrated, 7);
    np_access_free(&a);
    np_access_free(&b);
    np_access_free(&sum);
}
END_TEST

START_TEST(this_thread_is_read_where_the_kernel_keeps_counts)
{
    struct np_access a;
    int rc = np_access_read(0, (pid_t)gettid(), &a);
    if (access("/proc/self/sched", R_OK) != 0) {
        ck_assert_int_eq(rc, -1);
        ck_assert_int_eq(errno, ENOENT);
        return;
    }
    ck_assert_int_eq(rc, 0);
    FILE *f = fopen("/proc/self/sched", "re");
    char line[256];
    bool listed = false;
    while (fgets(line, sizeof line, f) != NULL)
        listed = listed || strncmp(line, "numa_faults node=", 17) == 0;
    fclose(f);
    ck_assert(a.listed == listed);
    np_access_free(&a);
    ck_assert_int_eq(np_access_read(0, 0x7ffffff0, &a), -1);
    ck_assert_int_eq(errno, ENOENT);
}
END_TEST

START_TEST(only_the_default_and_balancing_policies_are_sampled)
{
    char why[512];
    ck_assert(np_access_sampled(why, sizeof why, 1, true, NP_MEM_BALANCING));
    ck_assert_str_eq(why, "");
    ck_assert(np_access_sampled(why, sizeof why, 1, true, NP_MEM_NONE));
    ck_assert(np_access_sampled(why, sizeof why, 3, true, NP_MEM_NONE));
    ck_assert(!np_access_sampled(why, sizeof why, 1, true, NP_MEM_PREFERRED));
    ck_assert_msg(strstr(why, "mem=preferred") && strstr(why, "mem=balancing"), "%s", why);
    ck_assert(!np_access_sampled(why, sizeof why, 1, true, NP_MEM_BIND));
    ck_assert(!np_access_sampled(why, sizeof why, 0, true, NP_MEM_BALANCING));
    ck_assert_msg(strstr(why, "kernel.numa_balancing=0") && strstr(why, "sysctl -w"), "%s", why);
    ck_assert(!np_access_sampled(why, sizeof why, 1, false, NP_MEM_BALANCING));
    ck_assert_msg(strstr(why, "CONFIG_SCHED_DEBUG"), "%s", why);
    ck_assert(!np_access_sampled(why, sizeof why, -1, true, NP_MEM_BALANCING));
    ck_assert(!np_access_sampled(why, sizeof why, 2, true, NP_MEM_BALANCING));
    ck_assert_msg(strstr(why, "tiers"), "%s", why);
}
END_TEST

/* The report gives the process's share and each live placed thread's on
 * the group's nodes; a thread that ended or was not placed has none, and
 * where the kernel samples nothing, neither has any. */
START_TEST(the_report_gives_each_live_placed_threads_share)
{
    struct np_record *r = np_record_create(1, NP_RECORD_KEEP_ENDED);
    struct np_ref w1 = np_record_add(r, "Tier1-worker-1", 201, NP_PLACED, true);
    np_record_set(r, w1, NP_PLACED, 0, 0, true, true);
    struct np_ref w2 = np_record_add(r, "Tier1-worker-2", 202, NP_PLACED, true);
    np_record_set(r, w2, NP_PLACED, 0, 0, true, true);
    np_record_add(r, "main", 200, NP_SKIPPED, false);
    struct np_ref gone = np_record_add(r, "Tier1-worker-3", 203, NP_PLACED, true);
    np_record_set(r, gone, NP_PLACED, 0, 0, true, true);
    np_record_end(r, gone);

    /* 200 was not placed and 203 ended: neither entry gets the share the
     * list holds for it */
    struct np_thread_access threads[4] = {{200, {0}}, {201, {0}}, {202, {0}}, {203, {0}}};
    FILE *s = sched_file((const long long[][2]){{7, 0}, {7, 0}}, 2, 0);
    ck_assert_int_eq(np_access_parse(s, &threads[0].access), 0);
    fclose(s);
    s = sched_file((const long long[][2]){{1, 0}, {990, 9}}, 2, 4);
    ck_assert_int_eq(np_access_parse(s, &threads[1].access), 0);
    fclose(s);
    s = sched_file((const long long[][2]){{0, 0}, {0, 0}}, 2, 0);
    ck_assert_int_eq(np_access_parse(s, &threads[2].access), 0);
    fclose(s);
    s = sched_file((const long long[][2]){{5, 0}, {5, 0}}, 2, 0);
    ck_assert_int_eq(np_access_parse(s, &threads[3].access), 0);
    fclose(s);
    struct np_access process = {0};
    ck_assert_int_eq(np_access_add(&process, &threads[1].access), 0);
    hwloc_bitmap_t one = hwloc_bitmap_alloc();
    hwloc_bitmap_set(one, 1);
    struct np_report_plan plan = {.group = 1, .groups = 3, .node = "1", .slice = 1, .slices = 1,
                                  .cpus = "2-3", .mem = "balancing:1", .threads = "Tier*"};
    struct np_report_advice adv = {0};
    struct np_memory mem = {0};
    for (int sampled = 1; sampled >= 0; sampled--) {
        struct np_report_access acc = {sampled ? &process : NULL,
                                       sampled ? NULL : "kernel.numa_balancing=0: ...",
                                       threads, 4};
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        np_report_json(&plan, r, NP_RECORD_KEEP_ENDED, &adv, &mem, &acc, one, out);
        fclose(out);
        json_error_t err;
        json_t *doc = json_loads(text, 0, &err);
        ck_assert_msg(doc != NULL, "%s: %s", err.text, text);
        json_t *a = json_object_get(doc, "access");
        ck_assert(json_is_boolean(json_object_get(a, "sampled")));
        ck_assert(json_boolean_value(json_object_get(a, "sampled")) == sampled);
        size_t i;
        json_t *t;
        int with = 0;
        json_array_foreach(json_object_get(doc, "threads"), i, t) {
            json_t *local = json_object_get(t, "access_local");
            long long tid = json_integer_value(json_object_get(t, "tid"));
            if (local == NULL)
                continue;
            with++;
            ck_assert_msg(sampled && (tid == 201 || tid == 202), "tid %lld has access_local", tid);
            if (tid == 201) {
                ck_assert_double_eq_tol(json_real_value(local), 99.9, 1e-9);
                ck_assert_int_eq(json_integer_value(json_object_get(t, "access_samples")), 1000);
                ck_assert_int_eq(json_integer_value(json_object_get(t, "access_migrated")), 4);
            } else {
                ck_assert(json_is_null(local));
                ck_assert_int_eq(json_integer_value(json_object_get(t, "access_samples")), 0);
            }
        }
        ck_assert_int_eq(with, sampled ? 2 : 0);
        if (sampled)
            ck_assert_double_eq_tol(json_real_value(json_object_get(a, "access_local")), 99.9, 1e-9);
        else
            ck_assert_str_eq(json_string_value(json_object_get(a, "unsampled")),
                             "kernel.numa_balancing=0: ...");
        json_decref(doc);
        free(text);
    }
    hwloc_bitmap_free(one);
    np_access_free(&process);
    for (int i = 0; i < 4; i++)
        np_access_free(&threads[i].access);
    np_record_destroy(r);
}
END_TEST

/* Every thread of this process is read once, into a list sorted by tid
 * that finds each by its tid, and summed: the sum is what the threads hold
 * between them. */
START_TEST(threads_are_read_once_found_by_tid_and_summed)
{
    struct np_thread_access *l;
    int n;
    struct np_access sum;
    ck_assert_int_eq(np_access_read_threads(0, &l, &n, &sum), 0);
    if (access("/proc/self/sched", R_OK) != 0) {
        ck_assert_int_eq(n, 0); /* no sched statistics: no thread listed */
        np_thread_access_free(l, n);
        return;
    }
    ck_assert_int_ge(n, 1);
    for (int i = 1; i < n; i++)
        ck_assert(l[i - 1].tid < l[i].tid);
    ck_assert_ptr_nonnull(np_thread_access_find(l, n, (pid_t)gettid()));
    ck_assert_ptr_null(np_thread_access_find(l, n, 0x7ffffff0));
    ck_assert_ptr_null(np_thread_access_find(NULL, 0, (pid_t)gettid()));
    long long total = 0;
    bool listed = false;
    for (int i = 0; i < n; i++) {
        total += np_access_total(&l[i].access);
        listed = listed || l[i].access.listed;
    }
    ck_assert_int_eq(np_access_total(&sum), total);
    ck_assert(sum.listed == listed);
    np_thread_access_free(l, n);
    np_access_free(&sum);
    /* a process that is not there: nothing listed, an error */
    ck_assert_int_eq(np_access_read_threads(0x7ffffff0, &l, &n, &sum), -1);
    ck_assert_ptr_null(l);
    ck_assert_int_eq(n, 0);
}
END_TEST

Suite *access_suite(void)
{
    Suite *s = suite_create("access");
    TCase *tc = tcase_create("access");
    tcase_add_test(tc, counts_by_node_and_migrations_are_read);
    tcase_add_test(tc, a_share_is_truncated_never_rounded_up_to_all);
    tcase_add_test(tc, no_sample_is_none_not_a_share);
    tcase_add_test(tc, a_kernel_without_the_lines_lists_nothing);
    tcase_add_test(tc, tasks_add_up_by_node);
    tcase_add_test(tc, this_thread_is_read_where_the_kernel_keeps_counts);
    tcase_add_test(tc, only_the_default_and_balancing_policies_are_sampled);
    tcase_add_test(tc, the_report_gives_each_live_placed_threads_share);
    tcase_add_test(tc, threads_are_read_once_found_by_tid_and_summed);
    suite_add_tcase(s, tc);
    return s;
}
