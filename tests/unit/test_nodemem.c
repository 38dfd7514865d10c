/* np_nodemem: resident memory per node from numa_maps lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "np_nodemem.h"
#include "tests.h"

/* The bytes on `node` that the lines add up to. */
static unsigned long long sum(const char *const *lines, int n, int node)
{
    struct np_nodemem m = {NULL, 0};
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(np_nodemem_line(lines[i], &m), 0);
    unsigned long long b = node < m.n ? m.bytes[node] : 0;
    np_nodemem_free(&m);
    return b;
}

START_TEST(counts_pages_per_node)
{
    const char *const lines[] = {
        "55ba93de1000 default file=/usr/bin/cat mapped=2 N0=2 kernelpagesize_kB=4\n",
        "55bac3e46000 default heap anon=4 dirty=4 active=0 N0=3 N1=1 kernelpagesize_kB=4\n",
        "7f0000000000 bind:1 anon=512 dirty=512 N1=512 kernelpagesize_kB=2048\n",
        "7f8380fa9000 interleave:0-3 anon=8 dirty=8 N0=2 N1=2 N2=2 N3=2 kernelpagesize_kB=4\n",
        "7ffd1c5c6000 default stack\n",      /* nothing resident: no counts */
        "7ffd1c5d0000 default\n",
        "",
    };
    int n = sizeof lines / sizeof *lines;
    ck_assert_uint_eq(sum(lines, n, 0), (2 + 3 + 2) * 4096ULL);
    ck_assert_uint_eq(sum(lines, n, 1), 1 * 4096ULL + 512ULL * 2048 * 1024 + 2 * 4096ULL);
    ck_assert_uint_eq(sum(lines, n, 3), 2 * 4096ULL);
    /* The array ends at the highest node with memory; a node past the
     * highest a machine can have is not counted. */
    struct np_nodemem m = {NULL, 0};
    for (int i = 0; i < n; i++)
        np_nodemem_line(lines[i], &m);
    ck_assert_int_eq(m.n, 4);
    np_nodemem_line("1000 default anon=1 dirty=1 N4096=1 kernelpagesize_kB=4", &m);
    np_nodemem_line("1000 default anon=1 dirty=1 N99999999999=1 kernelpagesize_kB=4", &m);
    ck_assert_int_eq(m.n, 4);
    np_nodemem_line("1000 default anon=1 dirty=1 N7=1 kernelpagesize_kB=4", &m);
    ck_assert_int_eq(m.n, 8);
    ck_assert_uint_eq(m.bytes[7], 4096);
    ck_assert_uint_eq(m.bytes[5], 0);
    np_nodemem_free(&m);
}
END_TEST

/* A file name holds spaces and may look like the counts: only what the
 * kernel wrote after it counts. */
START_TEST(file_names_do_not_count)
{
    const char *const evil[] = {
        /* No page resident: the line ends with the name. */
        "7f0000001000 default file=/tmp/x\\040y N1=100000 kernelpagesize_kB=4\n",
        "7f0000001000 default file=/tmp/a b N1=100000 kernelpagesize_kB=4\n",
        /* Pages resident: the name's counts come before anon=. */
        "7f0000002000 default file=/tmp/c mapped=5 N1=7 kernelpagesize_kB=4 anon=1 dirty=1 N1=1 "
        "kernelpagesize_kB=4\n",
    };
    ck_assert_uint_eq(sum(evil, 3, 1), 4096ULL);
}
END_TEST

START_TEST(reads_a_file)
{
    char dir[256], path[512];
    t_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/numa_maps", dir);
    const char *text = "1000 default anon=3 dirty=3 N0=3 kernelpagesize_kB=4\n"
                       "2000 default file=/lib/x.so mapped=10 mapmax=4 N1=10 kernelpagesize_kB=4\n";
    ck_assert_int_eq(t_write_file(path, text, strlen(text)), 0);
    struct np_nodemem m;
    ck_assert_int_eq(np_nodemem_read(path, &m), 0);
    ck_assert_int_eq(m.n, 2);
    ck_assert_uint_eq(m.bytes[0], 3 * 4096ULL);
    ck_assert_uint_eq(m.bytes[1], 10 * 4096ULL);
    np_nodemem_free(&m);
    unlink(path);
    errno = 0;
    ck_assert_int_eq(np_nodemem_read(path, &m), -1);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_int_eq(m.n, 0);
    t_rmdir(dir);
    /* This process: some memory on node 0, when the kernel has NUMA. */
    if (access("/proc/self/numa_maps", R_OK) == 0) {
        ck_assert_int_eq(np_nodemem_read(NULL, &m), 0);
        ck_assert_int_ge(m.n, 1);
        ck_assert_uint_gt(m.bytes[0], 0);
        np_nodemem_free(&m);
    }
}
END_TEST

Suite *nodemem_suite(void)
{
    Suite *s = suite_create("nodemem");
    TCase *tc = tcase_create("nodemem");
    tcase_add_test(tc, counts_pages_per_node);
    tcase_add_test(tc, file_names_do_not_count);
    tcase_add_test(tc, reads_a_file);
    suite_add_tcase(s, tc);
    return s;
}
