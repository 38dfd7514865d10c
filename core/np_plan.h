/* np_plan: maps JVM groups onto the machine.
 *
 * The machine is cut into D domains (np_domains: NUMA nodes by default,
 * or packages, or L3 caches).  With G groups:
 *  - G == D: group i gets domain i;
 *  - G <  D: each group gets whole domains, counts differing by at most
 *            one (the larger groups first).  Domains are grouped by
 *            nearness: each group in turn takes the cheapest cluster of
 *            unassigned domains (sum of pairwise NUMA distances where the
 *            machine has a distance matrix, else of distances in the
 *            hwloc tree, so by package; a matrix is read both ways), the
 *            lowest-numbered on ties, which on a uniform machine is a
 *            contiguous run.  A group of several domains spanning NUMA
 *            nodes is warned about, with the group count that fits;
 *  - G >  D: groups are spread over domains (counts per domain differing
 *            by at most one, the extra groups on the first domains); the
 *            groups sharing a domain split its cores into disjoint
 *            contiguous slices of whole cores (SMT siblings stay together),
 *            sizes differing by at most one core.  Where the domain has
 *            several L3 caches of equal size and the group count is a
 *            multiple of theirs, each L3 is split on its own, so no slice
 *            straddles two.  A domain with fewer cores than groups is
 *            sliced by hardware thread, and with fewer hardware threads
 *            than groups the groups share them; both are warned.  A group
 *            count that does not divide evenly by D is warned about.
 * CPUs in no domain of the kind (an L3 level covering only some CPUs) are
 * in no group, with a warning.
 * Allowed CPUs none of whose local NUMA nodes may be used (cgroup
 * cpuset.mems) count in the nearest usable node (np_topo.adopted), with
 * a warning.
 * The plan depends only on the topology, G and the domain kind, so every
 * JVM of a host computes the same plan for every group. */
#ifndef NP_PLAN_H
#define NP_PLAN_H

#include <hwloc.h>
#include <stddef.h>

#include "np_domains.h"
#include "np_modes.h"
#include "np_topo.h"

struct np_group_plan {
    int group;
    hwloc_bitmap_t cpus;   /* PUs, OS indexes */
    hwloc_bitmap_t nodes;  /* NUMA nodes, OS indexes */
    int *domains;          /* indexes into np_plan.domains, ascending */
    int ndomains;
    int slice;             /* this group's slice of its domain, 0-based */
    int nslices;           /* groups sharing the domain; 1 when alone */
};

/* Something about the plan the user should know, concerning the groups
 * first_group to last_group. */
struct np_warning {
    int first_group, last_group;
    char *text;
};

struct np_plan {
    int ngroups;
    enum np_domain kind;
    struct np_domains domains;
    struct np_group_plan *groups;
    int nwarnings;
    struct np_warning *warnings;
};

/* Builds the plan for `groups` groups (1 to NP_MAX_GROUPS) on domains of
 * the given kind.  Returns 0, or -1 with errno set (ENOMEM, EINVAL, ENOENT
 * when the machine has no such domain). */
int np_plan_build(const struct np_topo *t, int groups, enum np_domain kind, struct np_plan *p);

/* The CPUs of `cpus` of the given kind (NP_CPUKIND_* or an hwloc cpukind
 * index) into out.  On a machine with one kind, or for NP_CPUKIND_ANY, or
 * when `cpus` has none of that kind, all of them.  Returns 0, or -1 with errno EINVAL when the kind index does not
 * exist. */
int np_plan_kind(const struct np_topo *t, int kind, hwloc_const_bitmap_t cpus, hwloc_bitmap_t out);

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


#endif
