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

/* True for a numa_maps line of a mapping of the process's own: anonymous,
 * or anonymous huge pages (hugetlbfs's "/anon_hugepage"). */
static bool own_mapping(const char *line)
{
    const char *file = strstr(line, " file=");
    return file == NULL || strncmp(file + 6, "/anon_hugepage", 14) == 0;
}

int np_memory_read(pid_t pid, bool own, struct np_memory *m)
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
        if (own && !own_mapping(line))
            continue;
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
    if (np_memory_read(0, true, &m) != 0)
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
    if (np_memory_read(0, true, &m) == 0) {
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
