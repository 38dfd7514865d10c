/* np_hugepages: hugetlb pools by node, read from a fake sysfs and meminfo
 * under a private directory (the `root` argument), and the agent's check
 * of them at load (np_agent_large_pages_at_load) on the fake two-node
 * machine of test_agent.c (HWLOC_SYNTHETIC "pack:1 numa:2 core:1 pu:1"
 * over this host's CPUs 0 and 1; only node 0 is real, so a memory policy
 * is set on group 0 only).  Every test runs in its own process. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <numaif.h>

#include "np_agent.h"
#include "np_hugepages.h"
#include "tests.h"

#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)

static char root[256], log_path[512], err_path[512];
static int saved_stderr = -1;
static cpu_set_t start_cpus;

static void mkdirs(const char *path)
{
    char p[1024];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s != '\0'; s++) {
        if (*s == '/') {
            *s = '\0';
            ck_assert_msg(mkdir(p, 0700) == 0 || errno == EEXIST, "mkdir %s", p);
            *s = '/';
        }
    }
    ck_assert_msg(mkdir(p, 0700) == 0 || errno == EEXIST, "mkdir %s", p);
}

/* Writes `text` to <root>/<rel>, making the directories. */
static void put(const char *rel, const char *text)
{
    char path[1024], dir[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    mkdirs(dir);
    ck_assert_int_eq(t_write_file(path, text, strlen(text)), 0);
}

/* Node `node`'s pool of pages of `kib` KiB: `nr` reserved, `free` free. */
static void pool(int node, unsigned long kib, long nr, long free_pages)
{
    char rel[256], v[32];
    snprintf(rel, sizeof rel, "sys/devices/system/node/node%d/hugepages/hugepages-%lukB/nr_hugepages",
             node, kib);
    snprintf(v, sizeof v, "%ld\n", nr);
    put(rel, v);
    snprintf(rel, sizeof rel,
             "sys/devices/system/node/node%d/hugepages/hugepages-%lukB/free_hugepages", node, kib);
    snprintf(v, sizeof v, "%ld\n", free_pages);
    put(rel, v);
}

static void meminfo(unsigned long kib)
{
    char text[256];
    snprintf(text, sizeof text,
             "MemTotal:       24684000 kB\nHugePages_Total:       0\nHugePages_Free:        0\n"
             "Hugepagesize:       %lu kB\nHugetlb:               0 kB\n", kib);
    put("proc/meminfo", text);
}

static void setup(void)
{
    t_tmpdir(root, sizeof root);
    snprintf(log_path, sizeof log_path, "%s/agent.log", root);
    snprintf(err_path, sizeof err_path, "%s/stderr", root);
    fflush(stderr);
    saved_stderr = dup(STDERR_FILENO);
    int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, STDERR_FILENO);
    close(fd);
    ck_assert_int_eq(sched_getaffinity(0, sizeof start_cpus, &start_cpus), 0);
    ck_assert_msg(CPU_ISSET(0, &start_cpus) && CPU_ISSET(1, &start_cpus),
                  "these tests need a process allowed on CPUs 0 and 1");
    ck_assert_int_eq(setenv("HWLOC_SYNTHETIC", "pack:1 numa:2 core:1 pu:1", 1), 0);
    ck_assert_int_eq(setenv("HWLOC_THISSYSTEM", "1", 1), 0);
    unsetenv("HWLOC_XMLFILE");
}

static void teardown(void)
{
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    t_rmdir(root);
}

/* --- the pools --- */

START_TEST(default_size_from_meminfo)
{
    ck_assert(np_hugepages_default_size(root) == 0); /* no meminfo */
    meminfo(2048);
    ck_assert(np_hugepages_default_size(root) == 2 * MIB);
    meminfo(1048576);
    ck_assert(np_hugepages_default_size(root) == GIB);
    put("proc/meminfo", "MemTotal: 1 kB\nHugepagesize:       many kB\n");
    ck_assert(np_hugepages_default_size(root) == 0);
    put("proc/meminfo", "MemTotal: 1 kB\n"); /* a kernel without hugetlb */
    ck_assert(np_hugepages_default_size(root) == 0);
}
END_TEST

