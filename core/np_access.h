/* np_access: how local a thread's memory accesses are, as the kernel's
 * automatic NUMA balancing samples them.
 *
 * Where kernel.numa_balancing is on, the kernel unmaps a slice of each
 * process's memory every scan period and counts the fault the next access
 * takes (a NUMA hinting fault) for the faulting task, by the node of the
 * page: /proc/PID/task/TID/sched lists those counts as
 * `numa_faults node=N task_private=P task_shared=S ...` (kernels built
 * with CONFIG_SCHED_DEBUG and CONFIG_NUMA_BALANCING, as Debian's, Ubuntu's
 * and RHEL's), with `numa_pages_migrated`, the pages it moved for the
 * task.  The counts are recent ones, not totals: the kernel halves them at
 * each of its placement passes (once a scan).  A page the fault migrates
 * counts on the node it went to.
 *
 * The kernel samples only memory whose policy lets it migrate on fault:
 * no policy at all (the default), or MPOL_BIND | MPOL_F_NUMA_BALANCING
 * (numapin's mem=balancing; Linux 5.12 and later).  Memory under a
 * preferred, bind, interleave or local policy (numapin's other mem= modes,
 * numactl --membind) is never sampled, so its threads show no samples. */
#ifndef NP_ACCESS_H
#define NP_ACCESS_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "np_json.h"
#include "np_modes.h"

/* Nodes counted: OS indexes 0 to NP_ACCESS_MAX_NODE. */
#define NP_ACCESS_MAX_NODE 4095

/* One task's sampled accesses, or several tasks' summed. */
struct np_access {
    long long *faults; /* hinting faults by the page's node (OS index); NULL: none listed */
    int nnodes;        /* entries in faults */
    long long migrated; /* pages the kernel migrated on those faults */
    bool listed;       /* the file had numa_faults lines (the kernel keeps them) */
};

/* Reads a sched file's lines (the format of /proc/PID/task/TID/sched).
 * Returns 0, or -1 with errno ENOMEM; a file without numa_faults lines
 * leaves a->listed false. */
int np_access_parse(FILE *f, struct np_access *a);

/* Reads /proc/PID/task/TID/sched (pid 0: this process).  Returns 0, or -1
 * with errno (ENOENT: the thread ended, or the kernel has no sched
 * statistics; EACCES). */
int np_access_read(pid_t pid, pid_t tid, struct np_access *a);

/* Adds b's counts to a.  Returns 0, or -1 with errno ENOMEM. */
int np_access_add(struct np_access *a, const struct np_access *b);

void np_access_free(struct np_access *a);

/* One thread's sampled accesses, in lists sorted by tid. */
struct np_thread_access {
    pid_t tid;
    struct np_access access;
};

/* Every thread of process `pid` (0: this one), each read once: into *list
 * (sorted by tid, *n entries; free with np_thread_access_free) and summed
 * into *sum.  Returns 0, or -1 with errno (the process ended, EACCES,
 * ENOMEM), *list NULL and *sum empty; a thread that ends meanwhile is not
 * listed. */
int np_access_read_threads(pid_t pid, struct np_thread_access **list, int *n,
                           struct np_access *sum);

/* The accesses of `tid` in `list` (n entries, sorted by tid), or NULL. */
const struct np_access *np_thread_access_find(const struct np_thread_access *list, int n,
                                              pid_t tid);

void np_thread_access_free(struct np_thread_access *list, int n);

long long np_access_total(const struct np_access *a);

/* The faults on pages of `nodes`. */
long long np_access_on(const struct np_access *a, hwloc_const_bitmap_t nodes);

/* The share of the faults on `nodes` in tenths of a percent, rounded down
 * (999 for 99.96%: "all" only when all are), the one rule of every output;
 * -1 with no sample. */
long long np_access_permille(const struct np_access *a, hwloc_const_bitmap_t nodes);

/* " access_local=98.7% access_samples=N access_migrated=M", the share on
 * `nodes` to a tenth of a percent, truncated (99.96% is 99.9%); with no
 * sample, access_local=none. */
void np_access_fields(char *buf, size_t len, const struct np_access *a,
                      hwloc_const_bitmap_t nodes);

/* The same as JSON members: "access_local", the share on `nodes` in
 * percent to a tenth (null with no sample), "access_samples" and
 * "access_migrated". */
void np_access_json(struct np_json *j, const struct np_access *a, hwloc_const_bitmap_t nodes);

/* Whether the kernel samples the accesses of threads whose policy numapin
 * set to `mem` (NP_MEM_NONE: left alone), with kernel.numa_balancing =
 * `balancing` (-1: unknown) and `listed` telling whether the sched files
 * list numa_faults.  False with why it does not, and the fix, in buf (one
 * line's text); true, buf empty. */
bool np_access_sampled(char *buf, size_t len, int balancing, bool listed, enum np_mem_mode mem);

#endif
