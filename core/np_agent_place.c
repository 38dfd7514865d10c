#define _GNU_SOURCE
#include "np_agent.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Under end_at_exit, a thread's entry ends as its OS thread exits: the
 * thread's value of exit_key (its OS id) is set at its start, and glibc
 * runs the key's destructor as the thread exits, for the one agent that
 * holds the key (exit_agent).  The id travels in the value because the
 * exiting thread has no cheaper way to its own: gettid() is a system
 * call. */
static pthread_key_t exit_key;
static bool have_exit_key;
static _Atomic(struct np_agent *) exit_agent;

static void at_thread_exit(void *tid)
{
    struct np_agent *a = atomic_load(&exit_agent);
    if (a != NULL)
        np_agent_thread_ended(a, (pid_t)(intptr_t)tid);
}

static void make_exit_key(void)
{
    have_exit_key = pthread_key_create(&exit_key, at_thread_exit) == 0;
}

bool np_agent_claim_exit_key(struct np_agent *a)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_exit_key);
    struct np_agent *none = NULL;
    return have_exit_key && atomic_compare_exchange_strong(&exit_agent, &none, a);
}

void np_agent_release_exit_key(struct np_agent *a)
{
    struct np_agent *held = a;
    atomic_compare_exchange_strong(&exit_agent, &held, NULL);
}

bool np_agent_wants_thread_end(const struct np_agent *a)
{
    return !a->end_at_exit;
}

/* The calling thread (`tid`) now has an entry: under end_at_exit, it
 * ends with the thread. */
static void end_with_thread(struct np_agent *a, pid_t tid)
{
    if (a->end_at_exit)
        pthread_setspecific(exit_key, (void *)(intptr_t)tid);
}

/* The advice on more placed threads live than the group has CPUs.  Under
 * end_at_exit a thread counts as live until its OS thread exits, after
 * its join() has returned: a loop that starts and joins one thread at a
 * time on a one-CPU group meets the thread before it still exiting (for
 * up to milliseconds, measured).  So there a count above the CPUs at a
 * thread's start is a suspicion, noted with that thread's name; the next
 * thread to exit (or the first of those the JVM's list no longer has)
 * counts again without itself, which clears it or confirms it.  The advice is then given where a JNI environment is (JFR hears of
 * it): at the next thread start, the periodic check or exit, which also
 * count again a suspicion no exit has answered. */
enum { SUSPECT_NONE, SUSPECT_NOTED, SUSPECT_CONFIRMED };
static pthread_mutex_t suspect_lock = PTHREAD_MUTEX_INITIALIZER;

static void advise_oversubscribed(struct np_agent *a, int live, int cpus, const char *name)
{
    char advice[512];
    bool compute;
    if (np_advise_oversubscribed(live, cpus, name, &compute, advice, sizeof advice))
        np_agent_advise(a, np_once_level(&a->warned_oversubscribed,
                                         compute ? NP_LOG_WARNING : NP_LOG_INFO), advice);
}

/* Takes a suspicion: confirmed ones as they were, noted ones counted
 * again now.  Returns the count to advise on (0: none) and its name. */
static int take_suspect(struct np_agent *a, char *name, size_t len)
{
    if (atomic_load(&a->suspect) == SUSPECT_NONE)
        return 0;
    pthread_mutex_lock(&suspect_lock);
    int state = atomic_exchange(&a->suspect, SUSPECT_NONE);
    int live = state == SUSPECT_CONFIRMED ? a->suspect_live
               : state == SUSPECT_NOTED    ? np_record_live(a->record) : 0;
    snprintf(name, len, "%s", a->suspect_name);
    pthread_mutex_unlock(&suspect_lock);
    return live;
}

void np_agent_confirm_advice(struct np_agent *a)
{
    char name[sizeof a->suspect_name];
    int live = take_suspect(a, name, sizeof name);
    const struct np_targets *t = np_agent_targets(a);
    if (live > 0 && !t->none)
        advise_oversubscribed(a, live, t->nplace_cpus, name);
}

