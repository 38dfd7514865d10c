#define _GNU_SOURCE
#include "np_report.h"

#include <string.h>
#include <unistd.h>

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

/* A string field, or null. */
static void field(FILE *out, const char *key, const char *value, const char *sep)
{
    fprintf(out, "\"%s\": ", key);
    if (value != NULL)
        np_json_string(out, value);
    else
        fputs("null", out);
    fputs(sep, out);
}

/* An errno's name, or NULL for none (JSON null). */
static const char *error_name(int e)
{
    return e != 0 ? np_errno_name(e) : NULL;
}

struct listing {
    struct np_agent *a;
    FILE *out;
    int n;
};

static void entry(const struct np_entry *e, void *arg)
{
    struct listing *l = arg;
    const struct np_agent *a = l->a;
    FILE *out = l->out;
    bool placed = e->outcome == NP_PLACED || e->outcome == NP_WOULD_PLACE;
    bool at_start = strcmp(e->how, "start") == 0;
    const char *cpus = !placed ? NULL : e->slot >= 0 ? a->slot_cpus_str[e->slot] : a->place_cpus_str;
    /* The memory policy: set on the thread itself at its start; a thread
     * placed from outside keeps its own. */
    const char *mem = !placed ? NULL
                      : !at_start ? "unchanged"
                      : e->outcome == NP_PLACED && !e->mem_ok ? NULL
                      : a->mem_str;
    fprintf(out, "%s\n    {", l->n++ > 0 ? "," : "");
    field(out, "name", e->name, ", ");
    fprintf(out, "\"tid\": %d, \"seq\": %lu, ", (int)e->tid, e->seq);
    field(out, "outcome", outcome_name(e->outcome), ", ");
    field(out, "how", e->how, ", ");
    fprintf(out, "\"live\": %s, ", e->live ? "true" : "false");
    field(out, "cpus", cpus, ", ");
    field(out, "mem", mem, ", ");
    if (e->outcome == NP_PLACED)
        fprintf(out, "\"verified\": %s, ", e->cpu_ok && e->mem_ok ? "true" : "false");
    else
        fputs("\"verified\": null, ", out);
    field(out, "cpu_error", error_name(e->cpu_errno), ", ");
    field(out, "mem_error", error_name(e->mem_errno), "}");
}

void np_report_json(struct np_agent *a, FILE *out)
{
    char kind[32];
    struct np_counts c;
    np_record_counts(&a->record, &c);
    fprintf(out, "{\n  \"numapin\": %d,\n  \"pid\": %d,\n", NP_REPORT_VERSION, (int)getpid());
    fprintf(out, "  \"plan\": {\"group\": %d, \"groups\": %d, ", a->opt.group, a->opt.groups);
    field(out, "domain", np_domain_name(a->opt.domain), ", ");
    field(out, "node", a->node_list, ", ");
    fprintf(out, "\"slice\": %d, \"slices\": %d, ", a->mine->slice + 1, a->mine->nslices);
    field(out, "cpus", a->place_cpus_str, ", ");
    field(out, "cpus_mode", np_cpus_mode_name(a->opt.cpus), ", ");
    field(out, "cpukind", np_cpukind_name(a->opt.cpukind, kind, sizeof kind), ", ");
    fprintf(out, "\"slots\": %d, ", a->nslots);
    field(out, "mem", a->mem_str, ", ");
    field(out, "threads", a->opt.threads.text, ", ");
    field(out, "scope", np_scope_name(a->opt.scope), ", ");
    fprintf(out, "\"dryrun\": %s},\n", a->opt.dryrun ? "true" : "false");
    fprintf(out, "  \"totals\": {\"placed\": %d, \"would_place\": %d, \"skipped\": %d, \"failed\": %d, "
                 "\"mem_failed\": %d, \"live\": %d},\n",
            c.placed, c.would_place, c.skipped, c.failed, c.mem_failed, c.live);
    fprintf(out, "  \"ended_kept\": %d,\n  \"threads\": [", a->record.keep_ended);
    struct listing l = {a, out, 0};
    np_record_each(&a->record, entry, &l);
    fputs(l.n > 0 ? "\n  ]\n}\n" : "]\n}\n", out);
}
