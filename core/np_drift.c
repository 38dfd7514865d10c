#define _GNU_SOURCE
#include "np_drift.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "np_agent.h"
#include "np_cpuset.h"
#include "np_marker.h"

struct np_drift {
    struct np_cpuset *watch;  /* NULL: the cpuset cannot be watched */
    hwloc_bitmap_t last;      /* the cpuset as last read (or as the start-up plan saw it) */
    /* The start-up binding, when it was narrower than the cpuset (taskset,
     * numactl): re-plans stay within it, as the kernel keeps a thread's own
     * mask.  NULL when the JVM simply had its cpuset. */
    hwloc_bitmap_t bound;
    struct np_marker_file marker;
    bool marker_off;          /* memfd_create refused: no marker */
    bool marker_done;         /* one written */
    unsigned long marker_changes;
    unsigned marker_plan;
    unsigned long seq;
    np_once warned_watch, warned_read, warned_replan, warned_restore, warned_jvm, warned_marker;
};

void np_drift_free(struct np_drift *d)
{
    if (d == NULL)
        return;
    np_cpuset_close(d->watch);
    hwloc_bitmap_free(d->last);
    hwloc_bitmap_free(d->bound);
    np_marker_close(&d->marker);
    free(d);
}

/* The rescan thread's state: the watch, the cpuset the start-up plan was
 * made on, and the start-up binding if narrower.  On this machine's own
 * topology hwloc read the cpuset at load, so that is the start, and the
 * state is made at the first check (the watch's topology costs nothing at
 * start-up then).  Where hwloc did not read it (a fake topology, from
 * HWLOC_SYNTHETIC or HWLOC_XMLFILE; or a cgroup that is the root of its
 * mount, as in a container sharing the host's cgroup namespace,
 * np_cpuset.h) the cpuset is read at start-up (np_drift_start), or a change
 * before the first check would be taken for the start. */
static struct np_drift *state(struct np_agent *a)
{
    if (a->drift != NULL)
        return a->drift;
    struct np_drift *d = calloc(1, sizeof *d);
    if (d == NULL || (d->last = hwloc_bitmap_alloc()) == NULL) {
        free(d);
        return NULL;
    }
    d->marker.fd = -1;
    char err[512];
    if ((d->watch = np_cpuset_open(err, sizeof err)) == NULL) {
        np_log(np_once_level(&d->warned_watch, NP_LOG_DEBUG),
               "cannot watch the cpuset (%s): a change of it is not followed", err);
    } else if (strcmp(a->topo.source, "this system") == 0 && !np_cpuset_from_root(d->watch)) {
        hwloc_bitmap_copy(d->last, hwloc_topology_get_allowed_cpuset(a->topo.topology));
    } else if (np_cpuset_read(d->watch, d->last) != 0) {
        np_cpuset_close(d->watch);
        d->watch = NULL;
    }
    if (d->watch != NULL && !hwloc_bitmap_isincluded(d->last, a->topo.allowed))
        d->bound = hwloc_bitmap_dup(a->topo.allowed);
    a->drift = d;
    return d;
}

void np_drift_start(struct np_agent *a)
{
    if (!a->active || !a->topo.thissystem || a->opt.rescan_ms == 0)
        return;
    char root[8192];
    if (strcmp(a->topo.source, "this system") != 0 ||
        np_cpuset_root_file("/proc/self/mounts", "/proc/self/cgroup", root, sizeof root) == 1)
        state(a);
}

/* A thread's name for the log, quoted ("?" when its entry is gone). */
static const char *name_of(struct np_agent *a, struct np_ref ref, char *buf, size_t len)
{
    if (np_record_name(a->record, ref, buf, len) != 0)
        snprintf(buf, len, "?");
    return buf;
}

/* The latest targets before t that have CPUs, or NULL. */
static const struct np_targets *last_with_cpus(const struct np_targets *t)
{
    for (const struct np_targets *o = t; o != NULL; o = o->older)
        if (!o->none)
            return o;
    return NULL;
}

/* New targets for the CPUs `within` (the cpuset, within the start-up
 * binding): NULL after a warning when they cannot be built. */
