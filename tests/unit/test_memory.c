/* np_memory: memory by node, read from numa_maps lines (the process's own
 * and every page it maps), the strings the summary shows, and moving this
 * process's own pages (on this one-node host, every page is on node 0
 * already). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
    ck_assert_int_eq(np_memory_read(0, &m, NULL), 0);
    ck_assert_ptr_nonnull(m.pages);
    ck_assert_int_ge(np_memory_total(&m), (long long)(len / 4096));
    np_memory_free(&m);
    /* Every page mapped: the own ones, and the files' (this program, libc). */
    struct np_memory own;
    ck_assert_int_eq(np_memory_read(getpid(), &own, &m), 0);
    ck_assert_int_ge(np_memory_total(&own), (long long)(len / 4096));
    ck_assert_int_gt(np_memory_total(&m), np_memory_total(&own));
    np_memory_free(&own);
    hwloc_bitmap_t all = t_bitmap("0-4095");
    ck_assert_int_eq(np_memory_on(&m, all), np_memory_total(&m));
    hwloc_bitmap_free(all);
    np_memory_free(&m);
    ck_assert_ptr_null(m.pages);
    free((void *)buf);
    errno = 0;
    ck_assert_int_eq(np_memory_read(999999999, &m, NULL), -1);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_ptr_null(m.pages);
}
END_TEST

/* The pages on `node` that the lines add up to, own or all. */
static long long sum(const char *const *lines, int n, int node, bool own)
{
    struct np_memory m = {.pages = NULL};
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(np_memory_line(lines[i], own ? &m : NULL, own ? NULL : &m), 0);
    long long p = node < m.nnodes ? m.pages[node] : 0;
    np_memory_free(&m);
    return p;
}

START_TEST(counts_pages_per_node)
{
    const char *const lines[] = {
        "55ba93de1000 default file=/usr/bin/cat mapped=2 N0=2 kernelpagesize_kB=4\n",
        "55bac3e46000 default heap anon=4 dirty=4 active=0 N0=3 N1=1 kernelpagesize_kB=4\n",
        "7f0000000000 bind:1 file=/anon_hugepage\\040(deleted) huge anon=512 dirty=512 N1=512 "
        "kernelpagesize_kB=2048\n",
        "7f8380fa9000 interleave:0-3 anon=8 dirty=8 N0=2 N1=2 N2=2 N3=2 kernelpagesize_kB=4\n",
        "7f9000000000 default file=/anon_hugepage\\040(deleted) huge dirty=1 N2=1 kernelpagesize_kB=2048\n",
        "7ffd1c5c6000 default stack\n",      /* nothing resident: no counts */
        "7ffd1c5d0000 default\n",
        "",
    };
    int n = sizeof lines / sizeof *lines;
    /* Every page; huge pages count as the 4 KiB pages they hold. */
    ck_assert_int_eq(sum(lines, n, 0, false), 2 + 3 + 2);
    ck_assert_int_eq(sum(lines, n, 1, false), 1 + 512 * 512 + 2);
    ck_assert_int_eq(sum(lines, n, 2, false), 2 + 512);
    ck_assert_int_eq(sum(lines, n, 3, false), 2);
    /* The process's own: not the file's, but anonymous huge pages. */
    ck_assert_int_eq(sum(lines, n, 0, true), 3 + 2);
    ck_assert_int_eq(sum(lines, n, 2, true), 2 + 512);
    /* The table ends at the highest node with memory; a node past the
     * highest a machine can have is not counted. */
    struct np_memory m = {.pages = NULL};
    for (int i = 0; i < n; i++)
        np_memory_line(lines[i], NULL, &m);
    ck_assert_int_eq(m.nnodes, 4);
    np_memory_line("1000 default anon=1 dirty=1 N4096=1 kernelpagesize_kB=4", NULL, &m);
    np_memory_line("1000 default anon=1 dirty=1 N99999999999=1 kernelpagesize_kB=4", NULL, &m);
    ck_assert_int_eq(m.nnodes, 4);
    np_memory_line("1000 default anon=1 dirty=1 N7=1 kernelpagesize_kB=4", NULL, &m);
    ck_assert_int_eq(m.nnodes, 8);
    ck_assert_int_eq(m.pages[7], 1);
    ck_assert_int_eq(m.pages[5], 0);
    np_memory_free(&m);
}
END_TEST

