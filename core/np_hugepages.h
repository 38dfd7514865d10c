/* np_hugepages: the kernel's hugetlb pools by node, and whether those of a
 * group hold what a JVM with -XX:+UseLargePages reserves.
 *
 * hwloc does not know free huge pages: they are read from sysfs,
 * <root>/sys/devices/system/node/nodeN/hugepages/hugepages-<KiB>kB/, and
 * the kernel's default size from <root>/proc/meminfo.  `root` is "" on
 * the machine itself, a fake tree in tests.  Any page size the kernel
 * lists works (2 MiB, 1 GiB, ...).
 *
 * What HotSpot reserves (measured on JDK 17 and 25): its code cache first,
 * in large pages when it holds at least 8 of them (ReservedCodeCacheSize,
 * 240 MiB: 120 or 121 pages of 2 MiB), then the whole maximum heap
 * (MaxHeapSize, whatever InitialHeapSize), both at once at start-up; where the pools allowed to it hold fewer, that part gets
 * small pages.  The pages themselves are taken from a node's pool as they
 * are first touched (all of them at once under AlwaysPreTouch). */
#ifndef NP_HUGEPAGES_H
#define NP_HUGEPAGES_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kernel's default huge page size in bytes (meminfo's Hugepagesize),
 * or 0 when unknown. */
uint64_t np_hugepages_default_size(const char *root);

/* Free (free_hugepages) and reserved (nr_hugepages) pages of `page` bytes
 * in node `node`'s pool, or -1 when unknown: no such node or size, or a
 * file that is not a number. */
long long np_hugepages_free(const char *root, unsigned node, uint64_t page);
long long np_hugepages_nr(const char *root, unsigned node, uint64_t page);

/* Free pages summed over `nodes`, or -1 when any node's count is unknown
 * (or `nodes` is empty or infinite). */
long long np_hugepages_free_on(const char *root, hwloc_const_bitmap_t nodes, uint64_t page);

/* Pages of `page` bytes that hold `bytes`: ceil(bytes / page); 0 when
 * page is 0. */
long long np_hugepages_count(uint64_t bytes, uint64_t page);

/* The size as the kernel's hugepagesz= reads it: "2M", "1G", "64K". */
void np_hugepages_size_str(char *buf, size_t len, uint64_t page);

/* What a JVM asks of the pools, from its flags (bytes; 0 when not used). */
struct np_hugepages_jvm {
    uint64_t page;         /* LargePageSizeInBytes; 0: the kernel's default */
    uint64_t max_heap;     /* MaxHeapSize; 0 when the heap takes no huge pages */
    uint64_t code_cache;   /* ReservedCodeCacheSize; 0 unknown */
    /* SegmentedCodeCache: its code heaps are each rounded up to a page
     * (JDK 25: 121 pages of 2 MiB for 240 MiB; JDK 17 takes 120), and one
     * page more is counted. */
    bool segmented;
};

/* The decision on one JVM and group. */
struct np_hugepages_need {
    uint64_t page;          /* the page size in effect, 0 when unknown */
    long long heap_pages;   /* the maximum heap, in pages */
    long long code_pages;   /* the code cache's, 0 when it takes none of this size */
    long long needed;       /* heap_pages + code_pages */
    long long free;         /* free on the group's nodes, -1 unknown */
    long long free_all;     /* free on every node the JVM may use, -1 unknown */
    bool known;             /* page and free known */
    bool enough;            /* known and free >= needed */
};

/* Decides whether the pools of `nodes` (the group's memory nodes) hold
 * what `jvm` reserves; `all` is every node the JVM may use. */
void np_hugepages_check(const char *root, const struct np_hugepages_jvm *jvm,
                       hwloc_const_bitmap_t nodes, hwloc_const_bitmap_t all,
                       struct np_hugepages_need *out);

#endif