static struct np_targets *build(struct np_agent *a, struct np_drift *d, hwloc_const_bitmap_t within)
{
    char err[1024] = "";
    if (hwloc_bitmap_iszero(within))
        return np_targets_none();
    struct np_topo topo;
    if (np_topo_load_within(&topo, within, err, sizeof err) != 0) {
        if (errno == ENODEV)
            return np_targets_none(); /* no node has one of those CPUs */
        np_log(np_once_level(&d->warned_replan, NP_LOG_WARNING),
               "cannot plan on the cpuset's CPUs: %s; placement stays as it was", err);
        return NULL;
    }
    struct np_plan plan;
    if (np_plan_build(&topo, a->opt.groups, a->opt.domain, &plan) != 0) {
        np_log(np_once_level(&d->warned_replan, NP_LOG_WARNING),
               "cannot plan %d groups on the cpuset's CPUs: %s; placement stays as it was",
               a->opt.groups, strerror(errno));
        np_topo_destroy(&topo);
        return NULL;
    }
    struct np_targets *t;
    if (np_targets_build(&a->opt, &topo, &plan, a->opt.group, &t, err, sizeof err) != NP_TARGETS_OK) {
        np_log(np_once_level(&d->warned_replan, NP_LOG_WARNING),
               "cannot plan on the cpuset's CPUs: %s; placement stays as it was",
               err[0] != '\0' ? err : "out of memory");
        np_topo_destroy(&topo);
        return NULL;
    }
    np_targets_own_topo(t, &topo);
    if (np_targets_prepare(t, &a->opt) != 0)
        goto nomem;
    if (a->have_startup) {
        /* Threads not placed get back the start-up CPUs that are still
         * allowed (all the allowed ones when none is), or under scope=jvm
         * the group's; and their start-up memory policy. */
        hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
        if (cpus == NULL)
            goto nomem;
        if (a->opt.scope == NP_SCOPE_JVM)
            hwloc_bitmap_copy(cpus, t->mine->cpus);
        else
            hwloc_bitmap_and(cpus, a->startup.cpus, t->topo->allowed);
        if (hwloc_bitmap_iszero(cpus))
            hwloc_bitmap_copy(cpus, t->topo->allowed);
        int rc = np_targets_set_unplaced(t, cpus, &a->startup);
        hwloc_bitmap_free(cpus);
        if (rc != 0)
            goto nomem;
    }
    return t;
nomem:
    np_log(np_once_level(&d->warned_replan, NP_LOG_WARNING),
           "cannot plan on the cpuset's CPUs: out of memory; placement stays as it was");
    np_targets_free(t);
    return NULL;
}

/* Logs what a re-plan changed: the new plan, or that there is none; and
 * what stays where it was. */
static void log_replan(struct np_agent *a, const struct np_targets *t, const struct np_targets *was,
                       hwloc_const_bitmap_t cpuset, hwloc_const_bitmap_t bound)
{
    char allowed[1024], from[1024] = "", start[1100] = "";
    np_cpulist(allowed, sizeof allowed, cpuset);
    if (t->none) {
        if (bound != NULL) {
            np_cpulist(from, sizeof from, bound);
            snprintf(start, sizeof start, " (the JVM started bound to cpus=%s)", from);
        }
        np_log(NP_LOG_WARNING, "the cpuset now allows cpus=%s, which leaves group %d no CPUs%s: "
               "threads are left where the kernel puts them until it allows some again",
               allowed, a->opt.group, start);
        return;
    }
    char kind[32], was_node[300] = "none", was_cpus[1024] = "none";
    if (was != NULL) {
        snprintf(was_node, sizeof was_node, "%s", was->node_list);
        snprintf(was_cpus, sizeof was_cpus, "%s", was->place_cpus_str);
    }
    np_log(NP_LOG_INFO,
           "replan group=%d groups=%d domain=%s node=%s slice=%d/%d cpus=%s cpus_mode=%s "
           "cpukind=%s slots=%d mem=%s allowed=%s was_node=%s was_cpus=%s",
           a->opt.group, a->opt.groups, np_domain_name(a->opt.domain), t->node_list,
           t->mine->slice + 1, t->mine->nslices, t->place_cpus_str, np_cpus_mode_name(a->opt.cpus),
           np_cpukind_name(a->opt.cpukind, kind, sizeof kind), t->nslots, t->mem_str, allowed,
           was_node, was_cpus);
    if (was != NULL && a->opt.mem != NP_MEM_NONE && !hwloc_bitmap_isequal(was->mem_nodes, t->mem_nodes))
        np_log(NP_LOG_WARNING,
               "group %d moved from node %s to node %s: threads placed before keep their memory "
               "policy %s%s (Linux lets only a thread itself change its policy), and numapin "
               "moves no memory already allocated (the kernel does when the cpuset's memory "
               "nodes changed: always on cgroup v2, with cpuset.memory_migrate on v1); threads "
               "started from now get %s",
               a->opt.group, was->node_list, t->node_list, was->mem_str,
               a->opt.scope == NP_SCOPE_JVM ? ", as do the JVM's own threads and its heap" : "",
               t->mem_str);
}