/* hugetlb pages (numa_maps marks them `huge` and counts them in pages of
 * their size) count as the 4 KiB pages they hold and, by size and node,
 * apart; SysV segments and shared anonymous memory are the process's own,
 * a hugetlbfs file is not. */
START_TEST(counts_huge_pages_by_size)
{
    const char *const lines[] = {
        /* -XX:+UseLargePages: 2 MiB pages on nodes 1 and 2 */
        "7f0000000000 bind:1 file=/anon_hugepage\\040(deleted) huge dirty=128 N1=100 N2=28 "
        "kernelpagesize_kB=2048\n",
        /* 1 GiB pages of a memfd (ZGC with huge pages) */
        "7f4000000000 prefer (many):0-1 file=/memfd:java_heap\\040(deleted) huge dirty=3 N0=2 "
        "N2=1 kernelpagesize_kB=1048576\n",
        /* -XX:+UseSHM with huge pages, and without */
        "7f8000000000 default file=/SYSV00000000\\040(deleted) huge dirty=5 N1=5 "
        "kernelpagesize_kB=2048\n",
        "7f9000000000 default file=/SYSV0000abcd\\040(deleted) dirty=10 N0=10 "
        "kernelpagesize_kB=4\n",
        "7fa000000000 default file=/dev/zero\\040(deleted) dirty=7 N0=7 kernelpagesize_kB=4\n",
        /* a hugetlbfs file: mapped, not the process's own */
        "7fb000000000 default file=/dev/hugepages/shared huge dirty=9 N0=9 kernelpagesize_kB=2048\n",
        /* transparent huge pages: 4 KiB pages to numa_maps */
        "7fc000000000 default anon=1024 dirty=1024 N0=1024 kernelpagesize_kB=4\n",
    };
    struct np_memory own = {.pages = NULL}, all = {.pages = NULL};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        ck_assert_int_eq(np_memory_line(lines[i], &own, &all), 0);
    ck_assert_int_eq(own.pages[0], 2 * 262144 + 10 + 7 + 1024);
    ck_assert_int_eq(own.pages[1], 100 * 512 + 5 * 512);
    ck_assert_int_eq(own.pages[2], 28 * 512 + 262144);
    ck_assert_int_eq(all.pages[0], own.pages[0] + 9 * 512);
    /* By size, smallest first. */
    ck_assert_int_eq(own.huge[0].kib, 2048);
    ck_assert_int_eq(own.huge[1].kib, 1048576);
    ck_assert_int_eq(own.huge[2].kib, 0);
    ck_assert_int_eq(own.huge[0].pages[1], 105);
    ck_assert_int_eq(own.huge[0].pages[2], 28);
    ck_assert_int_eq(own.huge[0].nnodes > 0 ? own.huge[0].pages[0] : 0, 0);
    ck_assert_int_eq(all.huge[0].pages[0], 9);
    ck_assert_int_eq(np_memory_huge_bytes(&own, 2), 28LL * 2048 * 1024 + (1LL << 30));
    ck_assert_int_eq(np_memory_huge_bytes(&own, 3), 0);
    char buf[256];
    np_memory_huge_str(buf, sizeof buf, &own);
    ck_assert_str_eq(buf, "0:2x1G,1:105x2M,2:28x2M,2:1x1G");
    np_memory_huge_str(buf, sizeof buf, &all);
    ck_assert_str_eq(buf, "0:9x2M,0:2x1G,1:105x2M,2:28x2M,2:1x1G");

    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    struct np_json j;
    np_json_start(&j, f);
    hwloc_bitmap_t one = t_bitmap("1");
    np_memory_json(&j, NULL, &own, one);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "\"huge_pages\": {\"2048\": {\"1\": 105, \"2\": 28}, "
                                       "\"1048576\": {\"0\": 2, \"2\": 1}}}"));
    free(text);
    hwloc_bitmap_free(one);
    np_memory_free(&own);
    np_memory_free(&all);
    /* No huge page: "none"; not read: "unknown". */
    struct np_memory plain = {.pages = NULL};
    np_memory_huge_str(buf, sizeof buf, &plain);
    ck_assert_str_eq(buf, "unknown");
    ck_assert_int_eq(np_memory_line(lines[6], &plain, NULL), 0);
    np_memory_huge_str(buf, sizeof buf, &plain);
    ck_assert_str_eq(buf, "none");
    np_memory_free(&plain);
}
END_TEST

