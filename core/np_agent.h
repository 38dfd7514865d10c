/* np_agent: the agent's behaviour, independent of the JVM.
 *
 * agent/ turns JVMTI events into these calls; everything else (options,
 * topology, plan, binding, logging, the placement record) happens here, so
 * the whole path is testable without a JVM.  Three parts:
 *  - np_agent_start.c: start-up, once (options, topology, plan, what
 *    placed threads get, the start-up lines and advice, scope=jvm);
 *  - np_agent_place.c: placing threads (on their start, from outside),
 *    their end, and the summary and report at exit;
 *  - np_agent_jvm.c: the whole JVM (scope=jvm): placing the process, what
 *    HotSpot decided before that (UseNUMA), moving its memory at a late
 *    attach, and where its memory is at exit;
 *  - np_drift.c: the rescan thread's checks: the process's cpuset
 *    (re-planning when it changes), placed threads that drifted, the
 *    marker `numapin check` reads.
 *
 * Threading: np_agent_create runs once, before any callback.  After it the
 * fields below are read-only (the placement record has its own lock), but
 * for `targets`, which a re-plan replaces whole (np_targets.h) and
 * callbacks read with np_agent_targets, and `drift`, the rescan thread's;
 * thread_start, thread_end and seen may run concurrently on any threads.
 */
#ifndef NP_AGENT_H
#define NP_AGENT_H

#include <stdbool.h>
#include <sys/types.h>

#include "np_access.h"
#include "np_advise.h"
#include "np_bind.h"
#include "np_file.h"
#include "np_hugepages.h"
#include "np_memory.h"
#include "np_options.h"
#include "np_plan.h"
#include "np_record.h"
#include "np_report.h"
#include "np_sink.h"
#include "np_targets.h"
#include "np_topo.h"

enum np_status {
    NP_OK = 0,
    NP_ERR_OPTIONS = 1,   /* bad option string: the JVM must not start */
    NP_ERR_RUNTIME = 2,   /* start-up failure under `strict` */
    NP_ERR_LOADED = 3,    /* another copy of numapin acts in this process */
};

struct np_drift;

struct np_agent {
    struct np_options opt;
    bool active;                      /* false: help, or disabled by a failure */
    bool late;                        /* loaded into a running JVM (attach) */
    bool jdk_tool;                    /* the JVM runs a tool of the JDK (np_jdk_tool) */
    struct np_topo topo;              /* the machine as loaded at start-up */
    char topo_cache[1400];            /* how it was loaded (np_topo_load_cached's note) */
    /* What placed threads get (np_targets.h): the start-up targets, then
     * those of each re-plan, published whole; read with np_agent_targets. */
    struct np_targets *targets;
    /* The loading thread's CPU binding and memory policy: what threads
     * not placed should have, and the start-up binding to advise on. */
    struct np_actual startup;
    bool have_startup;
    int cpus_at_load;                 /* CPUs the JVM could use when numapin loaded */
    bool jvm_placed;                  /* scope=jvm: the process is bound to the group */
    /* scope=jvm, loaded at start-up: the loading thread, which creates
     * every other, read back the group's memory policy as set. */
    bool jvm_mem_set;
    bool numa_turned_off;             /* numapin turned HotSpot's UseNUMA off at load */
    /* cpus=node, loaded at start-up: a thread's entry ends as its OS
     * thread exits (np_agent_thread_start arranges it), so the JVM need
     * not post ThreadEnd (np_agent_wants_thread_end). */
    bool end_at_exit;
    /* Under end_at_exit, more placed threads live than CPUs at a thread's
     * start, to be confirmed (np_agent_place.c): none, noted or
     * confirmed; the thread's name, and the count when confirmed. */
    atomic_int suspect;
    char suspect_name[128];
    int suspect_live;
    struct np_memory exit_memory;     /* read for the summary, kept for the report */
    struct np_access exit_access;     /* every thread's sampled accesses, read at exit */
    struct np_thread_access *exit_threads; /* each thread's, then */
    int exit_nthreads;
    bool exit_access_read, exit_access_sampled;
    char exit_access_why[512];        /* why the kernel samples none, when it does not */
    struct np_record *record;
    int lock_fd;                      /* group=auto: the lock held, else -1 */
    int claim_fd;                     /* np_claim: this copy acts, else -1 */
    struct np_file_out report;        /* report=FILE: checked at start, written at exit */
    char report_path[4096];           /* FILE with %p expanded */
    /* The rescan thread's own: the cpuset watch, drift and the marker
     * (np_drift.c); NULL until its first np_agent_check. */
    struct np_drift *drift;
    np_once warned_cpu, warned_mem, warned_verify, warned_oom, warned_oversubscribed,
        warned_reset, told_mem_unchanged;
    /* The sink (agent/jfr.c) and what it is told later: np_sink.h. */
    struct np_sink *sink;
    unsigned sink_epochs;
    struct np_advice_line advice[NP_ADVICE_KEEP];
    int nadvice;
    int advice_dropped;  /* advice lines given beyond those kept */
};

