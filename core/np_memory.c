#define _GNU_SOURCE
#include "np_memory.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "np_cpulist.h"
#include "np_json.h"

#define BASE_KIB 4

/* Room for node `node` in m.  0, or -1 (ENOMEM). */
static int grow(struct np_memory *m, long node)
{
    if (node < m->nnodes)
        return 0;
    long long *p = realloc(m->pages, (size_t)(node + 1) * sizeof *p);
    if (p == NULL)
        return -1;
    memset(p + m->nnodes, 0, (size_t)(node + 1 - m->nnodes) * sizeof *p);
    m->pages = p;
    m->nnodes = (int)node + 1;
    return 0;
}

/* The token that ends just before `end` in [line, end): its start, or
 * NULL when there is none; its end in *tok_end. */
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

/* True for a mapping of the process's own: no file, hugetlbfs's
 * anonymous huge pages, or a memfd (ZGC's heap is one).  The third token
 * names the file, if any: the kernel escapes spaces and '=' in file
 * names. */
static bool own_mapping(const char *line)
{
    const char *p = line;
    for (int skip = 0; skip < 2 && p != NULL; skip++)
        if ((p = strchr(p, ' ')) != NULL)
            p++;
    return p == NULL || strncmp(p, "file=", 5) != 0 || strncmp(p + 5, "/anon_hugepage", 14) == 0 ||
           strncmp(p + 5, "/memfd:", 7) == 0;
}

int np_memory_line(const char *line, struct np_memory *own, struct np_memory *all)
{
    /* "ADDR POLICY [file=PATH|heap|stack] [huge] [anon=N] [dirty=N]
     * [active=N] [mapped=N] [mapmax=N] [swapcache=N] [writeback=N]
     * N0=PAGES ... kernelpagesize_kB=K", read from its end, where the
     * counts are.  A mapping with pages always shows one of anon=, dirty=
     * or mapped= just before them. */
    static const char *const before[] = {"anon", "dirty", "active", "mapped", "mapmax",
                                         "swapcache", "writeback"};
    struct np_memory *to[2] = {all, own_mapping(line) ? own : NULL};
    if (to[0] == NULL && to[1] == NULL)
        return 0;
    const char *end = line + strlen(line), *tok_end;
    const char *tok = prev_token(line, end, &tok_end);
    unsigned long long page_kib, v;
    long node, top = -1;
    if (tok == NULL || !key_value(tok, tok_end, "kernelpagesize_kB", NULL, &page_kib))
        return 0; /* no pages resident */
    if (page_kib < BASE_KIB)
        page_kib = BASE_KIB;
    const char *counts_end = tok;
    while ((tok = prev_token(line, tok, &tok_end)) != NULL &&
           key_value(tok, tok_end, "N", &node, &v))
        if (node <= NP_MEMORY_MAX_NODE && node > top)
            top = node;
    bool known = false;
    for (size_t i = 0; tok != NULL && !known && i < sizeof before / sizeof *before; i++)
        known = key_value(tok, tok_end, before[i], NULL, &v);
    if (!known || top < 0)
        return 0;
    for (int k = 0; k < 2; k++)
        if (to[k] != NULL && grow(to[k], top) != 0)
            return -1;
    for (const char *t = counts_end; (t = prev_token(line, t, &tok_end)) != NULL &&
                                     key_value(t, tok_end, "N", &node, &v);)
        for (int k = 0; k < 2 && node <= NP_MEMORY_MAX_NODE; k++)
            if (to[k] != NULL)
                to[k]->pages[node] += (long long)(v * (page_kib / BASE_KIB));
    return 0;
}

int np_memory_read_file(const char *path, struct np_memory *own, struct np_memory *all)
{
    struct np_memory *m[2] = {own, all};
    for (int k = 0; k < 2; k++)
        if (m[k] != NULL)
            *m[k] = (struct np_memory){NULL, 0};
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    /* An empty table, not NULL: read, and no page anywhere. */
    int e = 0;
    for (int k = 0; k < 2; k++)
        if (m[k] != NULL && grow(m[k], 0) != 0)
            e = ENOMEM;
    char *line = NULL;
    size_t cap = 0;
    while (e == 0 && getline(&line, &cap, f) >= 0)
        if (np_memory_line(line, own, all) != 0)
            e = ENOMEM;
    if (e == 0 && ferror(f))
        e = EIO;
    free(line);
    fclose(f);
    if (e != 0) {
        for (int k = 0; k < 2; k++)
            if (m[k] != NULL)
                np_memory_free(m[k]);
        errno = e;
        return -1;
    }
    return 0;
}

int np_memory_read(pid_t pid, struct np_memory *own, struct np_memory *all)
{
    char path[64];
    if (pid == 0)
        snprintf(path, sizeof path, "/proc/self/numa_maps");
    else
        snprintf(path, sizeof path, "/proc/%d/numa_maps", (int)pid);
    return np_memory_read_file(path, own, all);
}

void np_memory_free(struct np_memory *m)
{
    free(m->pages);
    m->pages = NULL;
    m->nnodes = 0;
}

long long np_memory_total(const struct np_memory *m)
{
    long long t = 0;
    for (int n = 0; m->pages != NULL && n < m->nnodes; n++)
        t += m->pages[n];
    return t;
}

long long np_memory_on(const struct np_memory *m, hwloc_const_bitmap_t nodes)
{
    long long t = 0;
    for (int n = 0; m->pages != NULL && n < m->nnodes; n++)
        if (hwloc_bitmap_isset(nodes, (unsigned)n))
            t += m->pages[n];
    return t;
}