START_TEST(free_and_reserved_by_node_and_size)
{
    pool(0, 2048, 12, 10);
    pool(0, 1048576, 2, 1);
    pool(1, 2048, 0, 0);
    ck_assert_int_eq(np_hugepages_free(root, 0, 2 * MIB), 10);
    ck_assert_int_eq(np_hugepages_nr(root, 0, 2 * MIB), 12);
    ck_assert_int_eq(np_hugepages_free(root, 0, GIB), 1);
    ck_assert_int_eq(np_hugepages_nr(root, 0, GIB), 2);
    ck_assert_int_eq(np_hugepages_free(root, 1, 2 * MIB), 0);
}
END_TEST

START_TEST(what_cannot_be_read_is_unknown)
{
    pool(0, 2048, 12, 10);
    ck_assert_int_eq(np_hugepages_free(root, 3, 2 * MIB), -1);  /* no such node */
    ck_assert_int_eq(np_hugepages_free(root, 0, 16 * 1024), -1); /* no such size */
    ck_assert_int_eq(np_hugepages_free(root, 0, 1000), -1);      /* not whole KiB */
    const char *bad[] = {"", "\n", "12abc\n", "-1\n", " 12\n", "12\n\n", "99999999999999999999\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        put("sys/devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages", bad[i]);
        ck_assert_msg(np_hugepages_free(root, 0, 2 * MIB) == -1, "\"%s\" read as a count", bad[i]);
    }
    /* A file that cannot be read (a directory in its place). */
    char path[1024];
    snprintf(path, sizeof path, "%s/sys/devices/system/node/node0/hugepages/hugepages-2048kB/"
                                "free_hugepages", root);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    ck_assert_int_eq(np_hugepages_free(root, 0, 2 * MIB), -1);
}
END_TEST

START_TEST(free_summed_over_the_nodes)
{
    pool(0, 2048, 40, 30);
    pool(1, 2048, 40, 25);
    pool(2, 2048, 40, 7);
    hwloc_bitmap_t nodes = t_bitmap("0-1");
    ck_assert_int_eq(np_hugepages_free_on(root, nodes, 2 * MIB), 55);
    hwloc_bitmap_set(nodes, 2);
    ck_assert_int_eq(np_hugepages_free_on(root, nodes, 2 * MIB), 62);
    hwloc_bitmap_set(nodes, 3); /* one node unknown: the sum is too */
    ck_assert_int_eq(np_hugepages_free_on(root, nodes, 2 * MIB), -1);
    hwloc_bitmap_zero(nodes);
    ck_assert_int_eq(np_hugepages_free_on(root, nodes, 2 * MIB), -1);
    hwloc_bitmap_fill(nodes);
    ck_assert_int_eq(np_hugepages_free_on(root, nodes, 2 * MIB), -1);
    hwloc_bitmap_free(nodes);
}
END_TEST

START_TEST(pages_and_sizes)
{
    ck_assert_int_eq(np_hugepages_count(64 * MIB, 2 * MIB), 32);
    ck_assert_int_eq(np_hugepages_count(64 * MIB + 1, 2 * MIB), 33);
    ck_assert_int_eq(np_hugepages_count(1, GIB), 1);
    ck_assert_int_eq(np_hugepages_count(0, 2 * MIB), 0);
    ck_assert_int_eq(np_hugepages_count(64 * MIB, 0), 0);
    char s[32];
    np_hugepages_size_str(s, sizeof s, 2 * MIB);
    ck_assert_str_eq(s, "2M");
    np_hugepages_size_str(s, sizeof s, GIB);
    ck_assert_str_eq(s, "1G");
    np_hugepages_size_str(s, sizeof s, 16 * GIB);
    ck_assert_str_eq(s, "16G");
    np_hugepages_size_str(s, sizeof s, 64 * 1024);
    ck_assert_str_eq(s, "64K");
}
END_TEST

/* The decision: the whole maximum heap, and the code cache when it holds
 * 8 pages of the size, against the group's free pages. */
