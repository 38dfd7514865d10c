#define _GNU_SOURCE
#include "np_marker.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "np_cpulist.h"

/* CPU and node numbers a marker may name: far beyond any machine. */
#define MAX_INDEX 65535

static void list_or_none(FILE *f, const char *key, hwloc_const_bitmap_t set)
{
    char *s = set != NULL ? np_cpulist_dup(set) : NULL;
    fprintf(f, "%s %s", key, s != NULL && s[0] != '\0' ? s : "none");
    free(s);
}

int np_marker_format(const struct np_marker *m, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    FILE *f = open_memstream(text, len);
    if (f == NULL)
        return -1;
    fprintf(f, "numapin-marker %d\npid %ld\nseq %lu\ntime %lld\ngroup %d groups %d plan %u\n",
            NP_MARKER_VERSION, m->pid, m->seq, m->time, m->group, m->groups, m->plan);
    list_or_none(f, "cpus", m->cpus);
    list_or_none(f, " nodes", m->nodes);
    fprintf(f, "\nmem %s\ndrift %d\n", np_mem_mode_name(m->mem >= 0 ? m->mem : NP_MEM_NONE),
            m->drift);
    for (int i = 0; i < m->nthreads; i++) {
        char *cpus = np_cpulist_dup(m->threads[i].cpus);
        fprintf(f, "thread %d cpus %s drift %d\n", (int)m->threads[i].tid, cpus ? cpus : "",
                m->threads[i].drift);
        free(cpus);
    }
    fprintf(f, "end %lu\n", m->seq);
    if (fclose(f) != 0) {
        free(*text);
        *text = NULL;
        return -1;
    }
    return 0;
}

void np_marker_free(struct np_marker *m)
{
    for (int i = 0; m->threads != NULL && i < m->nthreads; i++)
        hwloc_bitmap_free(m->threads[i].cpus);
    free(m->threads);
    hwloc_bitmap_free(m->cpus);
    hwloc_bitmap_free(m->nodes);
    memset(m, 0, sizeof *m);
}

/* A strict decimal number in [0, max]. */
static int number(const char *s, unsigned long long max, unsigned long long *out)
{
    unsigned long long v = 0;
    if (*s == '\0' || (s[0] == '0' && s[1] != '\0'))
        return -1;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9' || v > (max - (unsigned)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (unsigned)(*s - '0');
    }
    *out = v;
    return 0;
}

/* The words of one line, split at single spaces (an empty word is an
 * error); returns how many, at most max, or -1. */
static int words(char *line, char **w, int max)
{
    int n = 0;
    for (char *p = line;;) {
        char *sp = strchr(p, ' ');
        if (n == max || (sp == p) || *p == '\0')
            return -1;
        w[n++] = p;
        if (sp == NULL)
            return n;
        *sp = '\0';
        p = sp + 1;
    }
}

/* "KEY NUMBER": the number, at most max. */
static int keyed(char *line, const char *key, unsigned long long max, unsigned long long *v)
{
    char *w[2];
    return words(line, w, 2) == 2 && strcmp(w[0], key) == 0 ? number(w[1], max, v) : -1;
}

/* A cpulist or "none" (NULL). */
static int list(const char *s, hwloc_bitmap_t *out)
{
    *out = NULL;
    if (strcmp(s, "none") == 0)
        return 0;
    if ((*out = hwloc_bitmap_alloc()) == NULL || np_parse_list(s, ',', MAX_INDEX, *out) != 0 ||
        hwloc_bitmap_iszero(*out))
        return -1;
    return 0;
}