/* What placed threads had before a re-plan: the CPUs of their slot under
 * their plan then, by entry (sorted, for bsearch). */
struct before_cpus {
    struct np_ref ref;
    hwloc_const_bitmap_t cpus; /* the targets' own, never freed while the JVM runs */
};

static int before_compare(const void *a, const void *b)
{
    const struct before_cpus *x = a, *y = b;
    uintptr_t p = (uintptr_t)x->ref.e, q = (uintptr_t)y->ref.e;
    if (p != q)
        return p < q ? -1 : 1;
    return x->ref.gen < y->ref.gen ? -1 : x->ref.gen > y->ref.gen;
}

/* The placed threads' CPUs under the targets `old` (and those before it),
 * sorted; *n their number.  NULL (n 0) when memory runs out. */
static struct before_cpus *placed_before(struct np_agent *a, const struct np_targets *old, int *n)
{
    struct np_live *l;
    *n = 0;
    int k = np_record_placed(a->record, &l);
    if (k < 0)
        return NULL;
    struct before_cpus *b = malloc((size_t)(k > 0 ? k : 1) * sizeof *b);
    for (int i = 0; b != NULL && i < k; i++) {
        if (l[i].outcome != NP_PLACED || !l[i].settled)
            continue;
        const struct np_targets *o = np_targets_find(old, l[i].plan);
        if (o->gen != l[i].plan || o->none)
            continue;
        b[(*n)++] = (struct before_cpus){l[i].ref, np_targets_cpus(o, l[i].slot)};
    }
    free(l);
    if (b != NULL)
        qsort(b, (size_t)*n, sizeof *b, before_compare);
    return b;
}

/* Puts the placed threads of the current plan on their CPUs from outside,
 * those whose CPUs differ: one line each, how=HOW.  Under a re-plan
 * (`before`, n of them: what they had before it), a thread already on its
 * new CPUs (the kernel moved it there when the cpuset changed) whose CPUs
 * the re-plan changed has its line too.  Returns how many could not be
 * moved with EINVAL (CPUs the cpuset no longer allows), which
 * `einval_is_failure` makes failures like any other; < 0 when memory runs
 * out. */
static int move_threads(struct np_agent *a, struct np_drift *d, const struct np_targets *t,
                        enum np_how how, bool einval_is_failure, const struct before_cpus *before,
                        int nbefore);

