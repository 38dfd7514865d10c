/* np_agent: the agent's behaviour, independent of the JVM.
 *
 * agent/ turns JVMTI events into these calls; everything else (options,
 * topology, plan, binding, logging, the placement record) happens here, so
 * the whole path is testable without a JVM.  Two halves:
 *  - np_agent_start.c: start-up, once (options, topology, plan, what
 *    placed threads get, the start-up lines and advice, scope=jvm);
 *  - np_agent_place.c: placing threads (on their start, from outside),
 *    their end, and the summary and report at exit;
 *  - np_agent_jvm.c: the whole JVM (scope=jvm): placing the process, what
 *    HotSpot decided before that (UseNUMA), moving its memory at a late
 *    attach, and where its memory is at exit.
 *
 * Threading: np_agent_create runs once, before any callback.  After it the
 * fields below are read-only (the placement record has its own lock);
 * thread_start, thread_end and seen may run concurrently on any threads.
 */
#ifndef NP_AGENT_H
#define NP_AGENT_H

#include <stdbool.h>
#include <sys/types.h>

#include "np_advise.h"
#include "np_bind.h"
#include "np_memory.h"
#include "np_options.h"
#include "np_plan.h"
#include "np_record.h"
#include "np_report.h"
#include "np_topo.h"

enum np_status {
    NP_OK = 0,
    NP_ERR_OPTIONS = 1,   /* bad option string: the JVM must not start */
    NP_ERR_RUNTIME = 2,   /* start-up failure under `strict` */
};

struct np_agent {
    struct np_options opt;
    bool active;                      /* false: help, or disabled by a failure */
    struct np_topo topo;
    struct np_plan plan;
    const struct np_group_plan *mine; /* this JVM's group */
    hwloc_bitmap_t place_cpus;        /* the group's CPUs of the chosen cpukind */
    hwloc_bitmap_t mem_nodes;         /* nodes of placed threads' memory policy */
    hwloc_bitmap_t *slots;            /* placement slots, per opt.cpus */
    int nslots;
    char node_list[256];              /* this group's nodes, cpulist syntax */
    /* Prepared once, so that placing a thread formats and converts
     * nothing: the CPU lists as the log shows them, and the memory policy
     * in the kernel's terms and as the log shows it. */
    char *place_cpus_str;
    char **slot_cpus_str;
    struct np_policy policy;
    char mem_str[256];
    /* The loading thread's CPU binding and memory policy: what threads
     * not placed should have, and the start-up binding to advise on. */
    struct np_actual startup;
    bool have_startup;
    bool may_inherit;                 /* some placement differs from the start-up CPUs:
                                         a thread may inherit one it must not keep */
    int cpus_at_load;                 /* CPUs the JVM could use when numapin loaded */
    bool jvm_placed;                  /* scope=jvm: the process is bound to the group */
    bool numa_turned_off;             /* numapin turned HotSpot's UseNUMA off at load */
    struct np_memory exit_memory;     /* read for the summary, kept for the report */
    struct np_record *record;
    struct np_report_plan report_plan; /* the plan as the report shows it */
    int lock_fd;                      /* group=auto: the lock held, else -1 */
    int report_fd;                    /* report=FILE: opened at start, else -1 */
    char report_path[4096];           /* FILE with %p expanded */
    np_once warned_cpu, warned_mem, warned_verify, warned_oom, warned_oversubscribed,
        warned_reset, told_mem_unchanged;
};

/* HotSpot's NUMA flags as the agent read them in Agent_OnLoad, before the
 * heap exists: 1 on, 0 off, -1 unknown (not HotSpot). */
struct np_numa_flags {
    int use_numa;
    int interleaving;            /* UseNUMAInterleaving */
    int interleaving_ergonomic;  /* 1: HotSpot set it because UseNUMA was on */
};

/* Parses the options, loads the topology, plans, and logs the start-up
 * lines.  Returns NP_OK with *out set (possibly inactive), or an error
 * after writing one error line; on NP_ERR_* *out is NULL. */
enum np_status np_agent_create(const char *options, struct np_agent **out);

/* What the JVM decided before numapin could act (flags read at VMInit):
 * logs the advice that follows from it. */
void np_agent_jvm_facts(struct np_agent *a, const struct np_jvm_facts *f);

/* At load, after np_agent_create and before HotSpot reserves the heap: with
 * the whole JVM placed on a group that is not every node, UseNUMA (decided
 * by HotSpot from the whole machine) would spread the heap over every node,
 * so it is turned off through `set_false` (a flag name; returns 0 when
 * done), with UseNUMAInterleaving when HotSpot turned that on for it, as
 * HotSpot itself does under numactl --membind to one node.  Where that
 * cannot be done, the advice at VMInit warns that UseNUMA is on. */
void np_agent_use_numa_at_load(struct np_agent *a, const struct np_numa_flags *f,
                               int (*set_false)(const char *flag));

/* After a late attach has placed the whole JVM (scope=jvm): gives the
 * JVM's own memory the group's policy and moves it to the group's node(s)
 * (np_memory_move_self), logging how much moved and how long it took (one
 * warning when it could not). */
void np_agent_attached(struct np_agent *a);

/* A thread started; called on that thread.  A matching thread is placed.
 * A thread that does not match but inherited a placement from the thread
 * that created it (Linux threads inherit affinity and memory policy) is put
 * back to the process's start-up CPUs and policy. */
void np_agent_thread_start(struct np_agent *a, const char *name, pid_t tid);

/* A running thread seen from another thread: at late attach
 * (NP_HOW_ATTACH) or by the periodic rescan for renamed threads
 * (NP_HOW_RESCAN).  A matching thread not placed yet (never seen, or seen
 * under a name that did not match) gets its CPUs; its memory policy cannot
 * be set from outside. */
void np_agent_seen(struct np_agent *a, const char *name, pid_t tid, enum np_how how);

/* The calling thread is ending. */
void np_agent_thread_end(struct np_agent *a);
/* The same, the caller knowing the thread's OS id (`tid`, the calling
 * thread's). */
void np_agent_thread_ended(struct np_agent *a, pid_t tid);

/* Logs the summary line. */
void np_agent_summary(struct np_agent *a);

/* Writes the report (report=FILE) and logs where; once, at exit. */
void np_agent_report(struct np_agent *a);

/* Between the agent's own files (np_agent_jvm.c):
 * np_agent_place_jvm binds the process to the group and gives the calling
 * thread the group's memory policy (t), logging the "jvm" line; 0, or -1
 * after a warning (an error line under strict).  np_agent_exit_memory
 * writes " mem_pages=... mem_local=..." for the summary. */
int np_agent_place_jvm(struct np_agent *a, const struct np_target *t);
/* True when a thread can inherit a placement other than the start-up one:
 * some placement's CPUs differ from the start-up CPUs.  With the whole JVM
 * placed and cpus=node, none does, and a thread that does not match has
 * nothing to be put back from. */
bool np_agent_may_inherit(const struct np_agent *a);
void np_agent_exit_memory(struct np_agent *a, char *fields, size_t len);

/* Releases everything; no callback may run during or after it. */
void np_agent_destroy(struct np_agent *a);

#endif
