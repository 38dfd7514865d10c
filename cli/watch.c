/* `numapin check PID --watch [SECONDS]`: a live view of a running JVM.
 *
 * Everything comes from /proc and hwloc, read from outside: the JVM is
 * never stopped or signalled (its Java names were taken once, before, by
 * check).  Between frames the CPU each thread runs on is sampled ten times
 * a second (hwloc_get_proc_last_cpu_location); migrations are the
 * kernel's count (se.nr_migrations in /proc/PID/task/TID/sched), or, where
 * the kernel has none, the CPU changes the samples saw. */
#define _GNU_SOURCE
#include "watch.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "np_cpulist.h"
#include "np_log.h"

#define SAMPLES_PER_SECOND 10
#define NAME_WIDTH 24
#define CPUS_WIDTH 14

/* ------------------------------------------------------------ the frame */

struct text {
    char *buf;
    size_t len, cap;
    bool oom;
    int cols;
    bool tty;
};

static void add(struct text *t, const char *s, size_t n)
{
    if (t->oom)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->len + n + 1) * 2;
        char *m = realloc(t->buf, cap);
        if (m == NULL) {
            t->oom = true;
            return;
        }
        t->buf = m;
        t->cap = cap;
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

/* One line: cut at the width (counting characters, not bytes), and, on a
 * terminal, erasing the rest of the line. */