/* At a start: `live` counted the calling thread. */
static void check_oversubscribed(struct np_agent *a, int live, int cpus, const char *name)
{
    if (a->end_at_exit && atomic_load(&a->suspect) == SUSPECT_CONFIRMED)
        np_agent_confirm_advice(a);
    if (live <= cpus)
        return;
    if (!a->end_at_exit || atomic_load(&a->warned_oversubscribed)) {
        advise_oversubscribed(a, live, cpus, name);
        return;
    }
    pthread_mutex_lock(&suspect_lock);
    if (atomic_load(&a->suspect) == SUSPECT_NONE) {
        snprintf(a->suspect_name, sizeof a->suspect_name, "%s", name[0] ? name : "?");
        atomic_store(&a->suspect, SUSPECT_NOTED);
    }
    pthread_mutex_unlock(&suspect_lock);
}

/* Under suspect_lock, at an exit: a noted suspicion is cleared, or
 * confirmed with `live`, the count without the exiting thread. */
static void answer_locked(struct np_agent *a, int live)
{
    if (atomic_load(&a->suspect) != SUSPECT_NOTED)
        return;
    const struct np_targets *t = np_agent_targets(a);
    if (t->none || live <= t->nplace_cpus) {
        atomic_store(&a->suspect, SUSPECT_NONE);
    } else {
        a->suspect_live = live;
        atomic_store(&a->suspect, SUSPECT_CONFIRMED);
    }
}

/* At an exit: ends the exiting thread's entry and answers a noted
 * suspicion.  While one is noted the ending and the count hold the lock
 * together, so of threads exiting at once (a pool shut down) the first
 * counts the others as still live, not as ended. */
static void end_answering(struct np_agent *a, pid_t tid)
{
    if (atomic_load(&a->suspect) != SUSPECT_NOTED) {
        np_record_end_tid(a->record, tid);
        return;
    }
    pthread_mutex_lock(&suspect_lock);
    np_record_end_tid(a->record, tid);
    answer_locked(a, np_record_live(a->record));
    pthread_mutex_unlock(&suspect_lock);
}

/* A thread's name as the log shows it: quoted, and escaped. */
static const char *quoted(char *buf, size_t len, const char *name)
{
    np_quote(buf, len, name);
    return buf;
}

/* A thread that is not to be placed but was created by a placed one has
 * inherited its CPUs and memory policy: give it the start-up ones back.
 * A binding numapin did not make (the application's own) is left alone. */
static void skip(struct np_agent *a, const struct np_targets *t, const char *name, pid_t tid)
{
    char qname[512];
    const char *reset = "";
    struct np_actual now;
    if (!a->opt.dryrun && t->may_inherit && np_actual_init(&now) == 0) {
        if (np_read_self(t->topo->topology, &now) == 0 && np_targets_is_placement(t, now.cpus) &&
            !hwloc_bitmap_isequal(now.cpus, t->unplaced.cpus)) {
            if (np_restore_self(t->topo->topology, &t->unplaced) == 0)
                reset = " reset=start-up";
            else
                np_log(np_once_level(&a->warned_reset, NP_LOG_WARNING),
                       "cannot put %s tid=%d back on the start-up CPUs it would have had but "
                       "for the placed thread that created it: %s (%s)",
                       quoted(qname, sizeof qname, name), (int)tid, strerror(errno),
                       np_errno_name(errno));
        }
        np_actual_destroy(&now);
    }
    if (np_log_enabled(NP_LOG_DEBUG))
        np_log(NP_LOG_DEBUG, "skipped %s tid=%d%s", quoted(qname, sizeof qname, name), (int)tid,
               reset);
}

/* A thread's CPUs could not be set: it counts as failed, left as it was;
 * the first such failure is a warning, the others debug lines. */
static void bind_failed(struct np_agent *a, struct np_ref e, const char *name, pid_t tid,
                        const char *want, int err)
{
    char qname[512];
    np_record_set(a->record, e, NP_FAILED, err, 0, false, false);
    np_log(np_once_level(&a->warned_cpu, NP_LOG_WARNING),
           "cannot bind %s tid=%d to cpus=%s: %s (%s); threads that cannot be bound are left "
           "as they were (repeats are logged at debug level)",
           quoted(qname, sizeof qname, name), (int)tid, want, strerror(err), np_errno_name(err));
}

