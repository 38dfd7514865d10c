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
#include <limits.h>
#include <locale.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "np_cpulist.h"
#include "np_text.h"

#define SAMPLES_PER_SECOND 10
#define NAME_WIDTH 24
#define CPUS_WIDTH 12

/* ---------------------------------------------------- display width */

/* wcwidth(3) answers for the thread's locale: the view asks it under a
 * C.UTF-8 locale object of its own (uselocale), whatever the process's
 * locale is, and never changes the global one. */
static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void utf8_init(void)
{
    utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/* The columns a terminal gives the character cp: 0 (a combining mark), 1,
 * 2 (East Asian wide), or -1 when it has nothing to print for it (a
 * control, an unassigned code point).  Without a C.UTF-8 locale every
 * printable character takes one column. */
static int cp_width(unsigned cp)
{
    if (cp < 0x80)
        return cp >= 0x20 && cp < 0x7f ? 1 : -1;
    pthread_once(&utf8_once, utf8_init);
    if (utf8_locale == (locale_t)0)
        return cp < 0xa0 ? -1 : 1;
    locale_t old = uselocale(utf8_locale);
    int w = wcwidth((wchar_t)cp);
    uselocale(old);
    return w;
}

/* The next unit of the view's text at s, never to be cut: a character
 * written out (`\\`, `\xNN`, `\uXXXX`, `\U00XXXXXX`, as np_text_shown
 * writes them) or one character.  Its length in bytes is returned (0 at
 * the end), its columns in *cols (-1: one a terminal cannot print). */
static size_t unit(const char *s, int *cols)
{
    if (s[0] == '\\') {
        size_t k = strnlen(s, s[1] == 'x' ? 4 : s[1] == 'u' ? 6 : s[1] == 'U' ? 10 : 2);
        *cols = (int)k;
        return k;
    }
    unsigned cp;
    size_t k = np_text_next(s, &cp);
    *cols = k > 0 ? cp_width(cp) : 0;
    return k;
}

/* The columns s takes. */
static int text_width(const char *s)
{
    int total = 0, w;
    for (size_t k; (k = unit(s, &w)) > 0; s += k)
        total += w < 0 ? 1 : w;
    return total;
}

/* Copies into out (len > 0 bytes, NUL-terminated) the units of s that fit
 * in `room` columns, up to the first that does not; a character a
 * terminal cannot print as '?'.  Returns the bytes written, the columns
 * they take in *cols. */
static size_t fit(char *out, size_t len, const char *s, int room, int *cols)
{
    size_t o = 0;
    int taken = 0, w;
    for (size_t k; (k = unit(s, &w)) > 0; s += k) {
        const char *put = w < 0 ? "?" : s;
        size_t n = w < 0 ? 1 : k;
        if (w < 0)
            w = 1;
        if (taken + w > room || o + n >= len)
            break;
        memcpy(out + o, put, n);
        o += n;
        taken += w;
    }
    out[o] = '\0';
    *cols = taken;
    return o;
}

/* A process-supplied string (a thread's name, the command) as the view
 * shows it: np_text_shown's form, so that it cannot reverse, hide or
 * break its row or drive the terminal, and each character a terminal has
 * nothing to print for written out the same way (`\uXXXX`).  Cut at a
 * whole character when out (len > 0) is short. */
static void shown(char *out, size_t len, const char *s)
{
    char text[1024];
    np_text_shown(text, sizeof text, s);
    size_t o = 0;
    int w;
    for (const char *p = text; *p != '\0';) {
        size_t k = unit(p, &w), n = k;
        char esc[12];
        const char *put = p;
        if (w < 0) {
            unsigned cp;
            np_text_next(p, &cp);
            n = (size_t)snprintf(esc, sizeof esc, cp > 0xffff ? "\\U%08x" : "\\u%04x", cp);
            put = esc;
        }
        if (o + n >= len)
            break;
        memcpy(out + o, put, n);
        o += n;
        p += k;
    }
    out[o] = '\0';
}

/* `s` (the view's text) in exactly `width` columns: padded with spaces,
 * or cut at a whole character and ended with '~'. */
static void cell(char *out, size_t len, const char *s, int width)
{
    bool cut = text_width(s) > width;
    int room = cut ? width - 1 : width, cols;
    /* Room kept for the padding, however many bytes the characters take. */
    size_t o = fit(out, len - (size_t)width - 2, s, room, &cols);
    while (cols++ < room)
        out[o++] = ' ';
    if (cut)
        out[o++] = '~';
    out[o] = '\0';
}

/* ------------------------------------------------------------ the frame */

struct text {
    char *buf;
    size_t len, cap;
    bool oom;
    int cols, lines;
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

/* One line of the view's text: cut at the width (in columns, at a whole
 * character), and, on a terminal, erasing the rest of its row.  A line
 * that fills the row erases nothing: the cursor waits on its last
 * character, which an erase would take away. */
static void line(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(struct text *t, const char *fmt, ...)
{
    char buf[4096], cut[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    int cols;
    size_t n = fit(cut, sizeof cut, buf, t->cols > 0 ? t->cols : INT_MAX, &cols);
    add(t, cut, n);
    if (t->tty && (t->cols <= 0 || cols < t->cols))
        add(t, "\033[K", 3);
    add(t, "\n", 1);
    t->lines++;
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

/* What of a frame a terminal of `rows` rows shows (rows <= 0: all of it). */
struct layout {
    bool title, plan, frame, memory, heads, more;
    int shown; /* thread rows */
};

/* The first `avail` rows after the title and the plan filled in order:
 * the frame line; the memory per node, whole, only with room left for
 * the column heads and a thread; the column heads and as many threads as
 * fit. */
static struct layout fill(int avail, int memory, int threads)
{
    struct layout l = {.title = true, .plan = true};
    int need = threads > 0 ? 2 : 1;
    l.frame = avail >= 1;
    avail -= l.frame;
    l.memory = avail >= memory + need;
    avail -= l.memory ? memory : 0;
    l.heads = avail >= need;
    l.shown = l.heads ? (threads < avail - 1 ? threads : avail - 1) : 0;
    return l;
}

static struct layout lay_out(int rows, int memory, int threads)
{
    if (rows <= 0)
        return (struct layout){true, true, true, true, true, false, threads};
    struct layout l = fill(rows - 2, memory, threads);
    if (l.shown < threads && rows >= 3) {
        /* The last row counts the threads left out. */
        l = fill(rows - 3, memory, threads);
        l.more = true;
    }
    l.title = rows >= 1;
    l.plan = rows >= 2;
    return l;
}

int cli_watch_frame(const struct cli_watch_view *v, int cols, int rows, bool tty, char **out,
                    size_t *len)
{
    struct text t = {.cols = cols, .tty = tty};
    const struct np_inspect *c = v->now;
    int counts[3] = {0, 0, 0};
    for (int i = 0; i < c->nthreads; i++)
        counts[v->stats[i].kind]++;
    int *order = malloc(((size_t)c->nthreads + 1) * sizeof *order), n = 0;
    if (order == NULL)
        return -1;
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
    /* The memory block: its heads, a line per node, the access line. */
    char access[1024];
    bool sampled = np_inspect_access_brief(c, access, sizeof access);
    int memory = 1 + (access[0] != '\0');
    if (c->node_kb == NULL)
        memory++;
    for (int i = 0; i < c->nnode_kb; i++)
        memory += c->node_kb[i] != 0 || kb_at(v->prev_kb, v->nprev_kb, i) != 0 ||
                  kb_at(v->first_kb, v->nfirst_kb, i) != 0;
    struct layout l = lay_out(rows, memory, n);

    char command[512], q[2 * sizeof command + 3], plan[1024];
    shown(command, sizeof command, c->command);
    size_t o = 0;
    q[o++] = '"';
    for (const char *p = command; *p != '\0'; p++) {
        if (*p == '"')
            q[o++] = '\\';
        q[o++] = *p;
    }
    q[o++] = '"';
    q[o] = '\0';
    shown(plan, sizeof plan, v->plan);
    if (tty)
        add(&t, "\033[H", 3);
    if (l.title)
        line(&t, "numapin check %d %s  threads %d: %d tier, %d other, %d jvm%s", (int)c->pid, q,
             c->nthreads, counts[CLI_TIER], counts[CLI_OTHER], counts[CLI_JVM_OWN],
             tty ? "  (q quits)" : "");
    if (l.plan)
        line(&t, "%s", plan);
    if (l.frame)
        line(&t, "frame %d, %.1f s, %d samples/s", v->frame, v->elapsed, SAMPLES_PER_SECOND);
    if (l.memory) {
        line(&t, "%-5s %12s %12s %12s %12s", "node", "RSS MiB", "change", "since start",
             "hugetlb MiB");
        if (c->node_kb == NULL)
            line(&t, "      (memory per node unknown: /proc/%d/numa_maps unreadable)", (int)c->pid);
        for (int i = 0; i < c->nnode_kb; i++) {
            long long kb = c->node_kb[i], prev = kb_at(v->prev_kb, v->nprev_kb, i),
                      first = kb_at(v->first_kb, v->nfirst_kb, i);
            if (kb == 0 && prev == 0 && first == 0)
                continue;
            line(&t, "%-5d %12.1f %+12.1f %+12.1f %12.1f", i, (double)kb / 1024,
                 (double)(kb - prev) / 1024, (double)(kb - first) / 1024,
                 (double)np_memory_huge_bytes(&c->own, i) / (1 << 20));
        }
        if (access[0])
            line(&t, "%s", access);
    }
    if (l.heads)
        line(&t, "%7s %-*s %-5s %-*s %4s %4s %5s %6s %5s", "TID", NAME_WIDTH, "NAME", "KIND",
             CPUS_WIDTH, "CPUS", "NOW", "NODE", "HOME%", "MIGR", "ACC%");
    bool kernel_names = false;
    for (int r = 0; r < l.shown; r++) {
        const struct np_seen *s = &c->threads[order[r]];
        const struct cli_watch_thread *st = &v->stats[order[r]];
        char text[512], name[512], cpus[CPUS_WIDTH * 4 + 8], list[1024];
        bool kernel = v->names_from_jvm && !s->jvm_name;
        shown(text, sizeof text - 1, s->name);
        if (kernel)
            strcat(text, "*");
        kernel_names |= kernel;
        cell(name, sizeof name, text, NAME_WIDTH);
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
        /* The kernel's sampled accesses on the nodes of its CPUs, rounded down
         * as check's access_local= is. */
        char acc[32] = "-";
        long long permille = sampled ? np_access_permille(&s->access, s->nodes) : -1;
        if (permille >= 0)
            snprintf(acc, sizeof acc, "%lld%%", permille / 10);
        line(&t, "%7d %s %-5s %s %4s %4s %5s %6s %5s", (int)s->tid, name, kind_name(st->kind), cpus,
             now, node, home, mig, acc);
    }
    if (l.more) {
        /* As much of the count as the width has room for. */
        char more[160];
        int left = n - l.shown;
        snprintf(more, sizeof more, "... %d more threads (a taller terminal, or --threads, shows them)",
                 left);
        if (cols > 0 && text_width(more) > cols)
            snprintf(more, sizeof more, "+%d more threads", left);
        if (cols > 0 && text_width(more) > cols)
            snprintf(more, sizeof more, "+%d more", left);
        line(&t, "%s", more);
    }
    if (kernel_names && (rows <= 0 || t.lines < rows))
        line(&t, "* the kernel's name: the thread dump taken at the start did not list it");
    free(order);
    if (tty) {
        if (rows <= 0 || t.lines >= rows) {
            /* No newline after the last line: on the screen's last row it
             * would scroll the top line away. */
            if (t.len > 0 && t.buf[t.len - 1] == '\n')
                t.buf[--t.len] = '\0';
        }
        /* Erases what an earlier, longer frame left below; a frame of
         * `rows` lines has nothing below it (and its last line may fill its
         * row, which the erase would take the last character of). */
        if (rows <= 0 || t.lines < rows)
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

int cli_watch_last(const char *frame, size_t len, char **out, size_t *outlen)
{
    char *p = malloc(len + 2);
    if (p == NULL)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (frame[i] == '\033' && i + 1 < len && frame[i + 1] == '[') {
            /* The view's own sequences: CSI, parameters, a final letter. */
            size_t k = i + 2;
            while (k < len && !((frame[k] >= 'A' && frame[k] <= 'Z') || (frame[k] >= 'a' && frame[k] <= 'z')))
                k++;
            i = k;
            continue;
        }
        p[n++] = frame[i];
    }
    if (n == 0 || p[n - 1] != '\n')
        p[n++] = '\n';
    p[n] = '\0';
    *out = p;
    *outlen = n;
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
    /* A failure is told once the terminal is given back: written on the
     * alternate screen it would go with it. */
    const char *why = NULL;
    char err[512];
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
            why = "out of memory";
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
        resized = 0; /* before the size is read: a resize after it draws again */
        if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
            cols = ws.ws_col;
            rows = ws.ws_row;
        }
        struct cli_watch_view v = {&c, stats, prev_kb != NULL ? prev_kb : first_kb, first_kb,
                                   prev_kb != NULL ? nprev : nfirst, nfirst, plan, w->filter,
                                   w->nnames > 0, now_s() - start, frame};
        char *text = NULL;
        size_t len = 0;
        int rc = cli_watch_frame(&v, cols, rows, tty, &text, &len);
        free(stats);
        if (rc != 0) {
            why = "out of memory";
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
        if (!alive(w->pid) ||
            np_inspect_collect(t, w->pid, w->names, w->nnames, &next, err, sizeof err) != 0) {
            ended = !alive(w->pid);
            if (!ended) {
                why = err;
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
    /* A terminal without the alternate screen keeps the last frame: the
     * cursor goes below it, to column 0 of a line of its own. */
    if (tty)
        write_all("\r\n\033[?25h\033[?1049l", 16);
    if (raw)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
    sigaction(SIGHUP, &old[2], NULL);
    sigaction(SIGWINCH, &old[3], NULL);
    if (why != NULL)
        fprintf(stderr, "numapin check: %s\n", why);
    if (ended) {
        /* Left on the normal screen: the last frame, plain, and why it
         * ended, on a line of its own (a terminal's frame has no newline
         * after its last line). */
        char *last;
        size_t n;
        if (tty && last_frame != NULL && cli_watch_last(last_frame, last_len, &last, &n) == 0) {
            write_all(last, n);
            free(last);
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
