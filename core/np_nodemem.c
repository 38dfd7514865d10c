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

void np_nodemem_line(const char *line, unsigned long long *bytes, int nnodes)
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
    long node;
    if (tok == NULL || !key_value(tok, tok_end, "kernelpagesize_kB", NULL, &page_kb))
        return; /* no pages resident */
    const char *counts_end = tok;
    while ((tok = prev_token(line, tok, &tok_end)) != NULL &&
           key_value(tok, tok_end, "N", &node, &v))
        ;
    bool known = false;
    for (size_t i = 0; tok != NULL && !known && i < sizeof before / sizeof *before; i++)
        known = key_value(tok, tok_end, before[i], NULL, &v);
    if (!known)
        return;
    for (const char *t = counts_end; (t = prev_token(line, t, &tok_end)) != NULL &&
                                     key_value(t, tok_end, "N", &node, &v);)
        if (node < nnodes)
            bytes[node] += v * page_kb * 1024;
}

int np_nodemem_read(const char *path, unsigned long long *bytes, int nnodes)
{
    FILE *f = fopen(path != NULL ? path : "/proc/self/numa_maps", "re");
    if (f == NULL)
        return -1;
    memset(bytes, 0, (size_t)nnodes * sizeof *bytes);
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) >= 0)
        np_nodemem_line(line, bytes, nnodes);
    int e = ferror(f) ? EIO : 0;
    free(line);
    fclose(f);
    if (e != 0) {
        errno = e;
        return -1;
    }
    return 0;
}
