#define _GNU_SOURCE
#include "np_agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* True when `cpus` is a placement numapin gives: the group's CPUs or a
 * slot. */
static bool is_placement(const struct np_agent *a, hwloc_const_bitmap_t cpus)
{
    if (hwloc_bitmap_isequal(cpus, a->place_cpus))
        return true;
    for (int s = 0; s < a->nslots; s++)
        if (hwloc_bitmap_isequal(cpus, a->slots[s]))
            return true;
    return false;
}

/* A thread's name as the log shows it: quoted, and escaped. */
static const char *quoted(char *buf, size_t len, const char *name)
{
    np_quote(buf, len, name);
    return buf;
}

bool np_agent_may_inherit(const struct np_agent *a)
{
    if (!a->have_startup)
        return false;
    if (!hwloc_bitmap_isequal(a->place_cpus, a->startup.cpus))
        return true;
    for (int s = 0; s < a->nslots; s++)
        if (!hwloc_bitmap_isequal(a->slots[s], a->startup.cpus))
            return true;
    return false;
}

/* A thread that is not to be placed but was created by a placed one has
 * inherited its CPUs and memory policy: give it the start-up ones back.
 * A binding numapin did not make (the application's own) is left alone. */
static void skip(struct np_agent *a, const char *name, pid_t tid)
{
    char qname[512];
    const char *reset = "";
    struct np_actual now;
    if (!a->opt.dryrun && a->may_inherit && np_actual_init(&now) == 0) {
        if (np_read_self(a->topo.topology, &now) == 0 && is_placement(a, now.cpus) &&
            !hwloc_bitmap_isequal(now.cpus, a->startup.cpus)) {
            if (np_restore_self(a->topo.topology, &a->startup) == 0)
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
static void read_back(struct np_agent *a, char *cpus, size_t cpus_len, char *mem, size_t mem_len)
{
    struct np_actual now;
    snprintf(cpus, cpus_len, "unknown");
    snprintf(mem, mem_len, "unknown");
    if (np_actual_init(&now) != 0)
        return;
    np_read_self(a->topo.topology, &now);
    if (!hwloc_bitmap_iszero(now.cpus))
        np_cpulist(cpus, cpus_len, now.cpus);
    np_mem_actual_str(mem, mem_len, &now);
    np_actual_destroy(&now);
}

void np_agent_thread_start(struct np_agent *a, const char *name, pid_t tid)
{
    if (!a->active)
        return;
    char qname[512];
    if (!np_globs_match(&a->opt.threads, name)) {
        np_record_add(a->record, name, tid, NP_SKIPPED, false);
        skip(a, name, tid);
        return;
    }
    int live, slot;
    struct np_ref e = np_record_add_live(a->record, name, tid,
                                         a->opt.dryrun ? NP_WOULD_PLACE : NP_PLACED,
                                         a->opt.cpus != NP_CPUS_NODE, NP_HOW_START, &live, &slot);
    if (e.e == NULL) {
        np_log(np_once_level(&a->warned_oom, NP_LOG_WARNING),
               "out of memory: %s tid=%d is not placed", quoted(qname, sizeof qname, name),
               (int)tid);
        return;
    }
    int ncpus = hwloc_bitmap_weight(a->place_cpus);
    if (live > ncpus)
        np_log(np_once_level(&a->warned_oversubscribed, NP_LOG_WARNING),
               "advice: %d placed threads are live on this group's %d CPUs, so they share CPUs: size "
               "the pools to the group (new ForkJoinPool(%d), "
               "-Djava.util.concurrent.ForkJoinPool.common.parallelism=%d)",
               live, ncpus, ncpus, ncpus);
    hwloc_const_bitmap_t cpus = slot >= 0 ? a->slots[slot] : a->place_cpus;
    const char *want_cpus = slot >= 0 ? a->slot_cpus_str[slot] : a->place_cpus_str;
    if (a->opt.dryrun) {
        np_log(NP_LOG_INFO, "would-place %s tid=%d group=%d node=%s cpus=%s mem=%s",
               quoted(qname, sizeof qname, name), (int)tid, a->opt.group, a->node_list,
               want_cpus, a->mem_str);
        return;
    }

    struct np_bind_result r;
    np_place_self(a->topo.topology, cpus, &a->policy, false, &r);
    if (r.cpu_errno != 0) {
        bind_failed(a, e, name, tid, want_cpus, r.cpu_errno);
        return;
    }
    np_record_set(a->record, e, NP_PLACED, 0, r.mem_errno, r.cpu_ok, r.mem_ok);
    bool verified = r.cpu_ok && r.mem_ok;
    bool logged = np_log_enabled(NP_LOG_INFO);
    /* What the thread reads back: the target when it verified, except
     * the policy numapin was told to leave alone (mem=none). */
    const char *got_cpus = want_cpus, *got_mem = a->mem_str;
    char got_cpus_buf[1024], got_mem_buf[256];
    if (!verified || (logged && a->policy.mode < 0)) {
        read_back(a, got_cpus_buf, sizeof got_cpus_buf, got_mem_buf, sizeof got_mem_buf);
        got_cpus = r.cpu_ok ? want_cpus : got_cpus_buf;
        got_mem = got_mem_buf;
    }
    if (r.mem_errno != 0)
        np_log(np_once_level(&a->warned_mem, NP_LOG_WARNING),
               "cannot set memory policy %s for %s tid=%d: %s (%s); placed threads keep their CPUs "
               "and their previous memory policy (repeats are logged at debug level)",
               a->mem_str, quoted(qname, sizeof qname, name), (int)tid, strerror(r.mem_errno),
               np_errno_name(r.mem_errno));
    else if (!verified)
        np_log(np_once_level(&a->warned_verify, NP_LOG_WARNING),
               "%s tid=%d reads back cpus=%s mem=%s, not the planned cpus=%s mem=%s",
               quoted(qname, sizeof qname, name), (int)tid, got_cpus, got_mem, want_cpus,
               a->mem_str);
    if (!logged)
        return;
    char mem_error[64] = "";
    if (r.mem_errno != 0)
        snprintf(mem_error, sizeof mem_error, " mem_error=%s", np_errno_name(r.mem_errno));
    np_log(NP_LOG_INFO, "placed %s tid=%d group=%d node=%s cpus=%s mem=%s%s",
           quoted(qname, sizeof qname, name), (int)tid, a->opt.group, a->node_list, got_cpus,
           got_mem, mem_error);
}

void np_agent_thread_ended(struct np_agent *a, pid_t tid)
{
    if (!a->active)
        return;
    /* By its id rather than a thread-local pointer: thread-local storage
     * in a library loaded late is allocated for each new thread. */
    np_record_end_tid(a->record, tid);
}

void np_agent_thread_end(struct np_agent *a)
{
    np_agent_thread_ended(a, gettid());
}

/* Places another, running thread: CPUs only, since Linux sets a memory
 * policy only from the thread itself. */
static void place_other(struct np_agent *a, struct np_ref e, const char *name, pid_t tid,
                        enum np_how how)
{
    struct np_entry copy;
    if (np_record_copy(a->record, e, &copy) != 0)
        return; /* the thread has ended since */
    hwloc_const_bitmap_t cpus = copy.slot >= 0 ? a->slots[copy.slot] : a->place_cpus;
    const char *want = copy.slot >= 0 ? a->slot_cpus_str[copy.slot] : a->place_cpus_str;
    char qname[512], got[1024];
    quoted(qname, sizeof qname, name);
    if (a->opt.dryrun) {
        np_log(NP_LOG_INFO, "would-place %s tid=%d group=%d node=%s cpus=%s mem=unchanged how=%s",
               qname, (int)tid, a->opt.group, a->node_list, want, np_how_name(how));
        return;
    }
    hwloc_bitmap_t now = hwloc_bitmap_alloc();
    if (now == NULL)
        return;
    if (hwloc_set_proc_cpubind(a->topo.topology, tid, cpus, HWLOC_CPUBIND_THREAD) != 0) {
        int err = errno;
        bind_failed(a, e, name, tid, want, err);
    } else {
        hwloc_get_proc_cpubind(a->topo.topology, tid, now, HWLOC_CPUBIND_THREAD);
        np_cpulist(got, sizeof got, now);
        if (!hwloc_bitmap_isequal(now, cpus)) {
            np_record_set(a->record, e, NP_PLACED, 0, 0, false, true);
            np_log(np_once_level(&a->warned_verify, NP_LOG_WARNING),
                   "%s tid=%d reads back cpus=%s, not the planned cpus=%s", qname, (int)tid, got,
                   want);
        }
        np_log(NP_LOG_INFO, "placed %s tid=%d group=%d node=%s cpus=%s mem=unchanged how=%s",
               qname, (int)tid, a->opt.group, a->node_list, got, np_how_name(how));
        if (a->opt.mem != NP_MEM_NONE)
            np_log(np_once_level(&a->told_mem_unchanged, NP_LOG_INFO),
                   "threads placed from outside (%s) keep their memory policy: Linux lets only a "
                   "thread itself set it", np_how_name(how));
    }
    hwloc_bitmap_free(now);
}

/* True when tid is a thread of this process: an id read from the JVM's
 * memory is checked before anything is bound to it. */
static bool own_thread(pid_t tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d", (int)tid);
    return access(path, F_OK) == 0;
}

void np_agent_seen(struct np_agent *a, const char *name, pid_t tid, enum np_how how)
{
    if (!a->active || tid <= 0 || !own_thread(tid))
        return;
    struct np_ref e = np_record_find_live(a->record, tid);
    bool match = np_globs_match(&a->opt.threads, name);
    enum np_outcome outcome = !match ? NP_SKIPPED : a->opt.dryrun ? NP_WOULD_PLACE : NP_PLACED;
    if (e.e != NULL) {
        struct np_entry copy;
        /* Ended since, placed (or failed) already, or still not matching. */
        if (np_record_copy(a->record, e, &copy) != 0 || copy.outcome != NP_SKIPPED || !match)
            return;
        if (np_record_rename(a->record, e, name, outcome, a->opt.cpus != NP_CPUS_NODE, how) != 0)
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
    e = np_record_add_live(a->record, name, tid, outcome, match && a->opt.cpus != NP_CPUS_NODE, how,
                           &live, &slot);
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

void np_agent_summary(struct np_agent *a)
{
    if (!a->active)
        return;
    struct np_counts c;
    np_record_counts(a->record, &c);
    /* CPUs that placed threads went to: every slot ever used. */
    hwloc_bitmap_t used = hwloc_bitmap_alloc();
    int *slot_used = calloc((size_t)a->nslots, sizeof *slot_used);
    char cpus[1024] = "none";
    if (used != NULL && slot_used != NULL) {
        np_record_slot_used(a->record, slot_used);
        for (int s = 0; s < a->nslots; s++)
            if (slot_used[s] > 0 || (a->opt.cpus == NP_CPUS_NODE && c.placed + c.would_place > 0))
                hwloc_bitmap_or(used, used, a->slots[s]);
        if (!hwloc_bitmap_iszero(used))
            np_cpulist(cpus, sizeof cpus, used);
    }
    hwloc_bitmap_free(used);
    free(slot_used);
    char memory[1200];
    np_agent_exit_memory(a, memory, sizeof memory);
    np_log(NP_LOG_INFO,
           "summary group=%d placed=%d would_place=%d skipped=%d failed=%d mem_failed=%d cpus=%s%s",
           a->opt.group, c.placed, c.would_place, c.skipped, c.failed, c.mem_failed, cpus, memory);
}

void np_agent_report(struct np_agent *a)
{
    if (!a->active || a->report_fd < 0)
        return;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    int e = ENOMEM;
    if (mem != NULL) {
        if (a->exit_memory.pages == NULL)
            np_memory_read(0, true, &a->exit_memory);
        np_report_json(&a->report_plan, a->record, NP_RECORD_KEEP_ENDED, &a->exit_memory,
                       a->mem_nodes, mem);
        e = fclose(mem) == 0 ? 0 : errno;
    }
    for (size_t done = 0; e == 0 && done < len;) {
        ssize_t w = pwrite(a->report_fd, text + done, len - done, (off_t)done);
        if (w < 0 && errno != EINTR)
            e = errno;
        else if (w > 0)
            done += (size_t)w;
    }
    if (e == 0 && ftruncate(a->report_fd, (off_t)len) != 0)
        e = errno;
    free(text);
    close(a->report_fd);
    a->report_fd = -1;
    if (e != 0)
        np_log(NP_LOG_WARNING, "cannot write report file '%s': %s (%s)", a->report_path,
               strerror(e), np_errno_name(e));
    else
        np_log(NP_LOG_INFO, "report %s", a->report_path);
}
