/* np_memory: a process's memory by NUMA node, and moving this process's own.
 *
 * Where it is: /proc/PID/numa_maps, the kernel's count of each mapping's
 * resident pages on each node (what numastat -p reads; neither hwloc nor
 * libnuma reports a process's memory).  Counted in 4 KiB pages: a huge page
 * counts as the 4 KiB pages it holds, and hugetlb pages (the mappings
 * numa_maps marks `huge`: -XX:+UseLargePages, hugetlbfs, MFD_HUGETLB) are
 * also counted apart, by size and node.  Transparent huge pages are not
 * split out (numa_maps counts them as the 4 KiB pages they hold).  The
 * process's own memory is that of its anonymous mappings (the Java heap,
 * thread stacks, malloc, metaspace, the code cache; anonymous huge pages
 * too), of its memfds (ZGC's heap is one, /memfd:java_heap), of its SysV
 * shared memory (-XX:+UseSHM, /SYSV...) and of its shared anonymous
 * mappings (/dev/zero): what a placement puts somewhere.  The pages of
 * files it maps (libjvm.so, the CDS archive, jars) are the page cache's,
 * shared with every process mapping them, and stay on the node where they
 * were first read.
 *
 * Each page once: numa_maps counts a page in each mapping whose page table
 * holds it, so a page of a file mapped at more than one address (JDK 17's
 * ZGC maps its heap memfd three times) would count once for each view it
 * was touched through.  np_memory_read finds, in /proc/PID/maps, the shared
 * mappings of one file (device and inode) whose file offsets overlap, and
 * where more than one of them holds pages it asks move_pages(2), in query
 * mode only (no target nodes: it moves nothing), the node of each of their
 * pages, and counts each file offset once.  That asks for every page of
 * those views, in batches of 4096 (a 256 MiB ZGC heap of JDK 17, all three
 * views touched: some 45 ms where numa_maps alone takes 10), and it needs
 * the right numa_maps needs (ptrace read access to the process).  Kernels 6.1 to 6.4 hide from
 * move_pages the pages automatic NUMA balancing has marked for its next
 * fault, so on those kernels such views' pages count only once the
 * process touched them again; where move_pages is refused altogether
 * (seccomp), those views count as numa_maps has them, each page once per
 * view.
 *
 * Moving it: mbind(2) with MPOL_MF_MOVE over this process's own mappings
 * (mbind acts on the calling process only), which gives them a memory
 * policy and moves their resident pages to follow it; with MPOL_MF_MOVE the
 * kernel moves only pages mapped once, never a page shared with another
 * process, nor one this process maps at several addresses (JDK 17 ZGC's
 * heap pages touched through more than one view).  Those get a second
 * pass with MPOL_MF_MOVE_ALL (CAP_SYS_NICE only), over a memory file of
 * the process's own that no other process maps (every other process's
 * maps read).  mbind walks the page
 * tables itself, so it also finds the pages that kernels 6.1 to 6.4 hide
 * from move_pages(2).  Nothing else in numapin moves pages; the agent
 * calls it only when the whole JVM is placed: at load, over what the
 * process touched before (np_memory_bind_self), and at a late attach
 * (docs/security.md). */
#ifndef NP_MEMORY_H
#define NP_MEMORY_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "np_bind.h"

/* Nodes counted: OS indexes 0 to NP_MEMORY_MAX_NODE. */
#define NP_MEMORY_MAX_NODE 4095

/* Huge page sizes counted apart (x86: 2 MiB and 1 GiB; arm64 has four). */
#define NP_MEMORY_HUGE_SIZES 4

/* hugetlb pages of one size, by node. */
struct np_memory_huge {
    unsigned long kib;  /* the page size; 0: no pages of this entry */
    long long *pages;   /* huge pages, by node OS index */
    int nnodes;
};

/* Resident memory by node. */
struct np_memory {
    long long *pages;   /* 4 KiB pages, by node OS index; NULL when unknown */
    int nnodes;         /* entries in pages: one past the highest node with pages, at least 1 */
    /* Of those, the hugetlb pages, by size (smallest first): a size that
     * a mapping with pages has, up to NP_MEMORY_HUGE_SIZES sizes. */
    struct np_memory_huge huge[NP_MEMORY_HUGE_SIZES];
};

/* Reads process pid's resident pages per node (pid 0: this process): its
 * own memory into *own, every page it maps into *all (either may be NULL),
 * each page once (above).  Reading walks the process's page tables, so it
 * costs in proportion to its resident memory: call it seconds apart, not
 * per thread.  Returns 0, or -1 with errno set (both then empty). */