START_TEST(check_short_enough_and_exact)
{
    meminfo(2048);
    pool(0, 2048, 100, 100);
    pool(1, 2048, 500, 500);
    hwloc_bitmap_t nodes = t_bitmap("0"), all = t_bitmap("0-1");
    /* 64 MiB heap, 240 MiB code cache, segmented: 32 + 121 pages. */
    struct np_hugepages_jvm jvm = {0, 64 * MIB, 240 * MIB, true};
    struct np_hugepages_need n;
    np_hugepages_check(root, &jvm, nodes, all, &n);
    ck_assert(n.page == 2 * MIB); /* the kernel's default */
    ck_assert_int_eq(n.heap_pages, 32);
    ck_assert_int_eq(n.code_pages, 121);
    ck_assert_int_eq(n.needed, 153);
    ck_assert_int_eq(n.free, 100);
    ck_assert_int_eq(n.free_all, 600);
    ck_assert(n.known && !n.enough);

    pool(0, 2048, 153, 153); /* exactly what is needed */
    np_hugepages_check(root, &jvm, nodes, all, &n);
    ck_assert(n.known && n.enough);
    pool(0, 2048, 153, 152);
    np_hugepages_check(root, &jvm, nodes, all, &n);
    ck_assert(!n.enough);

    /* A code cache not segmented takes its size in pages. */
    jvm.segmented = false;
    np_hugepages_check(root, &jvm, nodes, all, &n);
    ck_assert_int_eq(n.code_pages, 120);
    ck_assert(n.enough);
    hwloc_bitmap_free(nodes);
    hwloc_bitmap_free(all);
}
END_TEST

START_TEST(check_one_gib_pages)
{
    meminfo(2048);
    pool(0, 1048576, 2, 2);
    pool(1, 1048576, 1, 1);
    hwloc_bitmap_t nodes = t_bitmap("0"), all = t_bitmap("0-1");
    /* A 240 MiB code cache is fewer than 8 pages of 1 GiB: not counted. */
    struct np_hugepages_jvm jvm = {GIB, 2 * GIB, 240 * MIB, true};
    struct np_hugepages_need n;
    np_hugepages_check(root, &jvm, nodes, all, &n);
    ck_assert(n.page == GIB);
    ck_assert_int_eq(n.heap_pages, 2);
    ck_assert_int_eq(n.code_pages, 0);
    ck_assert(n.enough);
    jvm.max_heap = 2 * GIB + 1;
    np_hugepages_check(root, &jvm, nodes, all, &n);
    ck_assert_int_eq(n.needed, 3);
    ck_assert_int_eq(n.free, 2);
    ck_assert_int_eq(n.free_all, 3);
    ck_assert(!n.enough);
    hwloc_bitmap_free(nodes);
    hwloc_bitmap_free(all);
}
END_TEST

START_TEST(check_unknown)
{
    hwloc_bitmap_t nodes = t_bitmap("0"), all = t_bitmap("0-1");
    struct np_hugepages_jvm jvm = {0, 64 * MIB, 0, false};
    struct np_hugepages_need n;
    np_hugepages_check(root, &jvm, nodes, all, &n); /* no meminfo: no default size */
    ck_assert(n.page == 0);
    ck_assert(!n.known && !n.enough);
    meminfo(2048); /* a size, no pool directory */
    np_hugepages_check(root, &jvm, nodes, all, &n);
    ck_assert(n.page == 2 * MIB);
    ck_assert_int_eq(n.free, -1);
    ck_assert(!n.known && !n.enough);
    hwloc_bitmap_free(nodes);
    hwloc_bitmap_free(all);
}
END_TEST

/* --- the agent's check at load --- */

static struct np_agent *create(const char *opts)
{
    struct np_agent *a = NULL;
    enum np_status st = np_agent_create(opts, &a);
    if (st != NP_OK) {
        char *e = t_read_file(err_path, NULL);
        ck_abort_msg("np_agent_create(\"%s\") = %d: %s", opts, st, e);
    }
    return a;
}

/* Ends the agent and puts this process back as it started. */
static char *finish(struct np_agent *a)
{
    np_agent_destroy(a);
    ck_assert_int_eq(sched_setaffinity(0, sizeof start_cpus, &start_cpus), 0);
    ck_assert_int_eq(set_mempolicy(MPOL_DEFAULT, NULL, 0), 0);
    char *log = t_read_file(log_path, NULL);
    ck_assert_ptr_nonnull(log);
    return log;
}

static enum np_status check_with(const char *opts, const struct np_heap_flags *f, char **log)
{
    char o[1024];
    snprintf(o, sizeof o, "%s,log=info:%s", opts, log_path);
    unlink(log_path);
    struct np_agent *a = create(o);
    enum np_status st = np_agent_large_pages_at_load(a, f, root);
    *log = finish(a);
    return st;
}

/* -XX:+UseLargePages -Xmx64m, HotSpot's default code cache (240 MiB,
 * segmented): 32 + 121 pages of the kernel's default 2 MiB. */
