/* np_options: the agent's option string, parsed and validated.
 *
 *   group=N|auto,groups=N,threads=GLOB|GLOB,scope=threads|jvm,rescan=MS,
 *   domain=node|package|l3,
 *   cpus=node|core|pu,cpukind=performance|efficiency|any|N,
 *   mem=preferred|bind|interleave|local|none[:NODES],log=LEVEL[:FILE],
 *   dryrun,strict,help
 *
 * docs/options.md is the user-facing reference; np_options_help() prints
 * the same contract. */
#ifndef NP_OPTIONS_H
#define NP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "np_log.h"

#define NP_DEFAULT_THREADS "ForkJoinPool-*-worker-*|ForkJoinPool.commonPool-worker-*"
#define NP_MAX_GROUPS 4096
#define NP_MAX_OPTIONS_LEN 8192
#define NP_GROUP_AUTO (-1)          /* group=auto: claim the lowest free group */
#define NP_DEFAULT_RESCAN_MS 1000

/* What numapin places: the matching threads, or also the whole JVM. */
enum np_scope { NP_SCOPE_THREADS, NP_SCOPE_JVM };

enum np_cpus_mode { NP_CPUS_NODE, NP_CPUS_CORE, NP_CPUS_PU };

/* What one group is placed on. */
enum np_domain { NP_DOMAIN_NODE, NP_DOMAIN_PACKAGE, NP_DOMAIN_L3 };

/* Which CPU kind (hwloc cpukinds, hybrid machines) tier threads use:
 * >= 0 is a kind index in hwloc's order (0: least efficient). */
#define NP_CPUKIND_PERFORMANCE (-1) /* the most performant kind (default) */
#define NP_CPUKIND_EFFICIENCY (-2)  /* the most power-efficient kind */
#define NP_CPUKIND_ANY (-3)         /* every kind */

enum np_mem_mode {
    NP_MEM_PREFERRED,
    NP_MEM_BIND,
    NP_MEM_INTERLEAVE,
    NP_MEM_LOCAL,
    NP_MEM_NONE,
};

struct np_options {
    int group;          /* 0-based; default 0; NP_GROUP_AUTO */
    int groups;         /* 0 until set: the number of NUMA nodes with CPUs */
    char **patterns;    /* thread-name globs, NULL-terminated */
    int npatterns;
    char *threads;      /* the patterns as given, for the log */
    enum np_scope scope;
    int rescan_ms;      /* period of the renamed-thread rescan; 0: off */
    enum np_domain domain;
    enum np_cpus_mode cpus;
    int cpukind;        /* NP_CPUKIND_* or a kind index */
    enum np_mem_mode mem;
    char *mem_nodes;    /* mem=MODE:NODES: explicit nodes (cpulist syntax),
                           else NULL: the group's own nodes */
    enum np_level log_level;
    char *log_file;     /* NULL: stdout */
    char *report_file;  /* report=FILE, or NULL */
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

/* True when `name` matches one of the thread patterns (shell globs). */
bool np_options_match(const struct np_options *o, const char *name);

const char *np_cpus_mode_name(enum np_cpus_mode m);
const char *np_domain_name(enum np_domain d);
const char *np_scope_name(enum np_scope s);
/* "performance", "efficiency", "any", or the index, into buf. */
const char *np_cpukind_name(int kind, char *buf, size_t len);
const char *np_mem_mode_name(enum np_mem_mode m);

/* The option reference printed by the `help` option. */
const char *np_options_help(void);

#endif
