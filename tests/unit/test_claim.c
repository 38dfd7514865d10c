/* np_claim: one copy of numapin acts in a process. */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "np_agent.h"
#include "np_claim.h"
#include "tests.h"

START_TEST(first_claim_wins_until_released)
{
    char other[256];
    int fd = np_claim_take("/a/libnumapin.so (options 'group=0')", other, sizeof other);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(np_claim_take("/b/copy.so (options 'group=1')", other, sizeof other),
                     NP_CLAIM_TAKEN);
    ck_assert_str_eq(other, "/a/libnumapin.so (options 'group=0')");
    np_claim_release(fd);
    fd = np_claim_take("/b/copy.so (options 'group=1')", other, sizeof other);
    ck_assert_int_ge(fd, 0);
    np_claim_release(fd);
}
END_TEST

/* The mark is not inherited across exec: a program this process runs
 * starts unmarked. */
START_TEST(not_inherited_across_exec)
{
    char other[256];
    int fd = np_claim_take("/a/libnumapin.so (options '')", other, sizeof other);
    ck_assert_int_ge(fd, 0);
    char *argv[] = {"/bin/sh", "-c", "ls -l /proc/self/fd | grep -c memfd:numapin-agent", NULL};
    char *out = NULL, *err = NULL;
    t_run(argv, &out, &err);
    ck_assert_str_eq(out, "0\n");
    free(out);
    free(err);
    np_claim_release(fd);
}
END_TEST

/* A second np_agent_create in one process does nothing, says which copy
 * acts, and a failed first one leaves the process to the next. */
START_TEST(second_agent_does_nothing)
{
    setenv("HWLOC_SYNTHETIC", "pack:1 numa:2 core:1 pu:1", 1);
    setenv("HWLOC_THISSYSTEM", "1", 1);
    struct np_agent *bad = NULL, *a = NULL, *b = NULL;
    ck_assert_int_eq(np_agent_create("group=x,log=off", &bad), NP_ERR_OPTIONS);
    ck_assert_int_eq(np_agent_create("group=1,log=off", &a), NP_OK);
    ck_assert_int_eq(np_agent_create("group=0,log=off", &b), NP_ERR_LOADED);
    ck_assert_ptr_null(b);
    np_agent_destroy(a);
    ck_assert_int_eq(np_agent_create("group=0,log=off", &b), NP_OK);
    np_agent_destroy(b);
}
END_TEST

Suite *claim_suite(void)
{
    Suite *s = suite_create("claim");
    TCase *tc = tcase_create("claim");
    tcase_add_test(tc, first_claim_wins_until_released);
    tcase_add_test(tc, not_inherited_across_exec);
    tcase_add_test(tc, second_agent_does_nothing);
    suite_add_tcase(s, tc);
    return s;
}