/* The current targets: a callback reads them once and uses that copy
 * throughout (a re-plan may publish others meanwhile). */
static inline const struct np_targets *np_agent_targets(const struct np_agent *a)
{
    return __atomic_load_n(&a->targets, __ATOMIC_ACQUIRE);
}

/* How the JVM loads numapin. */
struct np_start {
    bool late;               /* Agent_OnAttach: the JVM runs already */
    const char *command;     /* sun.java.command (the main class, or MODULE/CLASS, and its
                                arguments), or NULL */
};

/* True when `command` (sun.java.command) runs a tool of the JDK (jps,
 * jcmd, javac, jar, jshell, jfr, keytool...): a main class in one of the
 * JDK's own modules, java.* or jdk.*. */
bool np_jdk_tool(const char *command);

/* HotSpot's NUMA flags as the agent read them in Agent_OnLoad, before the
 * heap exists: 1 on, 0 off, -1 unknown (not HotSpot). */
struct np_numa_flags {
    int use_numa;
    int interleaving;            /* UseNUMAInterleaving */
    int interleaving_ergonomic;  /* 1: HotSpot set it because UseNUMA was on */
};

/* Parses the options, claims the process (np_claim: one copy of numapin
 * acts), loads the topology, plans, and logs the start-up lines.  Returns
 * NP_OK with *out set (possibly inactive), or an error after writing one
 * line (NP_ERR_LOADED: a warning saying which copy acts); on NP_ERR_* *out
 * is NULL. */
enum np_status np_agent_create(const char *options, struct np_agent **out);

/* The same, told how the JVM loads numapin.  Loaded into a JDK tool
 * without log=, numapin logs to stderr at warning level: the tool's
 * stdout (which scripts read) stays its own.  At attach, a bad option's
 * line explains jcmd's splitting at '='. */
enum np_status np_agent_start(const char *options, const struct np_start *how,
                              struct np_agent **out);

/* Says, as np_agent_create does for another copy, that this library is
 * loaded again (the JVM loaded the same file twice, so its statics hold
 * the copy that acts) and that this load does nothing. */
void np_agent_warn_loaded(const char *options);

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
/* At load, with the whole JVM given its memory policy (`t`, the group's
 * target): the memory the process touched before Agent_OnLoad (the
 * launcher's malloc heap, libjvm's zeroed data, the loading thread's
 * stack), which sits where the launcher happened to run, moved to the
 * group's node(s) (np_memory_move_self), with one info line. */
void np_agent_move_before_load(struct np_agent *a, const struct np_target *t);

void np_agent_use_numa_at_load(struct np_agent *a, const struct np_numa_flags *f,
                               int (*set_false)(const char *flag));

/* HotSpot's large-page and heap flags as the agent read them in
 * Agent_OnLoad: ergonomics has set them by then (JDK 17 and 25), but the
 * GC rounds the heap up to its alignment afterwards.  1 on, 0 off, -1
 * unknown (not HotSpot, or a flag this JVM lacks); sizes in bytes, -1
 * unknown. */
struct np_heap_flags {
    int large_pages;          /* UseLargePages (off already when HotSpot found no pool) */
    int thp;                  /* UseTransparentHugePages: THP, no pool */
    int shm;                  /* UseSHM: SysV shared memory from the same pools (JDK 17) */
    int pretouch;             /* AlwaysPreTouch: every page taken at start-up */
    long long page_size;      /* LargePageSizeInBytes: 0 the kernel's default */
    long long max_heap;       /* MaxHeapSize */
    long long code_cache;     /* ReservedCodeCacheSize */
    int segmented;            /* SegmentedCodeCache */
    int heap_at_set;          /* AllocateHeapAt given */
    const char *heap_at;      /* its directory, NULL when unknown */
};

