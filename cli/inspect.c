#define _GNU_SOURCE
#include "inspect.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "np_advise.h"
#include "np_json.h"
#include "np_memory.h"
#include "np_log.h"
#include "np_glob.h"
#include "np_text.h"

void np_inspect_named_free(struct np_named *n, int count)
{
    for (int i = 0; i < count; i++) {
        free(n[i].name);
        free(n[i].escaped);
    }
    free(n);
}

/* One thread-dump line: `"NAME" ... nid=ID ...`.  HotSpot prints the name
 * as it is, so a name may hold quotes, " nid=" and line breaks: the id is
 * the last " nid=" of the line (nothing a thread names comes after it),
 * and the name ends at the last quote before it that is followed by a
 * space. */
static int parse_line(const char *line, size_t len, struct np_named *out)
{
    if (len < 2 || line[0] != '"')
        return -1;
    const char *end = line + len;
    const char *nid = NULL;
    for (const char *p = line; (p = memmem(p, (size_t)(end - p), " nid=", 5)) != NULL; p++)
        nid = p;
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
    out->escaped = NULL;
    char *raw = strndup(line + 1, (size_t)(close - line - 1));
    out->name = raw != NULL ? np_text_from_mutf8(raw, &out->escaped) : NULL;
    free(raw);
    return out->name != NULL ? 0 : -2;
}

static int by_named_tid(const void *a, const void *b)
{
    pid_t x = ((const struct np_named *)a)->tid, y = ((const struct np_named *)b)->tid;
    return (x > y) - (x < y);
}

/* Drops every thread id given more than once: a line break in a thread's
 * name can make a line that looks like another thread's record, and that
 * thread's own record is there too.  Returns the ids dropped. */
static int drop_ambiguous(struct np_named *t, int *n)
{
    if (*n < 2)
        return 0;
    qsort(t, (size_t)*n, sizeof *t, by_named_tid);
    int kept = 0, dropped = 0;
    for (int i = 0; i < *n;) {
        int j = i + 1;
        while (j < *n && t[j].tid == t[i].tid)
            j++;
        if (j - i == 1) {
            t[kept++] = t[i];
        } else {
            for (int k = i; k < j; k++) {
                free(t[k].name);
                free(t[k].escaped);
            }
            dropped++;
        }
        i = j;
    }
    *n = kept;
    return dropped;
}

int np_inspect_parse_dump(const char *text, struct np_named **out, int *ambiguous)
{
    int n = 0, cap = 0;
    *out = NULL;
    if (ambiguous != NULL)
        *ambiguous = 0;
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
                    free(t.escaped);
                    goto oom;
                }
                *out = m;
                cap = ncap;
            }
            (*out)[n++] = t;
        }
        l += len + (nl != NULL);
    }
    int dropped = drop_ambiguous(*out, &n);
    if (ambiguous != NULL)
        *ambiguous = dropped;
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

/* The id of thread `tid` (or the process: tid == pid) in the process's own
 * PID namespace: the last number of the NSpid line of its status; tid
 * itself without one (kernels before 4.1, no namespaces). */
static pid_t ns_id(pid_t pid, pid_t tid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
    FILE *f = fopen(path, "re");
    pid_t id = tid;
    if (f == NULL)
        return id;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "NSpid:", 6) != 0)
            continue;
        for (char *p = line + 6, *stop; *p != '\0' && *p != '\n'; p = stop) {
            long v = strtol(p, &stop, 10);
            if (stop == p)
                break;
            if (v > 0 && v <= (1L << 30))
                id = (pid_t)v;
        }
        break;
    }
    fclose(f);
    return id;
}

static const struct np_named *jvm_name(const struct np_named *names, int nnames, pid_t tid)
{
    for (int i = 0; i < nnames; i++)
        if (names[i].tid == tid)
            return &names[i];
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
    if (np_access_read(pid, tid, &s->access) != 0 && errno == ENOMEM)
        return -1;
    s->ns_tid = ns_id(pid, tid);
    const struct np_named *named = jvm_name(names, nnames, s->ns_tid);
    s->jvm_name = named != NULL;
    if (named != NULL) {
        s->name = strdup(named->name);
        s->escaped = named->escaped != NULL ? strdup(named->escaped) : NULL;
        return s->name != NULL && (named->escaped == NULL || s->escaped != NULL) ? 0 : -1;
    }
    /* The kernel's name: bytes, cut at 15, maybe inside a character. */
    char kname[64];
    kernel_name(pid, tid, kname, sizeof kname);
    s->name = np_text_from_mutf8(kname, &s->escaped);
    return s->name != NULL ? 0 : -1;
}

