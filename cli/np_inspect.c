#define _GNU_SOURCE
#include "np_inspect.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "np_json.h"
#include "np_memory.h"
#include "np_log.h"
#include "np_glob.h"

void np_inspect_named_free(struct np_named *n, int count)
{
    for (int i = 0; i < count; i++)
        free(n[i].name);
    free(n);
}

/* One thread-dump line: `"NAME" ... nid=ID ...`.  The name ends at the
 * last quote before " nid=" that is followed by a space (names may hold
 * quotes). */
static int parse_line(const char *line, size_t len, struct np_named *out)
{
    if (len < 2 || line[0] != '"')
        return -1;
    const char *end = line + len;
    const char *nid = memmem(line, len, " nid=", 5);
    if (nid == NULL)
        return -1;
    const char *close = NULL;
    for (const char *q = line + 1; q < nid; q++)
        if (*q == '"' && q + 1 < end && q[1] == ' ')
            close = q;
    if (close == NULL)
        return -1;
    const char *v = nid + 5;
    char *stop;
    errno = 0;
    long tid = strncmp(v, "0x", 2) == 0 ? strtol(v + 2, &stop, 16) : strtol(v, &stop, 10);
    if (errno != 0 || stop == v || tid <= 0 || tid > (1L << 30) || (stop < end && *stop != ' '))
        return -1;
    out->tid = (pid_t)tid;
    out->name = strndup(line + 1, (size_t)(close - line - 1));
    return out->name != NULL ? 0 : -2;
}

int np_inspect_parse_dump(const char *text, struct np_named **out)
{
    int n = 0, cap = 0;
    *out = NULL;
    for (const char *l = text; *l != '\0';) {
        const char *nl = strchr(l, '\n');
        size_t len = nl != NULL ? (size_t)(nl - l) : strlen(l);
        struct np_named t;
        int rc = parse_line(l, len, &t);
        if (rc == -2)
            goto oom;
        if (rc == 0) {
            if (n == cap) {
                int ncap = cap > 0 ? 2 * cap : 64;
                struct np_named *m = realloc(*out, (size_t)ncap * sizeof *m);
                if (m == NULL) {
                    free(t.name);
                    goto oom;
                }
                *out = m;
                cap = ncap;
            }
            (*out)[n++] = t;
        }
        l += len + (nl != NULL);
    }
    return n;
oom:
    np_inspect_named_free(*out, n);
    *out = NULL;
    return -1;
}

/* The kernel's name of a thread (or the process: tid == pid), newline cut. */
static void kernel_name(pid_t pid, pid_t tid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)pid, (int)tid);
    buf[0] = '\0';
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return;
    if (fgets(buf, (int)len, f) != NULL)
        buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

static const char *jvm_name(const struct np_named *names, int nnames, pid_t tid)
{
    for (int i = 0; i < nnames; i++)
        if (names[i].tid == tid)
            return names[i].name;
    return NULL;
}

/* One thread; returns 0, 1 when it is gone, -1 when memory runs out. */
static int look_at(const struct np_topo *t, pid_t pid, pid_t tid, const struct np_named *names,
                   int nnames, struct np_seen *s)
{
    memset(s, 0, sizeof *s);
    s->tid = tid;
    s->last_cpu = s->last_node = -1;
    hwloc_bitmap_t last = hwloc_bitmap_alloc();
    s->cpus = hwloc_bitmap_alloc();
    s->nodes = hwloc_bitmap_alloc();
    if (last == NULL || s->cpus == NULL || s->nodes == NULL) {
        hwloc_bitmap_free(last);
        return -1;
    }
    int gone = hwloc_get_proc_cpubind(t->topology, tid, s->cpus, HWLOC_CPUBIND_THREAD) != 0;
    if (!gone && hwloc_get_proc_last_cpu_location(t->topology, tid, last, HWLOC_CPUBIND_THREAD) == 0 &&
        hwloc_bitmap_weight(last) == 1) {
        s->last_cpu = hwloc_bitmap_first(last);
        s->last_node = np_topo_home(t, (unsigned)s->last_cpu);
    }
    hwloc_bitmap_free(last);
    if (gone)
        return 1;
    np_topo_home_nodes(t, s->cpus, s->nodes);
    const char *name = jvm_name(names, nnames, tid);
    char kname[64];
    if (name == NULL)
        kernel_name(pid, tid, kname, sizeof kname);
    s->jvm_name = name != NULL;
    s->name = strdup(name != NULL ? name : kname);
    return s->name != NULL ? 0 : -1;
}