void np_memory_pages_str(char *buf, size_t len, const struct np_memory *m)
{
    if (len == 0)
        return;
    snprintf(buf, len, "%s", m->pages == NULL ? "unknown" : "none");
    size_t o = 0;
    for (int n = 0; m->pages != NULL && n < m->nnodes && o < len; n++) {
        if (m->pages[n] == 0)
            continue;
        int w = snprintf(buf + o, len - o, "%s%d:%lld", o ? "," : "", n, m->pages[n]);
        if (w < 0)
            break;
        o += (size_t)w;
    }
}

void np_memory_share_str(char *buf, size_t len, const struct np_memory *m,
                         hwloc_const_bitmap_t nodes)
{
    long long total = np_memory_total(m);
    if (total <= 0) {
        snprintf(buf, len, "unknown");
        return;
    }
    long long on = np_memory_on(m, nodes);
    /* In tenths of a percent, rounded down: 100.0% only when all are. */
    long long tenths = on * 1000 / total;
    snprintf(buf, len, "%lld.%lld%%", tenths / 10, tenths % 10);
}

void np_memory_json(struct np_json *j, const char *key, const struct np_memory *m,
                    hwloc_const_bitmap_t nodes)
{
    if (m->pages == NULL) {
        np_json_null(j, key);
        return;
    }
    char list[256], num[16];
    np_json_open(j, key, '{', false);
    np_json_int(j, "page_kib", BASE_KIB);
    np_json_open(j, "mem_pages", '{', false);
    for (int n = 0; n < m->nnodes; n++)
        if (m->pages[n] > 0) {
            snprintf(num, sizeof num, "%d", n);
            np_json_int(j, num, m->pages[n]);
        }
    np_json_close(j);
    np_cpulist(list, sizeof list, nodes);
    np_json_str(j, "nodes", list);
    long long total = np_memory_total(m), on = np_memory_on(m, nodes);
    np_json_int(j, "local_pages", on);
    if (total > 0)
        np_json_num(j, "mem_local", (double)(on * 1000 / total) / 10, 1);
    else
        np_json_null(j, "mem_local");
    np_json_close(j);
}

/* ---- moving this process's pages ---------------------------------------- */

/* True for a line of /proc/self/maps naming a mapping of the process's own
 * memory (as np_memory_read counts it) whose pages may move: private,
 * writable and anonymous ([heap], [stack], no name, anonymous huge pages),
 * not the kernel's vdso, vvar or vsyscall pages, nor a file's. */
static int movable(const char *line, unsigned long *lo, unsigned long *hi)
{
    char perms[8] = "";
    int name_at = 0;
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", lo, hi, perms, &name_at) < 3)
        return 0;
    if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 'p')
        return 0;
    const char *name = name_at > 0 ? line + name_at : "";
    if (*name == '\n' || *name == '\0' || strncmp(name, "/anon_hugepage", 14) == 0)
        return 1;
    return *name == '[' && strncmp(name, "[vvar", 5) != 0 && strncmp(name, "[vdso", 5) != 0 &&
           strncmp(name, "[vsyscall", 9) != 0;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int np_memory_move_self(const struct np_policy *p, hwloc_const_bitmap_t nodes, struct np_move *r)
{
    memset(r, 0, sizeof *r);
    double t0 = now_ms();
    if (p->mode < 0 || p->error != 0 || p->mask == NULL) {
        errno = p->mode < 0 ? EINVAL : p->error != 0 ? p->error : ENOSYS;
        return -1;
    }
    struct np_memory m;
    if (np_memory_read(0, &m, NULL) != 0)
        return -1;
    r->before = np_memory_on(&m, nodes);
    long long total_before = np_memory_total(&m);
    np_memory_free(&m);
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL)
        return -1;
    /* The mappings first, then mbind: mbind may merge mappings, which
     * changes the file being read. */
    unsigned long (*ranges)[2] = NULL;
    int n = 0, cap = 0, e = 0;
    char *line = NULL;
    size_t len = 0;
    while (getline(&line, &len, maps) > 0) {
        unsigned long lo, hi;
        if (!movable(line, &lo, &hi))
            continue;
        if (n == cap) {
            int ncap = cap > 0 ? 2 * cap : 256;
            unsigned long (*g)[2] = realloc(ranges, (size_t)ncap * sizeof *g);
            if (g == NULL) {
                e = ENOMEM;
                break;
            }
            ranges = g;
            cap = ncap;
        }
        ranges[n][0] = lo;
        ranges[n++][1] = hi;
    }
    free(line);
    fclose(maps);
    for (int i = 0; e == 0 && i < n; i++) {
        long rc = mbind((void *)ranges[i][0], ranges[i][1] - ranges[i][0], p->mode,
                        p->empty ? NULL : p->mask, p->empty ? 0 : p->nbits + 1, MPOL_MF_MOVE);
        if (rc == 0) {
            r->mappings++;
        } else if (errno != EFAULT && errno != ENOMEM) {
            /* EFAULT, ENOMEM: the mapping went away meanwhile. */
            if (r->refused++ == 0)
                r->fail_errno = errno;
        }
    }
    free(ranges);
    if (e != 0) {
        errno = e;
        return -1;
    }
    if (r->mappings == 0 && r->refused > 0) {
        errno = r->fail_errno;
        return -1;
    }
    if (np_memory_read(0, &m, NULL) == 0) {
        r->resident = np_memory_total(&m);
        r->after = np_memory_on(&m, nodes);
        /* What came there, less what the process allocated meanwhile. */
        long long grown = r->resident > total_before ? r->resident - total_before : 0;
        r->moved = r->after - r->before - grown > 0 ? r->after - r->before - grown : 0;
        np_memory_free(&m);
    }
    r->ms = now_ms() - t0;
    return 0;
}
