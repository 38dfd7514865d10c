#define _GNU_SOURCE
#include "np_agent.h"

#include "np_autogroup.h"
#include "np_domains.h"
#include "np_drift.h"
#include "np_file.h"
#include "np_claim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
                 strerror(errno), np_errno_name(errno));
        rc = -1;
        goto out;
    }
    struct np_bind_result r;
    np_bind_self(a->topo.topology, t, &r, &now);
    char want[256], got[256];
    if (r.cpu_errno != 0) {
        np_cpulist(want, sizeof want, t->cpus);
        snprintf(err, errlen, "cannot bind threads to cpus=%s: %s (%s)", want,
                 strerror(r.cpu_errno), np_errno_name(r.cpu_errno));
        rc = -1;
    } else if (r.mem_errno != 0) {
        np_mem_target_str(want, sizeof want, t);
        snprintf(err, errlen, "cannot set memory policy %s: %s (%s)%s", want,
                 strerror(r.mem_errno), np_errno_name(r.mem_errno),
                 t->mem == NP_MEM_BALANCING && r.mem_errno == EINVAL
                     ? "; mem=balancing needs Linux 5.12 or later (MPOL_F_NUMA_BALANCING): use "
                       "mem=bind"
                     : np_mem_refused_hint(r.mem_errno));
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

/* Advice that needs only the machine and the start-up state. */
static void advise_at_start(struct np_agent *a)
{
    char msg[1024];
    a->have_startup = a->topo.thissystem && np_actual_init(&a->startup) == 0 &&
                      np_read_self(a->topo.topology, &a->startup) == 0;
    if (a->have_startup && np_advise_alignment(&a->topo, &a->startup, msg, sizeof msg))
        np_agent_advise(a, NP_LOG_WARNING, msg);
    bool warn;
    if (a->topo.thissystem && !a->opt.dryrun &&
        np_advise_numa_balancing(np_read_numa_balancing(NULL), a->opt.mem,
                                 a->opt.scope == NP_SCOPE_JVM && !a->late, &warn,
                                 msg, sizeof msg))
        np_agent_advise(a, warn ? NP_LOG_WARNING : NP_LOG_INFO, msg);
}

void np_agent_jvm_facts(struct np_agent *a, const struct np_jvm_facts *f)
{
    if (!a->active)
        return;
    char msg[1024];
    struct np_jvm_facts facts = *f;
    if (facts.cpus_seen <= 0)
        facts.cpus_seen = a->cpus_at_load;
    f = &facts;
    const struct np_group_plan *mine = np_agent_targets(a)->mine;
    if (mine == NULL)
        return; /* the cpuset leaves the group no CPUs */
    hwloc_bitmap_t all = hwloc_bitmap_alloc();
    if (all != NULL) {
        np_topo_usable_nodes(&a->topo, all);
        /* Turned off at load: that line said why. */
        if (!a->numa_turned_off &&
            np_advise_use_numa(f, mine->nodes, all, a->jvm_placed, msg, sizeof msg))
            np_agent_advise(a, f->use_numa == 1 && !hwloc_bitmap_isequal(mine->nodes, all)
                                   ? NP_LOG_WARNING : NP_LOG_INFO, msg);
        hwloc_bitmap_free(all);
    }
    if (np_advise_threads(f, hwloc_bitmap_weight(mine->cpus), msg, sizeof msg))
        np_agent_advise(a, NP_LOG_WARNING, msg);
}

/* "WHAT 'PATH': WHY (ENAME)" for a file numapin refused by its own rules,
 * "WHAT 'PATH': strerror (ENAME)" for one the system refused. */
static void file_error(char *buf, size_t len, const char *what, const char *path, int e,
                       const char *why)
{
    snprintf(buf, len, "%s '%s': %s (%s)", what, path, why != NULL ? why : strerror(e),
             np_errno_name(e));
}

/* Phase 1: options and log.  log= is applied even when another option is
 * bad, so the error also reaches the chosen log. */
static enum np_status parse_options(struct np_agent *a, const char *options)
{
    char err[1024];
    const char *why;
    bool bad = np_options_parse(options, &a->opt, err, sizeof err) != 0;
    if (a->jdk_tool && !a->opt.log_given)
        np_log_to_stderr(NP_LOG_WARNING); /* the tool's stdout is for its own output */
    else if (np_log_open(a->opt.log_level, a->opt.log_file, &why) != 0) {
        char msg[1200];
        file_error(msg, sizeof msg, "cannot open log file", a->opt.log_file, errno, why);
        if (!bad && a->opt.strict && !a->opt.help) {
            np_log_fatal("%s", msg);
            return NP_ERR_RUNTIME;
        }
        np_log(NP_LOG_WARNING, "%s; logging to stdout", msg);
    }
    if (bad) {
        /* jcmd JVMTI.agent_load LIB group=1,groups=2 hands the agent only
         * "group": its parser takes '=' for its own. */
        bool jcmd_split = a->late && options != NULL && strchr(options, '=') == NULL &&
                          strstr(err, "' needs a value") != NULL;
        np_log_fatal("%s%s", err,
                     jcmd_split ? " (jcmd splits its arguments at '=', so the options reached "
                                  "numapin cut: quote them, as in jcmd PID JVMTI.agent_load "
                                  "/path/libnumapin.so '\"group=1,groups=2\"')" : "");
        return NP_ERR_OPTIONS;
    }
    return NP_OK;
}

#define WHO_LEN (4096 + NP_MAX_OPTIONS_LEN + 32)

/* This copy as the mark and the warning name it: its path and options. */
static void who_am_i(char *buf, size_t len, const char *options)
{
    char self[4096];
    snprintf(buf, len, "%s (options '%s')", np_claim_self(self, sizeof self),
             options != NULL ? options : "");
}

static void warn_loaded(const char *who, const char *other)
{
    np_log_both(NP_LOG_WARNING, "numapin is already loaded in this JVM: %s acts; this copy, %s, "
                                "does nothing", other, who);
}

/* One copy of numapin acts in a process: the first to get here. */
static enum np_status claim(struct np_agent *a, const char *options)
{
    char who[WHO_LEN], other[WHO_LEN];
    who_am_i(who, sizeof who, options);
    a->claim_fd = np_claim_take(who, other, sizeof other);
    if (a->claim_fd != NP_CLAIM_TAKEN)
        return NP_OK;
    a->claim_fd = -1;
    warn_loaded(who, other);
    return NP_ERR_LOADED;
}

void np_agent_warn_loaded(const char *options)
{
    char who[WHO_LEN], other[WHO_LEN];
    who_am_i(who, sizeof who, options);
    if (np_claim_read(other, sizeof other) != 0)
        snprintf(other, sizeof other, "another load of this library");
    warn_loaded(who, other);
}

/* report=FILE is checked at start, so that a path that cannot be written
 * is known now, not when the JVM exits; the file is written at exit,
 * whole or not at all.  A report that would overwrite the log (the same
 * file, by any path) is refused like a bad option. */
static enum np_status open_report(struct np_agent *a)
{
    const char *why = NULL;
    int e = 0;
    if (np_file_path(a->opt.report_file, a->report_path, sizeof a->report_path) != 0)
        e = errno;
    else if (np_log_same_file(a->report_path)) {
        np_log_fatal("options 'log=' and 'report=' name the same file (%s): the report would "
                     "overwrite the log; give them different files", a->report_path);
        return NP_ERR_OPTIONS;
    } else if (np_file_out_open(&a->report, a->report_path, &why) != 0)
        e = errno;
    if (e == 0)
        return NP_OK;
    char msg[4400];
    file_error(msg, sizeof msg, "cannot write report file", a->report_path, e, why);
    if (a->opt.strict) {
        np_log_fatal("%s (strict: the JVM does not start)", msg);
        return NP_ERR_RUNTIME;
    }
    np_log(NP_LOG_WARNING, "%s; no report will be written", msg);
    return NP_OK;
}

/* Phase 2: the machine, the plan (into *p), and this JVM's group in it. */
static enum np_status plan(struct np_agent *a, struct np_plan *p)
{
    char err[1024], dir[4096];
    const char *cache = a->opt.topocache_off ? NULL
                        : a->opt.topocache_dir != NULL ? a->opt.topocache_dir
                                                       : np_file_private_default(dir, sizeof dir);
    if (np_topo_load_cached(&a->topo, cache, a->topo_cache, sizeof a->topo_cache, err,
                            sizeof err) != 0)
        return runtime_failure(a, err);
    if (a->topo.warning[0] != '\0')
        np_log(NP_LOG_WARNING, "%s", a->topo.warning);
    if (!a->topo.thissystem && !a->opt.dryrun) {
        snprintf(err, sizeof err, "the topology (%s) is not this machine's (set HWLOC_THISSYSTEM=1 if "
                 "it is), so binding would do nothing", a->topo.source);
        if (a->opt.strict)
            return runtime_failure(a, err);
        np_log(NP_LOG_WARNING, "%s: numapin runs as with dryrun (would-place lines)", err);
        a->opt.dryrun = true;
    }
    if (a->opt.groups == 0) {
        struct np_domains d;
        if (np_domains_get(&a->topo, a->opt.domain, &d) == 0) {
            a->opt.groups = d.n;
            np_domains_free(&d);
        } else {
            a->opt.groups = 1; /* np_plan_build reports the missing domain */
        }
        if (a->opt.group >= a->opt.groups) {
            np_log_fatal("option 'group=%d' is out of range: groups defaults to %d, the %ss "
                         "with CPUs here, so valid values are 0 to %d (or set groups=)",
                         a->opt.group, a->opt.groups, np_domain_name(a->opt.domain),
                         a->opt.groups - 1);
            return NP_ERR_OPTIONS;
        }
    }
    np_options_resolve(&a->opt, a->opt.groups);
    if (np_plan_build(&a->topo, a->opt.groups, a->opt.domain, p) != 0) {
        if (errno == ENOENT)
            snprintf(err, sizeof err, "domain=%s: this machine reports no %s with usable CPUs",
                     np_domain_name(a->opt.domain), np_domain_name(a->opt.domain));
        else
            snprintf(err, sizeof err, "cannot plan %d groups: %s", a->opt.groups, strerror(errno));
        return runtime_failure(a, err);
    }
    if (a->opt.group == NP_GROUP_AUTO && a->opt.groups == 1) {
        /* One group (a container given one node's CPUs, with groups left
         * to default): nothing to share, so no lock, and the JVMs of
         * other containers, which see other CPUs, need not share the
         * lock directory. */
        a->opt.group = 0;
        np_log(NP_LOG_INFO, "auto group=0 groups=1 lock=none");
    } else if (a->opt.group == NP_GROUP_AUTO) {
        int g = np_autogroup_claim(a->opt.lock_dir, a->opt.groups, &a->lock_fd, err, sizeof err);
        if (g < 0) {
            np_plan_free(p);
            return runtime_failure(a, err);
        }
        a->opt.group = g;
        np_log(NP_LOG_INFO, "auto group=%d groups=%d", g, a->opt.groups);
    }
    return NP_OK;
}

/* Phase 3: what placed threads get (np_targets: CPUs of the chosen kind,
 * the slots cpus=core|pu choose from, the memory nodes), and the record. */
static enum np_status targets(struct np_agent *a, struct np_plan *p)
{
    char err[1024];
    switch (np_targets_build(&a->opt, &a->topo, p, a->opt.group, &a->targets, err, sizeof err)) {
    case NP_TARGETS_OK: break;
    case NP_TARGETS_CPUKIND:
    case NP_TARGETS_MEMNODE:
        np_log_fatal("%s", err);
        return NP_ERR_OPTIONS;
    case NP_TARGETS_NOMEM: return runtime_failure(a, "cannot set up placement: out of memory");
    }
    if ((a->record = np_record_create(a->targets->nslots, NP_RECORD_KEEP_ENDED)) == NULL)
        return runtime_failure(a, "cannot set up placement: out of memory");
    return NP_OK;
}

/* Phase 4: what placing a thread needs, done once: the CPU lists and the
 * memory policy as the log shows them, the policy in the kernel's terms,
 * and what threads not placed get back. */
static bool prepare(struct np_agent *a)
{
    struct np_targets *t = a->targets;
    if (np_targets_prepare(t, &a->opt) != 0)
        return false;
    /* Placed threads have the JVM's policy from their start: the same
     * nodes and mode, set on the thread that creates the others. */
    np_targets_inherit_policy(t, a->jvm_mem_set);
    return !a->have_startup || np_targets_set_unplaced(t, a->startup.cpus, &a->startup) == 0;
}

/* The start-up lines: the machine, the plan, and the plan's advice. */
static void log_plan(struct np_agent *a, const struct np_target *t)
{
    char line[2048], cpus[1024], mem[256], threads[1024], kind[32], cache[1600];
    const struct np_targets *g = a->targets;
    np_topo_summary(&a->topo, line, sizeof line);
    np_quote(cache, sizeof cache, a->topo_cache);
    np_log(NP_LOG_INFO, "topology %s cache=%s", line, cache);
    np_cpulist(cpus, sizeof cpus, g->place_cpus);
    np_mem_target_str(mem, sizeof mem, t);
    np_quote(threads, sizeof threads, a->opt.threads.text);
    np_log(NP_LOG_INFO,
           "plan group=%d groups=%d domain=%s node=%s slice=%d/%d cpus=%s cpus_mode=%s "
           "cpukind=%s slots=%d mem=%s threads=%s dryrun=%s strict=%s scope=%s (%s)",
           a->opt.group, a->opt.groups, np_domain_name(a->opt.domain), g->node_list,
           g->mine->slice + 1, g->mine->nslices, cpus, np_cpus_mode_name(a->opt.cpus),
           np_cpukind_name(a->opt.cpukind, kind, sizeof kind), g->nslots, mem, threads,
           yesno(a->opt.dryrun), yesno(a->opt.strict), np_scope_name(a->opt.scope),
           np_options_scope_why(&a->opt));
    for (int i = 0; i < g->plan.nwarnings; i++) {
        const struct np_warning *w = &g->plan.warnings[i];
        if (a->opt.group >= w->first_group && a->opt.group <= w->last_group)
            np_agent_advise(a, NP_LOG_WARNING, w->text);
    }
}

static enum np_status start(struct np_agent *a, const char *options)
{
    enum np_status st = parse_options(a, options);
    if (st != NP_OK)
        return st;
    if (a->opt.help) {
        fputs(np_options_help(), stdout);
        fflush(stdout);
        return NP_OK;
    }
    if ((st = claim(a, options)) != NP_OK)
        return st;
    if (a->opt.report_file != NULL && (st = open_report(a)) != NP_OK)
        return st;
    struct np_plan p;
    memset(&p, 0, sizeof p);
    if ((st = plan(a, &p)) != NP_OK || p.groups == NULL)
        return st;
    if ((st = targets(a, &p)) != NP_OK || a->record == NULL)
        return st;
    struct np_target t = {a->targets->place_cpus, a->targets->mem_nodes, a->opt.mem};
    log_plan(a, &t);
    advise_at_start(a);
    a->cpus_at_load = a->have_startup ? hwloc_bitmap_weight(a->startup.cpus) : -1;
    if (a->opt.scope == NP_SCOPE_JVM && !a->opt.dryrun) {
        if (np_agent_place_jvm(a, a->targets, &t) != 0 && a->opt.strict)
            return NP_ERR_RUNTIME;
        /* Threads put back from an inherited placement go to the JVM's group. */
        if (a->have_startup)
            np_read_self(a->topo.topology, &a->startup);
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
    t.mem = a->opt.mem;
    if (!prepare(a))
        return runtime_failure(a, "cannot set up placement: out of memory");
    np_agent_move_before_load(a, &t);
    char err[1024];
    if (a->opt.strict && !a->opt.dryrun && probe(a, &t, err, sizeof err) != 0) {
        np_log_fatal("%s (strict: the JVM does not start)", err);
        return NP_ERR_RUNTIME;
    }
    a->active = true;
    /* cpus=node needs no end before join() returns: a placed thread's
     * end is seen at its exit, and the JVM posts no ThreadEnd.  Threads
     * placed at a late attach are seen from outside, with no key. */
    a->end_at_exit = !a->late && a->opt.cpus == NP_CPUS_NODE && np_agent_claim_exit_key(a);
    /* Placement lines go to the log thread, which the placed threads then
     * do not wait for (logsync: they write their own). */
    int e;
    if (!a->opt.log_sync && np_log_enabled(NP_LOG_INFO) && (e = np_log_start_writer()) != 0)
        np_log(NP_LOG_INFO, "cannot start the log thread: %s (%s); each placed thread writes its "
               "own line, as with logsync", strerror(e), np_errno_name(e));
    np_drift_start(a);
    return NP_OK;
}

bool np_jdk_tool(const char *command)
{
    if (command == NULL)
        return false;
    size_t main_len = strcspn(command, " ");
    const char *slash = memchr(command, '/', main_len);
    return slash != NULL && (strncmp(command, "jdk.", 4) == 0 || strncmp(command, "java.", 5) == 0);
}

static enum np_status create(const char *options, const struct np_start *how, struct np_agent **out)
{
    np_log_init();
    *out = NULL;
    struct np_agent *a = calloc(1, sizeof *a);
    if (a == NULL) {
        np_log_fatal("out of memory");
        return NP_ERR_RUNTIME;
    }
    a->lock_fd = -1;
    a->claim_fd = -1;
    a->report.dirfd = -1;
    a->late = how->late;
    a->jdk_tool = np_jdk_tool(how->command);
    enum np_status st = start(a, options);
    if (st != NP_OK) {
        np_agent_destroy(a);
        return st;
    }
    *out = a;
    return NP_OK;
}

enum np_status np_agent_create(const char *options, struct np_agent **out)
{
    static const struct np_start plain = {false, NULL};
    return create(options, &plain, out);
}

enum np_status np_agent_start(const char *options, const struct np_start *how,
                              struct np_agent **out)
{
    return create(options, how, out);
}

void np_agent_destroy(struct np_agent *a)
{
    if (a == NULL)
        return;
    np_agent_release_exit_key(a);
    np_file_out_close(&a->report);
    np_claim_release(a->claim_fd);
    np_drift_free(a->drift);
    np_memory_free(&a->exit_memory);
    np_access_free(&a->exit_access);
    np_thread_access_free(a->exit_threads, a->exit_nthreads);
    np_record_destroy(a->record);
    np_agent_sink_free(a);
    np_targets_free_all(a->targets);
    np_actual_destroy(&a->startup);
    if (a->lock_fd >= 0)
        close(a->lock_fd); /* the group is free again */
    np_topo_destroy(&a->topo);
    np_options_free(&a->opt);
    np_log_close();
    free(a);
}
