/* np_bind: applies a placement to the calling thread and reads it back.
 *
 * CPU binding goes through hwloc (HWLOC_CPUBIND_THREAD: this thread only),
 * the memory policy through libnuma's set_mempolicy(2) wrapper, which
 * returns errors instead of printing them.  Nothing here logs: callers
 * decide how loudly to report. */
#ifndef NP_BIND_H
#define NP_BIND_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>

#include "np_modes.h"

struct np_target {
    hwloc_const_bitmap_t cpus;   /* PUs, OS indexes */
    hwloc_const_bitmap_t nodes;  /* memory nodes, OS indexes */
    enum np_mem_mode mem;
};

/* A thread's placement as read back from the kernel. */
struct np_actual {
    hwloc_bitmap_t cpus;
    int mem_mode;                /* MPOL_* without mode flags, -1 unknown */
    int mem_flags;               /* its mode flags (MPOL_F_NUMA_BALANCING...) */
    hwloc_bitmap_t mem_nodes;
};

struct np_bind_result {
    int cpu_errno;  /* 0: CPU binding applied */
    int mem_errno;  /* 0: memory policy applied, or mem=none */
    bool cpu_ok;    /* read back equal to the target */
    bool mem_ok;    /* read back equal, or inherited (mem_inherited) */
    bool mem_inherited; /* the policy is one the thread started with: not read */
};

/* A memory policy in the kernel's terms, prepared once for a target so
 * that placing a thread allocates and converts nothing. */
struct np_policy {
    int mode;             /* MPOL_* to set, or -1: leave the policy alone */
    int error;            /* an errno setting it would fail with, or 0 */
    unsigned long *mask;  /* kernel node mask, or NULL without NUMA support */
    unsigned long nbits;  /* bits the kernel takes in a node mask */
    bool empty;           /* no nodes (local allocation) */
    /* Every thread starts with this policy: the whole JVM was given it,
     * and it read back as set (Linux copies a thread's policy to the
     * threads it creates, and only the thread itself can change it).
     * np_place_self then neither reads nor sets it. */
    bool inherited;
};

/* Prepares libnuma (numa_available).  Returns 0, or -1 with errno ENOSYS
 * when the kernel has no NUMA policy support. */
int np_bind_init(void);

/* The nodes this process may take memory from (its cpuset's mems, as the
 * kernel says), OS indexes, into `nodes`.  Returns 0, or -1 with errno. */
int np_bind_mems_allowed(hwloc_bitmap_t nodes);

/* The CPUs the calling thread may run on (sched_getaffinity), OS indexes,
 * into `cpus`.  Returns 0, or -1 with errno. */
int np_bind_cpus_allowed(hwloc_bitmap_t cpus);

int np_actual_init(struct np_actual *a);
void np_actual_destroy(struct np_actual *a);

/* Reads the calling thread's CPU binding and memory policy. Returns 0, or
 * -1 with errno set when either cannot be read. */
int np_read_self(hwloc_topology_t topo, struct np_actual *a);

/* Prepares t's memory policy.  A policy that cannot be set (no NUMA
 * support in the kernel, a node it cannot name) is prepared with that
 * error, for np_place_self to report.  Returns 0, or -1 with errno ENOMEM. */
int np_policy_init(struct np_policy *p, const struct np_target *t);
void np_policy_destroy(struct np_policy *p);

/* True when a and b set the same mode and nodes. */
bool np_policy_same(const struct np_policy *a, const struct np_policy *b);

/* A set of CPUs in the kernel's own format and size, made once from a
 * hwloc bitmap: a thread's CPUs are compared with it as sched_getaffinity
 * returns them, with no allocation or conversion.  bits is NULL when the
 * kernel's size is unknown (no NUMA support: libnuma tells the size);
 * users then read through hwloc. */
struct np_cpumask {
    unsigned long *bits;
    size_t bytes;
};

/* Makes m from `cpus`.  Returns 0 (bits may be NULL, as above), or -1 with
 * errno ENOMEM. */
int np_cpumask_init(struct np_cpumask *m, hwloc_const_bitmap_t cpus);
void np_cpumask_destroy(struct np_cpumask *m);

/* How np_place_self goes about a placement. */
enum np_place_how {
    /* Reads the thread's CPUs and policy first and sets only what differs:
     * a thread created by a placed thread inherits its placement (Linux
     * threads do), and then only costs the reads (one when the policy is
     * marked inherited). */
    NP_PLACE_CHECK,
    /* Sets the CPUs without reading them first, for a target the thread
     * is not expected to have inherited (one core of several); the policy
     * as NP_PLACE_CHECK.  A thread whose CPUs cannot be set but are the
     * target already counts as placed, as with NP_PLACE_CHECK. */
    NP_PLACE_SET_CPUS,
    /* Sets both, whatever the thread has. */
    NP_PLACE_FORCE,
};

/* Places the calling thread on `cpus` with policy `p`, and verifies it:
 * sets what `how` says and reads back what it set (a policy marked
 * `inherited` is taken as the thread's: r->mem_inherited).  A thread whose CPUs
 * cannot be set is left as it was.  `mask` (NULL, or `cpus` made by
 * np_cpumask_init) makes the reads cheaper.  Returns 0 when the placement
 * is verified, -1 otherwise (details in *r). */
int np_place_self(hwloc_topology_t topo, hwloc_const_bitmap_t cpus,
                  const struct np_cpumask *mask, const struct np_policy *p,
                  enum np_place_how how, struct np_bind_result *r);

/* Binds the calling thread to `t`, then reads the result back into
 * `actual` and compares.  Returns 0 when everything requested was applied
 * and verified, -1 otherwise (details in *r). */
int np_bind_self(hwloc_topology_t topo, const struct np_target *t,
                 struct np_bind_result *r, struct np_actual *actual);

/* Sets the calling thread's CPU binding and memory policy back to what
 * np_read_self saw.  Returns 0 or -1 with errno. */
int np_restore_self(hwloc_topology_t topo, const struct np_actual *a);

/* "preferred:1", "bind:0-1", "interleave:0-1", "local", "default", "none":
 * the target's policy as the log shows it. */
void np_mem_target_str(char *buf, size_t len, const struct np_target *t);
/* The same for a policy read back. */
void np_mem_actual_str(char *buf, size_t len, const struct np_actual *a);

/* What to add to a message saying the kernel refused a memory policy with
 * error e: for EPERM, which set_mempolicy returns only when a seccomp
 * filter (a container runtime's default profile) or a security module
 * refuses the call, the fix; "" otherwise. */
const char *np_mem_refused_hint(int e);

#endif
