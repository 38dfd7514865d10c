#define _GNU_SOURCE
#include "np_agent.h"

#include "np_autogroup.h"
#include "np_domains.h"
#include "np_file.h"

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
        snprintf(err, errlen, "cannot set memory policy %s: %s (%s)", want,
                 strerror(r.mem_errno), np_errno_name(r.mem_errno));
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

/* The machine's NUMA nodes, for error messages. */
static const char *all_nodes(const struct np_agent *a, char *buf, size_t len)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    buf[0] = '\0';
    if (set == NULL)
        return buf;
    hwloc_obj_t n = NULL;
    while ((n = hwloc_get_next_obj_by_type(a->topo.topology, HWLOC_OBJ_NUMANODE, n)) != NULL)
        hwloc_bitmap_set(set, n->os_index);
    np_cpulist(buf, len, set);
    hwloc_bitmap_free(set);
    return buf;
}

/* The usable nodes of the machine: homes of the usable CPUs. */
static void usable_nodes(const struct np_agent *a, hwloc_bitmap_t out)
{
    hwloc_bitmap_zero(out);
    for (int i = 0; i < a->topo.nnodes; i++)
        hwloc_bitmap_set(out, a->topo.nodes[i]->os_index);
}

/* Advice that needs only the machine and the start-up state. */
static void advise_at_start(struct np_agent *a)
{
    char msg[1024];
    a->have_startup = a->topo.thissystem && np_actual_init(&a->startup) == 0 &&
                      np_read_self(a->topo.topology, &a->startup) == 0;
    if (a->have_startup && np_advise_alignment(&a->topo, &a->startup, msg, sizeof msg))
        np_log(NP_LOG_WARNING, "advice: %s", msg);
    if (a->topo.thissystem && !a->opt.dryrun &&
        np_advise_numa_balancing(np_read_numa_balancing(NULL), msg, sizeof msg))
        np_log(NP_LOG_WARNING, "advice: %s", msg);
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
    hwloc_bitmap_t all = hwloc_bitmap_alloc();
    if (all != NULL) {
        usable_nodes(a, all);
        /* Turned off at load: that line said why. */
        if (!a->numa_turned_off &&
            np_advise_use_numa(f, a->mine->nodes, all, a->jvm_placed, msg, sizeof msg))
            np_log(f->use_numa == 1 && !hwloc_bitmap_isequal(a->mine->nodes, all)
                       ? NP_LOG_WARNING : NP_LOG_INFO, "advice: %s", msg);
        hwloc_bitmap_free(all);
    }
    if (np_advise_threads(f, hwloc_bitmap_weight(a->mine->cpus), msg, sizeof msg))
        np_log(NP_LOG_WARNING, "advice: %s", msg);
}

/* Phase 1: options and log.  log= is applied even when another option is
 * bad, so the error also reaches the chosen log. */
static enum np_status parse_options(struct np_agent *a, const char *options)
{
    char err[1024];
    bool bad = np_options_parse(options, &a->opt, err, sizeof err) != 0;
    if (np_log_open(a->opt.log_level, a->opt.log_file) != 0) {
        char msg[1200];
        snprintf(msg, sizeof msg, "cannot open log file '%s': %s (%s)", a->opt.log_file,
                 strerror(errno), np_errno_name(errno));
        if (!bad && a->opt.strict && !a->opt.help) {
            np_log_fatal("%s", msg);
            return NP_ERR_RUNTIME;
        }
        np_log(NP_LOG_WARNING, "%s; logging to stdout", msg);
    }
    if (bad) {
        np_log_fatal("%s", err);
        return NP_ERR_OPTIONS;
    }
    return NP_OK;
}

/* report=FILE is opened at start, so that a path that cannot be written
 * is known now, not when the JVM exits. */
static enum np_status open_report(struct np_agent *a)
{
    if (np_file_path(a->opt.report_file, a->report_path, sizeof a->report_path) == 0)
        a->report_fd = np_file_open(a->report_path, false);
    if (a->report_fd >= 0)
        return NP_OK;
    char msg[4400];
    snprintf(msg, sizeof msg, "cannot open report file '%s': %s (%s)", a->report_path,
             strerror(errno), np_errno_name(errno));
    if (a->opt.strict) {
        np_log_fatal("%s (strict: the JVM does not start)", msg);
        return NP_ERR_RUNTIME;
    }
    np_log(NP_LOG_WARNING, "%s; no report will be written", msg);
    return NP_OK;
}