int np_agent_replan(struct np_agent *a, hwloc_const_bitmap_t cpuset)
{
    if (!a->active)
        return 0;
    struct np_drift *d = state(a);
    hwloc_bitmap_t within = hwloc_bitmap_dup(cpuset);
    if (d == NULL || within == NULL) {
        hwloc_bitmap_free(within);
        return -1;
    }
    if (d->bound != NULL)
        hwloc_bitmap_and(within, within, d->bound);
    struct np_targets *t = build(a, d, within);
    hwloc_bitmap_free(within);
    if (t == NULL)
        return -1;
    const struct np_targets *old = np_agent_targets(a);
    if (np_targets_same(old, t)) {
        char allowed[1024];
        np_cpulist(allowed, sizeof allowed, cpuset);
        if (!t->none)
            np_log(NP_LOG_DEBUG, "the cpuset now allows cpus=%s: the plan of group %d is the same",
                   allowed, a->opt.group);
        np_targets_free(t);
        return 0;
    }
    const struct np_targets *before = last_with_cpus(old);
    /* Threads keep inheriting the JVM's policy while every plan gives it:
     * once one set another, the threads those create start with that. */
    np_targets_inherit_policy(t, before != NULL && before->policy.inherited &&
                                     np_policy_same(&t->policy, &before->policy));
    t->gen = old->gen + 1;
    t->older = old;
    if (t->used_before == NULL)
        t->used_before = hwloc_bitmap_alloc();
    if (t->used_before != NULL)
        np_agent_used_cpus(a, old, t->used_before);
    t->report_plan.plan = t->gen;
    t->report_plan.older = before != NULL ? &before->report_plan : NULL;
    log_replan(a, t, before, cpuset, d->bound);
    __atomic_store_n(&a->targets, t, __ATOMIC_RELEASE);
    if (t->none)
        return 1;
    /* What placed threads had; slots of the new plan for the live
     * threads; then their CPUs. */
    int nbefore;
    struct before_cpus *had = placed_before(a, old, &nbefore);
    if (np_record_replan(a->record, t->nslots, t->gen) != 0) {
        np_log(np_once_level(&d->warned_replan, NP_LOG_WARNING),
               "out of memory: placed threads keep their CPUs after the cpuset changed");
        free(had);
        return 1;
    }
    if (a->opt.scope == NP_SCOPE_JVM && !a->opt.dryrun) {
        /* Every thread of the JVM to the group, then each placed one to
         * its own CPUs. */
        char cpus[1024];
        np_cpulist(cpus, sizeof cpus, t->mine->cpus);
        if (hwloc_set_cpubind(t->topo->topology, t->mine->cpus, HWLOC_CPUBIND_PROCESS) != 0)
            np_log(np_once_level(&d->warned_jvm, NP_LOG_WARNING),
                   "scope=jvm: cannot bind the JVM to cpus=%s: %s (%s)", cpus, strerror(errno),
                   np_errno_name(errno));
        else
            np_log(NP_LOG_INFO, "jvm group=%d node=%s cpus=%s mem=unchanged how=replan",
                   a->opt.group, t->node_list, cpus);
    }
    if (!a->opt.dryrun)
        move_threads(a, d, t, NP_HOW_REPLAN, true, had, nbefore);
    free(had);
    return 1;
}

/* The cpuset, read again: re-plans when it changed.  True when it did. */
static bool check_cpuset(struct np_agent *a, struct np_drift *d)
{
    hwloc_bitmap_t now = d->watch != NULL ? hwloc_bitmap_alloc() : NULL;
    if (now == NULL)
        return false;
    bool changed = false;
    if (np_cpuset_read(d->watch, now) != 0) {
        np_log(np_once_level(&d->warned_read, NP_LOG_DEBUG), "cannot read the cpuset: %s",
               strerror(errno));
    } else if (!hwloc_bitmap_isequal(now, d->last)) {
        /* When no plan could be made (a failure, warned), the next period
         * tries again. */
        if (np_agent_replan(a, now) >= 0) {
            hwloc_bitmap_copy(d->last, now);
            changed = true;
        }
    }
    hwloc_bitmap_free(now);
    return changed;
}

