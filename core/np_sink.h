/* np_sink: a listener to what the agent does, told as it happens and, when
 * it starts listening late, what happened before.
 *
 * agent/jfr.c is the one sink: while a JFR recording runs it turns the
 * plan, the advice lines and each placement into JFR events.  The core
 * stays JVM-free: it calls the sink's functions with plain data, and costs
 * nothing while the sink does not listen (one atomic load a placement).
 *
 * Listening goes in epochs.  np_agent_listen starts one (a new recording):
 * the sink is told the plan, every advice line so far and every placement
 * the record holds (live threads and the most recently ended ones),
 * `earlier` set.  Until np_agent_unlisten, each new placement and advice
 * line is told as it happens.  In each epoch a placement and an advice
 * line are told once, whether they happen before, during or after the
 * epoch's start (np_record_claim).
 *
 * The sink's functions run on any thread: a placement at a thread's start
 * on that thread, one from outside on the rescan or attaching thread, the
 * replay on the thread that calls np_agent_listen; concurrently, and never
 * under a lock of numapin's. */
#ifndef NP_SINK_H
#define NP_SINK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#include "np_log.h"
#include "np_record.h"
#include "np_report.h"

/* One placement, as the report shows it (np_report_cpus, np_report_mem). */
struct np_placement_event {
    const char *name;      /* the thread's name, as numapin matched it */
    pid_t tid;             /* its OS thread id */
    int group;
    const char *nodes;     /* the group's nodes, cpulist syntax */
    const char *cpus;      /* the CPUs it was placed on */
    const char *mem;       /* the memory policy it was given; "unchanged" when
                              placed from outside; NULL when setting it failed */
    const char *mem_error; /* the errno name when setting the policy failed */
    enum np_how how;
    bool verified;         /* read back as placed */
    bool live;             /* the thread still runs */
    bool earlier;          /* placed before this epoch, told at its start */
};

struct np_sink {
    atomic_uint epoch;     /* 0: not listening; set by np_agent_listen/unlisten */
    void (*plan)(struct np_sink *s, const struct np_report_plan *p);
    void (*placement)(struct np_sink *s, const struct np_placement_event *e);
    void (*advice)(struct np_sink *s, enum np_level level, const char *text);
};

/* Advice lines kept for a sink that starts listening later. */
#define NP_ADVICE_KEEP 32

struct np_advice_line {
    char *text;            /* without the "advice: " of the log line */
    enum np_level level;
    unsigned told;         /* the epoch it was told in, 0 for none */
};

struct np_agent;

/* Installs the sink, before any callback can run (agent/agent.c, right
 * after np_agent_create).  s may be NULL: no sink. */
void np_agent_set_sink(struct np_agent *a, struct np_sink *s);

/* Logs "advice: TEXT" at `level`, keeps the line for a sink that listens
 * later, and tells the sink now when it listens.  A line at debug level
 * (a repeat of a warn-once advice) is only logged. */
void np_agent_advise(struct np_agent *a, enum np_level level, const char *text);

/* A placement is done (the record says so): tells the sink when it
 * listens.  Costs one atomic load when it does not. */
void np_agent_tell(struct np_agent *a, struct np_ref ref);

/* Starts a new epoch and tells the sink the plan, the advice so far and
 * every placement the record holds.  Returns how many placements it told,
 * or -1 when memory ran out for them (the sink was told the rest).  Called
 * by the sink's own thread; one caller at a time. */
int np_agent_listen(struct np_agent *a);

/* The sink stops listening (no recording runs any longer). */
void np_agent_unlisten(struct np_agent *a);

/* The advice lines kept, for the report: out's arrays point into text[]
 * and level[] (NP_ADVICE_KEEP each), which are filled; the texts stay the
 * agent's until np_agent_sink_free. */
void np_agent_advice_kept(struct np_agent *a, struct np_report_advice *out,
                          const char *text[NP_ADVICE_KEEP], enum np_level level[NP_ADVICE_KEEP]);

/* Frees the advice lines kept; for np_agent_destroy. */
void np_agent_sink_free(struct np_agent *a);

#endif
