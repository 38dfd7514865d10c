/* np_topo: the machine as numapin sees it, discovered by hwloc.
 *
 * Loaded once (in Agent_OnLoad, or by the command-line tool) and read-only
 * afterwards, so concurrent ThreadStart callbacks may read it without
 * locks.  hwloc honours HWLOC_XMLFILE, HWLOC_SYNTHETIC and HWLOC_THISSYSTEM
 * when no explicit source is given. */
#ifndef NP_TOPO_H
#define NP_TOPO_H

#include <hwloc.h>
#include <stddef.h>

#include "np_cpulist.h"

struct np_topo {
    hwloc_topology_t topology;
    /* PUs this process may use, OS indexes: hwloc's allowed cpuset (the
     * cgroup cpuset) intersected with the CPU binding the process had when
     * the topology was loaded (taskset, numactl) on a real system. */
    hwloc_bitmap_t allowed;
    /* NUMA nodes that are the home of at least one allowed CPU, in hwloc
     * logical order.  A CPU's home is the nearest node attached above it;
     * where several memory tiers are attached there (DRAM beside HBM or
     * NVM), the DRAM one: CPU-less tiers never count as having CPUs. */
    hwloc_obj_t *nodes;
    int nnodes;
    /* The allowed CPUs whose home each such node is, plus the adopted. */
    hwloc_bitmap_t *node_cpus;
    /* Allowed CPUs none of whose local nodes may be used (cgroup
     * cpuset.mems, memory offline): each joined the nearest usable node,
     * whose memory is remote to it. */
    hwloc_bitmap_t adopted;
    /* 1 when the topology describes the machine we run on, so binding
     * means something. */
    int thissystem;
    char source[256]; /* "this system", "xml FILE", "synthetic DESC" */
    /* Something the user should know about the topology as loaded (a file
     * taken for this machine that is not quite it), or "". */
    char warning[1024];
};

/* Loads the topology: from `xml` or `synthetic` when one is given, else
 * from hwloc's defaults (which follow HWLOC_* environment variables).
 * Returns 0, or -1 with a message in err. */
int np_topo_load(struct np_topo *t, const char *xml, const char *synthetic,
                 char *err, size_t errlen);

/* Loads this machine's topology as np_topo_load(t, NULL, NULL) does,
 * through the topology cache in `dir` (see np_topocache.h): from the file
 * there when it is current, else discovered and the file (re)written.
 * Nothing about the cache fails the load: a directory that is not private,
 * a stale, foreign or unreadable file, a write that fails, all fall back
 * to discovery.  With dir NULL, or any HWLOC_ variable in the environment
 * (a fake machine, other components), the cache is not used.  `note` says
 * what happened, for the log ("read from DIR/topology-HASH.xml",
 * "discovered; the cache ... was made on another boot, so it was not used;
 * replaced").  Returns 0, or -1 with a message in err as np_topo_load. */
int np_topo_load_cached(struct np_topo *t, const char *dir, char *note, size_t notelen, char *err,
                        size_t errlen);

/* Loads the topology from hwloc's defaults, as np_topo_load does, for a
 * process whose cpuset changed since it started: the usable CPUs are
 * hwloc's allowed cpuset intersected with `within` (not with the current
 * binding, which numapin's own placements narrowed).  Returns 0, or -1
 * with a message in err and errno ENODEV when no node has a usable CPU. */
int np_topo_load_within(struct np_topo *t, hwloc_const_bitmap_t within, char *err, size_t errlen);

void np_topo_destroy(struct np_topo *t);

/* Narrows the usable CPUs to `cpus`, as a cgroup cpuset would, and
 * recomputes the nodes.  For `numapin plan --restrict` and tests.  Returns
 * 0, or -1 with a message in err (the topology must then only be
 * destroyed). */
int np_topo_restrict(struct np_topo *t, hwloc_const_bitmap_t cpus, char *err, size_t errlen);

/* The OS index of CPU `cpu`'s home node (see np_topo.c: the nearest
 * attached node, ordinary memory first), or -1 when it has none. */
int np_topo_home(const struct np_topo *t, unsigned cpu);

/* The home node of PU object `pu` of any topology (np_topo_home's rule),
 * or NULL when it has none. */
hwloc_obj_t np_topo_home_obj(hwloc_obj_t pu);

/* The home nodes of `cpus` (OS indexes) into `nodes`: for a usable CPU,
 * the node it counts in (node_cpus, the adopted included); for any other
 * CPU, np_topo_home. */
void np_topo_home_nodes(const struct np_topo *t, hwloc_const_bitmap_t cpus, hwloc_bitmap_t nodes);

/* The usable nodes (t->nodes: homes of usable CPUs), OS indexes, into `out`. */
void np_topo_usable_nodes(const struct np_topo *t, hwloc_bitmap_t out);

/* One line describing the machine: source, counts, allowed CPUs. */
void np_topo_summary(const struct np_topo *t, char *buf, size_t len);

#endif