/* The calling thread's CPUs and memory policy as the log shows them. */
static void read_back(hwloc_topology_t topo, char *cpus, size_t cpus_len, char *mem, size_t mem_len)
{
    struct np_actual now;
    snprintf(cpus, cpus_len, "unknown");
    snprintf(mem, mem_len, "unknown");
    if (np_actual_init(&now) != 0)
        return;
    np_read_self(topo, &now);
    if (!hwloc_bitmap_iszero(now.cpus))
        np_cpulist(cpus, cpus_len, now.cpus);
    np_mem_actual_str(mem, mem_len, &now);
    np_actual_destroy(&now);
}

/* A placed thread whose entry a re-plan moved to newer targets while the
 * thread was placing itself on `was` (so possibly after the re-plan moved
 * it): it goes to its entry's CPUs.  Its memory policy stays the one it
 * just set, as for every thread a re-plan moves. */
static void follow(struct np_agent *a, struct np_ref e, const struct np_targets *was)
{
    struct np_entry copy;
    if (np_record_copy(a->record, e, &copy) != 0 || copy.plan == was->gen)
        return;
    const struct np_targets *t = np_targets_find(np_agent_targets(a), copy.plan);
    if (t->none)
        return;
    struct np_policy keep = {.mode = -1};
    struct np_bind_result r;
    np_place_self(t->topo->topology, np_targets_cpus(t, copy.slot), np_targets_mask(t, copy.slot),
                  &keep, NP_PLACE_CHECK, &r);
}

/* What the line of a thread placed at its start says: copied into numapin's
 * log queue, the line made by the log thread (log_placed). */
struct placed_line {
    int tid, group, mem_errno;
    bool cut; /* a part did not fit: the line ends in "..." */
    /* The name, the nodes, the CPUs and the memory policy, each ending in
     * '\0'.  A line has room for 1536 bytes of message. */
    char text[512 + 256 + 1536 + 256];
};

/* Copies s at to, cut to `room` bytes with its '\0' (and p->cut set);
 * returns the bytes used. */
static size_t put(struct placed_line *p, char *to, size_t room, const char *s)
{
    size_t k = strnlen(s, room);
    if (k == room) {
        k = room - 1;
        p->cut = true;
    }
    memcpy(to, s, k);
    to[k] = '\0';
    return k + 1;
}

static void make_placed(const void *data, struct np_line *l)
{
    const struct placed_line *p = data;
    const char *name = p->text, *node = name + strlen(name) + 1;
    const char *cpus = node + strlen(node) + 1, *mem = cpus + strlen(cpus) + 1;
    np_line_add(l, "placed ");
    np_line_quoted(l, name);
    np_line_add(l, " tid=");
    np_line_int(l, p->tid);
    np_line_add(l, " group=");
    np_line_int(l, p->group);
    np_line_add(l, " node=");
    np_line_add(l, node);
    np_line_add(l, " cpus=");
    np_line_add(l, cpus);
    np_line_add(l, " mem=");
    np_line_add(l, mem);
    if (p->mem_errno != 0) {
        np_line_add(l, " mem_error=");
        np_line_add(l, np_errno_name(p->mem_errno));
    }
    l->cut = l->cut || p->cut;
}

void np_agent_used_cpus(struct np_agent *a, const struct np_targets *t, hwloc_bitmap_t out)
{
    if (t->used_before != NULL)
        hwloc_bitmap_or(out, out, t->used_before);
    int *used = t->none ? NULL : calloc((size_t)t->nslots, sizeof *used);
    if (used == NULL || np_record_slot_used_of(a->record, t->gen, used, t->nslots) != 0) {
        free(used);
        return;
    }
    struct np_counts c;
    np_record_counts(a->record, &c);
    for (int s = 0; s < t->nslots; s++)
        if (used[s] > 0 || (a->opt.cpus == NP_CPUS_NODE && c.placed + c.would_place > 0))
            hwloc_bitmap_or(out, out, t->slots[s]);
    free(used);
}

