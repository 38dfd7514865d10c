#define _GNU_SOURCE
#include "np_access.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Grows a->faults to hold node `node`. */
static int reserve(struct np_access *a, int node)
{
    if (node < a->nnodes)
        return 0;
    long long *f = realloc(a->faults, (size_t)(node + 1) * sizeof *f);
    if (f == NULL) {
        errno = ENOMEM;
        return -1;
    }
    memset(f + a->nnodes, 0, (size_t)(node + 1 - a->nnodes) * sizeof *f);
    a->faults = f;
    a->nnodes = node + 1;
    return 0;
}

int np_access_parse(FILE *f, struct np_access *a)
{
    memset(a, 0, sizeof *a);
    char *line = NULL;
    size_t len = 0;
    int rc = 0;
    while (rc == 0 && getline(&line, &len, f) > 0) {
        int node;
        long long priv, shared, moved;
        if (sscanf(line, "numa_faults node=%d task_private=%lld task_shared=%lld", &node, &priv,
                   &shared) == 3) {
            if (node < 0 || node > NP_ACCESS_MAX_NODE || priv < 0 || shared < 0)
                continue;
            a->listed = true;
            if (reserve(a, node) != 0)
                rc = -1;
            else
                a->faults[node] += priv + shared;
        } else if (sscanf(line, "numa_pages_migrated %*[ :] %lld", &moved) == 1 && moved >= 0) {
            a->migrated = moved;
        }
    }
    free(line);
    if (rc != 0) {
        np_access_free(a);
        errno = ENOMEM;
    }
    return rc;
}

int np_access_read(pid_t pid, pid_t tid, struct np_access *a)
{
    char path[96];
    if (pid == 0)
        snprintf(path, sizeof path, "/proc/self/task/%d/sched", (int)tid);
    else
        snprintf(path, sizeof path, "/proc/%d/task/%d/sched", (int)pid, (int)tid);
    memset(a, 0, sizeof *a);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    int rc = np_access_parse(f, a);
    int e = errno;
    fclose(f);
    errno = e;
    return rc;
}

int np_access_add(struct np_access *a, const struct np_access *b)
{
    if (b->nnodes > 0 && reserve(a, b->nnodes - 1) != 0)
        return -1;
    for (int n = 0; n < b->nnodes; n++)
        a->faults[n] += b->faults[n];
    a->migrated += b->migrated;
    a->listed = a->listed || b->listed;
    return 0;
}

void np_access_free(struct np_access *a)
{
    free(a->faults);
    memset(a, 0, sizeof *a);
}

static int by_tid(const void *x, const void *y)
{
    pid_t a = ((const struct np_thread_access *)x)->tid, b = ((const struct np_thread_access *)y)->tid;
    return (a > b) - (a < b);
}

int np_access_read_threads(pid_t pid, struct np_thread_access **list, int *n,
                           struct np_access *sum)
{
    char path[64];
    if (pid == 0)
        snprintf(path, sizeof path, "/proc/self/task");
    else
        snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    *list = NULL;
    *n = 0;
    memset(sum, 0, sizeof *sum);
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    int rc = 0, cap = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        char *end;
        long tid = strtol(de->d_name, &end, 10);
        if (de->d_name[0] == '.' || *end != '\0' || tid <= 0)
            continue;
        if (*n == cap) {
            int ncap = cap > 0 ? 2 * cap : 64;
            struct np_thread_access *g = realloc(*list, (size_t)ncap * sizeof *g);
            if (g == NULL) {
                rc = -1;
                break;
            }
            *list = g;
            cap = ncap;
        }
        struct np_thread_access *t = &(*list)[*n];
        t->tid = (pid_t)tid;
        if (np_access_read(pid, t->tid, &t->access) != 0) {
            if (errno == ENOMEM)
                rc = -1;
            continue; /* ended meanwhile, or no sched file: not listed */
        }
        (*n)++;
        rc = np_access_add(sum, &t->access);
    }
    closedir(d);
    if (rc != 0) {
        np_thread_access_free(*list, *n);
        *list = NULL;
        *n = 0;
        np_access_free(sum);
        errno = ENOMEM;
        return -1;
    }
    if (*n > 0)
        qsort(*list, (size_t)*n, sizeof **list, by_tid);
    return 0;
}

const struct np_access *np_thread_access_find(const struct np_thread_access *list, int n,
                                              pid_t tid)
{
    struct np_thread_access key = {.tid = tid};
    const struct np_thread_access *t =
        list != NULL && n > 0 ? bsearch(&key, list, (size_t)n, sizeof *list, by_tid) : NULL;
    return t != NULL ? &t->access : NULL;
}

void np_thread_access_free(struct np_thread_access *list, int n)
{
    for (int i = 0; list != NULL && i < n; i++)
        np_access_free(&list[i].access);
    free(list);
}

long long np_access_total(const struct np_access *a)
{
    long long t = 0;
    for (int n = 0; n < a->nnodes; n++)
        t += a->faults[n];
    return t;
}

long long np_access_on(const struct np_access *a, hwloc_const_bitmap_t nodes)
{
    long long t = 0;
    for (int n = 0; n < a->nnodes; n++)
        if (hwloc_bitmap_isset(nodes, (unsigned)n))
            t += a->faults[n];
    return t;
}

long long np_access_permille(const struct np_access *a, hwloc_const_bitmap_t nodes)
{
    long long total = np_access_total(a);
    return total > 0 ? np_access_on(a, nodes) * 1000 / total : -1;
}

void np_access_fields(char *buf, size_t len, const struct np_access *a,
                      hwloc_const_bitmap_t nodes)
{
    long long permille = np_access_permille(a, nodes);
    char share[48] = "none";
    if (permille >= 0)
        snprintf(share, sizeof share, "%lld.%lld%%", permille / 10, permille % 10);
    snprintf(buf, len, " access_local=%s access_samples=%lld access_migrated=%lld", share,
             np_access_total(a), a->migrated);
}

void np_access_json(struct np_json *j, const struct np_access *a, hwloc_const_bitmap_t nodes)
{
    long long permille = np_access_permille(a, nodes);
    if (permille >= 0)
        np_json_num(j, "access_local", (double)permille / 10, 1);
    else
        np_json_null(j, "access_local");
    np_json_int(j, "access_samples", np_access_total(a));
    np_json_int(j, "access_migrated", a->migrated);
}

bool np_access_sampled(char *buf, size_t len, int balancing, bool listed, enum np_mem_mode mem)
{
    buf[0] = '\0';
    if (balancing == 0) {
        snprintf(buf, len, "kernel.numa_balancing=0: the kernel samples no memory access "
                           "(sysctl -w kernel.numa_balancing=1 turns its sampling on)");
    } else if (balancing < 0 || !listed) {
        snprintf(buf, len, "this kernel keeps no NUMA fault counts by thread (/proc/PID/task/TID/"
                           "sched without numa_faults lines: it needs CONFIG_NUMA_BALANCING and "
                           "CONFIG_SCHED_DEBUG)");
    } else if ((balancing & 1) == 0) {
        snprintf(buf, len, "kernel.numa_balancing=%d samples only memory on slower tiers, not "
                           "ordinary nodes (1 or 3 samples them)", balancing);
    } else if (mem != NP_MEM_NONE && mem != NP_MEM_BALANCING) {
        snprintf(buf, len, "the kernel samples no access to memory under a %s policy (mem=%s); "
                           "mem=balancing binds it and lets the kernel sample it",
                 np_mem_mode_name(mem), np_mem_mode_name(mem));
    }
    return buf[0] == '\0';
}
