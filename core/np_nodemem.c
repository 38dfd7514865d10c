#define _GNU_SOURCE
#include "np_nodemem.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The token that ends just before `end` in [line, end): its start, or
 * NULL when there is none. */
static const char *prev_token(const char *line, const char *end, const char **tok_end)
{
    while (end > line && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\t'))
        end--;
    const char *start = end;
    while (start > line && start[-1] != ' ' && start[-1] != '\t')
        start--;
    *tok_end = end;
    return start < end ? start : NULL;
}

/* KEY=DIGITS in [tok, end), the number in *value; with `node`, the key
 * is KEY<digits> (N0, N1, ...), its number in *node. */
static bool key_value(const char *tok, const char *end, const char *key, long *node,
                      unsigned long long *value)
{
    size_t klen = strlen(key);
    if ((size_t)(end - tok) <= klen || memcmp(tok, key, klen) != 0)
        return false;
    const char *p = tok + klen;
    if (node != NULL) {
        const char *d = p;
        *node = 0;
        while (p < end && *p >= '0' && *p <= '9' && *node < 1000000)
            *node = *node * 10 + (*p++ - '0');
        if (p == d)
            return false;
    }
    if (p >= end || *p++ != '=' || p >= end)
        return false;
    *value = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9' || *value > (~0ULL - 9) / 10)
            return false;
        *value = *value * 10 + (unsigned long long)(*p - '0');
    }
    return true;
}

/* Room for node `node` in m.  Returns 0 or -1. */
static int grow(struct np_nodemem *m, long node)
{
    if (node < m->n)
        return 0;
    unsigned long long *b = realloc(m->bytes, (size_t)(node + 1) * sizeof *b);
    if (b == NULL)
        return -1;
    memset(b + m->n, 0, (size_t)(node + 1 - m->n) * sizeof *b);
    m->bytes = b;
    m->n = (int)node + 1;
    return 0;
}

int np_nodemem_line(const char *line, struct np_nodemem *m)
{
    /* "ADDR POLICY [file=PATH|heap|stack] [huge] [anon=N] [dirty=N]
     * [active=N] [mapped=N] [mapmax=N] [swapcache=N] [writeback=N]
     * N0=PAGES ... kernelpagesize_kB=K", read from its end, where the
     * counts are: the kernel escapes spaces and '=' in file names, and
     * what comes before the counts is not needed.  A mapping with pages
     * always shows one of anon=, dirty= or mapped= just before them. */
    static const char *const before[] = {"anon", "dirty", "active", "mapped", "mapmax",
                                         "swapcache", "writeback"};
    const char *end = line + strlen(line), *tok_end;
    const char *tok = prev_token(line, end, &tok_end);
    unsigned long long page_kb, v;
    long node, top = -1;
    if (tok == NULL || !key_value(tok, tok_end, "kernelpagesize_kB", NULL, &page_kb))
        return 0; /* no pages resident */
    const char *counts_end = tok;
    while ((tok = prev_token(line, tok, &tok_end)) != NULL &&
           key_value(tok, tok_end, "N", &node, &v))
        if (node <= NP_NODEMEM_MAX_NODE && node > top)
            top = node;
    bool known = false;
    for (size_t i = 0; tok != NULL && !known && i < sizeof before / sizeof *before; i++)
        known = key_value(tok, tok_end, before[i], NULL, &v);
    if (!known || top < 0)
        return 0;
    if (grow(m, top) != 0)
        return -1;
    for (const char *t = counts_end; (t = prev_token(line, t, &tok_end)) != NULL &&
                                     key_value(t, tok_end, "N", &node, &v);)
        if (node <= NP_NODEMEM_MAX_NODE)
            m->bytes[node] += v * page_kb * 1024;
    return 0;
}

int np_nodemem_read(const char *path, struct np_nodemem *m)
{
    m->bytes = NULL;
    m->n = 0;
    FILE *f = fopen(path != NULL ? path : "/proc/self/numa_maps", "re");
    if (f == NULL)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    int e = 0;
    while (e == 0 && getline(&line, &cap, f) >= 0)
        if (np_nodemem_line(line, m) != 0)
            e = ENOMEM;
    if (e == 0 && ferror(f))
        e = EIO;
    free(line);
    fclose(f);
    if (e != 0) {
        np_nodemem_free(m);
        errno = e;
        return -1;
    }
    return 0;
}

void np_nodemem_free(struct np_nodemem *m)
{
    free(m->bytes);
    m->bytes = NULL;
    m->n = 0;
}