/* At load, after np_agent_create and before HotSpot reserves the code
 * cache and heap: with the whole JVM on its group (or dryrun, which says
 * what placing would meet) and hugetlbfs large pages, checks that the
 * group's memory nodes have the free huge pages HotSpot reserves there
 * (np_hugepages_check, the pools under `root`: "" on this machine).
 * Enough: one info line.  Short: one warning with the numbers, what the
 * memory mode in effect does about it and the fix; under strict (not
 * dryrun) an error line and NP_ERR_RUNTIME.  A heap in a file
 * (AllocateHeapAt) gets one warning.  Returns NP_OK otherwise. */
enum np_status np_agent_large_pages_at_load(struct np_agent *a, const struct np_heap_flags *f,
                                            const char *root);

/* After a late attach has placed the whole JVM (scope=jvm): gives the
 * JVM's own memory the group's policy and moves it to the group's node(s)
 * (np_memory_move_self), logging how much moved and how long it took (one
 * warning when it could not). */
void np_agent_attached(struct np_agent *a);

/* A thread started; called on that thread.  A matching thread is placed.
 * A thread that does not match but inherited a placement from the thread
 * that created it (Linux threads inherit affinity and memory policy) is put
 * back to the process's start-up CPUs and policy.  `name` is the name's
 * UTF-8 text and `escaped` its escaped form, NULL when the text is the
 * name exactly (np_text_from_mutf8). */
void np_agent_thread_start(struct np_agent *a, const char *name, const char *escaped, pid_t tid);

/* A running thread seen from another thread: at late attach
 * (NP_HOW_ATTACH) or by the periodic rescan for renamed threads
 * (NP_HOW_RESCAN).  A matching thread not placed yet (never seen, or seen
 * under a name that did not match) gets its CPUs; its memory policy cannot
 * be set from outside. */
void np_agent_seen(struct np_agent *a, const char *name, const char *escaped, pid_t tid,
                   enum np_how how);

/* True when the agent needs the JVM's ThreadEnd (np_agent_thread_ended).
 * Under cpus=node, loaded at start-up, it does not: each thread's entry
 * ends as the thread exits (a pthread key's destructor, which glibc runs
 * after HotSpot's ThreadEnd and before the thread's id can be another's).
 * Under cpus=core|pu the core or hardware thread must be free before
 * join() returns, and after a late attach threads placed from outside
 * have no such key. */
bool np_agent_wants_thread_end(const struct np_agent *a);

/* Under end_at_exit, the JVM's list of running threads catches what the
 * exits have not yet: a thread past its ThreadEnd (joined) that has not
 * exited, at the periodic rescan and before the summary and report.
 * np_agent_listing is read before the list is taken; np_agent_running,
 * given the OS ids of every thread in it (any order; sorted in place),
 * ends the entries added before that which the list lacks. */
unsigned long np_agent_listing(struct np_agent *a);
void np_agent_running(struct np_agent *a, unsigned long since, pid_t *tids, int n);

/* The calling thread, whose OS id is `tid`, is ending. */
void np_agent_thread_ended(struct np_agent *a, pid_t tid);

/* Under end_at_exit (np_agent_wants_thread_end), the advice on more
 * placed threads live than the group's CPUs: a thread start that counts
 * more only notes it, since the count holds threads joined but not yet
 * exited, and the next exit counts again.  This gives the advice
 * confirmed so, or, when no exit has come, when the count taken now is
 * still above the CPUs.  Called by np_agent_check and np_agent_summary
 * (a thread start does it too). */
void np_agent_confirm_advice(struct np_agent *a);

/* Logs the summary line. */
void np_agent_summary(struct np_agent *a);

/* Writes the report (report=FILE) and logs where; once, at exit. */
void np_agent_report(struct np_agent *a);

/* The rescan thread's periodic work after it has listed the threads
 * (np_drift.c), every rescan=MS: when the process's cpuset has changed
 * since the last call, re-plans on it (np_agent_replan); then puts placed
 * threads whose CPUs are not what numapin set back on them (drift=restore)
 * or notes them (drift=log); then refreshes the marker that `numapin check`
 * reads.  Called from one thread only. */
