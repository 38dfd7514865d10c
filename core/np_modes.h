/* np_modes: the vocabulary every layer shares, with its names.
 *
 * What a group is placed on (domain), how a placed thread's CPUs are
 * chosen (cpus), which CPU kind it uses (cpukind), its memory policy
 * (mem), what numapin places (scope), and what it does when a placed
 * thread's CPUs drift from what it set (drift).  Each enum has one table of the
 * names users write, read by the agent's option parser, the command-line
 * tool's arguments and every line that prints a mode, so a name is spelled
 * in one place. */
#ifndef NP_MODES_H
#define NP_MODES_H

#include <stddef.h>

/* Groups a machine can be cut into, for the agent and every command. */
#define NP_MAX_GROUPS 4096

/* What numapin places: the matching threads, or also the whole JVM. */
enum np_scope { NP_SCOPE_THREADS, NP_SCOPE_JVM };

enum np_cpus_mode { NP_CPUS_NODE, NP_CPUS_CORE, NP_CPUS_PU };

/* A placed thread whose CPUs are found not to be what numapin set: put
 * back on them, or noted and left. */
enum np_drift_mode { NP_DRIFT_RESTORE, NP_DRIFT_LOG };

/* What one group is placed on. */
enum np_domain { NP_DOMAIN_NODE, NP_DOMAIN_PACKAGE, NP_DOMAIN_L3 };

enum np_mem_mode {
    NP_MEM_PREFERRED,
    NP_MEM_BIND,
    NP_MEM_INTERLEAVE,
    NP_MEM_LOCAL,
    NP_MEM_NONE,
    /* bound, and migrate-on-fault within the bound nodes
     * (MPOL_BIND | MPOL_F_NUMA_BALANCING): the policy under which the
     * kernel's automatic NUMA balancing samples the thread's accesses */
    NP_MEM_BALANCING,
};

/* Which CPU kind (hwloc cpukinds, hybrid machines) tier threads use:
 * >= 0 is a kind index in hwloc's order (0: least efficient). */
#define NP_CPUKIND_PERFORMANCE (-1) /* the most performant kind (default) */
#define NP_CPUKIND_EFFICIENCY (-2)  /* the most power-efficient kind */
#define NP_CPUKIND_ANY (-3)         /* every kind */

/* The names of one enum's values, in the enum's order. */
struct np_names {
    const char *const *names;
    int n;
};

extern const struct np_names np_scope_names, np_cpus_mode_names, np_domain_names,
    np_mem_mode_names, np_drift_mode_names;

/* The value named `s` (its index in `t`), or -1. */
int np_names_find(const struct np_names *t, const char *s);

/* The value named by the first `len` bytes of `s`, or -1. */
int np_names_findn(const struct np_names *t, const char *s, size_t len);

/* "node, core, pu": every name, for messages listing the valid values;
 * "node, core or pu" when `or`. */
const char *np_names_list(const struct np_names *t, int or, char *buf, size_t len);

const char *np_scope_name(enum np_scope s);
const char *np_cpus_mode_name(enum np_cpus_mode m);
const char *np_domain_name(enum np_domain d);
const char *np_mem_mode_name(enum np_mem_mode m);
const char *np_drift_mode_name(enum np_drift_mode m);

/* cpukind: "performance", "efficiency", "any", or a kind index from 0 to
 * 255.  Returns 0 with *kind set, or -1. */
int np_cpukind_parse(const char *s, int *kind);
/* "performance", "efficiency", "any", or the index, into buf. */
const char *np_cpukind_name(int kind, char *buf, size_t len);

#endif