static int move_threads(struct np_agent *a, struct np_drift *d, const struct np_targets *t,
                        enum np_how how, bool einval_is_failure, const struct before_cpus *before,
                        int nbefore)
{
    struct np_live *l;
    int n = np_record_placed(a->record, &l);
    hwloc_bitmap_t now = hwloc_bitmap_alloc();
    if (n < 0 || now == NULL) {
        if (n >= 0)
            free(l);
        hwloc_bitmap_free(now);
        return -1;
    }
    int einval = 0;
    for (int i = 0; i < n; i++) {
        const struct np_live *e = &l[i];
        /* A thread still placing itself is not drift: it checks after it
         * has placed itself whether a re-plan came meanwhile. */
        if (e->outcome != NP_PLACED || e->plan != t->gen || !e->settled)
            continue;
        /* An ended thread reads nothing; a thread id the kernel gave
         * to another process since is not touched. */
        if (hwloc_get_proc_cpubind(t->topo->topology, e->tid, now, HWLOC_CPUBIND_THREAD) != 0 ||
            !np_agent_own_thread(e->tid))
            continue;
        hwloc_const_bitmap_t want = np_targets_cpus(t, e->slot);
        if (hwloc_bitmap_isequal(now, want)) {
            if (e->drifted) {
                np_record_back(a->record, e->ref);
                continue;
            }
            /* Set again all the same: the line says what the re-plan
             * gave it, and the read back confirms it. */
            struct before_cpus key = {.ref = e->ref};
            const struct before_cpus *had =
                how == NP_HOW_REPLAN && before != NULL
                    ? bsearch(&key, before, (size_t)nbefore, sizeof *before, before_compare)
                    : NULL;
            if (had == NULL || hwloc_bitmap_isequal(had->cpus, want))
                continue;
        }
        /* drift=log: a thread left where someone put it is not moved by a
         * re-plan either. */
        if (how == NP_HOW_REPLAN && a->opt.drift == NP_DRIFT_LOG && e->drifted)
            continue;
        char name[512], qname[600], was[1024];
        name_of(a, e->ref, name, sizeof name);
        np_cpulist(was, sizeof was, now);
        if (how == NP_HOW_DRIFT && a->opt.drift == NP_DRIFT_LOG) {
            if (!e->drifted && np_record_drift(a->record, e->ref, true) == 0) {
                np_quote(qname, sizeof qname, name);
                np_log(NP_LOG_INFO, "drifted %s tid=%d group=%d node=%s cpus=%s planned=%s",
                       qname, (int)e->tid, a->opt.group, t->node_list, was,
                       np_targets_cpus_str(t, e->slot));
            }
            continue;
        }
        int err = np_agent_set_other(a, t, e->ref, e->slot, name, e->tid, how, was);
        if (err == ESRCH)
            continue; /* it ended meanwhile */
        if (err == EINVAL && !einval_is_failure) {
            einval++;
            continue;
        }
        if (err != 0) {
            np_quote(qname, sizeof qname, name);
            np_log(np_once_level(&d->warned_restore, NP_LOG_WARNING),
                   "cannot put %s tid=%d back on cpus=%s (it is on cpus=%s): %s (%s); it is left "
                   "there (repeats are logged at debug level)",
                   qname, (int)e->tid, np_targets_cpus_str(t, e->slot), was, strerror(err),
                   np_errno_name(err));
        }
        if (how == NP_HOW_DRIFT && (err == 0 || !e->drifted))
            np_record_drift(a->record, e->ref, err != 0);
    }
    free(l);
    hwloc_bitmap_free(now);
    return einval;
}

/* scope=jvm: numapin bound every thread of the JVM to the group; those it
 * does not place whose CPUs are no longer within the group's (a cpuset
 * rewrite resets them all on kernels before 6.2) are put back, one line
 * for all.  hwloc lists no process's threads: /proc/self/task does. */
static void check_jvm(struct np_agent *a, struct np_drift *d, const struct np_targets *t)
{
    struct np_live *l;
    int n = np_record_placed(a->record, &l);
    pid_t *placed = n >= 0 ? malloc((size_t)(n > 0 ? n : 1) * sizeof *placed) : NULL;
    hwloc_bitmap_t now = hwloc_bitmap_alloc();
    DIR *dir = opendir("/proc/self/task");
    int k = 0, moved = 0;
    if (placed != NULL && now != NULL && dir != NULL) {
        for (int i = 0; i < n; i++)
            placed[k++] = l[i].tid;
        qsort(placed, (size_t)k, sizeof *placed, np_pid_compare);
        struct dirent *de;
        while ((de = readdir(dir)) != NULL) {
            char *stop;
            long tid = strtol(de->d_name, &stop, 10);
            pid_t p = (pid_t)tid;
            if (de->d_name[0] == '.' || *stop != '\0' || tid <= 0 ||
                bsearch(&p, placed, (size_t)k, sizeof *placed, np_pid_compare) != NULL ||
                hwloc_get_proc_cpubind(t->topo->topology, p, now, HWLOC_CPUBIND_THREAD) != 0 ||
                hwloc_bitmap_isincluded(now, t->mine->cpus))
                continue;
            if (hwloc_set_proc_cpubind(t->topo->topology, p, t->mine->cpus, HWLOC_CPUBIND_THREAD) == 0)
                moved++;
            else if (errno != ESRCH) /* not ended meanwhile */
                np_log(np_once_level(&d->warned_jvm, NP_LOG_WARNING),
                       "scope=jvm: cannot put thread tid=%d back on cpus=%s: %s (%s)", (int)p,
                       t->place_cpus_str, strerror(errno), np_errno_name(errno));
        }
    }
    if (dir != NULL)
        closedir(dir);
    if (moved > 0) {
        char cpus[1024];
        np_cpulist(cpus, sizeof cpus, t->mine->cpus);
        np_log(NP_LOG_INFO, "jvm group=%d node=%s cpus=%s mem=unchanged how=drift threads=%d",
               a->opt.group, t->node_list, cpus, moved);
    }
    if (n >= 0)
        free(l);
    free(placed);
    hwloc_bitmap_free(now);
}