int np_memory_read(pid_t pid, struct np_memory *own, struct np_memory *all);

/* The same from a numa_maps file at `path`, as numa_maps counts: a page
 * once for each mapping holding it. */
int np_memory_read_file(const char *path, struct np_memory *own, struct np_memory *all);

/* Adds what one numa_maps line says is resident on each node to *all and,
 * for a mapping of the process's own, to *own (either may be NULL; tables
 * grow as needed), a `huge` line's pages to the huge page counts too.  A
 * line not in the kernel's form adds nothing.  Returns 0, or -1 when
 * memory runs out. */
int np_memory_line(const char *line, struct np_memory *own, struct np_memory *all);

void np_memory_free(struct np_memory *m);

/* Pages on every node, and on `nodes` only. */
long long np_memory_total(const struct np_memory *m);
long long np_memory_on(const struct np_memory *m, hwloc_const_bitmap_t nodes);

/* "0:1203,1:65012": the nodes holding pages, in node order ("none" when
 * none; "unknown" when m was not read), as the summary's mem_pages= shows
 * them. */
void np_memory_pages_str(char *buf, size_t len, const struct np_memory *m);

/* The share of the pages on `nodes`, "97.9%" (one decimal, rounded down so
 * that 100.0% means every page), or "unknown" without pages, as the
 * summary's mem_local= shows it. */
void np_memory_share_str(char *buf, size_t len, const struct np_memory *m,
                         hwloc_const_bitmap_t nodes);

/* "0:128x2M,1:23x2M,1:2x1G": the hugetlb pages by node (in node order) and
 * size, as the summary's mem_huge= shows them ("none" when none;
 * "unknown" when m was not read). */
void np_memory_huge_str(char *buf, size_t len, const struct np_memory *m);

/* The bytes in hugetlb pages on node `node`, every size. */
long long np_memory_huge_bytes(const struct np_memory *m, int node);

struct np_json;

/* Writes {"page_kib": 4, "mem_pages": {"0": 12, "1": 61440}, "nodes": "1",
 * "local_pages": 61440, "mem_local": 99.9, "huge_pages": {"2048": {"1": 64}}}
 * as `key`: the pages by node, the nodes they should be on, how many are,
 * that share in percent (null without pages), and the hugetlb pages among
 * them by size in KiB and node ({} when none); null when m was not read. */
void np_memory_json(struct np_json *j, const char *key, const struct np_memory *m,
                    hwloc_const_bitmap_t nodes);

/* What moving this process's pages did, from its own memory by node
 * before and after (np_memory_read). */
struct np_move {
    long long resident;  /* its own resident pages, after */
    long long before;    /* of those on the target nodes, before */
    long long after;     /* and after */
    long long moved;     /* after - before, less what the process allocated meanwhile */
    long long aliased_left; /* of its own pages off the target nodes after, those of files it
                               maps at more than one address (JDK 17 ZGC's heap views: a page
                               touched through two views is mapped twice, which MPOL_MF_MOVE
                               leaves, and MPOL_MF_MOVE_ALL moves where it may: below) */
    int aliased_errno;   /* why MPOL_MF_MOVE_ALL did not move those: EPERM without
                            CAP_SYS_NICE, EBUSY when another process maps the file (or
                            its maps could not be read); 0 when it was not needed or moved
                            them */
    int mappings;        /* mappings given the policy */
    int refused;         /* mappings mbind refused; fail_errno: why the first was */
    int fail_errno;
    double ms;           /* wall time of the whole move */
};

/* Gives this process's own writable mappings (private anonymous ones, and
 * the shared ones of its memfds, SysV segments and /dev/zero) the memory
 * policy `p` (prepared for the target `nodes`, np_policy_init) and moves
 * their pages to follow it.
 * Returns 0 with *r filled, also when some pages stayed (a node without
 * free memory for them); or -1 with errno when nothing could be done (mbind
 * refused for every mapping: EPERM under seccomp, ENOSYS without NUMA; the
 * policy cannot be set; /proc/self/maps or numa_maps unreadable). */
int np_memory_move_self(const struct np_policy *p, hwloc_const_bitmap_t nodes, struct np_move *r);

/* The same mbind pass without counting anything (no numa_maps read before
 * or after, no second pass): for the few pages of a process that is only
 * starting, where reading would cost more than moving.  Fills only
 * r->mappings, r->refused, r->fail_errno and r->ms; returns as above. */
int np_memory_bind_self(const struct np_policy *p, struct np_move *r);

#endif
