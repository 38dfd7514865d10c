/* np_describe: the machine as numapin sees it, for people (text) and for
 * programs (JSON).  Used by `numapin topo`; reads the topology only. */
#ifndef NP_DESCRIBE_H
#define NP_DESCRIBE_H

#include <stdio.h>

#include "np_topo.h"

void np_describe_text(const struct np_topo *t, FILE *out);
void np_describe_json(const struct np_topo *t, FILE *out);

/* The group count that matches the machine: one per NUMA node with
 * usable CPUs. */
int np_recommended_groups(const struct np_topo *t);

#endif
