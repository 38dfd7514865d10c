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

#include "np_memory.h"
#include "np_modes.h"
#include "np_record.h"

/* The report format's version, the document's "numapin" field. */
#define NP_REPORT_VERSION 1

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
    const char *threads;            /* the thread globs as given */
    enum np_scope scope;
    bool dryrun;
};

/* Writes the report to out, with the process's memory by node `m` and the
 * share of it on `mem_nodes` (the group's).  Takes the record's lock while
 * it lists the threads: write to memory (open_memstream), not to a slow
 * file. */
void np_report_json(const struct np_report_plan *p, struct np_record *r, int keep_ended,
                    const struct np_memory *m, hwloc_const_bitmap_t mem_nodes, FILE *out);

#endif