/* Phase 2: the machine, the plan, and this JVM's group in it. */
static enum np_status plan(struct np_agent *a)
{
    char err[1024];
    if (np_topo_load(&a->topo, NULL, NULL, err, sizeof err) != 0)
        return runtime_failure(a, err);
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
    if (np_plan_build(&a->topo, a->opt.groups, a->opt.domain, &a->plan) != 0) {
        if (errno == ENOENT)
            snprintf(err, sizeof err, "domain=%s: this machine reports no %s with usable CPUs",
                     np_domain_name(a->opt.domain), np_domain_name(a->opt.domain));
        else
            snprintf(err, sizeof err, "cannot plan %d groups: %s", a->opt.groups, strerror(errno));
        return runtime_failure(a, err);
    }
    if (a->opt.group == NP_GROUP_AUTO) {
        int g = np_autogroup_claim(NULL, a->opt.groups, &a->lock_fd, err, sizeof err);
        if (g < 0)
            return runtime_failure(a, err);
        a->opt.group = g;
        np_log(NP_LOG_INFO, "auto group=%d groups=%d", g, a->opt.groups);
    }
    a->mine = &a->plan.groups[a->opt.group];
    return NP_OK;
}

/* Phase 3: what placed threads get: CPUs of the chosen kind, the slots
 * cpus=core|pu choose from, and the memory nodes. */
static enum np_status targets(struct np_agent *a)
{
    char kind[32], nodes[256];
    if ((a->place_cpus = hwloc_bitmap_alloc()) == NULL ||
        (a->mem_nodes = hwloc_bitmap_alloc()) == NULL)
        return runtime_failure(a, "cannot set up placement: out of memory");
    if (np_plan_kind(&a->topo, a->opt.cpukind, a->mine->cpus, a->place_cpus) != 0) {
        np_log_fatal("option 'cpukind=%s' names a CPU kind this machine does not have: valid "
                     "values are performance, efficiency, any, or 0 to %d",
                     np_cpukind_name(a->opt.cpukind, kind, sizeof kind),
                     hwloc_cpukinds_get_nr(a->topo.topology, 0) - 1);
        return NP_ERR_OPTIONS;
    }
    if (a->opt.mem_nodes == NULL) {
        hwloc_bitmap_copy(a->mem_nodes, a->mine->nodes);
    } else {
        hwloc_bitmap_list_sscanf(a->mem_nodes, a->opt.mem_nodes);
        int n;
        NP_FOREACH(n, a->mem_nodes) {
            if (hwloc_get_numanode_obj_by_os_index(a->topo.topology, (unsigned)n) == NULL) {
                np_log_fatal("option 'mem=%s:%s' names node %d, which this machine does not "
                             "have: valid nodes are %s", np_mem_mode_name(a->opt.mem),
                             a->opt.mem_nodes, n, all_nodes(a, nodes, sizeof nodes));
                return NP_ERR_OPTIONS;
            }
        }
    }
    a->nslots = np_slots(&a->topo, a->place_cpus, a->opt.cpus, &a->slots);
    if (a->nslots < 0 || (a->record = np_record_create(a->nslots, NP_RECORD_KEEP_ENDED)) == NULL) {
        a->nslots = 0;
        return runtime_failure(a, "cannot set up placement: out of memory");
    }
    np_cpulist(a->node_list, sizeof a->node_list, a->mine->nodes);
    return NP_OK;
}

/* Phase 4: what placing a thread needs, done once: the CPU lists and the
 * memory policy as the log shows them, the policy in the kernel's terms. */
static bool prepare(struct np_agent *a, const struct np_target *t)
{
    if (hwloc_bitmap_list_asprintf(&a->place_cpus_str, a->place_cpus) < 0 ||
        (a->slot_cpus_str = calloc((size_t)a->nslots, sizeof *a->slot_cpus_str)) == NULL ||
        np_policy_init(&a->policy, t) != 0)
        return false;
    for (int s = 0; s < a->nslots; s++)
        if (hwloc_bitmap_list_asprintf(&a->slot_cpus_str[s], a->slots[s]) < 0)
            return false;
    np_mem_target_str(a->mem_str, sizeof a->mem_str, t);
    a->report_plan = (struct np_report_plan){
        .group = a->opt.group, .groups = a->opt.groups, .domain = a->opt.domain,
        .node = a->node_list, .slice = a->mine->slice + 1, .slices = a->mine->nslices,
        .cpus = a->place_cpus_str, .cpus_mode = a->opt.cpus, .cpukind = a->opt.cpukind,
        .nslots = a->nslots, .slot_cpus = (const char *const *)a->slot_cpus_str,
        .mem = a->mem_str, .threads = a->opt.threads.text, .scope = a->opt.scope,
        .dryrun = a->opt.dryrun,
    };
    return true;
}