static const struct np_heap_flags large64 = {1, 0, -1, 0, 0, 64 << 20, 240 << 20, 1, 0, NULL};

START_TEST(agent_enough_is_one_info_line)
{
    meminfo(2048);
    pool(0, 2048, 200, 160);
    pool(1, 2048, 0, 0);
    char *log;
    ck_assert_int_eq(check_with("groups=2,group=0", &large64, &log), NP_OK);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] large pages: node 0 has the free 2M huge "
                                        "pages this JVM reserves (its maximum heap and code cache): "
                                        "free=160 needed=153 size=2M nodes=0 heap_pages=32 "
                                        "code_pages=121"), 1);
    ck_assert_int_eq(t_count_lines(log, "[warning]"), 0);
    free(log);
}
END_TEST

START_TEST(agent_short_under_preferred_warns_with_the_fix)
{
    meminfo(2048);
    pool(0, 2048, 110, 100);
    pool(1, 2048, 300, 300);
    char *log;
    ck_assert_int_eq(check_with("groups=2,group=0,mem=preferred", &large64, &log), NP_OK);
    ck_assert_int_eq(t_count_lines(log, "[warning]"), 1);
    ck_assert_int_eq(t_count_lines(log, "[warning][numapin] large pages: node 0 has fewer free 2M "
                                        "huge pages than this JVM reserves (its maximum heap and "
                                        "code cache); under mem=preferred the kernel takes the 53 "
                                        "pages node 0 lacks from other nodes' pools as the JVM "
                                        "touches them: that part of the heap is remote; to reserve "
                                        "them: echo 163 > /sys/devices/system/node/node0/hugepages/"
                                        "hugepages-2048kB/nr_hugepages, or at boot hugepagesz=2M "
                                        "hugepages=0:163; free=100 needed=153 size=2M nodes=0 "
                                        "heap_pages=32 code_pages=121"), 1);
    ck_assert_int_eq(t_count_lines(log, "large pages: node 0 has the free"), 0);
    free(log);

    /* AlwaysPreTouch takes them at start-up. */
    struct np_heap_flags touch = large64;
    touch.pretouch = 1;
    ck_assert_int_eq(check_with("groups=2,group=0,mem=preferred", &touch, &log), NP_OK);
    ck_assert_int_eq(t_count_lines(log, "pools at start-up (AlwaysPreTouch): that part"), 1);
    free(log);
}
END_TEST

START_TEST(agent_short_under_bind_and_everywhere)
{
    meminfo(2048);
    pool(0, 2048, 100, 100);
    pool(1, 2048, 300, 300);
    char *log;
    ck_assert_int_eq(check_with("groups=2,group=0,mem=bind", &large64, &log), NP_OK);
    ck_assert_int_eq(t_count_lines(log, "[warning]"), 1);
    ck_assert_int_eq(t_count_lines(log, " code cache); under mem=bind the kernel lets HotSpot "
                                        "reserve huge pages only on node 0: what does not fit of "
                                        "the code cache (reserved first) and the heap gets small "
                                        "pages, and HotSpot warns \"Failed to reserve and commit "
                                        "memory\"; to reserve them: echo 153 > "), 1);
    ck_assert_int_eq(t_count_lines(log, "; free=100 needed=153 size=2M nodes=0 heap_pages=32 "
                                        "code_pages=121"), 1);
    free(log);

    /* Every node short: no pool takes the rest. */
    pool(1, 2048, 20, 20);
    ck_assert_int_eq(check_with("groups=2,group=0,mem=preferred", &large64, &log), NP_OK);
    ck_assert_int_eq(t_count_lines(log, "[warning]"), 1);
    ck_assert_int_eq(t_count_lines(log, "code cache); the pools of every node hold only 120 "
                                        "free: what does not fit of the code cache (reserved "
                                        "first) and the heap gets small pages, and HotSpot warns "
                                        "\"Failed to reserve and commit memory\", and the huge "
                                        "pages beyond node 0's come from other nodes; "), 1);
    free(log);
}
END_TEST

