/* np_cpulist: numbers and lists as users write them (np_parse_int,
 * np_parse_list), read strictly, and sets written back as cpulists
 * (np_cpulist, NP_FOREACH). */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_cpulist.h"
#include "tests.h"

START_TEST(parse_int_reads_whole_decimal_numbers_in_range)
{
    static const struct {
        const char *s;
        long min, max;
        int want;
    } good[] = {
        {"0", 0, 10, 0},      {"10", 0, 10, 10},   {"7", 7, 7, 7},
        {"010", 0, 100, 10}, /* decimal, never octal */
        {"2147483647", 0, INT_MAX, INT_MAX},
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        int v = -1;
        ck_assert_msg(np_parse_int(good[i].s, good[i].min, good[i].max, &v) == 0 && v == good[i].want,
                      "np_parse_int(\"%s\", %ld, %ld): %d", good[i].s, good[i].min, good[i].max, v);
    }
}
END_TEST

START_TEST(parse_int_refuses_anything_else_and_leaves_out_unchanged)
{
    static const struct {
        const char *s;
        long min, max;
    } bad[] = {
        {"", 0, 10},    {"11", 0, 10},   {"4", 5, 10},  {"-1", 0, 10},  {"+1", 0, 10},
        {" 1", 0, 10},  {"1 ", 0, 10},   {"1x", 0, 10}, {"0x10", 0, 100}, {"1e3", 0, 10000},
        {"1.0", 0, 10}, {"99999999999999999999", 0, INT_MAX}, /* too large: no wrap */
        {"2147483648", 0, INT_MAX},
        {"1", -1, 10},  /* a negative minimum is not a contract */
        {"5", 6, 5},    /* nor an empty range */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int v = 42;
        ck_assert_msg(np_parse_int(bad[i].s, bad[i].min, bad[i].max, &v) == -1,
                      "np_parse_int(\"%s\", %ld, %ld) accepted (%d)", bad[i].s, bad[i].min,
                      bad[i].max, v);
        ck_assert_int_eq(v, 42);
    }
}
END_TEST

/* np_parse_list(s, sep, max) as a cpulist, or "refused". */
static const char *parsed(const char *s, char sep, unsigned max, char *buf, size_t len)
{
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    ck_assert_ptr_nonnull(b);
    hwloc_bitmap_set(b, 100); /* zeroed first: never part of the answer */
    if (np_parse_list(s, sep, max, b) == 0)
        t_list(b, buf, len);
    else
        snprintf(buf, len, "refused");
    hwloc_bitmap_free(b);
    return buf;
}

START_TEST(parse_list_reads_numbers_and_ranges)
{
    static const struct {
        const char *s;
        char sep;
        unsigned max;
        const char *want;
    } c[] = {
        {"0-3,8", ',', 1023, "0-3,8"},
        {"5", ',', 1023, "5"},
        {"3-3", ',', 1023, "3"},
        {"0-1+4", '+', 4095, "0-1,4"},
        {"8,0-3", ',', 1023, "0-3,8"},     /* any order */
        {"0-3,2-5", ',', 1023, "0-5"},     /* overlaps merge */
        {"010", ',', 1023, "10"},          /* decimal, never octal */
        {"1023", ',', 1023, "1023"},
        {"0-4095", '+', 4095, "0-4095"},
    };
    char buf[256];
    for (size_t i = 0; i < sizeof c / sizeof *c; i++)
        ck_assert_msg(strcmp(parsed(c[i].s, c[i].sep, c[i].max, buf, sizeof buf), c[i].want) == 0,
                      "np_parse_list(\"%s\", '%c', %u): %s, want %s", c[i].s, c[i].sep, c[i].max,
                      buf, c[i].want);
}
END_TEST