static void line(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(struct text *t, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t n = strlen(buf);
    if (t->cols > 0) {
        int chars = 0;
        for (size_t i = 0; i < n; i++)
            if (((unsigned char)buf[i] & 0xc0) != 0x80 && ++chars > t->cols) {
                n = i;
                break;
            }
    }
    add(t, buf, n);
    if (t->tty)
        add(t, "\033[K", 3);
    add(t, "\n", 1);
}

/* `s` in exactly `width` characters: control bytes and broken UTF-8 as
 * '?' (a thread's name must not drive the terminal), cut with '~'. */
static void cell(char *out, size_t len, const char *s, int width)
{
    size_t o = 0;
    int chars = 0;
    const unsigned char *p = (const unsigned char *)s;
    size_t total = 0;
    for (const unsigned char *q = p; *q; q++)
        total += (*q & 0xc0) != 0x80;
    while (*p != '\0' && chars < width && o + 5 < len) {
        if (chars == width - 1 && total > (size_t)width) {
            out[o++] = '~';
            chars++;
            break;
        }
        int k = *p < 0x80 ? 1 : *p >= 0xc2 && *p < 0xe0 ? 2 : *p >= 0xe0 && *p < 0xf0 ? 3
                : *p >= 0xf0 && *p <= 0xf4 ? 4 : 0;
        bool ok = k > 0;
        for (int i = 1; ok && i < k; i++)
            ok = (p[i] & 0xc0) == 0x80;
        if (!ok || *p < 0x20 || *p == 0x7f) {
            out[o++] = '?';
            p++;
        } else {
            memcpy(out + o, p, (size_t)k);
            o += (size_t)k;
            p += k;
        }
        chars++;
    }
    while (chars++ < width && o + 1 < len)
        out[o++] = ' ';
    out[o] = '\0';
}

static const char *kind_name(enum cli_kind k)
{
    return k == CLI_TIER ? "tier" : k == CLI_JVM_OWN ? "jvm" : "other";
}

static int row_order(const struct cli_watch_view *v, int a, int b)
{
    enum cli_kind x = v->stats[a].kind, y = v->stats[b].kind;
    if (x != y)
        return (int)x - (int)y;
    return (v->now->threads[a].tid > v->now->threads[b].tid) -
           (v->now->threads[a].tid < v->now->threads[b].tid);
}

static long long kb_at(const long long *kb, int n, int node)
{
    return kb != NULL && node < n ? kb[node] : 0;
}

int cli_watch_frame(const struct cli_watch_view *v, int cols, int rows, bool tty, char **out,
                    size_t *len)
{
    struct text t = {.cols = cols, .tty = tty};
    const struct np_inspect *c = v->now;
    int counts[3] = {0, 0, 0};
    for (int i = 0; i < c->nthreads; i++)
        counts[v->stats[i].kind]++;
    char q[128];
    np_quote(q, sizeof q, c->command);
    if (tty)
        add(&t, "\033[H", 3);
    line(&t, "numapin check %d %s  threads %d: %d tier, %d other, %d jvm%s", (int)c->pid, q,
         c->nthreads, counts[CLI_TIER], counts[CLI_OTHER], counts[CLI_JVM_OWN],
         tty ? "  (q quits)" : "");
    line(&t, "%s", v->plan);
    line(&t, "frame %d, %.1f s, %d samples/s", v->frame, v->elapsed, SAMPLES_PER_SECOND);
    int used = 3;
    line(&t, "%-5s %12s %12s %12s", "node", "RSS MiB", "change", "since start");
    used++;
    if (c->node_kb == NULL) {
        line(&t, "      (memory per node unknown: /proc/%d/numa_maps unreadable)", (int)c->pid);
        used++;
    }
    for (int n = 0; n < c->nnode_kb; n++) {
        long long kb = c->node_kb[n], prev = kb_at(v->prev_kb, v->nprev_kb, n),
                  first = kb_at(v->first_kb, v->nfirst_kb, n);
        if (kb == 0 && prev == 0 && first == 0)
            continue;
        line(&t, "%-5d %12.1f %+12.1f %+12.1f", n, (double)kb / 1024, (double)(kb - prev) / 1024,
             (double)(kb - first) / 1024);
        used++;
    }
    line(&t, "%7s %-*s %-5s %-*s %4s %4s %5s %6s", "TID", NAME_WIDTH, "NAME", "KIND", CPUS_WIDTH,
         "CPUS", "NOW", "NODE", "HOME%", "MIGR");
    used++;
    int *order = malloc(((size_t)c->nthreads + 1) * sizeof *order), shown = 0, n = 0;
    if (order == NULL) {
        free(t.buf);
        return -1;
    }
    for (int i = 0; i < c->nthreads; i++)
        if (v->filter == NULL || np_globs_match(v->filter, c->threads[i].name))
            order[n++] = i;
    /* Insertion sort: a few hundred rows at most, in order already mostly. */
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && row_order(v, order[k - 1], order[k]) > 0; k--) {
            int x = order[k];
            order[k] = order[k - 1];
            order[k - 1] = x;
        }
    bool kernel_names = false;
    for (int r = 0; r < n; r++) {
        if (rows > 0 && used >= rows - 1 && r < n - 1) {
            line(&t, "... %d more threads (a taller terminal, or --threads, shows them)", n - r);
            used++;
            break;
        }
        const struct np_seen *s = &c->threads[order[r]];
        const struct cli_watch_thread *st = &v->stats[order[r]];
        char name[NAME_WIDTH * 4 + 8], cpus[CPUS_WIDTH * 4 + 8], list[1024], marked[512];
        snprintf(marked, sizeof marked, "%s%s", s->name,
                 v->names_from_jvm && !s->jvm_name ? "*" : "");
        kernel_names |= v->names_from_jvm && !s->jvm_name;
        cell(name, sizeof name, marked, NAME_WIDTH);
        np_cpulist(list, sizeof list, s->cpus);
        cell(cpus, sizeof cpus, list, CPUS_WIDTH);
        char now[16], node[16], home[16], mig[24];
        snprintf(now, sizeof now, s->last_cpu >= 0 ? "%d" : "-", s->last_cpu);
        snprintf(node, sizeof node, s->last_node >= 0 ? "%d" : "-", s->last_node);
        if (st->samples > 0)
            snprintf(home, sizeof home, "%ld%%", (st->home * 100 + st->samples / 2) / st->samples);
        else
            snprintf(home, sizeof home, "-");
        snprintf(mig, sizeof mig, st->migrations >= 0 ? "%lld" : "-", st->migrations);
        line(&t, "%7d %s %-5s %s %4s %4s %5s %6s", (int)s->tid, name, kind_name(st->kind), cpus, now,
             node, home, mig);
        used++;
        shown++;
    }
    if (kernel_names && (rows <= 0 || used < rows))
        line(&t, "* the kernel's name: the thread dump taken at the start did not list it");
    free(order);
    if (tty) {
        /* No newline after the last line: on the screen's last row it would
         * scroll the top line away. */
        if (t.len > 0 && t.buf[t.len - 1] == '\n')
            t.buf[--t.len] = '\0';
        add(&t, "\033[J", 3);
    }
    if (t.oom) {
        free(t.buf);
        return -1;
    }
    *out = t.buf;
    *len = t.len;
    return 0;
}