START_TEST(agent_short_under_strict_fails_but_not_dryrun)
{
    meminfo(2048);
    pool(0, 2048, 100, 100);
    pool(1, 2048, 0, 0);
    char *log;
    ck_assert_int_eq(check_with("groups=2,group=0,strict", &large64, &log), NP_ERR_RUNTIME);
    free(log);
    char *err = t_read_file(err_path, NULL);
    ck_assert_int_eq(t_count_lines(err, "[error][numapin] large pages: node 0 has fewer free 2M "
                                        "huge pages than this JVM reserves"), 1);
    ck_assert_int_eq(t_count_lines(err, "; free=100 needed=153 size=2M nodes=0 heap_pages=32 "
                                        "code_pages=121 (strict: the JVM does not start)"), 1);
    free(err);

    /* dryrun places nothing: it says what placing meets, and goes on. */
    ck_assert_int_eq(check_with("groups=2,group=0,strict,dryrun", &large64, &log), NP_OK);
    ck_assert_int_eq(t_count_lines(log, "[warning][numapin] large pages: node 0 has fewer free"), 1);
    ck_assert_int_eq(t_count_lines(log, " (dryrun: numapin placed nothing; this is what the placed "
                                        "JVM meets); to reserve them: "), 1);
    ck_assert_int_eq(t_count_lines(log, "strict: the JVM does not start"), 0);
    free(log);
}
END_TEST

/* A group of two nodes: their free pages summed, the lack split. */
START_TEST(agent_group_of_two_nodes)
{
    meminfo(2048);
    pool(0, 2048, 60, 50);
    pool(1, 2048, 40, 40);
    char *log;
    ck_assert_int_eq(check_with("groups=1,scope=jvm,mem=none", &large64, &log), NP_OK);
    ck_assert_int_eq(t_count_lines(log, "[warning][numapin] large pages"), 1);
    ck_assert_int_eq(t_count_lines(log, "; free=90 needed=153 size=2M nodes=0-1 heap_pages=32 "
                                        "code_pages=121"), 1);
    ck_assert_int_eq(t_count_lines(log, "; to reserve them: echo 92 > /sys/devices/system/node/"
                                        "node0/hugepages/hugepages-2048kB/nr_hugepages; echo 72 > "
                                        "/sys/devices/system/node/node1/hugepages/hugepages-2048kB/"
                                        "nr_hugepages, or at boot hugepagesz=2M "
                                        "hugepages=0:92,1:72; free=90 "), 1);
    free(log);
    pool(1, 2048, 200, 200);
    ck_assert_int_eq(check_with("groups=1,scope=jvm,mem=none", &large64, &log), NP_OK);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] large pages: node 0-1 has the free 2M "
                                        "huge pages this JVM reserves"), 1);
    ck_assert_int_eq(t_count_lines(log, " free=250 needed=153 "), 1);
    free(log);
}
END_TEST

START_TEST(agent_one_gib_pages)
{
    meminfo(2048);
    pool(0, 1048576, 1, 1);
    pool(1, 1048576, 0, 0);
    struct np_heap_flags f = large64;
    f.page_size = 1 << 30;
    f.max_heap = 2LL << 30;
    char *log;
    ck_assert_int_eq(check_with("groups=2,group=0", &f, &log), NP_OK);
    ck_assert_int_eq(t_count_lines(log, "; free=1 needed=2 size=1G nodes=0 heap_pages=2 "
                                        "code_pages=0"), 1);
    ck_assert_int_eq(t_count_lines(log, "echo 2 > /sys/devices/system/node/node0/hugepages/"
                                        "hugepages-1048576kB/nr_hugepages, or at boot "
                                        "hugepagesz=1G hugepages=0:2 (1G pages are best reserved "
                                        "at boot"), 1);
    free(log);
}
END_TEST

/* Nothing to count: no large pages, transparent ones, a JVM not placed
 * whole; a pool that cannot be read is said at info level. */
