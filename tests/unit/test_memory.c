/* np_memory: this process's memory by node, read from numa_maps, the
 * strings the summary shows, and moving this process's own pages (on this
 * one-node host, every page is on node 0 already). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <numaif.h>

#include "np_json.h"
#include "np_memory.h"
#include "tests.h"

/* A buffer of len bytes with every page touched: resident somewhere. */
static volatile char *touched(size_t len)
{
    volatile char *buf = malloc(len);
    ck_assert_ptr_nonnull((void *)buf);
    for (size_t i = 0; i < len; i += 4096)
        buf[i] = 1;
    return buf;
}

START_TEST(reads_this_process)
{
    size_t len = 8 << 20;
    volatile char *buf = touched(len);
    struct np_memory m;
    ck_assert_int_eq(np_memory_read(0, true, &m), 0);
    ck_assert_ptr_nonnull(m.pages);
    ck_assert_int_ge(np_memory_total(&m), (long long)(len / 4096));
    long long own = np_memory_total(&m);
    np_memory_free(&m);
    /* Every page mapped: the own ones, and the files' (this program, libc). */
    ck_assert_int_eq(np_memory_read(getpid(), false, &m), 0);
    ck_assert_int_gt(np_memory_total(&m), own);
    hwloc_bitmap_t all = t_bitmap("0-4095");
    ck_assert_int_eq(np_memory_on(&m, all), np_memory_total(&m));
    hwloc_bitmap_free(all);
    np_memory_free(&m);
    ck_assert_ptr_null(m.pages);
    free((void *)buf);
    ck_assert_int_eq(np_memory_read(999999999, true, &m), -1);
    ck_assert_ptr_null(m.pages);
}
END_TEST

START_TEST(strings)
{
    long long p[] = {1203, 0, 65012};
    struct np_memory m = {p, 3}, none = {NULL, 0}, empty = {(long long[]){0}, 1};
    char buf[256];
    np_memory_pages_str(buf, sizeof buf, &m);
    ck_assert_str_eq(buf, "0:1203,2:65012");
    np_memory_pages_str(buf, sizeof buf, &none);
    ck_assert_str_eq(buf, "unknown");
    np_memory_pages_str(buf, sizeof buf, &empty);
    ck_assert_str_eq(buf, "none");
    hwloc_bitmap_t two = t_bitmap("2"), zero = t_bitmap("0"), both = t_bitmap("0,2");
    np_memory_share_str(buf, sizeof buf, &m, two);
    ck_assert_str_eq(buf, "98.1%"); /* 65012 / 66215 = 98.18%, rounded down */
    np_memory_share_str(buf, sizeof buf, &m, zero);
    ck_assert_str_eq(buf, "1.8%");
    np_memory_share_str(buf, sizeof buf, &m, both);
    ck_assert_str_eq(buf, "100.0%");
    np_memory_share_str(buf, sizeof buf, &empty, both);
    ck_assert_str_eq(buf, "unknown");
    /* 99.99% is not 100.0% */
    long long q[] = {1, 9999};
    struct np_memory near = {q, 2};
    hwloc_bitmap_t one = t_bitmap("1");
    np_memory_share_str(buf, sizeof buf, &near, one);
    ck_assert_str_eq(buf, "99.9%");

    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    struct np_json j;
    np_json_start(&j, f);
    np_json_open(&j, NULL, '{', false);
    np_memory_json(&j, "memory", &m, two);
    np_memory_json(&j, "unread", &none, two);
    np_json_close(&j);
    fclose(f);
    ck_assert_str_eq(text, "{\"memory\": {\"page_kib\": 4, \"mem_pages\": {\"0\": 1203, \"2\": 65012}, "
                           "\"nodes\": \"2\", \"local_pages\": 65012, \"mem_local\": 98.1}, "
                           "\"unread\": null}\n");
    free(text);
    hwloc_bitmap_free(two);
    hwloc_bitmap_free(zero);
    hwloc_bitmap_free(both);
    hwloc_bitmap_free(one);
}
END_TEST

/* Policy p for nodes, with the given mode. */
static void policy(struct np_policy *p, const char *nodes, enum np_mem_mode mode, hwloc_bitmap_t *set)
{
    *set = t_bitmap(nodes);
    struct np_target t = {*set, *set, mode};
    ck_assert_int_eq(np_policy_init(p, &t), 0);
}

START_TEST(moves_own_pages)
{
    size_t len = 4 << 20;
    volatile char *buf = touched(len);
    struct np_policy p;
    hwloc_bitmap_t zero;
    policy(&p, "0", NP_MEM_PREFERRED, &zero);
    struct np_move r;
    ck_assert_int_eq(np_memory_move_self(&p, zero, &r), 0);
    ck_assert_int_ge(r.resident, (long long)(len / 4096));
    ck_assert_int_eq(r.after, r.resident); /* one node: all there */
    ck_assert_int_eq(r.moved, 0);
    ck_assert_int_gt(r.mappings, 0);
    ck_assert_int_eq(r.refused, 0);
    ck_assert(r.ms >= 0);
    /* The buffer's mapping now has the policy. */
    int mode = -1;
    unsigned long mask[64] = {0};
    ck_assert_int_eq(get_mempolicy(&mode, mask, 64 * 64, (void *)buf, MPOL_F_ADDR), 0);
    ck_assert_int_eq(mode, MPOL_PREFERRED);
    np_policy_destroy(&p);
    /* A node this kernel lacks: refused, for every mapping. */
    if (access("/sys/devices/system/node/node1", F_OK) != 0) {
        hwloc_bitmap_t one;
        policy(&p, "1", NP_MEM_BIND, &one);
        errno = 0;
        ck_assert_int_eq(np_memory_move_self(&p, one, &r), -1);
        ck_assert_int_ne(errno, 0);
        np_policy_destroy(&p);
        hwloc_bitmap_free(one);
    }
    /* mem=none prepares no policy: nothing to move by. */
    hwloc_bitmap_free(zero);
    policy(&p, "0", NP_MEM_NONE, &zero);
    ck_assert_int_eq(np_memory_move_self(&p, zero, &r), -1);
    ck_assert_int_eq(errno, EINVAL);
    np_policy_destroy(&p);
    hwloc_bitmap_free(zero);
    free((void *)buf);
}
END_TEST

Suite *memory_suite(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("memory");
    tcase_add_test(tc, reads_this_process);
    tcase_add_test(tc, strings);
    tcase_add_test(tc, moves_own_pages);
    suite_add_tcase(s, tc);
    return s;
}