/* Writes the marker again when the record or the plan changed since. */
static void refresh_marker(struct np_agent *a, struct np_drift *d)
{
    const struct np_targets *t = np_agent_targets(a);
    unsigned long changes = np_record_changes(a->record);
    if (d->marker_off || (d->marker_done && changes == d->marker_changes && t->gen == d->marker_plan))
        return;
    struct np_counts c;
    np_record_counts(a->record, &c);
    struct np_marker m = {
        .pid = (long)getpid(), .seq = ++d->seq, .time = (long long)time(NULL),
        .group = a->opt.group, .groups = a->opt.groups, .plan = t->gen,
        .cpus = t->none ? NULL : t->place_cpus, .nodes = t->none ? NULL : t->mine->nodes,
        .mem = np_agent_jvm_mem(a), .drift = c.drift,
    };
    struct np_live *l = NULL;
    int n = t->none ? 0 : np_record_placed(a->record, &l);
    if (n > 0 && (m.threads = calloc((size_t)n, sizeof *m.threads)) == NULL)
        n = -1;
    for (int i = 0; i < n; i++) {
        if (l[i].outcome != NP_PLACED || l[i].plan != t->gen || !l[i].settled)
            continue;
        struct np_marker_thread *mt = &m.threads[m.nthreads++];
        mt->tid = l[i].tid;
        mt->cpus = (hwloc_bitmap_t)np_targets_cpus(t, l[i].slot); /* borrowed, not freed */
        mt->drift = l[i].drift;
    }
    char *text = NULL;
    size_t len = 0;
    if (n >= 0 && np_marker_format(&m, &text, &len) == 0) {
        if (np_marker_publish(&d->marker, text, len) == 0) {
            d->marker_done = true;
            d->marker_changes = changes;
            d->marker_plan = t->gen;
        } else {
            np_log(np_once_level(&d->warned_marker, NP_LOG_DEBUG),
                   "no marker for numapin check: %s (%s)", strerror(errno), np_errno_name(errno));
            d->marker_off = errno == ENOSYS || errno == EPERM || errno == EACCES;
        }
    }
    free(text);
    free(m.threads);
    free(l);
}

void np_agent_check(struct np_agent *a)
{
    if (!a->active)
        return;
    np_agent_confirm_advice(a);
    if (!a->topo.thissystem)
        return;
    struct np_drift *d = state(a);
    if (d == NULL)
        return;
    check_cpuset(a, d);
    if (!a->opt.dryrun) {
        const struct np_targets *t = np_agent_targets(a);
        /* A restore refused with EINVAL may mean the cpuset changed since
         * it was read: read it again, and re-plan, before calling it a
         * failure. */
        if (!t->none && move_threads(a, d, t, NP_HOW_DRIFT, false, NULL, 0) > 0 &&
            !check_cpuset(a, d))
            move_threads(a, d, t, NP_HOW_DRIFT, true, NULL, 0);
        t = np_agent_targets(a);
        if (!t->none && a->opt.scope == NP_SCOPE_JVM && a->opt.drift == NP_DRIFT_RESTORE)
            check_jvm(a, d, t);
        refresh_marker(a, d);
    }
}
