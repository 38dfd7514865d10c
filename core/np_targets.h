/* np_targets: what this JVM's placed threads get under one plan.
 *
 * Built once at start-up from the plan of the machine as numapin loaded
 * it, and again each time the process's cpuset changes (np_drift.c):
 * the group's CPUs of the chosen kind, the slots cpus=core|pu choose
 * from, the memory nodes and policy, and the same as the log and the
 * report show them, prepared so that placing a thread formats and
 * converts nothing.
 *
 * Threading: a targets object is complete before it is published and
 * never changes afterwards; ThreadStart callbacks read whichever one was
 * current when they started, without locks.  So one is never freed while
 * the JVM runs: a re-plan publishes a new one and keeps the old one
 * (`older`), and all are freed by np_agent_destroy.  A cpuset changes a
 * handful of times in a JVM's life (pods coming and going), so what is
 * kept stays small: a plan and a topology each. */
#ifndef NP_TARGETS_H
#define NP_TARGETS_H

#include <stdbool.h>
#include <stddef.h>

#include "np_bind.h"
#include "np_options.h"
#include "np_plan.h"
#include "np_report.h"
#include "np_topo.h"

struct np_targets {
    unsigned gen;                    /* 0 at start-up, then one more each re-plan */
    const struct np_targets *older;  /* the targets before these, kept */
    /* The machine the plan was made on: the agent's own at start-up; a
     * re-plan loads it again, owned here (own_topo). */
    const struct np_topo *topo;
    struct np_topo own_topo;
    bool owns_topo;
    struct np_plan plan;
    const struct np_group_plan *mine; /* this JVM's group in `plan` */
    hwloc_bitmap_t place_cpus;        /* the group's CPUs of the chosen cpukind */
    hwloc_bitmap_t mem_nodes;         /* nodes of placed threads' memory policy */
    hwloc_bitmap_t *slots;            /* placement slots, per opt.cpus */
    int nslots;
    char node_list[256];              /* the group's nodes, cpulist syntax */
    /* Prepared by np_targets_prepare: the CPU lists as the log shows them,
     * and the memory policy in the kernel's terms and as the log shows it. */
    char *place_cpus_str;
    char **slot_cpus_str;
    struct np_cpumask place_mask;     /* place_cpus and the slots, as the kernel reads them */
    struct np_cpumask *slot_masks;
    int *slot_of_cpu;                 /* each CPU's slot (-1: none), CPUs 0 to ncpus_known-1 */
    int ncpus_known;
    int nplace_cpus;                  /* CPUs in place_cpus */
    struct np_policy policy;
    char mem_str[256];
    struct np_report_plan report_plan;
    /* What a thread that is not to be placed gets back when it inherited a
     * placement (the start-up CPUs and policy, or under scope=jvm the
     * JVM's group); valid when have_unplaced. */
    struct np_actual unplaced;
    bool have_unplaced;
    /* Some placement's CPUs differ from the unplaced ones: a thread that is
     * not to be placed may have inherited one and must be put back.  With
     * the whole JVM on the group and cpus=node, none does, and such a
     * thread costs no system call. */
    bool may_inherit;
    hwloc_bitmap_t used_before;       /* CPUs placed threads went to under older targets */
    /* No CPUs: the process's cpuset leaves this group none, and threads
     * are left to the kernel until it changes.  Nothing else is set. */
    bool none;
};

enum np_targets_status {
    NP_TARGETS_OK = 0,
    NP_TARGETS_NOMEM,     /* out of memory */
    NP_TARGETS_CPUKIND,   /* cpukind= names a kind the machine lacks (message in err) */
    NP_TARGETS_MEMNODE,   /* mem=MODE:NODES names a node the machine lacks (message in err) */
};

/* Builds the targets of group `group` of `plan` (taken over: freed with
 * the targets, even on failure) on the machine `topo` (borrowed; see
 * np_targets_own_topo): the CPUs, slots and memory nodes.  Returns
 * NP_TARGETS_OK with *out set, or another status with *out NULL. */
enum np_targets_status np_targets_build(const struct np_options *o, const struct np_topo *topo,
                                        struct np_plan *plan, int group, struct np_targets **out,
                                        char *err, size_t errlen);

/* Targets with no CPUs (see `none`). NULL when memory runs out. */
struct np_targets *np_targets_none(void);

/* Makes t own `topo` (moved in; `topo` is left empty). */
void np_targets_own_topo(struct np_targets *t, struct np_topo *topo);

/* Prepares what placing a thread needs, with the memory policy o->mem
 * (settled by then: NP_MEM_NONE without NUMA support).  Returns 0, or -1
 * when memory runs out. */
int np_targets_prepare(struct np_targets *t, const struct np_options *o);

/* Sets what threads not placed get back (np_targets.unplaced): the CPUs
 * `cpus` and the memory policy of `startup`, and may_inherit with them.
 * Returns 0, or -1 when memory runs out. */
int np_targets_set_unplaced(struct np_targets *t, hwloc_const_bitmap_t cpus,
                            const struct np_actual *startup);

/* Marks t's memory policy as the one every thread of the JVM starts with
 * (np_policy.inherited), for placing and for the report, when `inherited`
 * and t sets one. */
void np_targets_inherit_policy(struct np_targets *t, bool inherited);

/* The targets of generation `gen`, from t back through the older ones;
 * t itself when there is none (which a caller never asks for). */
const struct np_targets *np_targets_find(const struct np_targets *t, unsigned gen);

/* True when `cpus` is a placement t gives: the group's CPUs or a slot. */
bool np_targets_is_placement(const struct np_targets *t, hwloc_const_bitmap_t cpus);

/* The CPUs of a thread of slot `slot` (-1: none), and as the log shows them. */
hwloc_const_bitmap_t np_targets_cpus(const struct np_targets *t, int slot);
const char *np_targets_cpus_str(const struct np_targets *t, int slot);
const struct np_cpumask *np_targets_mask(const struct np_targets *t, int slot);

/* The slot holding CPU `cpu`, or -1. */
int np_targets_slot_of(const struct np_targets *t, int cpu);

/* True when a and b give placed threads the same CPUs, slots and memory. */
bool np_targets_same(const struct np_targets *a, const struct np_targets *b);

/* Frees t alone (not the older ones). */
void np_targets_free(struct np_targets *t);

/* Frees t and every older one. */
void np_targets_free_all(struct np_targets *t);

#endif