/* The start-up lines: the machine, the plan, and the plan's advice. */
static void log_plan(struct np_agent *a, const struct np_target *t)
{
    char line[2048], cpus[1024], mem[256], threads[1024], kind[32];
    np_topo_summary(&a->topo, line, sizeof line);
    np_log(NP_LOG_INFO, "topology %s", line);
    np_cpulist(cpus, sizeof cpus, a->place_cpus);
    np_mem_target_str(mem, sizeof mem, t);
    np_quote(threads, sizeof threads, a->opt.threads.text);
    np_log(NP_LOG_INFO,
           "plan group=%d groups=%d domain=%s node=%s slice=%d/%d cpus=%s cpus_mode=%s "
           "cpukind=%s slots=%d mem=%s threads=%s dryrun=%s strict=%s scope=%s (%s)",
           a->opt.group, a->opt.groups, np_domain_name(a->opt.domain), a->node_list,
           a->mine->slice + 1, a->mine->nslices, cpus, np_cpus_mode_name(a->opt.cpus),
           np_cpukind_name(a->opt.cpukind, kind, sizeof kind), a->nslots, mem, threads,
           yesno(a->opt.dryrun), yesno(a->opt.strict), np_scope_name(a->opt.scope),
           np_options_scope_why(&a->opt));
    for (int i = 0; i < a->plan.nwarnings; i++) {
        const struct np_warning *w = &a->plan.warnings[i];
        if (a->opt.group >= w->first_group && a->opt.group <= w->last_group)
            np_log(NP_LOG_WARNING, "advice: %s", w->text);
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
    if (a->opt.report_file != NULL && (st = open_report(a)) != NP_OK)
        return st;
    if ((st = plan(a)) != NP_OK || a->mine == NULL)
        return st;
    if ((st = targets(a)) != NP_OK || a->nslots == 0)
        return st;
    struct np_target t = {a->place_cpus, a->mem_nodes, a->opt.mem};
    log_plan(a, &t);
    advise_at_start(a);
    a->cpus_at_load = a->have_startup ? hwloc_bitmap_weight(a->startup.cpus) : -1;
    if (a->opt.scope == NP_SCOPE_JVM && !a->opt.dryrun) {
        if (np_agent_place_jvm(a, &t) != 0 && a->opt.strict)
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
    if (!prepare(a, &t))
        return runtime_failure(a, "cannot set up placement: out of memory");
    a->may_inherit = np_agent_may_inherit(a);
    char err[1024];
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
    a->lock_fd = -1;
    a->report_fd = -1;
    enum np_status st = start(a, options);
    if (st != NP_OK) {
        np_agent_destroy(a);
        return st;
    }
    *out = a;
    return NP_OK;
}

void np_agent_destroy(struct np_agent *a)
{
    if (a == NULL)
        return;
    if (a->report_fd >= 0)
        close(a->report_fd);
    np_memory_free(&a->exit_memory);
    np_record_destroy(a->record);
    for (int s = 0; a->slot_cpus_str != NULL && s < a->nslots; s++)
        free(a->slot_cpus_str[s]);
    free(a->slot_cpus_str);
    free(a->place_cpus_str);
    np_policy_destroy(&a->policy);
    np_slots_free(a->slots, a->nslots > 0 ? a->nslots : 0);
    hwloc_bitmap_free(a->place_cpus);
    hwloc_bitmap_free(a->mem_nodes);
    np_actual_destroy(&a->startup);
    if (a->lock_fd >= 0)
        close(a->lock_fd); /* the group is free again */
    np_plan_free(&a->plan);
    np_topo_destroy(&a->topo);
    np_options_free(&a->opt);
    np_log_close();
    free(a);
}
