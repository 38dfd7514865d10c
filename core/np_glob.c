#define _GNU_SOURCE
#include "np_glob.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* One glob: every '[' opens a bracket expression closed by a ']' (a ']'
 * right after "[" or "[!" or "[^" is a member, "[:class:]" is one item),
 * and no '\\' ends it.  fnmatch(3) would take such a pattern literally,
 * which is never what was meant. */
static bool balanced(const char *p, const char *end)
{
    while (p < end) {
        if (*p == '\\') {
            if (p + 1 >= end)
                return false;
            p += 2;
        } else if (*p == '[') {
            p++;
            if (p < end && (*p == '!' || *p == '^'))
                p++;
            if (p < end && *p == ']')
                p++;
            while (p < end && *p != ']') {
                if (*p == '[' && p + 1 < end && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
                    char kind = p[1];
                    const char *q = p + 2;
                    while (q + 1 < end && !(q[0] == kind && q[1] == ']'))
                        q++;
                    if (q + 1 >= end)
                        return false;
                    p = q + 2;
                } else if (*p == '\\' && p + 1 < end) {
                    p += 2;
                } else {
                    p++;
                }
            }
            if (p >= end)
                return false;
            p++;
        } else {
            p++;
        }
    }
    return true;
}

int np_globs_parse(const char *v, struct np_globs *g)
{
    size_t len = strlen(v);
    if (len == 0 || v[0] == '|' || v[len - 1] == '|' || strstr(v, "||") != NULL) {
        errno = EINVAL;
        return -1;
    }
    for (const char *p = v; *p; ) {
        const char *bar = strchr(p, '|');
        const char *end = bar != NULL ? bar : p + strlen(p);
        if (!balanced(p, end)) {
            errno = EINVAL;
            return -1;
        }
        p = bar != NULL ? bar + 1 : end;
    }
    int n = 1;
    for (const char *p = v; *p; p++)
        n += *p == '|';
    char *copy = strdup(v);
    char **pats = calloc((size_t)n + 1, sizeof *pats);
    char *threads = strdup(v);
    if (copy == NULL || pats == NULL || threads == NULL) {
        free(copy);
        free(pats);
        free(threads);
        errno = ENOMEM;
        return -1;
    }
    /* pats[i] point into one buffer owned by pats[0]. */
    int i = 0;
    char *save = NULL;
    for (char *t = strtok_r(copy, "|", &save); t; t = strtok_r(NULL, "|", &save))
        pats[i++] = t;
    np_globs_free(g);
    g->patterns = pats;
    g->n = n;
    g->text = threads;
    return 0;
}

void np_globs_free(struct np_globs *g)
{
    if (g->patterns != NULL)
        free(g->patterns[0]);
    free(g->patterns);
    free(g->text);
    g->patterns = NULL;
    g->text = NULL;
    g->n = 0;
}

/* fnmatch for a pattern whose only wildcard is '*', byte by byte: the
 * same answer (a literal UTF-8 sequence matches only at character
 * boundaries). */
static bool star_match(const char *p, const char *s)
{
    const char *star = NULL, *resume = NULL;
    while (*s != '\0') {
        if (*p == '*') {
            star = p++;
            resume = s;
        } else if (*p == *s) {
            p++;
            s++;
        } else if (star != NULL) {
            p = star + 1;
            s = ++resume;
        } else {
            return false;
        }
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}

bool np_globs_match(const struct np_globs *g, const char *name)
{
    for (int i = 0; i < g->n; i++) {
        const char *p = g->patterns[i];
        if (strpbrk(p, "?[\\") == NULL ? star_match(p, name) : fnmatch(p, name, 0) == 0)
            return true;
    }
    return false;
}