static void seen_free(struct np_seen *s)
{
    free(s->name);
    hwloc_bitmap_free(s->cpus);
    hwloc_bitmap_free(s->nodes);
}

/* Resident memory per node (np_memory: /proc/PID/numa_maps), in KiB.
 * 0, or -1 when unreadable. */
static int memory(pid_t pid, struct np_inspect *c)
{
    struct np_memory m;
    np_memory_read(pid, true, &c->own);
    if (np_memory_read(pid, false, &m) != 0)
        return -1;
    c->node_kb = calloc((size_t)(m.nnodes > 0 ? m.nnodes : 1), sizeof *c->node_kb);
    if (c->node_kb == NULL) {
        np_memory_free(&m);
        return -1;
    }
    for (int n = 0; n < m.nnodes; n++)
        c->node_kb[n] = m.pages[n] * 4;
    c->nnode_kb = m.nnodes;
    np_memory_free(&m);
    return 0;
}

static int by_tid(const void *a, const void *b)
{
    pid_t x = ((const struct np_seen *)a)->tid, y = ((const struct np_seen *)b)->tid;
    return (x > y) - (x < y);
}

int np_inspect_collect(const struct np_topo *t, pid_t pid, const struct np_named *names, int nnames,
                     struct np_inspect *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->pid = pid;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL) {
        snprintf(err, errlen, "cannot list the threads of process %d: %s", (int)pid, strerror(errno));
        return -1;
    }
    kernel_name(pid, pid, c->command, sizeof c->command);
    int cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *stop;
        long tid = strtol(de->d_name, &stop, 10);
        if (de->d_name[0] == '.' || *stop != '\0' || tid <= 0)
            continue;
        if (c->nthreads == cap) {
            cap = cap > 0 ? 2 * cap : 64;
            struct np_seen *m = realloc(c->threads, (size_t)cap * sizeof *m);
            if (m == NULL)
                goto oom;
            c->threads = m;
        }
        int rc = look_at(t, pid, (pid_t)tid, names, nnames, &c->threads[c->nthreads]);
        if (rc < 0) {
            seen_free(&c->threads[c->nthreads]);
            goto oom;
        }
        if (rc > 0)
            seen_free(&c->threads[c->nthreads]); /* ended meanwhile */
        else
            c->nthreads++;
    }
    closedir(d);
    qsort(c->threads, (size_t)c->nthreads, sizeof *c->threads, by_tid);
    if (memory(pid, c) != 0) {
        free(c->node_kb);
        c->node_kb = NULL;
        c->nnode_kb = 0;
    }
    return 0;
oom:
    closedir(d);
    np_inspect_free(c);
    snprintf(err, errlen, "out of memory");
    return -1;
}

void np_inspect_free(struct np_inspect *c)
{
    for (int i = 0; i < c->nthreads; i++)
        seen_free(&c->threads[i]);
    free(c->threads);
    free(c->node_kb);
    np_memory_free(&c->own);
    memset(c, 0, sizeof *c);
}

/* The nodes the process's threads may run on (the group's, for a JVM
 * placed whole), into where.  0, or -1 when its own memory is unknown or
 * memory runs out. */
static int local_nodes(const struct np_inspect *c, hwloc_bitmap_t where)
{
    if (c->own.pages == NULL || where == NULL)
        return -1;
    for (int i = 0; i < c->nthreads; i++)
        hwloc_bitmap_or(where, where, c->threads[i].nodes);
    return 0;
}

