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

/* Adds `pages` 4 KiB pages on `node`, growing the table.  0, or -1 (ENOMEM). */
static int add(struct np_memory *m, long node, long long pages)
{
    if (node >= m->nnodes) {
        long long *p = realloc(m->pages, (size_t)(node + 1) * sizeof *p);
        if (p == NULL)
            return -1;
        memset(p + m->nnodes, 0, (size_t)(node + 1 - m->nnodes) * sizeof *p);
        m->pages = p;
        m->nnodes = (int)node + 1;
    }
    m->pages[node] += pages;
    return 0;
}

int np_memory_read(pid_t pid, struct np_memory *m)
{
    m->pages = NULL;
    m->nnodes = 0;
    char path[64];
    if (pid == 0)
        snprintf(path, sizeof path, "/proc/self/numa_maps");
    else
        snprintf(path, sizeof path, "/proc/%d/numa_maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    /* An empty table, not NULL: read, and no page anywhere. */
    m->pages = calloc(1, sizeof *m->pages);
    char *line = NULL;
    size_t cap = 0;
    int rc = m->pages != NULL ? 0 : -1;
    /* Each line: ADDRESS POLICY [key=value ...], with N<node>=<pages> in
     * pages of kernelpagesize_kB. */
    while (rc == 0 && getline(&line, &cap, f) > 0) {
        long long page_kb = BASE_KIB;
        char *ps = strstr(line, " kernelpagesize_kB=");
        if (ps != NULL)
            page_kb = strtoll(ps + 19, NULL, 10);
        if (page_kb < BASE_KIB)
            page_kb = BASE_KIB;
        for (char *p = strstr(line, " N"); p != NULL && rc == 0; p = strstr(p + 1, " N")) {
            char *eq;
            long node = strtol(p + 2, &eq, 10);
            if (eq == p + 2 || *eq != '=' || node < 0 || node > 4095)
                continue;
            long long pages = strtoll(eq + 1, NULL, 10);
            if (pages > 0)
                rc = add(m, node, pages * (page_kb / BASE_KIB));
        }
    }
    int e = errno;
    free(line);
    fclose(f);
    if (rc != 0) {
        np_memory_free(m);
        errno = e ? e : ENOMEM;
    }
    return rc;
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

#define BATCH 4096 /* pages per move_pages call */

struct mover {
    int *targets;       /* the target nodes, in turn */
    int ntargets, next;
    hwloc_const_bitmap_t nodes;
    void *query[BATCH]; /* pages to look at */
    int nquery;
    void *move[BATCH];  /* pages to move, and where */
    int to[BATCH];
    int nmove;
    int status[BATCH];
    struct np_move *r;
};

static int flush_moves(struct mover *mv)
{
    if (mv->nmove == 0)
        return 0;
    long rc = move_pages(0, (unsigned long)mv->nmove, mv->move, mv->to, mv->status, MPOL_MF_MOVE);
    if (rc < 0)
        return -1;
    for (int i = 0; i < mv->nmove; i++) {
        int s = mv->status[i];
        if (s >= 0 && hwloc_bitmap_isset(mv->nodes, (unsigned)s)) {
            mv->r->moved++;
        } else {
            mv->r->failed++;
            if (mv->r->fail_errno == 0)
                mv->r->fail_errno = s < 0 ? -s : EBUSY;
        }
    }
    mv->nmove = 0;
    return 0;
}

/* Asks where the queued pages are; queues those elsewhere for moving. */
static int flush_query(struct mover *mv)
{
    if (mv->nquery == 0)
        return 0;
    if (move_pages(0, (unsigned long)mv->nquery, mv->query, NULL, mv->status, 0) < 0)
        return -1;
    for (int i = 0; i < mv->nquery; i++) {
        int s = mv->status[i];
        if (s < 0)
            continue; /* not present (ENOENT), the zero page (EFAULT) */
        mv->r->resident++;
        if (hwloc_bitmap_isset(mv->nodes, (unsigned)s)) {
            mv->r->already++;
            continue;
        }
        mv->move[mv->nmove] = mv->query[i];
        mv->to[mv->nmove++] = mv->targets[mv->next];
        mv->next = (mv->next + 1) % mv->ntargets;
        if (mv->nmove == BATCH && flush_moves(mv) != 0)
            return -1;
    }
    mv->nquery = 0;
    return 0;
}

/* True for a line of /proc/self/maps naming a private writable mapping
 * whose pages may move: not the kernel's vdso, vvar or vsyscall pages. */
static int movable(const char *line, unsigned long *lo, unsigned long *hi)
{
    char perms[8] = "";
    int name_at = 0;
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", lo, hi, perms, &name_at) < 3)
        return 0;
    if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 'p')
        return 0;
    const char *name = name_at > 0 ? line + name_at : "";
    return strncmp(name, "[vvar", 5) != 0 && strncmp(name, "[vdso", 5) != 0 &&
           strncmp(name, "[vsyscall", 9) != 0;
}

int np_memory_move_self(hwloc_const_bitmap_t nodes, struct np_move *r)
{
    memset(r, 0, sizeof *r);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int n = hwloc_bitmap_weight(nodes);
    if (n <= 0) {
        errno = EINVAL;
        return -1;
    }
    if (numa_available() != 0) {
        errno = ENOSYS;
        return -1;
    }
    struct mover *mv = calloc(1, sizeof *mv);
    int *targets = calloc((size_t)n, sizeof *targets);
    FILE *maps = fopen("/proc/self/maps", "re");
    int rc = -1, e = ENOMEM;
    if (mv == NULL || targets == NULL || maps == NULL) {
        e = maps == NULL && mv != NULL && targets != NULL ? errno : ENOMEM;
        goto out;
    }
    int k = 0, node;
    NP_FOREACH(node, nodes)
        targets[k++] = node;
    *mv = (struct mover){.targets = targets, .ntargets = n, .nodes = nodes, .r = r};
    long page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
    char *line = NULL;
    size_t cap = 0;
    rc = 0;
    while (rc == 0 && getline(&line, &cap, maps) > 0) {
        unsigned long lo, hi;
        if (!movable(line, &lo, &hi))
            continue;
        for (unsigned long a = lo; rc == 0 && a < hi; a += (unsigned long)page) {
            mv->query[mv->nquery++] = (void *)a;
            if (mv->nquery == BATCH)
                rc = flush_query(mv);
        }
    }
    free(line);
    if (rc == 0)
        rc = flush_query(mv);
    if (rc == 0)
        rc = flush_moves(mv);
    e = errno;
out:
    if (maps != NULL)
        fclose(maps);
    free(targets);
    free(mv);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (rc != 0)
        errno = e;
    return rc;
}