/* The line of a thread placed at its start: made for every placed thread,
 * so the thread only copies what it says, and the log thread makes it. */
static void log_placed(const struct np_agent *a, const char *name, pid_t tid,
                       const struct np_targets *t, const char *cpus, const char *mem, int mem_errno)
{
    struct placed_line p; /* not zeroed: only what put() writes is copied */
    p.tid = tid;
    p.group = a->opt.group;
    p.mem_errno = mem_errno;
    p.cut = false;
    size_t o = put(&p, p.text, 512, name);
    o += put(&p, p.text + o, 256, t->node_list);
    o += put(&p, p.text + o, 1536, cpus);
    o += put(&p, p.text + o, 256, mem);
    np_log_later(NP_LOG_INFO, make_placed, &p, offsetof(struct placed_line, text) + o);
}

/* Records a thread numapin leaves alone. */
static void add_skipped(struct np_agent *a, const char *name, const char *escaped, pid_t tid)
{
    int live, slot;
    unsigned plan;
    np_record_add_live(a->record, name, escaped, tid, NP_SKIPPED, false, -1, NP_HOW_START, &live,
                       &slot, &plan);
}

void np_agent_thread_start(struct np_agent *a, const char *name, const char *escaped, pid_t tid)
{
    if (!a->active)
        return;
    char qname[512];
    const struct np_targets *t = np_agent_targets(a);
    if (!np_globs_match(&a->opt.threads, name)) {
        add_skipped(a, name, escaped, tid);
        end_with_thread(a, tid);
        skip(a, t, name, tid);
        return;
    }
    if (t->none) {
        /* Left to the kernel; the rescan places it (from outside) once the
         * cpuset gives the group CPUs again. */
        add_skipped(a, name, escaped, tid);
        end_with_thread(a, tid);
        np_log(NP_LOG_DEBUG, "skipped %s tid=%d cpuset=none", quoted(qname, sizeof qname, name),
               (int)tid);
        return;
    }
    int live, slot;
    unsigned plan;
    bool take_slot = a->opt.cpus != NP_CPUS_NODE;
    struct np_ref e = np_record_add_live(a->record, name, escaped, tid,
                                         a->opt.dryrun ? NP_WOULD_PLACE : NP_PLACED, take_slot,
                                         take_slot ? np_targets_slot_of(t, sched_getcpu()) : -1,
                                         NP_HOW_START, &live, &slot, &plan);
    if (e.e == NULL) {
        np_log(np_once_level(&a->warned_oom, NP_LOG_WARNING),
               "out of memory: %s tid=%d is not placed", quoted(qname, sizeof qname, name),
               (int)tid);
        return;
    }
    end_with_thread(a, tid);
    if (plan != t->gen) /* a re-plan came between: the slot is one of its targets */
        t = np_targets_find(np_agent_targets(a), plan);
    if (t->none) { /* never: the record's plans all have CPUs */
        np_record_set(a->record, e, NP_SKIPPED, 0, 0, false, false);
        return;
    }
    check_oversubscribed(a, live, t->nplace_cpus, name);
    hwloc_const_bitmap_t cpus = np_targets_cpus(t, slot);
    const char *want_cpus = np_targets_cpus_str(t, slot);
    if (a->opt.dryrun) {
        np_log(NP_LOG_INFO, "would-place %s tid=%d group=%d node=%s cpus=%s mem=%s",
               quoted(qname, sizeof qname, name), (int)tid, a->opt.group, t->node_list,
               want_cpus, t->mem_str);
        return;
    }

    struct np_bind_result r;
    /* One core or hardware thread of several is seldom what a thread
     * inherited: it is set without a read first. */
    np_place_self(t->topo->topology, cpus, np_targets_mask(t, slot), &t->policy,
                  slot >= 0 && t->nslots > 1 ? NP_PLACE_SET_CPUS : NP_PLACE_CHECK, &r);
    if (r.cpu_errno != 0) {
        bind_failed(a, e, name, tid, want_cpus, r.cpu_errno);
        return;
    }
    np_record_set(a->record, e, NP_PLACED, 0, r.mem_errno, r.cpu_ok, r.mem_ok);
    np_agent_tell(a, e);
    if (np_agent_targets(a)->gen != t->gen)
        follow(a, e, t);
    bool verified = r.cpu_ok && r.mem_ok;
    bool logged = np_log_enabled(NP_LOG_INFO);
    /* What the thread reads back: the target when it verified, except
     * the policy numapin was told to leave alone (mem=none). */
    const char *got_cpus = want_cpus, *got_mem = t->mem_str;
    char got_cpus_buf[1024], got_mem_buf[256];
    if (!verified || (logged && t->policy.mode < 0)) {
        read_back(t->topo->topology, got_cpus_buf, sizeof got_cpus_buf, got_mem_buf, sizeof got_mem_buf);
        got_cpus = r.cpu_ok ? want_cpus : got_cpus_buf;
        got_mem = got_mem_buf;
    }
    if (r.mem_errno != 0)
        np_log(np_once_level(&a->warned_mem, NP_LOG_WARNING),
               "cannot set memory policy %s for %s tid=%d: %s (%s)%s; placed threads keep their "
               "CPUs and their previous memory policy (repeats are logged at debug level)",
               t->mem_str, quoted(qname, sizeof qname, name), (int)tid, strerror(r.mem_errno),
               np_errno_name(r.mem_errno), np_mem_refused_hint(r.mem_errno));
    else if (!verified)
        np_log(np_once_level(&a->warned_verify, NP_LOG_WARNING),
               "%s tid=%d reads back cpus=%s mem=%s, not the planned cpus=%s mem=%s",
               quoted(qname, sizeof qname, name), (int)tid, got_cpus, got_mem, want_cpus,
               t->mem_str);
    if (logged)
        log_placed(a, name, tid, t, got_cpus, got_mem, r.mem_errno);
}