/* A file name holds spaces and may look like the counts or like a mapping
 * of the process's own: only what the kernel wrote after it counts, and
 * as a file's. */
START_TEST(file_names_do_not_count)
{
    const char *const evil[] = {
        /* No page resident: the line ends with the name. */
        "7f0000001000 default file=/tmp/x\\040y N1=100000 kernelpagesize_kB=4\n",
        "7f0000001000 default file=/tmp/a b N1=100000 kernelpagesize_kB=4\n",
        /* Pages resident: the name's counts come before anon=. */
        "7f0000002000 default file=/tmp/c mapped=5 N1=7 kernelpagesize_kB=4 anon=1 dirty=1 N1=1 "
        "kernelpagesize_kB=4\n",
        "7f0000003000 default file=/tmp/d\\040file=/anon_hugepage anon=2 dirty=2 N1=2 "
        "kernelpagesize_kB=4\n",
    };
    ck_assert_int_eq(sum(evil, 4, 1, false), 1 + 2);
    ck_assert_int_eq(sum(evil, 4, 1, true), 0);
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
    struct np_memory own, all;
    ck_assert_int_eq(np_memory_read_file(path, &own, &all), 0);
    ck_assert_int_eq(all.nnodes, 2);
    ck_assert_int_eq(all.pages[0], 3);
    ck_assert_int_eq(all.pages[1], 10);
    ck_assert_int_eq(own.nnodes, 1);
    ck_assert_int_eq(np_memory_total(&own), 3);
    np_memory_free(&own);
    np_memory_free(&all);
    /* Read, with nothing resident: tables with no page, not unknown. */
    ck_assert_int_eq(t_write_file(path, "", 0), 0);
    ck_assert_int_eq(np_memory_read_file(path, &own, NULL), 0);
    ck_assert_ptr_nonnull(own.pages);
    ck_assert_int_eq(np_memory_total(&own), 0);
    np_memory_free(&own);
    unlink(path);
    errno = 0;
    ck_assert_int_eq(np_memory_read_file(path, &own, &all), -1);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_ptr_null(own.pages);
    ck_assert_ptr_null(all.pages);
    t_rmdir(dir);
}
END_TEST

/* Under AddressSanitizer each access checks the shadow of its address, an
 * eighth of the memory accessed: those shadow pages may become resident
 * (and counted) with the memory itself. */
#if defined(__SANITIZE_ADDRESS__)
#define SHADOW_PAGES(bytes) ((long long)(bytes) / 8 / 4096)
#else
#define SHADOW_PAGES(bytes) 0LL
#endif

/* A memfd, as ZGC's heap: its pages are the process's own.  Mapped three
 * times (JDK 17's ZGC) and touched through one mapping, they count once. */
START_TEST(memfd_pages_are_own)
{
    const size_t len = 8 << 20, pages = len / 4096;
    struct np_memory before, after, all;
    ck_assert_int_eq(np_memory_read(0, &before, NULL), 0);
    int fd = memfd_create("java_heap", MFD_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)len), 0);
    char *view[3];
    for (int i = 0; i < 3; i++) {
        view[i] = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        ck_assert_ptr_ne(view[i], MAP_FAILED);
    }
    memset(view[0], 1, len);
    ck_assert_int_eq(np_memory_read(0, &after, &all), 0);
    long long grew = np_memory_total(&after) - np_memory_total(&before);
    /* The test's own allocations move the count a little either way. */
    ck_assert_msg(grew >= (long long)pages - 64 && grew <= (long long)pages + 256 + SHADOW_PAGES(len),
                  "own memory grew by %lld pages for a memfd of %zu pages", grew, pages);
    ck_assert_int_ge(np_memory_total(&all), np_memory_total(&after));
    np_memory_free(&before);
    np_memory_free(&after);
    np_memory_free(&all);
    for (int i = 0; i < 3; i++)
        munmap(view[i], len);
    close(fd);
}
END_TEST

