/* np_domains: the placement domains of a machine (domain=node|package|l3)
 * and how far apart they are.
 *
 * A domain is a NUMA node (with the CPUs whose home it is), a package, or
 * an L3 cache, each restricted to the CPUs numapin may use, with the
 * memory nodes that are home to those CPUs.  Domains without usable CPUs
 * are left out.  Order: hwloc logical order. */
#ifndef NP_DOMAINS_H
#define NP_DOMAINS_H

#include <hwloc.h>

#include "np_modes.h"
#include "np_topo.h"

struct np_domains {
    int n;
    hwloc_obj_t *objs;      /* the node, package or L3 object */
    hwloc_bitmap_t *cpus;   /* usable CPUs, OS indexes */
    hwloc_bitmap_t *nodes;  /* home nodes of those CPUs, OS indexes */
    double *dist;           /* n x n: relative distance between domains */
    int from_matrix;        /* 1: dist comes from the NUMA distance matrix */
};

/* Fills d for the given kind.  Returns 0, or -1 with errno (ENOMEM; ENOENT
 * when the machine has no usable domain of that kind, e.g. no L3). */
int np_domains_get(const struct np_topo *t, enum np_domain kind, struct np_domains *d);
void np_domains_free(struct np_domains *d);

#endif