START_TEST(agent_checks_only_hugetlbfs_pages_of_a_placed_jvm)
{
    meminfo(2048);
    pool(0, 2048, 0, 0);
    pool(1, 2048, 0, 0);
    struct np_heap_flags off = large64, thp = large64, unknown = large64;
    off.large_pages = 0;
    thp.thp = 1;
    unknown.large_pages = -1;
    const struct np_heap_flags *none[] = {&off, &thp, &unknown};
    char *log;
    for (size_t i = 0; i < sizeof none / sizeof *none; i++) {
        ck_assert_int_eq(check_with("groups=2,group=0,strict", none[i], &log), NP_OK);
        ck_assert_int_eq(t_count_lines(log, "large pages"), 0);
        free(log);
    }
    ck_assert_int_eq(check_with("groups=2,group=0,scope=threads", &large64, &log), NP_OK);
    ck_assert_int_eq(t_count_lines(log, "large pages"), 0);
    free(log);

    t_rmdir(root); /* no pools, no meminfo: the size is unknown */
    mkdirs(root);
    ck_assert_int_eq(check_with("groups=2,group=0,strict", &large64, &log), NP_OK);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] large pages: the page size is unknown: the "
                                        "huge pages node 0 has for this JVM are not checked"), 1);
    ck_assert_int_eq(t_count_lines(log, "[warning]"), 0);
    free(log);
    meminfo(2048); /* a size, but no pool of it */
    ck_assert_int_eq(check_with("groups=2,group=0,strict", &large64, &log), NP_OK);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] large pages: the free 2M huge pages of "
                                        "node 0 cannot be read (no pool of that size there?): not "
                                        "checked"), 1);
    ck_assert_int_eq(t_count_lines(log, "[warning]"), 0);
    free(log);
}
END_TEST

/* A SysV heap (UseSHM, JDK 17) takes huge pages from the same pools; the
 * code cache then takes small ones. */
START_TEST(agent_shm_heap_counts_the_heap_alone)
{
    meminfo(2048);
    pool(0, 2048, 40, 40);
    pool(1, 2048, 0, 0);
    struct np_heap_flags f = large64;
    f.shm = 1;
    char *log;
    ck_assert_int_eq(check_with("groups=2,group=0", &f, &log), NP_OK);
    ck_assert_int_eq(t_count_lines(log, "[info][numapin] large pages: node 0 has the free 2M huge "
                                        "pages this JVM reserves (its maximum heap) (a SysV "
                                        "shared-memory heap, UseSHM: the same pools; the code "
                                        "cache takes small pages): free=40 needed=32 size=2M "
                                        "nodes=0 heap_pages=32 code_pages=0"), 1);
    free(log);
    pool(0, 2048, 30, 30);
    ck_assert_int_eq(check_with("groups=2,group=0,mem=bind", &f, &log), NP_OK);
    ck_assert_int_eq(t_count_lines(log, "only on node 0: the heap gets small pages, and HotSpot "
                                        "warns \"Failed to reserve shared memory\"; to reserve them: "
                                        "echo 32 > "), 1);
    free(log);
}
END_TEST

START_TEST(agent_heap_in_a_file_warns)
{
    meminfo(2048);
    struct np_heap_flags f = {0, 0, -1, 0, 0, 64 << 20, 240 << 20, 1, 1, "/mnt/pmem"};
    char *log;
    ck_assert_int_eq(check_with("groups=2,group=0", &f, &log), NP_OK);
    ck_assert_int_eq(t_count_lines(log, "[warning]"), 1);
    ck_assert_int_eq(t_count_lines(log, "[warning][numapin] AllocateHeapAt=/mnt/pmem: HotSpot keeps "
                                        "the heap in a file there"), 1);
    free(log);
}
END_TEST

Suite *hugepages_suite(void)
{
    Suite *s = suite_create("hugepages");
    TCase *tc = tcase_create("pools");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, default_size_from_meminfo);
    tcase_add_test(tc, free_and_reserved_by_node_and_size);
    tcase_add_test(tc, what_cannot_be_read_is_unknown);
    tcase_add_test(tc, free_summed_over_the_nodes);
    tcase_add_test(tc, pages_and_sizes);
    tcase_add_test(tc, check_short_enough_and_exact);
    tcase_add_test(tc, check_one_gib_pages);
    tcase_add_test(tc, check_unknown);
    suite_add_tcase(s, tc);
    tc = tcase_create("agent");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, agent_enough_is_one_info_line);
    tcase_add_test(tc, agent_short_under_preferred_warns_with_the_fix);
    tcase_add_test(tc, agent_short_under_bind_and_everywhere);
    tcase_add_test(tc, agent_short_under_strict_fails_but_not_dryrun);
    tcase_add_test(tc, agent_group_of_two_nodes);
    tcase_add_test(tc, agent_one_gib_pages);
    tcase_add_test(tc, agent_checks_only_hugetlbfs_pages_of_a_placed_jvm);
    tcase_add_test(tc, agent_shm_heap_counts_the_heap_alone);
    tcase_add_test(tc, agent_heap_in_a_file_warns);
    suite_add_tcase(s, tc);
    return s;
}
