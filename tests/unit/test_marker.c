/* np_marker: the text round trip, what a reader refuses, and publishing
 * (whole versions on one descriptor, sealed; a descriptor the process
 * reused is left alone). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "np_marker.h"
#include "tests.h"

static struct np_marker sample(void)
{
    static struct np_marker_thread threads[2];
    threads[0] = (struct np_marker_thread){4242, t_bitmap("2"), 0};
    threads[1] = (struct np_marker_thread){4243, t_bitmap("3"), 5};
    return (struct np_marker){
        .pid = 1, .seq = 7, .time = 1733040000, .group = 1, .groups = 2, .plan = 3,
        .cpus = t_bitmap("2-3"), .nodes = t_bitmap("1"), .mem = NP_MEM_PREFERRED, .drift = 5,
        .nthreads = 2,
        .threads = threads,
    };
}

static void free_sample(struct np_marker *m)
{
    for (int i = 0; i < m->nthreads; i++)
        hwloc_bitmap_free(m->threads[i].cpus);
    hwloc_bitmap_free(m->cpus);
    hwloc_bitmap_free(m->nodes);
}

static const char SAMPLE[] = "numapin-marker 2\npid 1\nseq 7\ntime 1733040000\ngroup 1 groups 2 plan 3\n"
                             "cpus 2-3 nodes 1\nmem preferred\ndrift 5\nthread 4242 cpus 2 drift 0\n"
                             "thread 4243 cpus 3 drift 5\nend 7\n";

START_TEST(round_trip)
{
    struct np_marker m = sample();
    char *text;
    size_t len;
    ck_assert_int_eq(np_marker_format(&m, &text, &len), 0);
    ck_assert_str_eq(text, SAMPLE);
    ck_assert_uint_eq(len, strlen(SAMPLE));
    struct np_marker back;
    ck_assert_int_eq(np_marker_parse(text, len, &back), 0);
    ck_assert_int_eq(back.pid, 1);
    ck_assert_uint_eq(back.seq, 7);
    ck_assert_int_eq(back.time, 1733040000);
    ck_assert_int_eq(back.group, 1);
    ck_assert_int_eq(back.groups, 2);
    ck_assert_uint_eq(back.plan, 3);
    ck_assert(hwloc_bitmap_isequal(back.cpus, m.cpus));
    ck_assert(hwloc_bitmap_isequal(back.nodes, m.nodes));
    ck_assert_int_eq(back.mem, NP_MEM_PREFERRED);
    ck_assert_int_eq(back.drift, 5);
    ck_assert_int_eq(back.nthreads, 2);
    ck_assert_int_eq(back.threads[1].tid, 4243);
    ck_assert(hwloc_bitmap_isequal(back.threads[1].cpus, m.threads[1].cpus));
    ck_assert_int_eq(back.threads[1].drift, 5);
    np_marker_free(&back);
    free(text);
    /* No CPUs (the cpuset leaves the group none), no threads. */
    hwloc_bitmap_free(m.cpus);
    hwloc_bitmap_free(m.nodes);
    m.cpus = m.nodes = NULL;
    int n = m.nthreads;
    m.nthreads = 0;
    ck_assert_int_eq(np_marker_format(&m, &text, &len), 0);
    ck_assert_ptr_nonnull(strstr(text, "\ncpus none nodes none\n"));
    ck_assert_int_eq(np_marker_parse(text, len, &back), 0);
    ck_assert_ptr_null(back.cpus);
    ck_assert_int_eq(back.nthreads, 0);
    np_marker_free(&back);
    free(text);
    m.nthreads = n;
    free_sample(&m);
}
END_TEST

/* Texts a reader must refuse: the sample with one change each. */
static const struct {
    const char *from, *to;
} bad[] = {
    {"numapin-marker 2\n", "numapin-marker 3\n"},
    {"numapin-marker 2\n", "numapin-marker 0\n"},
    {"numapin-marker 2\n", "numapin-marker 02\n"},
    {"mem preferred\n", ""},
    {"mem preferred\n", "mem prefer\n"},
    {"mem preferred\n", "mem preferred:1\n"},
    {"mem preferred\n", "mem\n"},
    {"pid 1\n", "pid 0\n"},
    {"pid 1\n", "pid 99999999999999999999999\n"},
    {"pid 1\n", "pid -1\n"},
    {"pid 1\n", "pid  1\n"},
    {"pid 1\n", "pid 1 \n"},
    {"seq 7\n", "seq 7x\n"},
    {"group 1 groups 2 plan 3\n", "group 2 groups 2 plan 3\n"},
    {"group 1 groups 2 plan 3\n", "group 1 groups 0 plan 3\n"},
    {"group 1 groups 2 plan 3\n", "group 1 groups 2\n"},
    {"cpus 2-3 nodes 1\n", "cpus 3-2 nodes 1\n"},
    {"cpus 2-3 nodes 1\n", "cpus 2-3 nodes none\n"},
    {"cpus 2-3 nodes 1\n", "cpus 0-99999999 nodes 1\n"},
    {"cpus 2-3 nodes 1\n", "cpus 2-3, nodes 1\n"},
    {"thread 4242 cpus 2 drift 0\n", "thread 4242 cpus  drift 0\n"},
    {"thread 4242 cpus 2 drift 0\n", "thread 4242 cpus none drift 0\n"},
    {"thread 4242 cpus 2 drift 0\n", "thread 0 cpus 2 drift 0\n"},
    {"thread 4242 cpus 2 drift 0\n", "thread 4242 cpus 2 drift 0 extra\n"},
    {"thread 4242 cpus 2 drift 0\n", "thread 4242 cpus 2\n"},
    {"thread 4242 cpus 2 drift 0\n", "\n"},
    {"thread 4242 cpus 2 drift 0\n", "bogus\n"},
    {"end 7\n", "end 8\n"},
    {"end 7\n", ""},
    {"end 7\n", "end 7\nthread 1 cpus 1 drift 0\n"},
    {"end 7\n", "end 7"},
};