static void seen_free(struct np_seen *s)
{
    np_access_free(&s->access);
    free(s->name);
    free(s->escaped);
    hwloc_bitmap_free(s->planned);
    hwloc_bitmap_free(s->cpus);
    hwloc_bitmap_free(s->nodes);
}

/* Resident memory per node (np_memory: /proc/PID/numa_maps, each page
 * once): every page the process maps, in KiB, and its own.  0, or -1 when
 * unreadable. */
static int memory(pid_t pid, struct np_inspect *c)
{
    struct np_memory all;
    if (np_memory_read(pid, &c->own, &all) != 0)
        return -1;
    c->node_kb = calloc((size_t)(all.nnodes > 0 ? all.nnodes : 1), sizeof *c->node_kb);
    for (int n = 0; c->node_kb != NULL && n < all.nnodes; n++)
        c->node_kb[n] = all.pages[n] * 4;
    c->nnode_kb = c->node_kb != NULL ? all.nnodes : 0;
    np_memory_free(&all);
    if (c->node_kb == NULL) {
        np_memory_free(&c->own);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

/* One candidate of /proc/PID/fd: a descriptor whose link names numapin's
 * marker.  It is opened with O_PATH (which opens no device and blocks on
 * no FIFO) and checked to be a regular file on tmpfs, as a memfd is,
 * before it is reopened to be read; and it must be sealed against writing,
 * so what is read is a version whole.  Returns 0 with *m, or -1. */
static int read_one(int dirfd, const char *fd_name, struct np_marker *m)
{
    int path_fd = openat(dirfd, fd_name, O_PATH | O_CLOEXEC);
    if (path_fd < 0)
        return -1;
    struct stat st;
    struct statfs sf;
    int fd = -1, rc = -1;
    char self[64], *text = NULL;
    if (fstat(path_fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        st.st_size > NP_MARKER_MAX_BYTES || fstatfs(path_fd, &sf) != 0 ||
        sf.f_type != TMPFS_MAGIC)
        goto out;
    snprintf(self, sizeof self, "/proc/self/fd/%d", path_fd);
    if ((fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) < 0)
        goto out;
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & F_SEAL_WRITE) == 0 || (text = malloc((size_t)st.st_size)) == NULL)
        goto out;
    size_t len = 0;
    while (len < (size_t)st.st_size) {
        ssize_t r = pread(fd, text + len, (size_t)st.st_size - len, (off_t)len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    rc = len == (size_t)st.st_size ? np_marker_parse(text, len, m) : -1;
out:
    free(text);
    if (fd >= 0)
        close(fd);
    close(path_fd);
    return rc;
}

/* numapin's marker in process pid (whose own id in its PID namespace is
 * ns_pid): the newest whole one, when there are several (a refresh in
 * progress). */
static enum np_marker_state read_marker(pid_t pid, pid_t ns_pid, struct np_marker *out)
{
    char path[64], link[128];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return NP_MARKER_NONE;
    enum np_marker_state state = NP_MARKER_NONE;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        ssize_t n = readlinkat(dirfd(d), de->d_name, link, sizeof link - 1);
        if (n <= 0)
            continue;
        link[n] = '\0';
        if (strcmp(link, NP_MARKER_LINK) != 0)
            continue;
        struct np_marker m;
        memset(&m, 0, sizeof m);
        if (read_one(dirfd(d), de->d_name, &m) != 0 || m.pid != (long)ns_pid) {
            if (state == NP_MARKER_NONE)
                state = NP_MARKER_UNREADABLE;
            np_marker_free(&m);
            continue;
        }
        if (state == NP_MARKER_FOUND && m.seq <= out->seq) {
            np_marker_free(&m);
            continue;
        }
        if (state == NP_MARKER_FOUND)
            np_marker_free(out);
        *out = m;
        state = NP_MARKER_FOUND;
    }
    closedir(d);
    return state;
}

/* Each thread numapin's marker names gets the CPUs numapin set. */
static int plan_threads(struct np_inspect *c)
{
    for (int i = 0; i < c->marker.nthreads; i++) {
        const struct np_marker_thread *mt = &c->marker.threads[i];
        for (int k = 0; k < c->nthreads; k++) {
            struct np_seen *s = &c->threads[k];
            if (s->ns_tid == mt->tid && s->planned == NULL) {
                if ((s->planned = hwloc_bitmap_dup(mt->cpus)) == NULL)
                    return -1;
                break;
            }
        }
    }
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
        if (errno == ENOENT)
            snprintf(err, errlen, "process %d ended while being looked at", (int)pid);
        else
            snprintf(err, errlen, "cannot list the threads of process %d: %s", (int)pid,
                     strerror(errno));
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
    if (c->nthreads == 0) {
        np_inspect_free(c);
        snprintf(err, errlen, "process %d ended while being looked at", (int)pid);
        return -1;
    }
    qsort(c->threads, (size_t)c->nthreads, sizeof *c->threads, by_tid);
    for (int i = 0; i < c->nthreads; i++)
        if (np_access_add(&c->access, &c->threads[i].access) != 0)
            goto oom_closed;
    c->balancing = np_read_numa_balancing(NULL);
    c->now = (long long)time(NULL);
    c->marker_state = read_marker(pid, ns_id(pid, pid), &c->marker);
    if (c->marker_state == NP_MARKER_FOUND && plan_threads(c) != 0)
        goto oom_closed;
    if (memory(pid, c) != 0) {
        c->memory_errno = errno != 0 ? errno : EIO;
        free(c->node_kb);
        c->node_kb = NULL;
        c->nnode_kb = 0;
    }
    return 0;
oom:
    closedir(d);
oom_closed:
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
    if (c->marker_state == NP_MARKER_FOUND)
        np_marker_free(&c->marker);
    np_memory_free(&c->own);
    np_access_free(&c->access);
    memset(c, 0, sizeof *c);
}

/* A thread numapin placed whose CPUs are not the ones it set. */
static bool drifted(const struct np_seen *s)
{
    return s->planned != NULL && !hwloc_bitmap_isequal(s->cpus, s->planned);
}

/* The nodes the process's memory should be on, into where: numapin's
 * group's (its marker), or else those its threads may run on (the group's,
 * for a JVM placed whole).  0, or -1 when its own memory is unknown or
 * memory runs out. */
static int local_nodes(const struct np_inspect *c, hwloc_bitmap_t where)
{
    if (c->own.pages == NULL || where == NULL)
        return -1;
    if (c->marker_state == NP_MARKER_FOUND && c->marker.nodes != NULL) {
        hwloc_bitmap_copy(where, c->marker.nodes);
        return 0;
    }
    for (int i = 0; i < c->nthreads; i++)
        hwloc_bitmap_or(where, where, c->threads[i].nodes);
    return 0;
}

/* Whether the kernel samples the process's accesses: not where numapin's
 * marker says every thread has a policy it does not sample (the whole JVM
 * placed under mem=preferred, numapin's default), as the agent's summary
 * says; the few samples the kernel may still take there (the launcher's
 * first thread keeps the default policy, and can start a scan) would read
 * as a share of the JVM's accesses and are not one.  A note when no
 * thread has a sample yet. */
bool np_inspect_access_sampled(const struct np_inspect *c, char *buf, size_t len)
{
    int mem = c->marker_state == NP_MARKER_FOUND && c->marker.mem >= 0 ? c->marker.mem
                                                                        : NP_MEM_NONE;
    if (!np_access_sampled(buf, len, c->balancing, c->access.listed, (enum np_mem_mode)mem))
        return false;
    if (np_access_total(&c->access) == 0)
        snprintf(buf, len, "no sample yet: the kernel samples memory under no policy or under "
                           "numapin's mem=balancing, never under mem=preferred, bind, interleave "
                           "or local (nor numactl --membind), and only after its scan delay "
                           "(1 s by default)");
    return true;
}

void np_inspect_access_line(const struct np_inspect *c, char *buf, size_t len)
{
    char why[512], fields[128], nodes[256];
    buf[0] = '\0';
    hwloc_bitmap_t where = hwloc_bitmap_alloc();
    if (!np_inspect_access_sampled(c, why, sizeof why)) {
        snprintf(buf, len, "access unsampled: %s", why);
    } else if (local_nodes(c, where) == 0) {
        np_cpulist(nodes, sizeof nodes, where);
        np_access_fields(fields, sizeof fields, &c->access, where);
        snprintf(buf, len, "access_local nodes=%s%s%s%s", nodes[0] ? nodes : "none", fields,
                 why[0] ? " note=" : "", why);
    }
    hwloc_bitmap_free(where);
}

bool np_inspect_access_brief(const struct np_inspect *c, char *buf, size_t len)
{
    char why[512];
    bool sampled = np_inspect_access_sampled(c, why, sizeof why);
    np_inspect_access_line(c, buf, len);
    char *note = strstr(buf, " note=");
    if (note != NULL)
        *note = '\0';
    if (!sampled) {
        snprintf(buf, len, "access unsampled: %.*s (numapin check %d says why)",
                 (int)strcspn(why, ":("), why, (int)c->pid);
        if (strlen(buf) > 80)
            snprintf(buf, len, "access unsampled (numapin check %d says why)", (int)c->pid);
    }
    return sampled;
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
    if (c->node_kb == NULL)
        fprintf(out, "memory unknown: /proc/%d/numa_maps: %s (%s)%s\n", (int)c->pid,
                strerror(c->memory_errno), np_errno_name(c->memory_errno),
                c->memory_errno == EACCES ? "; run check as the process's user or root" : "");
    if (c->marker_state == NP_MARKER_UNREADABLE)
        fprintf(out, "numapin marker=unreadable\n");
    if (c->marker_state == NP_MARKER_FOUND) {
        const struct np_marker *m = &c->marker;
        int placed = 0, drift = 0;
        for (int i = 0; i < c->nthreads; i++) {
            placed += c->threads[i].planned != NULL;
            drift += drifted(&c->threads[i]);
        }
        snprintf(cpus, sizeof cpus, "none");
        snprintf(nodes, sizeof nodes, "none");
        if (m->cpus != NULL) {
            np_cpulist(cpus, sizeof cpus, m->cpus);
            np_cpulist(nodes, sizeof nodes, m->nodes);
        }
        fprintf(out, "numapin group=%d groups=%d replans=%u cpus=%s nodes=%s placed=%d drifted=%d "
                     "agent_drift=%d age_s=%lld\n",
                m->group, m->groups, m->plan, cpus, nodes, placed, drift, m->drift,
                c->now > m->time ? c->now - m->time : 0);
    }
    hwloc_bitmap_t where = hwloc_bitmap_alloc();
    if (local_nodes(c, where) == 0) {
        char lnodes[256], lpages[1024], lshare[32], lhuge[1024];
        np_cpulist(lnodes, sizeof lnodes, where);
        np_memory_pages_str(lpages, sizeof lpages, &c->own);
        np_memory_share_str(lshare, sizeof lshare, &c->own, where);
        np_memory_huge_str(lhuge, sizeof lhuge, &c->own);
        fprintf(out, "memory_local nodes=%s mem_pages=%s mem_local=%s mem_huge=%s\n",
                lnodes[0] ? lnodes : "none", lpages, lshare, lhuge);
    }
    hwloc_bitmap_free(where);
    char why[512], fields[128], access[1024];
    bool sampled = np_inspect_access_sampled(c, why, sizeof why);
    np_inspect_access_line(c, access, sizeof access);
    if (access[0])
        fprintf(out, "%s\n", access);
    for (int i = 0; i < c->nthreads; i++) {
        const struct np_seen *s = &c->threads[i];
        if (o != NULL && !np_globs_match(o, s->name))
            continue;
        shown++;
        np_quote(q, sizeof q, s->name);
        np_cpulist(cpus, sizeof cpus, s->cpus);
        np_cpulist(nodes, sizeof nodes, s->nodes);
        char ns[32] = "", planned[1100] = "";
        if (s->ns_tid != s->tid)
            snprintf(ns, sizeof ns, " nstid=%d", (int)s->ns_tid);
        if (s->planned != NULL) {
            char p[1024];
            np_cpulist(p, sizeof p, s->planned);
            snprintf(planned, sizeof planned, " planned=%s drift=%s", p, drifted(s) ? "yes" : "no");
        }
        fields[0] = '\0';
        if (sampled)
            np_access_fields(fields, sizeof fields, &s->access, s->nodes);
        fprintf(out, "thread %s tid=%d cpus=%s nodes=%s last_cpu=%d last_node=%d%s%s%s%s\n", q,
                (int)s->tid, cpus, nodes[0] ? nodes : "none", s->last_cpu, s->last_node, ns,
                s->jvm_name ? "" : " name=kernel", planned, fields);
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
        np_json_str(&j, "memory_error", np_errno_name(c->memory_errno));
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
    if (c->marker_state != NP_MARKER_FOUND) {
        np_json_null(&j, "numapin");
        np_json_bool(&j, "numapin_marker_unreadable", c->marker_state == NP_MARKER_UNREADABLE);
    } else {
        const struct np_marker *m = &c->marker;
        char *cpus = m->cpus != NULL ? np_cpulist_dup(m->cpus) : NULL;
        char *nodes = m->nodes != NULL ? np_cpulist_dup(m->nodes) : NULL;
        np_json_open(&j, "numapin", '{', false);
        np_json_int(&j, "group", m->group);
        np_json_int(&j, "groups", m->groups);
        np_json_int(&j, "replans", m->plan);
        np_json_str(&j, "cpus", cpus);
        np_json_str(&j, "nodes", nodes);
        np_json_int(&j, "agent_drift", m->drift);
        np_json_int(&j, "age_s", c->now > m->time ? c->now - m->time : 0);
        np_json_close(&j);
        free(cpus);
        free(nodes);
    }
    hwloc_bitmap_t where = hwloc_bitmap_alloc();
    if (local_nodes(c, where) == 0)
        np_memory_json(&j, "memory", &c->own, where);
    else
        np_json_null(&j, "memory");
    char why[512];
    bool sampled = np_inspect_access_sampled(c, why, sizeof why);
    np_json_open(&j, "access", '{', false);
    np_json_bool(&j, "sampled", sampled);
    if (sampled && local_nodes(c, where) == 0) {
        char *an = np_cpulist_dup(where);
        np_json_str(&j, "nodes", an);
        free(an);
        np_access_json(&j, &c->access, where);
    }
    if (why[0])
        np_json_str(&j, sampled ? "note" : "unsampled", why);
    np_json_close(&j);
    hwloc_bitmap_free(where);
    np_json_open(&j, "threads", '[', true);
    for (int i = 0; i < c->nthreads; i++) {
        const struct np_seen *s = &c->threads[i];
        if (o != NULL && !np_globs_match(o, s->name))
            continue;
        char *cpus = np_cpulist_dup(s->cpus), *nodes = np_cpulist_dup(s->nodes);
        np_json_open(&j, NULL, '{', false);
        np_json_str(&j, "name", s->name);
        if (s->escaped != NULL)
            np_json_str(&j, "name_escaped", s->escaped);
        np_json_str(&j, "name_from", s->jvm_name ? "jvm" : "kernel");
        np_json_int(&j, "tid", s->tid);
        np_json_int(&j, "ns_tid", s->ns_tid);
        np_json_str(&j, "cpus", cpus);
        np_json_str(&j, "nodes", nodes);
        np_json_int(&j, "last_cpu", s->last_cpu);
        np_json_int(&j, "last_node", s->last_node);
        char *planned = s->planned != NULL ? np_cpulist_dup(s->planned) : NULL;
        np_json_str(&j, "planned", planned);
        if (s->planned != NULL)
            np_json_bool(&j, "drift", drifted(s));
        else
            np_json_null(&j, "drift");
        free(planned);
        if (sampled)
            np_access_json(&j, &s->access, s->nodes);
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