static void print_text(const struct np_inspect *c, const struct np_globs *o, FILE *out)
{
    char cpus[1024], nodes[256], q[512];
    int shown = 0, named = 0;
    for (int i = 0; i < c->nthreads; i++)
        named += c->threads[i].jvm_name;
    np_quote(q, sizeof q, c->command);
    fprintf(out, "process pid=%d command=%s threads=%d jvm_names=%d\n", (int)c->pid, q, c->nthreads,
            named);
    for (int n = 0; n < c->nnode_kb; n++)
        if (c->node_kb[n] > 0)
            fprintf(out, "memory node=%d mib=%.1f\n", n, (double)c->node_kb[n] / 1024);
    hwloc_bitmap_t where = hwloc_bitmap_alloc();
    if (local_nodes(c, where) == 0) {
        char lnodes[256], lpages[1024], lshare[32];
        np_cpulist(lnodes, sizeof lnodes, where);
        np_memory_pages_str(lpages, sizeof lpages, &c->own);
        np_memory_share_str(lshare, sizeof lshare, &c->own, where);
        fprintf(out, "memory_local nodes=%s mem_pages=%s mem_local=%s\n", lnodes[0] ? lnodes : "none",
                lpages, lshare);
    }
    hwloc_bitmap_free(where);
    for (int i = 0; i < c->nthreads; i++) {
        const struct np_seen *s = &c->threads[i];
        if (o != NULL && !np_globs_match(o, s->name))
            continue;
        shown++;
        np_quote(q, sizeof q, s->name);
        np_cpulist(cpus, sizeof cpus, s->cpus);
        np_cpulist(nodes, sizeof nodes, s->nodes);
        fprintf(out, "thread %s tid=%d cpus=%s nodes=%s last_cpu=%d last_node=%d%s\n", q, (int)s->tid,
                cpus, nodes[0] ? nodes : "none", s->last_cpu, s->last_node,
                s->jvm_name ? "" : " name=kernel");
    }
    if (o != NULL)
        fprintf(out, "matched threads=%d\n", shown);
}

static void print_json(const struct np_inspect *c, const struct np_globs *o, FILE *out)
{
    struct np_json j;
    np_json_start(&j, out);
    np_json_open(&j, NULL, '{', true);
    np_json_int(&j, "pid", c->pid);
    np_json_str(&j, "command", c->command);
    if (c->node_kb == NULL) {
        np_json_null(&j, "memory_kib");
    } else {
        np_json_open(&j, "memory_kib", '{', false);
        for (int n = 0; n < c->nnode_kb; n++)
            if (c->node_kb[n] > 0) {
                char key[16];
                snprintf(key, sizeof key, "%d", n);
                np_json_int(&j, key, c->node_kb[n]);
            }
        np_json_close(&j);
    }
    hwloc_bitmap_t where = hwloc_bitmap_alloc();
    if (local_nodes(c, where) == 0)
        np_memory_json(&j, "memory", &c->own, where);
    else
        np_json_null(&j, "memory");
    hwloc_bitmap_free(where);
    np_json_open(&j, "threads", '[', true);
    for (int i = 0; i < c->nthreads; i++) {
        const struct np_seen *s = &c->threads[i];
        if (o != NULL && !np_globs_match(o, s->name))
            continue;
        char *cpus = np_cpulist_dup(s->cpus), *nodes = np_cpulist_dup(s->nodes);
        np_json_open(&j, NULL, '{', false);
        np_json_str(&j, "name", s->name);
        np_json_str(&j, "name_from", s->jvm_name ? "jvm" : "kernel");
        np_json_int(&j, "tid", s->tid);
        np_json_str(&j, "cpus", cpus);
        np_json_str(&j, "nodes", nodes);
        np_json_int(&j, "last_cpu", s->last_cpu);
        np_json_int(&j, "last_node", s->last_node);
        np_json_close(&j);
        free(cpus);
        free(nodes);
    }
    np_json_close(&j);
    np_json_close(&j);
}

void np_inspect_print(const struct np_inspect *c, const struct np_globs *filter, bool json, FILE *out)
{
    if (json)
        print_json(c, filter, out);
    else
        print_text(c, filter, out);
}