/* The own pages of this process counted at `numa_maps` (each page once
 * per mapping, as the kernel's file counts) or by np_memory_read (each page
 * once). */
static long long own_pages(bool as_numa_maps)
{
    struct np_memory m;
    ck_assert_int_eq(as_numa_maps ? np_memory_read_file("/proc/self/numa_maps", &m, NULL)
                                  : np_memory_read(0, &m, NULL), 0);
    long long n = np_memory_total(&m);
    np_memory_free(&m);
    return n;
}

/* A memfd mapped twice over overlapping file ranges, some pages touched
 * through one view, some through the other, some through both: each page
 * counts once, where numa_maps counts the pages touched twice twice. */
/* The reading's own allocations move a count by a few pages; under
 * AddressSanitizer, whose quarantine keeps freed memory resident, by more. */
#if defined(__SANITIZE_ADDRESS__)
#define READ_SLACK 128
#else
#define READ_SLACK 16
#endif

START_TEST(each_memfd_page_once)
{
    const size_t page = 4096, len = 16 << 20;
    int fd = memfd_create("java_heap", MFD_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)len), 0);
    /* a: file pages 0-4095; b: file pages 1024-3071; c: all, untouched */
    char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    char *b = mmap(NULL, len / 2, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)len / 4);
    char *c = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ck_assert_ptr_ne(a, MAP_FAILED);
    ck_assert_ptr_ne(b, MAP_FAILED);
    ck_assert_ptr_ne(c, MAP_FAILED);
    (void)own_pages(false); /* the reading's own allocations, resident before counting */
    long long before = own_pages(false), before_maps = own_pages(true);
    /* Through a: file pages 0-2047; through b: 1536-3071 (b's 512-2047),
     * so 1536-2047 through both: 3072 distinct pages, 3584 touches. */
    for (size_t i = 0; i < 2048; i++)
        a[i * page] = 1;
    for (size_t i = 512; i < 2048; i++)
        b[i * page] = 2;
    long long distinct = own_pages(false) - before, counted = own_pages(true) - before_maps;
    /* The reading's own allocations move the count a little. */
    ck_assert_msg(distinct >= 3072 - READ_SLACK &&
                      distinct <= 3072 + READ_SLACK + SHADOW_PAGES((2048 + 1536) * page),
                  "own memory grew by %lld pages for 3072 distinct memfd pages", distinct);
    ck_assert_msg(counted >= 3584 - READ_SLACK, "numa_maps counts %lld pages, not each touch", counted);
    /* Read back through c (a read of a page never written would make one),
     * these pages are mapped a third time. */
    volatile char sink = 0;
    for (size_t i = 0; i < 3072; i++)
        sink = (char)(sink + c[i * page]);
    long long again = own_pages(false) - before;
    ck_assert_msg(again >= 3072 - READ_SLACK &&
                      again <= 3072 + READ_SLACK + 8 + SHADOW_PAGES((2048 + 1536 + 3072) * page),
                  "own memory counts %lld pages for 3072 distinct memfd pages in three views", again);
    munmap(a, len);
    munmap(b, len / 2);
    munmap(c, len);
    close(fd);
}
END_TEST

START_TEST(strings)
{
    long long p[] = {1203, 0, 65012};
    struct np_memory m = {.pages = p, .nnodes = 3}, none = {.pages = NULL},
                     empty = {.pages = (long long[]){0}, .nnodes = 1};
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
    struct np_memory near = {.pages = q, .nnodes = 2};
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
                           "\"nodes\": \"2\", \"local_pages\": 65012, \"mem_local\": 98.1, "
                           "\"huge_pages\": {}}, "
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

/* A memfd mapped once (ZGC's heap of JDK 21 and later) is moved with the
 * anonymous memory: its mapping gets the policy, its pages count as moved
 * or already there, none left. */
START_TEST(moves_memfd_pages)
{
    const size_t len = 4 << 20;
    int fd = memfd_create("java_heap", MFD_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)len), 0);
    char *heap = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ck_assert_ptr_ne(heap, MAP_FAILED);
    memset(heap, 1, len);
    struct np_policy p;
    hwloc_bitmap_t zero;
    policy(&p, "0", NP_MEM_BIND, &zero);
    struct np_move r;
    ck_assert_int_eq(np_memory_move_self(&p, zero, &r), 0);
    ck_assert_int_eq(r.refused, 0);
    ck_assert_int_ge(r.resident, (long long)(len / 4096));
    ck_assert_int_eq(r.after, r.resident); /* one node: all there */
    ck_assert_int_eq(r.aliased_left, 0);
    int mode = -1;
    unsigned long mask[64] = {0};
    ck_assert_int_eq(get_mempolicy(&mode, mask, 64 * 64, heap, MPOL_F_ADDR), 0);
    ck_assert_int_eq(mode, MPOL_BIND);
    ck_assert_int_eq(mask[0] & 1, 1);
    np_policy_destroy(&p);
    hwloc_bitmap_free(zero);
    munmap(heap, len);
    close(fd);
}
END_TEST

