/* np_glob: the thread-name globs of threads= (and of `numapin check
 * --threads`): shell globs separated by '|'.
 *
 * Matching runs on every thread start, so a glob whose only wildcard is
 * '*' (the default ones) is matched byte by byte rather than by fnmatch(3),
 * which converts to wide characters in a UTF-8 locale; the answers are the
 * same. */
#ifndef NP_GLOB_H
#define NP_GLOB_H

#include <stdbool.h>

#define NP_DEFAULT_THREADS "ForkJoinPool-*-worker-*|ForkJoinPool.commonPool-worker-*"

/* The valid values, for error messages. */
#define NP_GLOBS_VALID                                                                      \
    "shell globs separated by '|', none empty, each '[' closed by a ']' and none ending in " \
    "'\\', e.g. 'Tier1-*|Tier2-*'"

struct np_globs {
    char **patterns;  /* NULL-terminated; all point into one buffer, patterns[0] */
    int n;
    char *text;       /* as given, for the log */
};

/* Parses `text` into *g, replacing what *g held (zeroed or parsed before).
 * Returns 0, or -1 (g unchanged) with errno EINVAL when text is not such a
 * list, ENOMEM. */
int np_globs_parse(const char *text, struct np_globs *g);

void np_globs_free(struct np_globs *g);

/* True when `name` matches one of the globs. */
bool np_globs_match(const struct np_globs *g, const char *name);

#endif