static int parse(char *text, struct np_marker *m)
{
    char *save = NULL, *line, *w[8];
    unsigned long long v, x[4];
    int cap = 0;
#define NEXT() (line = strtok_r(save == NULL ? text : NULL, "\n", &save))
    if (NEXT() == NULL || keyed(line, "numapin-marker", 1000, &v) != 0 || v < 1 ||
        v > NP_MARKER_VERSION)
        return -1;
    unsigned long long version = v;
    if (NEXT() == NULL || keyed(line, "pid", 4194304, &v) != 0 || v == 0)
        return -1;
    m->pid = (long)v;
    if (NEXT() == NULL || keyed(line, "seq", ULONG_MAX, &v) != 0)
        return -1;
    m->seq = (unsigned long)v;
    if (NEXT() == NULL || keyed(line, "time", LLONG_MAX, &v) != 0)
        return -1;
    m->time = (long long)v;
    if (NEXT() == NULL || words(line, w, 6) != 6 || strcmp(w[0], "group") != 0 ||
        strcmp(w[2], "groups") != 0 || strcmp(w[4], "plan") != 0 ||
        number(w[1], 4095, &x[0]) != 0 || number(w[3], 4096, &x[1]) != 0 ||
        number(w[5], UINT_MAX, &x[2]) != 0 || x[1] == 0 || x[0] >= x[1])
        return -1;
    m->group = (int)x[0];
    m->groups = (int)x[1];
    m->plan = (unsigned)x[2];
    if (NEXT() == NULL || words(line, w, 4) != 4 || strcmp(w[0], "cpus") != 0 ||
        strcmp(w[2], "nodes") != 0 || list(w[1], &m->cpus) != 0 || list(w[3], &m->nodes) != 0 ||
        (m->cpus == NULL) != (m->nodes == NULL))
        return -1;
    m->mem = -1;
    if (version >= 2 && (NEXT() == NULL || words(line, w, 2) != 2 || strcmp(w[0], "mem") != 0 ||
                         (m->mem = np_names_find(&np_mem_mode_names, w[1])) < 0))
        return -1;
    if (NEXT() == NULL || keyed(line, "drift", INT_MAX, &v) != 0)
        return -1;
    m->drift = (int)v;
    while (NEXT() != NULL) {
        int n = words(line, w, 6);
        if (n == 2 && strcmp(w[0], "end") == 0)
            return number(w[1], ULONG_MAX, &v) == 0 && v == m->seq && NEXT() == NULL ? 0 : -1;
        if (n != 6 || strcmp(w[0], "thread") != 0 || strcmp(w[2], "cpus") != 0 ||
            strcmp(w[4], "drift") != 0 || number(w[1], 4194304, &x[0]) != 0 || x[0] == 0 ||
            number(w[5], INT_MAX, &x[1]) != 0 || m->nthreads == NP_MARKER_MAX_THREADS)
            return -1;
        if (m->nthreads == cap) {
            int ncap = cap > 0 ? 2 * cap : 64;
            struct np_marker_thread *t = realloc(m->threads, (size_t)ncap * sizeof *t);
            if (t == NULL)
                return -1;
            m->threads = t;
            cap = ncap;
        }
        struct np_marker_thread *t = &m->threads[m->nthreads];
        if (list(w[3], &t->cpus) != 0 || t->cpus == NULL) {
            hwloc_bitmap_free(t->cpus);
            return -1;
        }
        t->tid = (pid_t)x[0];
        t->drift = (int)x[1];
        m->nthreads++;
    }
#undef NEXT
    return -1; /* no end line: not whole */
}

int np_marker_parse(const char *text, size_t len, struct np_marker *m)
{
    memset(m, 0, sizeof *m);
    /* A NUL inside is no marker; the copy ends with one for strtok_r. */
    if (len == 0 || len > (size_t)NP_MARKER_MAX_BYTES || memchr(text, '\0', len) != NULL ||
        text[len - 1] != '\n')
        return -1;
    char *copy = strndup(text, len);
    if (copy == NULL)
        return -1;
    /* strtok_r would pass over empty lines: there must be none. */
    int rc = strstr(copy, "\n\n") == NULL ? parse(copy, m) : -1;
    free(copy);
    if (rc != 0)
        np_marker_free(m);
    return rc;
}

static int write_all(int fd, const char *text, size_t len)
{
    for (size_t done = 0; done < len;) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno != EINTR)
            return -1;
        if (w > 0)
            done += (size_t)w;
    }
    return 0;
}

int np_marker_publish(struct np_marker_file *f, const char *text, size_t len)
{
    int fd = memfd_create(NP_MARKER_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    struct stat st, cur;
    if (write_all(fd, text, len) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0 ||
        fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    /* The old version's number, if it is still the old version: a number
     * something else in the JVM closed and reused is left alone. */
    if (f->fd >= 0 && fstat(f->fd, &cur) == 0 && cur.st_dev == f->dev && cur.st_ino == f->ino) {
        if (dup3(fd, f->fd, O_CLOEXEC) < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        close(fd);
    } else {
        f->fd = fd;
    }
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    return 0;
}

void np_marker_close(struct np_marker_file *f)
{
    struct stat cur;
    if (f->fd >= 0 && fstat(f->fd, &cur) == 0 && cur.st_dev == f->dev && cur.st_ino == f->ino)
        close(f->fd);
    f->fd = -1;
}