/* The maps lines of this process naming [lo, hi) or a part of it. */
static int maps_lines_within(unsigned long lo, unsigned long hi)
{
    FILE *f = fopen("/proc/self/maps", "re");
    ck_assert_ptr_nonnull(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx", &a, &b) == 2 && a >= lo && b <= hi)
            n++;
    }
    fclose(f);
    return n;
}

/* A private mapping of a file (a library's .data, or its RELRO part, which
 * the loader wrote and made read-only) gets the policy over all of it, the
 * pages read and those written alike, and stays one mapping: the written
 * pages, the process's copies, move run by run under the same policy,
 * which splits nothing. */
START_TEST(a_private_file_mapping_keeps_one_policy_and_one_mapping)
{
    const size_t page = 4096, len = 16 * page;
    FILE *tmp = tmpfile();
    ck_assert_ptr_nonnull(tmp);
    int fd = fileno(tmp);
    ck_assert_int_eq(ftruncate(fd, (off_t)len), 0);
    char *data = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    ck_assert_ptr_ne(data, MAP_FAILED);
    /* copies: pages 1-2 and 9; read only: 0, 4 and 12 */
    data[1 * page] = data[2 * page] = data[9 * page] = 7;
    volatile char sum = (char)(data[0] + data[4 * page] + data[12 * page]);
    (void)sum;
    if (_i == 1)
        ck_assert_int_eq(mprotect(data, len, PROT_READ), 0); /* as RELRO */
    ck_assert_int_eq(maps_lines_within((unsigned long)data, (unsigned long)data + len), 1);
    struct np_policy p;
    hwloc_bitmap_t zero;
    policy(&p, "0", NP_MEM_BIND, &zero);
    struct np_move r;
    ck_assert_int_eq(np_memory_bind_self(&p, &r), 0);
    ck_assert_int_eq(r.refused, 0);
    for (size_t i = 0; i < 16; i++) {
        int mode = -1;
        unsigned long mask[64] = {0};
        ck_assert_int_eq(get_mempolicy(&mode, mask, 64 * 64, data + i * page, MPOL_F_ADDR), 0);
        ck_assert_msg(mode == MPOL_BIND && (mask[0] & 1), "page %zu: mode %d", i, mode);
    }
    ck_assert_int_eq(maps_lines_within((unsigned long)data, (unsigned long)data + len), 1);
    ck_assert_int_eq(data[9 * page], 7);
    np_policy_destroy(&p);
    hwloc_bitmap_free(zero);
    munmap(data, len);
    fclose(tmp);
}
END_TEST

Suite *memory_suite(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("memory");
    tcase_add_test(tc, counts_pages_per_node);
    tcase_add_test(tc, file_names_do_not_count);
    tcase_add_test(tc, reads_a_file);
    tcase_add_test(tc, reads_this_process);
    tcase_add_test(tc, memfd_pages_are_own);
    tcase_add_test(tc, each_memfd_page_once);
    tcase_add_loop_test(tc, a_private_file_mapping_keeps_one_policy_and_one_mapping, 0, 2);
    tcase_add_test(tc, counts_huge_pages_by_size);
    tcase_add_test(tc, strings);
    tcase_add_test(tc, moves_own_pages);
    tcase_add_test(tc, moves_memfd_pages);
    suite_add_tcase(s, tc);
    return s;
}
