/* np_memory: a process's memory by NUMA node, and moving this process's own.
 *
 * Where it is: /proc/PID/numa_maps, the kernel's count of each mapping's
 * resident pages on each node (what numastat -p reads; neither hwloc nor
 * libnuma reports a process's memory).  Counted in 4 KiB pages: a huge page
 * counts as the 4 KiB pages it holds.
 *
 * Moving it: libnuma's move_pages(2) on this process (pid 0), over its
 * private writable mappings (heap, stacks, the JVM's own data), with
 * MPOL_MF_MOVE, so the kernel moves only pages that this process alone maps
 * and never a page shared with another process.  Nothing else in numapin
 * moves pages; the agent calls it only when the whole JVM is placed at a
 * late attach (docs/security.md). */
#ifndef NP_MEMORY_H
#define NP_MEMORY_H

#include <hwloc.h>
#include <stddef.h>
#include <sys/types.h>

/* Resident memory by node. */
struct np_memory {
    long long *pages;   /* 4 KiB pages, by node OS index; NULL when unknown */
    int nnodes;         /* entries in pages */
};

/* Reads process pid's resident pages per node (pid 0: this process).
 * Returns 0, or -1 with errno set (*m is then empty). */
int np_memory_read(pid_t pid, struct np_memory *m);
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

struct np_json;

/* Writes {"page_kib": 4, "mem_pages": {"0": 12, "1": 61440}, "nodes": "1",
 * "local_pages": 61440, "mem_local": 99.9} as `key`: the pages by node, the
 * nodes they should be on, how many are, and that share in percent (null
 * without pages); null when m was not read. */
void np_memory_json(struct np_json *j, const char *key, const struct np_memory *m,
                    hwloc_const_bitmap_t nodes);

/* What moving this process's pages did. */
struct np_move {
    long long resident;  /* pages looked at: present in a private writable mapping */
    long long already;   /* of those, on the target nodes before */
    long long moved;     /* moved there */
    long long failed;    /* that the kernel would not move (fail_errno: why the first did not) */
    int fail_errno;
    double ms;           /* wall time of the whole move */
};

/* Moves this process's resident pages that are not on `nodes` to them (in
 * turn, when there are several).  Returns 0 with *r filled, also when some
 * pages did not move; or -1 with errno when move_pages itself is refused
 * (EPERM under seccomp, ENOSYS without NUMA) or /proc/self/maps cannot be
 * read. */
int np_memory_move_self(hwloc_const_bitmap_t nodes, struct np_move *r);

#endif
