/* np_plan: maps JVM groups onto the machine.
 *
 * With N NUMA nodes (those with allowed CPUs, hwloc logical order) and G
 * groups:
 *  - G == N: group i gets node i;
 *  - G <  N: each group gets a contiguous run of whole nodes, runs differing
 *            by at most one node, the longer runs first; a group spanning
 *            nodes is reported as a warning;
 *  - G >  N: groups are spread over nodes (counts per node differing by at
 *            most one, the extra groups on the first nodes), and the groups
 *            sharing a node split its cores into disjoint contiguous slices
 *            of whole cores (SMT siblings stay together), slice sizes
 *            differing by at most one core.  A node with fewer cores than
 *            groups is sliced by hardware thread, and with fewer hardware
 *            threads than groups the groups share them; both are warned.
 * Allowed CPUs none of whose local NUMA nodes may be used (cgroup
 * cpuset.mems) count in the nearest usable node (np_topo.adopted), with
 * a warning.
 * The plan depends only on the topology and G, so every JVM of a host
 * computes the same plan for every group. */
#ifndef NP_PLAN_H
#define NP_PLAN_H

#include <hwloc.h>
#include <stddef.h>

#include "np_options.h"
#include "np_topo.h"

struct np_group_plan {
    int group;
    hwloc_bitmap_t cpus;   /* PUs, OS indexes */
    hwloc_bitmap_t nodes;  /* NUMA nodes, OS indexes */
    int first_node;        /* index into np_topo.nodes */
    int nnodes;            /* how many nodes from first_node */
    int slice;             /* this group's slice of its node, 0-based */
    int nslices;           /* groups sharing the node; 1 when alone */
};

/* Something about the plan the user should know, concerning the groups
 * first_group to last_group. */
struct np_warning {
    int first_group, last_group;
    char *text;
};

struct np_plan {
    int ngroups;
    struct np_group_plan *groups;
    int nwarnings;
    struct np_warning *warnings;
};

/* Builds the plan for `groups` groups (1 to NP_MAX_GROUPS).  Returns 0, or
 * -1 with errno set (ENOMEM, EINVAL). */
int np_plan_build(const struct np_topo *t, int groups, struct np_plan *p);

void np_plan_free(struct np_plan *p);

/* Splits `total` items into `parts` runs whose sizes differ by at most one,
 * the longer runs first; gives run i's first item and length. */
void np_split(int total, int parts, int i, int *first, int *count);

/* The placement slots of cpus=core or cpus=pu within `cpus`: one cpuset a
 * core, or a hardware thread, in the order numapin fills them (cores in
 * logical order; for pu, the first thread of every core before any
 * second thread).  For cpus=node, one slot: `cpus` itself.  Returns the
 * slot count and an array the caller frees with np_slots_free, or -1. */
int np_slots(const struct np_topo *t, hwloc_const_bitmap_t cpus,
             enum np_cpus_mode mode, hwloc_bitmap_t **slots);
void np_slots_free(hwloc_bitmap_t *slots, int n);

/* Writes the plan as JSON, {"groups":[{"group":0,"nodes":[0],"cpus":"0-3"},...],
 * "warnings":[...]}, followed by a newline. */
void np_plan_json(const struct np_plan *p, FILE *out);

#endif
