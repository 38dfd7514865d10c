/* np_options: the agent's option string, parsed and validated.
 *
 *   group=N|auto,groups=N,lockdir=DIR,threads=GLOB|GLOB,scope=jvm|threads,
 *   rescan=MS,drift=restore|log,domain=node|package|l3,
 *   cpus=node|core|pu,cpukind=performance|efficiency|any|N,
 *   mem=preferred|bind|interleave|local|none|balancing[:NODES],log=LEVEL[:FILE],
 *   logsync,report=FILE,jfr=on|off,topocache=DIR|off,dryrun,strict,help
 *
 * docs/options.md is the user-facing reference; np_options_help() prints
 * the same contract. */
#ifndef NP_OPTIONS_H
#define NP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "np_glob.h"
#include "np_log.h"
#include "np_modes.h"

#define NP_MAX_OPTIONS_LEN 8192
#define NP_GROUP_AUTO (-1)          /* group=auto: claim the lowest free group */
#define NP_DEFAULT_RESCAN_MS 1000

struct np_options {
    int group;          /* 0-based; default 0; NP_GROUP_AUTO */
    int groups;         /* 0 until set: the number of NUMA nodes with CPUs */
    char *lock_dir;     /* lockdir=DIR (group=auto), or NULL: the default */
    struct np_globs threads; /* thread names to place */
    enum np_scope scope; /* after np_options_resolve: the scope in effect */
    bool scope_given;   /* scope= was in the option string */
    int rescan_ms;      /* period of the rescan (renamed threads, drift, cpuset); 0: off */
    enum np_drift_mode drift;
    enum np_domain domain;
    enum np_cpus_mode cpus;
    int cpukind;        /* NP_CPUKIND_* or a kind index */
    enum np_mem_mode mem;
    char *mem_nodes;    /* mem=MODE:NODES: explicit nodes (cpulist syntax),
                           else NULL: the group's own nodes */
    enum np_level log_level;
    char *log_file;     /* NULL: stdout */
    bool log_given;     /* log= was in the string */
    bool log_sync;      /* logsync: placement lines written by the placed thread */
    char *report_file;  /* report=FILE, or NULL */
    bool jfr;           /* JFR events while a recording runs (default on) */
    char *topocache_dir; /* topocache=DIR, or NULL: the default directory */
    bool topocache_off; /* topocache=off: the topology is discovered every time */
    bool dryrun;
    bool strict;
    bool help;
};

/* Parses `s` (NULL or "" gives the defaults) into *o.  On error returns -1,
 * writes one message naming the option and its valid values into err, and
 * still fills in log= when it was valid, so the error can go to the log
 * the user asked for.  *o must be released with np_options_free() either
 * way. */
int np_options_parse(const char *s, struct np_options *o, char *err, size_t errlen);

void np_options_free(struct np_options *o);

/* Settles what depends on the group count, once it is known (groups= or
 * the machine's default): the scope, unless scope= was given, is jvm when
 * groups > 1 (a JVM given its group lives on it: heap, GC and JIT threads
 * included) and threads for one group (the whole machine, where binding the
 * process changes nothing). */
void np_options_resolve(struct np_options *o, int groups);

/* Why the scope in effect is what it is, for the plan line: "given",
 * "the default with more than one group" or "the default with one group". */
const char *np_options_scope_why(const struct np_options *o);

/* The option reference printed by the `help` option. */
const char *np_options_help(void);

#endif
