#define _GNU_SOURCE
#include "np_report.h"

#include <stdlib.h>
#include <unistd.h>

#include "np_cpulist.h"
#include "np_json.h"
#include "np_log.h"

static const char *outcome_name(enum np_outcome o)
{
    switch (o) {
    case NP_SKIPPED: return "skipped";
    case NP_PLACED: return "placed";
    case NP_WOULD_PLACE: return "would_place";
    case NP_FAILED: return "failed";
    }
    return "unknown";
}

/* An errno's name, or NULL for none (JSON null). */
static const char *error_name(int e)
{
    return e != 0 ? np_errno_name(e) : NULL;
}

struct listing {
    const struct np_report_plan *p;
    struct np_json *j;
    const struct np_report_access *acc;
    hwloc_const_bitmap_t mem_nodes;
};

/* The plan of generation `plan`: p or one before it. */
static const struct np_report_plan *plan_of(const struct np_report_plan *p, unsigned plan)
{
    for (const struct np_report_plan *q = p; q != NULL; q = q->older)
        if (q->plan == plan)
            return q;
    return p;
}

static bool placed(const struct np_entry *e)
{
    return e->outcome == NP_PLACED || e->outcome == NP_WOULD_PLACE;
}

const char *np_report_cpus(const struct np_report_plan *latest, const struct np_entry *e)
{
    const struct np_report_plan *p = plan_of(latest, e->plan);
    return !placed(e) ? NULL
           : e->slot >= 0 && e->slot < p->nslots ? p->slot_cpus[e->slot]
           : p->cpus;
}

const char *np_report_mem(const struct np_report_plan *latest, const struct np_entry *e)
{
    /* The memory policy: set on the thread itself at its start (under the
     * plan of then: a thread keeps it when a re-plan moves it); a thread
     * placed from outside keeps its own. */
    return !placed(e) ? NULL
           : e->how != NP_HOW_START ? "unchanged"
           : e->outcome == NP_PLACED && !e->mem_ok ? NULL
           : plan_of(latest, e->mem_plan)->mem;
}

static void entry(const struct np_entry *e, void *arg)
{
    struct listing *l = arg;
    struct np_json *j = l->j;
    const char *cpus = np_report_cpus(l->p, e);
    const char *mem = np_report_mem(l->p, e);
    np_json_open(j, NULL, '{', false);
    np_json_str(j, "name", e->name);
    if (np_entry_escaped(e) != NULL)
        np_json_str(j, "name_escaped", np_entry_escaped(e));
    np_json_int(j, "tid", e->tid);
    np_json_int(j, "seq", (long long)e->seq);
    np_json_str(j, "outcome", outcome_name(e->outcome));
    np_json_str(j, "how", np_how_name(e->how));
    np_json_bool(j, "live", e->live);
    np_json_str(j, "cpus", cpus);
    np_json_str(j, "mem", mem);
    if (e->outcome == NP_PLACED) {
        np_json_bool(j, "verified", e->cpu_ok && e->mem_ok);
        np_json_bool(j, "mem_inherited", mem != NULL && e->how == NP_HOW_START &&
                                             plan_of(l->p, e->mem_plan)->mem_inherited);
    } else {
        np_json_null(j, "verified");
        np_json_null(j, "mem_inherited");
    }
    np_json_str(j, "cpu_error", error_name(e->cpu_errno));
    np_json_str(j, "mem_error", error_name(e->mem_errno));
    np_json_int(j, "drift", e->drift);
    const struct np_access *ta =
        e->live && e->outcome == NP_PLACED && l->acc->process != NULL
            ? np_thread_access_find(l->acc->threads, l->acc->nthreads, e->tid)
            : NULL;
    if (ta != NULL)
        np_access_json(j, ta, l->mem_nodes);
    np_json_close(j);
}

void np_report_json(const struct np_report_plan *p, struct np_record *r, int keep_ended,
                    const struct np_report_advice *adv, const struct np_memory *m,
                    const struct np_report_access *acc, hwloc_const_bitmap_t mem_nodes,
                    FILE *out)
{
    char kind[32];
    struct np_counts c;
    struct np_json j;
    np_record_counts(r, &c);
    np_json_start(&j, out);
    np_json_open(&j, NULL, '{', true);
    np_json_int(&j, "numapin", NP_REPORT_VERSION);
    np_json_int(&j, "pid", getpid());
    np_json_open(&j, "plan", '{', false);
    np_json_int(&j, "group", p->group);
    np_json_int(&j, "groups", p->groups);
    np_json_str(&j, "domain", np_domain_name(p->domain));
    np_json_str(&j, "node", p->node);
    np_json_int(&j, "slice", p->slice);
    np_json_int(&j, "slices", p->slices);
    np_json_str(&j, "cpus", p->cpus);
    np_json_str(&j, "cpus_mode", np_cpus_mode_name(p->cpus_mode));
    np_json_str(&j, "cpukind", np_cpukind_name(p->cpukind, kind, sizeof kind));
    np_json_int(&j, "slots", p->nslots);
    np_json_str(&j, "mem", p->mem);
    np_json_bool(&j, "mem_inherited", p->mem_inherited);
    np_json_str(&j, "threads", p->threads);
    np_json_str(&j, "scope", np_scope_name(p->scope));
    np_json_bool(&j, "dryrun", p->dryrun);
    np_json_int(&j, "replans", p->plan);
    np_json_close(&j);
    np_json_open(&j, "totals", '{', false);
    np_json_int(&j, "placed", c.placed);
    np_json_int(&j, "would_place", c.would_place);
    np_json_int(&j, "skipped", c.skipped);
    np_json_int(&j, "failed", c.failed);
    np_json_int(&j, "mem_failed", c.mem_failed);
    np_json_int(&j, "live", c.live);
    np_json_int(&j, "drift", c.drift);
    np_json_close(&j);
    np_memory_json(&j, "memory", m, mem_nodes);
    np_json_open(&j, "access", '{', false);
    np_json_bool(&j, "sampled", acc->process != NULL);
    if (acc->process != NULL) {
        char *nodes = np_cpulist_dup(mem_nodes);
        np_json_str(&j, "nodes", nodes);
        free(nodes);
        np_access_json(&j, acc->process, mem_nodes);
    } else {
        np_json_str(&j, "unsampled", acc->unsampled);
    }
    np_json_close(&j);
    np_json_open(&j, "advice", '[', true);
    for (int i = 0; i < adv->n; i++) {
        np_json_open(&j, NULL, '{', false);
        np_json_str(&j, "level", np_level_name(adv->level[i]));
        np_json_str(&j, "text", adv->text[i]);
        np_json_close(&j);
    }
    np_json_close(&j);
    np_json_int(&j, "advice_dropped", adv->dropped);
    np_json_int(&j, "ended_kept", keep_ended);
    np_json_open(&j, "threads", '[', true);
    struct listing l = {p, &j, acc, mem_nodes};
    np_record_each(r, entry, &l);
    np_json_close(&j);
    np_json_close(&j);
}