START_TEST(parse_list_refuses_what_is_not_such_a_list)
{
    static const char *const bad[] = {
        "", ",", "1,", ",1", "1,,2", "3-1", "1-", "-1", "1-2-3", "a", "1 2", " 1", "1+2",
        "1024",       /* above max */
        "0-1024",     /* a range past max */
        "4294967296", /* past 32 bits: no wrap to 0 */
        "18446744073709551616",
        "0x3",
    };
    char buf[256];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(strcmp(parsed(bad[i], ',', 1023, buf, sizeof buf), "refused") == 0,
                      "np_parse_list(\"%s\", ',', 1023) accepted: %s", bad[i], buf);
    /* The separator is the one given: a comma is not a '+' list's. */
    ck_assert_str_eq(parsed("0,1", '+', 4095, buf, sizeof buf), "refused");
}
END_TEST

static void expect_cpulist(const char *set_from, const char *want)
{
    /* Build the set bit by bit from a space-separated index list. */
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    char *copy = strdup(set_from), *save = NULL;
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
        hwloc_bitmap_set(b, (unsigned)atoi(t));
    free(copy);
    char buf[256];
    memset(buf, 'X', sizeof buf);
    np_cpulist(buf, sizeof buf, b);
    ck_assert_msg(strcmp(buf, want) == 0, "{%s}: got \"%s\", want \"%s\"", set_from, buf, want);
    hwloc_bitmap_free(b);
}

START_TEST(cpulist_writes_linux_ranges_and_stays_terminated)
{
    expect_cpulist("", "");
    expect_cpulist("0", "0");
    expect_cpulist("7", "7");
    expect_cpulist("0 1", "0-1");
    expect_cpulist("0 1 2 3", "0-3");
    expect_cpulist("0 1 2 3 8 10 11", "0-3,8,10-11");
    expect_cpulist("0 2 4", "0,2,4");
    expect_cpulist("5 6 7 200 201 1023", "5-7,200-201,1023");
    /* Truncated into a small buffer, still terminated. */
    hwloc_bitmap_t b = t_bitmap("0-3,8,10-11");
    char small[5];
    memset(small, 'X', sizeof small);
    np_cpulist(small, sizeof small, b);
    ck_assert_str_eq(small, "0-3,");
    /* No room at all: nothing written. */
    small[0] = 'X';
    np_cpulist(small, 0, b);
    ck_assert_int_eq(small[0], 'X');
    hwloc_bitmap_free(b);
}
END_TEST


/* NP_FOREACH visits a finite set in order, and an infinite one (which
 * hwloc's own loop asserts on, aborting the JVM) not at all. */
START_TEST(foreach_visits_finite_sets_in_order_and_infinite_ones_never)
{
    hwloc_bitmap_t b = t_bitmap("7,0-2,1000");
    int i, seen[8], n = 0;
    NP_FOREACH(i, b) {
        ck_assert_int_lt(n, 8);
        seen[n++] = i;
    }
    ck_assert_int_eq(n, 5);
    static const int want[] = {0, 1, 2, 7, 1000};
    for (int k = 0; k < 5; k++)
        ck_assert_int_eq(seen[k], want[k]);
    hwloc_bitmap_fill(b);
    n = 0;
    NP_FOREACH(i, b)
        n++;
    ck_assert_int_eq(n, 0);
    hwloc_bitmap_zero(b);
    NP_FOREACH(i, b)
        n++;
    ck_assert_int_eq(n, 0);
    hwloc_bitmap_free(b);
}
END_TEST

Suite *cpulist_suite(void)
{
    Suite *s = suite_create("cpulist");
    TCase *tc = tcase_create("cpulist");
    tcase_add_test(tc, parse_int_reads_whole_decimal_numbers_in_range);
    tcase_add_test(tc, parse_int_refuses_anything_else_and_leaves_out_unchanged);
    tcase_add_test(tc, parse_list_reads_numbers_and_ranges);
    tcase_add_test(tc, parse_list_refuses_what_is_not_such_a_list);
    tcase_add_test(tc, cpulist_writes_linux_ranges_and_stays_terminated);
    tcase_add_test(tc, foreach_visits_finite_sets_in_order_and_infinite_ones_never);
    suite_add_tcase(s, tc);
    return s;
}
