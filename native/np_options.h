/* np_options: the agent's option string, parsed and validated.
 *
 *   group=N,groups=N,threads=GLOB|GLOB,cpus=node|core|pu,
 *   mem=preferred|bind|interleave|local|none,log=LEVEL[:FILE],
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

enum np_cpus_mode { NP_CPUS_NODE, NP_CPUS_CORE, NP_CPUS_PU };

enum np_mem_mode {
    NP_MEM_PREFERRED,
    NP_MEM_BIND,
    NP_MEM_INTERLEAVE,
    NP_MEM_LOCAL,
    NP_MEM_NONE,
};

struct np_options {
    int group;          /* 0-based; default 0 */
    int groups;         /* 0 until set: the number of NUMA nodes with CPUs */
    char **patterns;    /* thread-name globs, NULL-terminated */
    int npatterns;
    char *threads;      /* the patterns as given, for the log */
    enum np_cpus_mode cpus;
    enum np_mem_mode mem;
    enum np_level log_level;
    char *log_file;     /* NULL: stdout */
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
const char *np_mem_mode_name(enum np_mem_mode m);

/* The option reference printed by the `help` option. */
const char *np_options_help(void);

#endif