void np_agent_thread_ended(struct np_agent *a, pid_t tid)
{
    if (!a->active)
        return;
    /* By its id rather than a thread-local pointer: thread-local storage
     * in a library loaded late is allocated for each new thread. */
    if (a->end_at_exit) {
        pthread_setspecific(exit_key, NULL); /* ended already */
        end_answering(a, tid);
    } else {
        np_record_end_tid(a->record, tid);
    }
}

unsigned long np_agent_listing(struct np_agent *a)
{
    return np_record_next_seq(a->record);
}

void np_agent_running(struct np_agent *a, unsigned long since, pid_t *tids, int n)
{
    if (!a->active || !a->end_at_exit)
        return;
    int ended;
    if (atomic_load(&a->suspect) != SUSPECT_NOTED) {
        ended = np_record_end_absent(a->record, tids, n, since);
    } else {
        /* The entries the list lacks end as their exits would have, one
         * after another: the first answers, counting the others live. */
        pthread_mutex_lock(&suspect_lock);
        int live = np_record_live(a->record);
        ended = np_record_end_absent(a->record, tids, n, since);
        if (ended > 0)
            answer_locked(a, live - 1);
        pthread_mutex_unlock(&suspect_lock);
    }
    if (ended > 0 && np_log_enabled(NP_LOG_DEBUG))
        np_log(NP_LOG_DEBUG, "%d threads gone from the JVM's list but not yet exited: their "
                             "entries end now", ended);
}