/* ------------------------------------------------------------- the loop */

static volatile sig_atomic_t stop_signal, resized;

static void on_stop(int sig)
{
    stop_signal = sig;
}

static void on_winch(int sig)
{
    (void)sig;
    resized = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The kernel's migration count of a thread, or -1. */
static long long migrations(pid_t pid, pid_t tid)
{
    char path[96], buf[256];
    snprintf(path, sizeof path, "/proc/%d/task/%d/sched", (int)pid, (int)tid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    long long n = -1;
    while (fgets(buf, sizeof buf, f) != NULL)
        if (strncmp(buf, "se.nr_migrations", 16) == 0) {
            char *colon = strchr(buf, ':');
            if (colon != NULL)
                n = strtoll(colon + 1, NULL, 10);
            break;
        }
    fclose(f);
    return n;
}

/* What the view keeps of one thread across frames. */
struct kept {
    pid_t tid;
    enum cli_kind kind;
    long samples, home, changes;
    long long mig0; /* the kernel's count when first seen; -1 none */
    int last_cpu;
    bool home_set;
    hwloc_bitmap_t home_nodes;
};

struct loop {
    const struct np_topo *t;
    const struct cli_jvm *j;
    const struct cli_watch *w;
    struct kept *kept;
    int nkept, cap;
    hwloc_bitmap_t last;
};

static struct kept *find(struct loop *l, pid_t tid)
{
    for (int i = 0; i < l->nkept; i++)
        if (l->kept[i].tid == tid)
            return &l->kept[i];
    return NULL;
}

/* Every thread of `c` known, new ones added.  -1 when memory runs out. */
static int keep(struct loop *l, const struct np_inspect *c)
{
    hwloc_const_bitmap_t group = cli_jvm_nodes(l->j);
    for (int i = 0; i < c->nthreads; i++) {
        const struct np_seen *s = &c->threads[i];
        if (find(l, s->tid) != NULL)
            continue;
        if (l->nkept == l->cap) {
            int cap = l->cap ? 2 * l->cap : 64;
            struct kept *m = realloc(l->kept, (size_t)cap * sizeof *m);
            if (m == NULL)
                return -1;
            l->kept = m;
            l->cap = cap;
        }
        struct kept *k = &l->kept[l->nkept];
        memset(k, 0, sizeof *k);
        k->tid = s->tid;
        k->kind = cli_jvm_kind(l->j, s->name);
        k->mig0 = migrations(l->w->pid, s->tid);
        k->last_cpu = s->last_cpu;
        k->home_nodes = hwloc_bitmap_dup(group != NULL ? group : s->nodes);
        if (k->home_nodes == NULL)
            return -1;
        l->nkept++;
    }
    return 0;
}

/* One sample of where each thread of c runs now. */
static void sample(struct loop *l, const struct np_inspect *c)
{
    for (int i = 0; i < c->nthreads; i++) {
        struct kept *k = find(l, c->threads[i].tid);
        if (k == NULL ||
            hwloc_get_proc_last_cpu_location(l->t->topology, k->tid, l->last, HWLOC_CPUBIND_THREAD) != 0 ||
            hwloc_bitmap_weight(l->last) != 1)
            continue;
        int cpu = hwloc_bitmap_first(l->last);
        int node = np_topo_home(l->t, (unsigned)cpu);
        k->samples++;
        k->home += node >= 0 && hwloc_bitmap_isset(k->home_nodes, (unsigned)node);
        if (k->last_cpu >= 0 && cpu != k->last_cpu)
            k->changes++;
        k->last_cpu = cpu;
    }
}

static void free_loop(struct loop *l)
{
    for (int i = 0; i < l->nkept; i++)
        hwloc_bitmap_free(l->kept[i].home_nodes);
    free(l->kept);
    hwloc_bitmap_free(l->last);
}

static int write_all(const char *buf, size_t len)
{
    for (size_t done = 0; done < len;) {
        ssize_t w = write(STDOUT_FILENO, buf + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    return 0;
}

/* Waits until `until` (monotonic seconds), sampling; returns 1 when the
 * user asked to quit, 0 otherwise. */
static int wait_sampling(struct loop *l, const struct np_inspect *c, double until, bool keys)
{
    for (;;) {
        double left = until - now_s();
        if (left <= 0 || stop_signal)
            return stop_signal ? 1 : 0;
        double step = 1.0 / SAMPLES_PER_SECOND;
        int ms = (int)((left < step ? left : step) * 1000) + 1;
        struct pollfd p = {keys ? STDIN_FILENO : -1, POLLIN, 0};
        int r = poll(&p, 1, ms);
        if (r > 0 && (p.revents & POLLIN)) {
            char ch[16];
            ssize_t n = read(STDIN_FILENO, ch, sizeof ch);
            for (ssize_t i = 0; i < n; i++)
                if (ch[i] == 'q' || ch[i] == 'Q')
                    return 1;
            if (n == 0)
                keys = false; /* end of input: no more keys */
        }
        if (resized)
            return 0;
        sample(l, c);
    }
}

static bool alive(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    return access(path, F_OK) == 0;
}

int cli_watch(const struct np_topo *t, const struct cli_jvm *j, const struct np_inspect *first,
              const struct cli_watch *w)
{
    struct loop l = {.t = t, .j = j, .w = w, .last = hwloc_bitmap_alloc()};
    bool tty = isatty(STDOUT_FILENO), keys = isatty(STDIN_FILENO);
    struct termios saved;
    bool raw = false;
    if (l.last == NULL || keep(&l, first) != 0) {
        free_loop(&l);
        fprintf(stderr, "numapin check: out of memory\n");
        return 1;
    }
    if (keys && tcgetattr(STDIN_FILENO, &saved) == 0) {
        struct termios r = saved;
        r.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        r.c_cc[VMIN] = 1;
        r.c_cc[VTIME] = 0;
        raw = tcsetattr(STDIN_FILENO, TCSANOW, &r) == 0;
    }
    struct sigaction sa = {.sa_handler = on_stop}, wa = {.sa_handler = on_winch}, old[4];
    sigaction(SIGINT, &sa, &old[0]);
    sigaction(SIGTERM, &sa, &old[1]);
    sigaction(SIGHUP, &sa, &old[2]);
    sigaction(SIGWINCH, &wa, &old[3]);
    if (tty)
        write_all("\033[?1049h\033[?25l", 14); /* the alternate screen, no cursor */

    char plan[1024];
    cli_jvm_describe(j, plan, sizeof plan);
    long long *first_kb = NULL, *prev_kb = NULL;
    int nfirst = 0, nprev = 0, status = 0, frame = 0;
    bool ended = false;
    char *last_frame = NULL;
    size_t last_len = 0;
    if (first->node_kb != NULL && (first_kb = malloc((size_t)first->nnode_kb * sizeof *first_kb)) != NULL) {
        memcpy(first_kb, first->node_kb, (size_t)first->nnode_kb * sizeof *first_kb);
        nfirst = first->nnode_kb;
    }
    double start = now_s();
    struct np_inspect c = *first, owned = {0};
    bool have_owned = false;
    sample(&l, &c);
    for (;;) {
        frame++;
        struct cli_watch_thread *stats = calloc((size_t)c.nthreads + 1, sizeof *stats);
        if (stats == NULL || keep(&l, &c) != 0) {
            free(stats);
            fprintf(stderr, "numapin check: out of memory\n");
            status = 1;
            break;
        }
        for (int i = 0; i < c.nthreads; i++) {
            struct kept *k = find(&l, c.threads[i].tid);
            long long m = migrations(w->pid, k->tid);
            stats[i] = (struct cli_watch_thread){k->tid, k->kind, k->samples, k->home,
                                                 m >= 0 && k->mig0 >= 0 ? m - k->mig0 : k->changes};
        }
        int cols = 0, rows = 0;
        struct winsize ws;
        if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
            cols = ws.ws_col;
            rows = ws.ws_row;
        }
        resized = 0;
        struct cli_watch_view v = {&c, stats, prev_kb != NULL ? prev_kb : first_kb, first_kb,
                                   prev_kb != NULL ? nprev : nfirst, nfirst, plan, w->filter,
                                   w->nnames > 0, now_s() - start, frame};
        char *text = NULL;
        size_t len = 0;
        int rc = cli_watch_frame(&v, cols, rows, tty, &text, &len);
        free(stats);
        if (rc != 0) {
            fprintf(stderr, "numapin check: out of memory\n");
            status = 1;
            break;
        }
        if (!tty && frame > 1)
            write_all("\n", 1);
        if (write_all(text, len) != 0) {
            free(text);
            break; /* the reader went away */
        }
        free(last_frame);
        last_frame = text;
        last_len = len;
        free(prev_kb);
        prev_kb = NULL;
        nprev = 0;
        if (c.node_kb != NULL && (prev_kb = malloc((size_t)c.nnode_kb * sizeof *prev_kb)) != NULL) {
            memcpy(prev_kb, c.node_kb, (size_t)c.nnode_kb * sizeof *prev_kb);
            nprev = c.nnode_kb;
        }
        if (w->count > 0 && frame >= w->count)
            break;
        if (wait_sampling(&l, &c, start + frame * w->seconds, keys && raw) != 0)
            break;
        struct np_inspect next;
        char err[512];
        if (!alive(w->pid) ||
            np_inspect_collect(t, w->pid, w->names, w->nnames, &next, err, sizeof err) != 0) {
            ended = !alive(w->pid);
            if (!ended) {
                fprintf(stderr, "numapin check: %s\n", err);
                status = 1;
            }
            break;
        }
        if (have_owned)
            np_inspect_free(&owned);
        owned = next;
        have_owned = true;
        c = owned;
        if (c.nthreads == 0) {
            ended = true;
            break;
        }
    }
    if (tty)
        write_all("\033[?25h\033[?1049l", 14);
    if (raw)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
    sigaction(SIGHUP, &old[2], NULL);
    sigaction(SIGWINCH, &old[3], NULL);
    if (ended) {
        /* Left on the screen: the last frame, plain, and why it ended. */
        if (tty && last_frame != NULL) {
            char *p = last_frame;
            size_t n = last_len;
            for (size_t i = 0; i + 2 < n; i++) /* strip this frame's escapes */
                if (p[i] == '\033' && p[i + 1] == '[') {
                    size_t k = i + 2;
                    while (k < n && !((p[k] >= 'A' && p[k] <= 'Z') || (p[k] >= 'a' && p[k] <= 'z')))
                        k++;
                    memmove(p + i, p + k + 1, n - k - 1);
                    n -= k + 1 - i;
                    i--;
                }
            write_all(p, n);
        }
        printf("numapin check: process %d exited\n", (int)w->pid);
        fflush(stdout);
    }
    free(last_frame);
    free(first_kb);
    free(prev_kb);
    if (have_owned)
        np_inspect_free(&owned);
    free_loop(&l);
    return status;
}
