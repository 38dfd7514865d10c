/* What the agent tells its sink (np_sink.h): the plan, advice lines and
 * placements, as they happen and again at the start of each epoch. */
#define _GNU_SOURCE
#include "np_agent.h"
#include "np_targets.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Guards the advice lines and the epochs handed out.  The agent is one a
 * process, so the lock is this file's. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void np_agent_set_sink(struct np_agent *a, struct np_sink *s)
{
    a->sink = s;
}

/* The epoch the sink listens in, or 0. */
static unsigned epoch(const struct np_agent *a)
{
    return a->sink != NULL ? atomic_load(&a->sink->epoch) : 0;
}

void np_agent_advise(struct np_agent *a, enum np_level level, const char *text)
{
    np_log(level, "advice: %s", text);
    if (level > NP_LOG_INFO || level == NP_LOG_OFF)
        return;
    pthread_mutex_lock(&lock);
    unsigned ep = epoch(a); /* under the lock: np_agent_listen sets it there */
    if (a->nadvice < NP_ADVICE_KEEP) {
        char *copy = strdup(text);
        if (copy != NULL)
            a->advice[a->nadvice++] = (struct np_advice_line){copy, level, ep};
        else
            a->advice_dropped++;
    } else {
        a->advice_dropped++;
    }
    pthread_mutex_unlock(&lock);
    if (ep != 0)
        a->sink->advice(a->sink, level, text);
}

void np_agent_advice_kept(struct np_agent *a, struct np_report_advice *out,
                          const char *text[NP_ADVICE_KEEP], enum np_level level[NP_ADVICE_KEEP])
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < a->nadvice; i++) {
        text[i] = a->advice[i].text;
        level[i] = a->advice[i].level;
    }
    *out = (struct np_report_advice){text, level, a->nadvice, a->advice_dropped};
    pthread_mutex_unlock(&lock);
}

/* The latest targets with CPUs (while the cpuset leaves the group none,
 * the last ones it had), whose report plan leads to every older one. */
static const struct np_targets *latest(const struct np_agent *a)
{
    const struct np_targets *t = np_agent_targets(a);
    while (t->none && t->older != NULL)
        t = t->older;
    return t;
}

static void event_of(const struct np_agent *a, const struct np_entry *e, bool earlier,
                     struct np_placement_event *out)
{
    const struct np_targets *t = latest(a);
    const struct np_targets *own = np_targets_find(t, e->plan);
    *out = (struct np_placement_event){
        .name = e->name, .tid = e->tid, .group = a->opt.group, .nodes = own->node_list,
        .cpus = np_report_cpus(&t->report_plan, e), .mem = np_report_mem(&t->report_plan, e),
        .mem_error = e->mem_errno != 0 ? np_errno_name(e->mem_errno) : NULL, .how = e->how,
        .verified = e->cpu_ok && e->mem_ok, .live = e->live, .earlier = earlier,
    };
}

void np_agent_tell(struct np_agent *a, struct np_ref ref)
{
    unsigned ep = epoch(a);
    if (ep == 0)
        return;
    struct np_entry copy;
    if (!np_record_claim(a->record, ref, ep, &copy))
        return; /* told already in this epoch, by np_agent_listen */
    struct np_placement_event ev;
    event_of(a, &copy, false, &ev);
    a->sink->placement(a->sink, &ev);
    free(copy.name);
}

int np_agent_listen(struct np_agent *a)
{
    if (!a->active || a->sink == NULL)
        return 0;
    struct np_advice_line lines[NP_ADVICE_KEEP];
    int n = 0;
    pthread_mutex_lock(&lock);
    unsigned ep = ++a->sink_epochs;
    if (ep == 0)
        ep = ++a->sink_epochs;
    /* Set before the record is read: a placement settled after that read
     * sees this epoch, and tells itself. */
    atomic_store(&a->sink->epoch, ep);
    for (int i = 0; i < a->nadvice; i++)
        if (a->advice[i].told != ep) {
            a->advice[i].told = ep;
            lines[n] = a->advice[i];
            if ((lines[n].text = strdup(a->advice[i].text)) != NULL)
                n++;
        }
    pthread_mutex_unlock(&lock);

    a->sink->plan(a->sink, &latest(a)->report_plan);
    for (int i = 0; i < n; i++) {
        a->sink->advice(a->sink, lines[i].level, lines[i].text);
        free(lines[i].text);
    }
    struct np_entry *placed;
    int np = np_record_claim_all(a->record, ep, &placed);
    for (int i = 0; i < np; i++) {
        struct np_placement_event ev;
        event_of(a, &placed[i], true, &ev);
        a->sink->placement(a->sink, &ev);
    }
    np_record_copies_free(placed, np);
    return np;
}

void np_agent_unlisten(struct np_agent *a)
{
    if (a->sink != NULL)
        atomic_store(&a->sink->epoch, 0);
}

void np_agent_sink_free(struct np_agent *a)
{
    for (int i = 0; i < a->nadvice; i++)
        free(a->advice[i].text);
    a->nadvice = 0;
}