int np_agent_set_other(struct np_agent *a, const struct np_targets *t, struct np_ref e,
                       int slot, const char *name, pid_t tid, enum np_how how, const char *was)
{
    if (t->none)
        return ENOENT; /* no CPUs to set (the cpuset changed meanwhile) */
    hwloc_const_bitmap_t cpus = np_targets_cpus(t, slot);
    const char *want = np_targets_cpus_str(t, slot);
    char qname[512], got[1024], from[1100] = "";
    quoted(qname, sizeof qname, name);
    if (was != NULL)
        snprintf(from, sizeof from, " was=%s", was);
    if (a->opt.dryrun) {
        np_log(NP_LOG_INFO, "would-place %s tid=%d group=%d node=%s cpus=%s mem=unchanged how=%s%s",
               qname, (int)tid, a->opt.group, t->node_list, want, np_how_name(how), from);
        return 0;
    }
    hwloc_bitmap_t now = hwloc_bitmap_alloc();
    if (now == NULL)
        return ENOMEM;
    if (hwloc_set_proc_cpubind(t->topo->topology, tid, cpus, HWLOC_CPUBIND_THREAD) != 0) {
        int err = errno != 0 ? errno : EINVAL;
        hwloc_bitmap_free(now);
        return err;
    }
    hwloc_get_proc_cpubind(t->topo->topology, tid, now, HWLOC_CPUBIND_THREAD);
    np_cpulist(got, sizeof got, now);
    if (!hwloc_bitmap_isequal(now, cpus)) {
        np_record_set(a->record, e, NP_PLACED, 0, 0, false, true);
        np_log(np_once_level(&a->warned_verify, NP_LOG_WARNING),
               "%s tid=%d reads back cpus=%s, not the planned cpus=%s", qname, (int)tid, got, want);
    }
    np_log(NP_LOG_INFO, "placed %s tid=%d group=%d node=%s cpus=%s mem=unchanged how=%s%s", qname,
           (int)tid, a->opt.group, t->node_list, got, np_how_name(how), from);
    hwloc_bitmap_free(now);
    return 0;
}

/* Places another, running thread that numapin never placed (at attach, or
 * renamed): CPUs only, since Linux sets a memory policy only from the
 * thread itself. */
static void place_other(struct np_agent *a, struct np_ref e, const char *name, pid_t tid,
                        enum np_how how)
{
    struct np_entry copy;
    if (np_record_copy(a->record, e, &copy) != 0)
        return; /* the thread has ended since */
    const struct np_targets *t = np_targets_find(np_agent_targets(a), copy.plan);
    int err = np_agent_set_other(a, t, e, copy.slot, name, tid, how, NULL);
    if (err != 0) {
        bind_failed(a, e, name, tid, np_targets_cpus_str(t, copy.slot), err);
    } else {
        np_record_settle(a->record, e);
        np_agent_tell(a, e);
    }
    if (err == 0 && a->opt.mem != NP_MEM_NONE && !a->opt.dryrun)
        np_log(np_once_level(&a->told_mem_unchanged, NP_LOG_INFO),
               "threads placed from outside (%s) keep their memory policy: Linux lets only a "
               "thread itself set it", np_how_name(how));
}

/* True when tid is a thread of this process: an id read from the JVM's
 * memory is checked before anything is bound to it. */
static bool own_thread(pid_t tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d", (int)tid);
    return access(path, F_OK) == 0;
}

bool np_agent_own_thread(pid_t tid)
{
    return own_thread(tid);
}

void np_agent_seen(struct np_agent *a, const char *name, const char *escaped, pid_t tid,
                   enum np_how how)
{
    if (!a->active || tid <= 0 || np_agent_targets(a)->none || !own_thread(tid))
        return;
    struct np_ref e = np_record_find_live(a->record, tid);
    bool match = np_globs_match(&a->opt.threads, name);
    enum np_outcome outcome = !match ? NP_SKIPPED : a->opt.dryrun ? NP_WOULD_PLACE : NP_PLACED;
    if (e.e != NULL) {
        struct np_entry copy;
        /* Ended since, placed (or failed) already, or still not matching. */
        if (np_record_copy(a->record, e, &copy) != 0 || copy.outcome != NP_SKIPPED || !match)
            return;
        if (np_record_rename(a->record, e, name, escaped, outcome, a->opt.cpus != NP_CPUS_NODE, how) != 0)
            return;
        place_other(a, e, name, tid, how);
        return;
    }
    /* A thread numapin never saw start: before VMInit, or before attach.
     * A periodic rescan leaves unknown threads alone: such a thread has not
     * reached its ThreadStart yet, or has passed its ThreadEnd. */
    if (how == NP_HOW_RESCAN)
        return;
    int live, slot;
    unsigned plan;
    e = np_record_add_live(a->record, name, escaped, tid, outcome, match && a->opt.cpus != NP_CPUS_NODE, -1, how,
                           &live, &slot, &plan);
    if (e.e == NULL)
        return;
    if (!match) {
        char qname[512];
        np_log(NP_LOG_DEBUG, "skipped %s tid=%d how=%s", quoted(qname, sizeof qname, name),
               (int)tid, np_how_name(how));
        return;
    }
    place_other(a, e, name, tid, how);
}

