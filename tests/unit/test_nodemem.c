/* np_nodemem: resident memory per node from numa_maps lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "np_nodemem.h"
#include "tests.h"

static unsigned long long sum(const char *const *lines, int n, int node, int nnodes)
{
    unsigned long long bytes[8] = {0};
    for (int i = 0; i < n; i++)
        np_nodemem_line(lines[i], bytes, nnodes);
    return bytes[node];
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
    ck_assert_uint_eq(sum(lines, n, 0, 4), (2 + 3 + 2) * 4096ULL);
    ck_assert_uint_eq(sum(lines, n, 1, 4), 1 * 4096ULL + 512ULL * 2048 * 1024 + 2 * 4096ULL);
    ck_assert_uint_eq(sum(lines, n, 3, 4), 2 * 4096ULL);
    /* Nodes past nnodes are not counted (nor written). */
    ck_assert_uint_eq(sum(lines, n, 3, 3), 0);
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
    ck_assert_uint_eq(sum(evil, 3, 1, 2), 4096ULL);
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
    unsigned long long bytes[2] = {99, 99};
    ck_assert_int_eq(np_nodemem_read(path, bytes, 2), 0);
    ck_assert_uint_eq(bytes[0], 3 * 4096ULL);
    ck_assert_uint_eq(bytes[1], 10 * 4096ULL);
    unlink(path);
    errno = 0;
    ck_assert_int_eq(np_nodemem_read(path, bytes, 2), -1);
    ck_assert_int_eq(errno, ENOENT);
    t_rmdir(dir);
    /* This process: some memory on node 0, when the kernel has NUMA. */
    if (access("/proc/self/numa_maps", R_OK) == 0) {
        ck_assert_int_eq(np_nodemem_read(NULL, bytes, 1), 0);
        ck_assert_uint_gt(bytes[0], 0);
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
