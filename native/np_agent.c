#define _GNU_SOURCE
#include "np_agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The record entry of the calling thread, so ThreadEnd (which runs on the
 * ending thread) finds it without a search. */
static __thread struct np_entry *self_entry;
static __thread struct np_agent *self_agent;

static const char *errname(int e)
{
    const char *n = strerrorname_np(e);
    return n != NULL ? n : "unknown";
}

static const char *yesno(bool b) { return b ? "yes" : "no"; }

/* Binds the loading thread to the plan, reads it back and restores it: a
 * start-up check, so that `strict` fails the JVM now rather than warning at
 * the first thread. */
static int probe(struct np_agent *a, const struct np_target *t, char *err, size_t errlen)
{
    struct np_actual saved, now;
    if (np_actual_init(&saved) != 0 || np_actual_init(&now) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    if (np_read_self(a->topo.topology, &saved) != 0) {
        snprintf(err, errlen, "cannot read this thread's CPU binding and memory policy: %s (%s)",
                 strerror(errno), errname(errno));
        rc = -1;
        goto out;
    }
    struct np_bind_result r;
    np_bind_self(a->topo.topology, t, &r, &now);
    char want[256], got[256];
    if (r.cpu_errno != 0) {
        np_cpulist(want, sizeof want, t->cpus);
        snprintf(err, errlen, "cannot bind threads to cpus=%s: %s (%s)", want,
                 strerror(r.cpu_errno), errname(r.cpu_errno));
        rc = -1;
    } else if (r.mem_errno != 0) {
        np_mem_target_str(want, sizeof want, t);
        snprintf(err, errlen, "cannot set memory policy %s: %s (%s)", want,
                 strerror(r.mem_errno), errname(r.mem_errno));
        rc = -1;
    } else if (!r.cpu_ok || !r.mem_ok) {
        np_cpulist(want, sizeof want, t->cpus);
        np_cpulist(got, sizeof got, now.cpus);
        char wmem[128], gmem[128];
        np_mem_target_str(wmem, sizeof wmem, t);
        np_mem_actual_str(gmem, sizeof gmem, &now);
        snprintf(err, errlen, "placement does not read back: cpus=%s mem=%s planned, cpus=%s mem=%s read",
                 want, wmem, got, gmem);
        rc = -1;
    }
    if (np_restore_self(a->topo.topology, &saved) != 0 && rc == 0) {
        snprintf(err, errlen, "cannot restore this thread's placement after the start-up check: %s",
                 strerror(errno));
        rc = -1;
    }
out:
    np_actual_destroy(&saved);
    np_actual_destroy(&now);
    return rc;
}

/* A failure that `strict` makes fatal: returns NP_ERR_RUNTIME under strict
 * after one error line; otherwise one warning and the agent disables
 * itself (NP_OK). */
static enum np_status runtime_failure(struct np_agent *a, const char *msg)
{
    if (a->opt.strict) {
        np_log_fatal("%s (strict: the JVM does not start)", msg);
        return NP_ERR_RUNTIME;
    }
    np_log(NP_LOG_WARNING, "%s; numapin places no thread in this JVM", msg);
    a->active = false;
    return NP_OK;
}

static enum np_status start(struct np_agent *a, const char *options)
{
    char err[1024];
    bool bad = np_options_parse(options, &a->opt, err, sizeof err) != 0;
    /* log= is applied even when another option is bad, so the error also
     * reaches the chosen log. */
    if (np_log_open(a->opt.log_level, a->opt.log_file) != 0) {
        char msg[1200];
        snprintf(msg, sizeof msg, "cannot open log file '%s': %s (%s)", a->opt.log_file,
                 strerror(errno), errname(errno));
        if (!bad && (a->opt.strict || a->opt.help)) {
            np_log_fatal("%s", msg);
            return NP_ERR_RUNTIME;
        }
        np_log(NP_LOG_WARNING, "%s; logging to stdout", msg);
    }
    if (bad) {
        np_log_fatal("%s", err);
        return NP_ERR_OPTIONS;
    }
    if (a->opt.help) {
        fputs(np_options_help(), stdout);
        fflush(stdout);
        return NP_OK;
    }

    if (np_topo_load(&a->topo, NULL, NULL, err, sizeof err) != 0)
        return runtime_failure(a, err);
    if (a->opt.groups == 0) {
        a->opt.groups = a->topo.nnodes;
        if (a->opt.group >= a->opt.groups) {
            np_log_fatal("option 'group=%d' is out of range: groups defaults to %d, the NUMA nodes "
                         "with CPUs here, so valid values are 0 to %d (or set groups=)",
                         a->opt.group, a->opt.groups, a->opt.groups - 1);
            return NP_ERR_OPTIONS;
        }
    }
    if (np_plan_build(&a->topo, a->opt.groups, &a->plan) != 0) {
        snprintf(err, sizeof err, "cannot plan %d groups: %s", a->opt.groups, strerror(errno));
        return runtime_failure(a, err);
    }
    a->mine = &a->plan.groups[a->opt.group];
    a->nslots = np_slots(&a->topo, a->mine->cpus, a->opt.cpus, &a->slots);
    if (a->nslots < 0 || np_record_init(&a->record, a->nslots) != 0) {
        a->nslots = 0;
        return runtime_failure(a, "cannot set up placement: out of memory");
    }
    np_cpulist(a->node_list, sizeof a->node_list, a->mine->nodes);

    char line[2048], cpus[1024], mem[256], threads[1024];
    np_topo_summary(&a->topo, line, sizeof line);
    np_log(NP_LOG_INFO, "topology %s", line);
    struct np_target t = {a->mine->cpus, a->mine->nodes, a->opt.mem};
    np_cpulist(cpus, sizeof cpus, a->mine->cpus);
    np_mem_target_str(mem, sizeof mem, &t);
    np_quote(threads, sizeof threads, a->opt.threads);
    np_log(NP_LOG_INFO,
           "plan group=%d groups=%d node=%s slice=%d/%d cpus=%s cpus_mode=%s slots=%d mem=%s "
           "threads=%s dryrun=%s strict=%s",
           a->opt.group, a->opt.groups, a->node_list, a->mine->slice + 1, a->mine->nslices, cpus,
           np_cpus_mode_name(a->opt.cpus), a->nslots, mem, threads, yesno(a->opt.dryrun),
           yesno(a->opt.strict));
    for (int i = 0; i < a->plan.nwarnings; i++) {
        const struct np_warning *w = &a->plan.warnings[i];
        if (a->opt.group >= w->first_group && a->opt.group <= w->last_group)
            np_log(NP_LOG_WARNING, "%s", w->text);
    }

    if (a->opt.mem != NP_MEM_NONE && !a->opt.dryrun && np_bind_init() != 0) {
        if (a->opt.strict) {
            np_log_fatal("mem=%s needs NUMA support in the kernel, and it has none "
                         "(strict: the JVM does not start)", np_mem_mode_name(a->opt.mem));
            return NP_ERR_RUNTIME;
        }
        np_log(NP_LOG_WARNING, "the kernel has no NUMA memory policy support: mem=%s is ignored",
               np_mem_mode_name(a->opt.mem));
        a->opt.mem = NP_MEM_NONE;
    }
    if (a->opt.strict && !a->opt.dryrun && probe(a, &t, err, sizeof err) != 0) {
        np_log_fatal("%s (strict: the JVM does not start)", err);
        return NP_ERR_RUNTIME;
    }
    a->active = true;
    return NP_OK;
}

enum np_status np_agent_create(const char *options, struct np_agent **out)
{
    np_log_init();
    *out = NULL;
    struct np_agent *a = calloc(1, sizeof *a);
    if (a == NULL) {
        np_log_fatal("out of memory");
        return NP_ERR_RUNTIME;
    }
    enum np_status st = start(a, options);
    if (st != NP_OK) {
        np_agent_destroy(a);
        return st;
    }
    *out = a;
    return NP_OK;
}

void np_agent_thread_start(struct np_agent *a, const char *name, pid_t tid)
{
    if (!a->active)
        return;
    char qname[512];
    np_quote(qname, sizeof qname, name);
    if (!np_options_match(&a->opt, name)) {
        np_record_add(&a->record, name, tid, NP_SKIPPED, false);
        np_log(NP_LOG_DEBUG, "skipped %s tid=%d", qname, (int)tid);
        return;
    }
    struct np_entry *e = np_record_add(&a->record, name, tid,
                                       a->opt.dryrun ? NP_WOULD_PLACE : NP_PLACED,
                                       a->opt.cpus != NP_CPUS_NODE);
    if (e == NULL) {
        np_log(np_once_level(&a->warned_oom, NP_LOG_WARNING),
               "out of memory: %s tid=%d is not placed", qname, (int)tid);
        return;
    }
    self_entry = e;
    self_agent = a;
    /* e->slot is written only by this thread, at add and on failure. */
    hwloc_const_bitmap_t cpus = e->slot >= 0 ? a->slots[e->slot] : a->mine->cpus;
    struct np_target t = {cpus, a->mine->nodes, a->opt.mem};
    char want_cpus[1024], want_mem[256];
    np_cpulist(want_cpus, sizeof want_cpus, cpus);
    np_mem_target_str(want_mem, sizeof want_mem, &t);
    if (a->opt.dryrun) {
        np_log(NP_LOG_INFO, "would-place %s tid=%d group=%d node=%s cpus=%s mem=%s", qname,
               (int)tid, a->opt.group, a->node_list, want_cpus, want_mem);
        return;
    }

    struct np_actual got;
    if (np_actual_init(&got) != 0) {
        np_record_set(&a->record, e, NP_FAILED, ENOMEM, 0, false);
        np_log(np_once_level(&a->warned_oom, NP_LOG_WARNING),
               "out of memory: %s tid=%d is not placed", qname, (int)tid);
        return;
    }
    struct np_bind_result r;
    np_bind_self(a->topo.topology, &t, &r, &got);
    char got_cpus[1024], got_mem[256];
    np_cpulist(got_cpus, sizeof got_cpus, got.cpus);
    np_mem_actual_str(got_mem, sizeof got_mem, &got);
    np_actual_destroy(&got);

    if (r.cpu_errno != 0) {
        np_record_set(&a->record, e, NP_FAILED, r.cpu_errno, 0, false);
        np_log(np_once_level(&a->warned_cpu, NP_LOG_WARNING),
               "cannot bind %s tid=%d to cpus=%s: %s (%s); threads that cannot be bound are left "
               "as they were (repeats are logged at debug level)",
               qname, (int)tid, want_cpus, strerror(r.cpu_errno), errname(r.cpu_errno));
        return;
    }
    np_record_set(&a->record, e, NP_PLACED, 0, r.mem_errno, r.mem_ok);
    if (r.mem_errno != 0)
        np_log(np_once_level(&a->warned_mem, NP_LOG_WARNING),
               "cannot set memory policy %s for %s tid=%d: %s (%s); placed threads keep their CPUs "
               "and their previous memory policy (repeats are logged at debug level)",
               want_mem, qname, (int)tid, strerror(r.mem_errno), errname(r.mem_errno));
    else if (!r.cpu_ok || !r.mem_ok)
        np_log(np_once_level(&a->warned_verify, NP_LOG_WARNING),
               "%s tid=%d reads back cpus=%s mem=%s, not the planned cpus=%s mem=%s",
               qname, (int)tid, got_cpus, got_mem, want_cpus, want_mem);
    char mem_error[64] = "";
    if (r.mem_errno != 0)
        snprintf(mem_error, sizeof mem_error, " mem_error=%s", errname(r.mem_errno));
    np_log(NP_LOG_INFO, "placed %s tid=%d group=%d node=%s cpus=%s mem=%s%s", qname, (int)tid,
           a->opt.group, a->node_list, got_cpus, got_mem, mem_error);
}

void np_agent_thread_end(struct np_agent *a)
{
    if (self_agent != a || self_entry == NULL)
        return;
    np_record_end(&a->record, self_entry);
    self_entry = NULL;
    self_agent = NULL;
}

void np_agent_summary(struct np_agent *a)
{
    if (!a->active)
        return;
    struct np_counts c;
    np_record_counts(&a->record, &c);
    /* CPUs that placed threads went to: every slot ever used. */
    hwloc_bitmap_t used = hwloc_bitmap_alloc();
    char cpus[1024] = "none";
    if (used != NULL) {
        pthread_mutex_lock(&a->record.lock);
        for (int s = 0; s < a->nslots; s++)
            if (a->record.slot_used[s] > 0 || (a->opt.cpus == NP_CPUS_NODE && c.placed > 0))
                hwloc_bitmap_or(used, used, a->slots[s]);
        pthread_mutex_unlock(&a->record.lock);
        if (!hwloc_bitmap_iszero(used))
            np_cpulist(cpus, sizeof cpus, used);
        hwloc_bitmap_free(used);
    }
    np_log(NP_LOG_INFO,
           "summary group=%d placed=%d would_place=%d skipped=%d failed=%d mem_failed=%d cpus=%s",
           a->opt.group, c.placed, c.would_place, c.skipped, c.failed, c.mem_failed, cpus);
}

void np_agent_destroy(struct np_agent *a)
{
    if (a == NULL)
        return;
    if (a->record.slot_live != NULL)
        np_record_destroy(&a->record);
    np_slots_free(a->slots, a->nslots > 0 ? a->nslots : 0);
    np_plan_free(&a->plan);
    np_topo_destroy(&a->topo);
    np_options_free(&a->opt);
    np_log_close();
    free(a);
}
