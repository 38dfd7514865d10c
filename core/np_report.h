/* np_report: the placement report (report=FILE), JSON.
 *
 * Read from the placement record, like the log lines and the summary: the
 * plan, the totals over every thread numapin saw, and an entry for each
 * thread the record holds (the live ones and the most recently ended).
 * The format is described in docs/report.md. */
#ifndef NP_REPORT_H
#define NP_REPORT_H

#include <stdio.h>

#include "np_agent.h"

/* The report format's version, the document's "numapin" field. */
#define NP_REPORT_VERSION 1

/* Writes the report to out.  Takes the record's lock while it lists the
 * threads: write to memory (open_memstream), not to a slow file. */
void np_report_json(struct np_agent *a, FILE *out);

#endif