/* A marker of version 1, of an agent before mem was written: read, its
 * memory policy unknown. */
START_TEST(reads_version_1)
{
    static const char V1[] = "numapin-marker 1\npid 1\nseq 7\ntime 1733040000\n"
                             "group 1 groups 2 plan 3\ncpus 2-3 nodes 1\ndrift 5\n"
                             "thread 4242 cpus 2 drift 0\nend 7\n";
    struct np_marker m;
    ck_assert_int_eq(np_marker_parse(V1, strlen(V1), &m), 0);
    ck_assert_int_eq(m.mem, -1);
    ck_assert_int_eq(m.nthreads, 1);
    np_marker_free(&m);
    /* version 1 has no mem line */
    static const char V1MEM[] = "numapin-marker 1\npid 1\nseq 7\ntime 1733040000\n"
                                "group 1 groups 2 plan 3\ncpus 2-3 nodes 1\nmem none\ndrift 5\n"
                                "end 7\n";
    ck_assert_int_eq(np_marker_parse(V1MEM, strlen(V1MEM), &m), -1);
}
END_TEST

START_TEST(refuses)
{
    const char *from = bad[_i].from, *to = bad[_i].to;
    const char *at = strstr(SAMPLE, from);
    ck_assert_ptr_nonnull(at);
    char text[1024];
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - SAMPLE), SAMPLE, to, at + strlen(from));
    struct np_marker m;
    ck_assert_msg(np_marker_parse(text, strlen(text), &m) == -1, "accepted: %s", text);
    ck_assert_int_eq(m.nthreads, 0);
    ck_assert_ptr_null(m.threads);
    ck_assert_ptr_null(m.cpus);
}
END_TEST

START_TEST(refuses_nul_and_cut)
{
    struct np_marker m;
    char text[sizeof SAMPLE];
    memcpy(text, SAMPLE, sizeof SAMPLE);
    text[20] = '\0';
    ck_assert_int_eq(np_marker_parse(text, sizeof SAMPLE - 1, &m), -1);
    /* Every cut short of the whole text is refused. */
    for (size_t n = 0; n < sizeof SAMPLE - 1; n++)
        ck_assert_msg(np_marker_parse(SAMPLE, n, &m) == -1, "accepted the first %zu bytes", n);
    ck_assert_int_eq(np_marker_parse(SAMPLE, sizeof SAMPLE - 1, &m), 0);
    np_marker_free(&m);
}
END_TEST

/* The marker as a reader of /proc/self/fd finds it: the descriptor's link
 * and its content. */
static char *content(int fd, char *link, size_t linklen)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, link, linklen - 1);
    ck_assert_int_gt(n, 0);
    link[n] = '\0';
    return t_read_file(path, NULL);
}

START_TEST(publish_replaces_whole_and_sealed)
{
    struct np_marker_file f = {.fd = -1};
    ck_assert_int_eq(np_marker_publish(&f, "first\n", 6), 0);
    int fd = f.fd;
    ck_assert_int_ge(fd, 0);
    char link[256];
    char *text = content(fd, link, sizeof link);
    ck_assert_str_eq(link, NP_MARKER_LINK);
    ck_assert_str_eq(text, "first\n");
    free(text);
    ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    int seals = fcntl(fd, F_GET_SEALS);
    ck_assert_int_eq(seals & (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
                     F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    /* Nobody writes a version once published. */
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int w = open(path, O_WRONLY);
    ck_assert_msg(w < 0 || write(w, "x", 1) < 0, "a sealed marker was written");
    if (w >= 0)
        close(w);
    /* The next version: the same descriptor number, another file. */
    struct stat a, b;
    ck_assert_int_eq(fstat(fd, &a), 0);
    ck_assert_int_eq(np_marker_publish(&f, "second, longer\n", 15), 0);
    ck_assert_int_eq(f.fd, fd);
    ck_assert_int_eq(fstat(fd, &b), 0);
    ck_assert(a.st_ino != b.st_ino);
    text = content(fd, link, sizeof link);
    ck_assert_str_eq(text, "second, longer\n");
    free(text);
    /* Someone closed it and the number went to another file: that file is
     * not replaced; the marker gets a number of its own. */
    close(fd);
    int other = open("/dev/null", O_RDONLY | O_CLOEXEC);
    ck_assert_int_eq(other, fd);
    ck_assert_int_eq(np_marker_publish(&f, "third\n", 6), 0);
    ck_assert_int_ne(f.fd, fd);
    text = content(other, link, sizeof link);
    ck_assert_str_eq(link, "/dev/null");
    free(text);
    text = content(f.fd, link, sizeof link);
    ck_assert_str_eq(text, "third\n");
    free(text);
    int marker = f.fd;
    np_marker_close(&f);
    ck_assert_int_eq(f.fd, -1);
    ck_assert_int_eq(fcntl(marker, F_GETFD), -1);
    ck_assert_int_ge(fcntl(other, F_GETFD), 0);
    close(other);
}
END_TEST

Suite *marker_suite(void)
{
    Suite *s = suite_create("marker");
    TCase *tc = tcase_create("marker");
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, reads_version_1);
    tcase_add_loop_test(tc, refuses, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, refuses_nul_and_cut);
    tcase_add_test(tc, publish_replaces_whole_and_sealed);
    suite_add_tcase(s, tc);
    return s;
}