void np_agent_check(struct np_agent *a);

/* The process may now use the CPUs `cpuset` (its cgroup cpuset, before
 * the start-up binding is applied to it): plans again on them, publishes
 * the new targets, and moves the placed threads onto them from outside.
 * Returns 1 when the targets changed, 0 when the plan for this group is
 * the same, -1 on failure (logged).  From the rescan thread (or a test),
 * one caller at a time. */
int np_agent_replan(struct np_agent *a, hwloc_const_bitmap_t cpuset);

/* Between the agent's own files (np_agent_jvm.c):
 * np_agent_place_jvm binds the process to the group of targets `g` and
 * gives the calling thread the group's memory policy (t), logging the
 * "jvm" line; 0, or -1 after a warning (an error line under strict).
 * np_agent_exit_memory writes " mem_pages=... mem_local=... mem_huge=..." for the
 * summary, the share counted on the memory nodes of `g`. */
int np_agent_place_jvm(struct np_agent *a, const struct np_targets *g, const struct np_target *t);
void np_agent_exit_memory(struct np_agent *a, const struct np_targets *g, char *fields, size_t len);
/* np_agent_exit_access writes " access_local=... access_samples=...
 * access_migrated=..." for the summary: the kernel's sampled accesses of
 * every thread of the process (np_access), the share on the memory nodes
 * of `g`; " access_local=unsampled" where the kernel samples none, after
 * one line saying why. */
void np_agent_exit_access(struct np_agent *a, const struct np_targets *g, char *fields, size_t len);
/* The memory policy every thread of the JVM has from numapin: mem= when
 * the whole JVM was placed at load (its threads start with the policy),
 * else NP_MEM_NONE (threads numapin does not place, or that ran before a
 * late attach, keep theirs).  What decides whether the kernel samples the
 * JVM's accesses; the marker gives it to numapin check. */
enum np_mem_mode np_agent_jvm_mem(const struct np_agent *a);
/* The kernel's sampled accesses of every thread of the process, read now,
 * each thread's into *threads (sorted by tid, *n of them;
 * np_thread_access_free them) and their sum into *acc (np_access_free
 * it): true where the kernel samples them; false with why it does not,
 * and the fix, in why. */
bool np_agent_access_now(const struct np_agent *a, struct np_thread_access **threads, int *n,
                         struct np_access *acc, char *why, size_t len);
/* The accesses np_agent_exit_access gives, and each thread's, read once at
 * exit (the first call logs why the kernel samples none): acc->process
 * NULL and acc->unsampled saying why where it samples none.  What *acc
 * points to is the agent's. */
void np_agent_exit_access_read(struct np_agent *a, struct np_report_access *acc);
/* (np_agent_place.c) The key whose destructor ends an entry at its
 * thread's exit is made once per process and serves the agent that
 * claimed it: np_agent_claim_exit_key gives it to `a` (false when there is
 * no key, or another agent has it), np_agent_release_exit_key takes it
 * back from `a` (nothing when `a` does not have it). */
bool np_agent_claim_exit_key(struct np_agent *a);
void np_agent_release_exit_key(struct np_agent *a);

/* (np_agent_place.c) Placing from outside, for the rescan thread's checks
 * (np_drift.c):
 * np_agent_set_other sets a running thread's CPUs from outside to those of
 * slot `slot` of t, reads them back and logs `placed ... mem=unchanged
 * how=HOW`, with `was=WAS` when was is not NULL (or `would-place` under
 * dryrun); 0, or the errno when the CPUs could not be set (nothing
 * logged).  np_agent_own_thread is true when tid is a thread of this
 * process.  np_agent_used_cpus adds to out the CPUs placed threads went
 * to under t (its slots that had threads) and under the targets before
 * it. */
int np_agent_set_other(struct np_agent *a, const struct np_targets *t, struct np_ref e,
                       int slot, const char *name, pid_t tid, enum np_how how, const char *was);
bool np_agent_own_thread(pid_t tid);
void np_agent_used_cpus(struct np_agent *a, const struct np_targets *t, hwloc_bitmap_t out);

/* Releases everything; no callback may run during or after it, and
 * every other thread that started under it (np_agent_thread_start) has
 * exited. */
void np_agent_destroy(struct np_agent *a);

#endif
