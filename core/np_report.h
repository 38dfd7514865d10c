/* np_report: the placement report (report=FILE), JSON.
 *
 * Read from the placement record, like the log lines and the summary: the
 * plan, the totals over every thread numapin saw, and an entry for each
 * thread the record holds (the live ones and the most recently ended).
 * The format is described in docs/report.md. */
#ifndef NP_REPORT_H
#define NP_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "np_access.h"
#include "np_log.h"
#include "np_memory.h"
#include "np_modes.h"
#include "np_record.h"

/* The report format's version, the document's "numapin" field. */
#define NP_REPORT_VERSION 4

/* The plan as the report shows it: the agent's prepared strings, as the
 * log shows them. */
struct np_report_plan {
    int group, groups;
    enum np_domain domain;
    const char *node;               /* the group's nodes, cpulist syntax */
    int slice, slices;              /* 1-based slice of the domain */
    const char *cpus;               /* the CPUs placed threads use */
    enum np_cpus_mode cpus_mode;
    int cpukind;
    int nslots;
    const char *const *slot_cpus;   /* each slot's CPUs (cpus=core|pu) */
    const char *mem;                /* the memory policy placed threads get */
    bool mem_inherited;             /* ... which they start with: the JVM's (scope=jvm) */
    const char *threads;            /* the thread globs as given */
    enum np_scope scope;
    bool dryrun;
    /* The plan's generation: 0 at start-up, one more each time the
     * process's cpuset changed it; and the plan before it (NULL at 0),
     * whose slots the threads that ended under it refer to. */
    unsigned plan;
    const struct np_report_plan *older;
};

/* A thread's CPUs and memory policy as the report shows them (and the
 * JFR events, agent/jfr.c): the CPUs it was placed on, or NULL when it was
 * not placed; the memory policy it was given, "unchanged" when it was
 * placed from outside (only a thread itself can set its own), or NULL when
 * it was not placed or setting the policy failed. */
/* `latest` is the latest plan; the entry's own plan is found among it and
 * the ones before (a re-plan). */
const char *np_report_cpus(const struct np_report_plan *latest, const struct np_entry *e);
const char *np_report_mem(const struct np_report_plan *latest, const struct np_entry *e);

/* The advice the agent gave, start-up and later, in the order given: the
 * lines it kept, and how many more it gave beyond those (the log has
 * them). */
struct np_report_advice {
    const char *const *text;        /* without the "advice: " of the log line */
    const enum np_level *level;
    int n;
    int dropped;
};

/* The kernel's sampled accesses (np_access.h) as the report gives them:
 * the process's (NULL where the kernel samples none, `unsampled` saying
 * why), and its threads' (`threads`, sorted by tid), of which each live
 * placed thread's is given in its entry. */
struct np_report_access {
    const struct np_access *process;
    const char *unsampled;
    const struct np_thread_access *threads;
    int nthreads;
};

/* Writes the report to out, with the advice `adv`, the process's memory
 * by node `m`, the accesses `acc`, and the shares of both on `mem_nodes`
 * (the group's).  Takes the record's lock while it lists the threads:
 * write to memory (open_memstream), not to a slow file. */
void np_report_json(const struct np_report_plan *p, struct np_record *r, int keep_ended,
                    const struct np_report_advice *adv, const struct np_memory *m,
                    const struct np_report_access *acc, hwloc_const_bitmap_t mem_nodes,
                    FILE *out);

#endif