/* The latest of the targets from t back that have CPUs: while the cpuset
 * leaves the group none, the last plan it had. */
static const struct np_targets *with_cpus(const struct np_targets *t)
{
    while (t->none && t->older != NULL)
        t = t->older;
    return t;
}

void np_agent_summary(struct np_agent *a)
{
    if (!a->active)
        return;
    np_agent_confirm_advice(a);
    struct np_counts c;
    np_record_counts(a->record, &c);
    const struct np_targets *t = np_agent_targets(a);
    /* CPUs that placed threads went to: every slot ever used, under these
     * targets and those before. */
    hwloc_bitmap_t used = hwloc_bitmap_alloc();
    char cpus[1024] = "none";
    if (used != NULL) {
        np_agent_used_cpus(a, t, used);
        if (!hwloc_bitmap_iszero(used))
            np_cpulist(cpus, sizeof cpus, used);
    }
    hwloc_bitmap_free(used);
    /* A log that lost lines (a full disk) cannot be trusted with the
     * summary: it goes to stderr too, saying so. */
    int lost_err;
    long lost = np_log_lost(&lost_err);
    char lost_str[128] = "";
    if (lost > 0)
        snprintf(lost_str, sizeof lost_str, " log_lost=%ld log_error=%s", lost,
                 np_errno_name(lost_err));
    /* Written nowhere (log=warning or less, no line lost): the pages and
     * the threads' counts are not read, which walking every mapping's page
     * tables would cost at every exit. */
    if (lost <= 0 && !np_log_enabled(NP_LOG_INFO))
        return;
    char memory[2200]; /* np_agent_exit_memory: two lists of up to 1024 and a share */
    np_agent_exit_memory(a, with_cpus(t), memory, sizeof memory);
    char access[128];
    np_agent_exit_access(a, with_cpus(t), access, sizeof access);
    (lost > 0 ? np_log_both : np_log)(
        NP_LOG_INFO,
        "summary group=%d placed=%d would_place=%d skipped=%d failed=%d mem_failed=%d cpus=%s "
        "drift=%d replans=%u%s%s%s",
        a->opt.group, c.placed, c.would_place, c.skipped, c.failed, c.mem_failed, cpus, c.drift,
        t->gen, memory, access, lost_str);
}

void np_agent_report(struct np_agent *a)
{
    if (!a->active || a->report.dirfd < 0)
        return;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    int e = ENOMEM;
    if (mem != NULL) {
        const struct np_targets *t = with_cpus(np_agent_targets(a));
        if (a->exit_memory.pages == NULL)
            np_memory_read(0, &a->exit_memory, NULL);
        const char *advice[NP_ADVICE_KEEP];
        enum np_level level[NP_ADVICE_KEEP];
        struct np_report_advice adv;
        np_agent_advice_kept(a, &adv, advice, level);
        struct np_report_access acc;
        np_agent_exit_access_read(a, &acc);
        np_report_json(&t->report_plan, a->record, NP_RECORD_KEEP_ENDED, &adv, &a->exit_memory,
                       &acc, t->mem_nodes, mem);
        e = fclose(mem) == 0 ? 0 : errno;
    }
    if (e == 0)
        e = np_file_out_write(&a->report, text, len);
    free(text);
    np_file_out_close(&a->report);
    if (e != 0)
        np_log_both(NP_LOG_WARNING, "cannot write report file '%s': %s (%s); no report was "
                                    "written", a->report_path, strerror(e), np_errno_name(e));
    else
        np_log(NP_LOG_INFO, "report %s", a->report_path);
}
