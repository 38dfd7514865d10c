#define _GNU_SOURCE
#include "np_memory.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "np_cpulist.h"
#include "np_hugepages.h"
#include "np_json.h"

#define BASE_KIB 4

/* Room for index `node` in the table *t of *n entries.  0, or -1 (ENOMEM). */
static int grow_table(long long **t, int *n, long node)
{
    if (node < *n)
        return 0;
    long long *p = realloc(*t, (size_t)(node + 1) * sizeof *p);
    if (p == NULL)
        return -1;
    memset(p + *n, 0, (size_t)(node + 1 - *n) * sizeof *p);
    *t = p;
    *n = (int)node + 1;
    return 0;
}

/* Room for node `node` in m.  0, or -1 (ENOMEM). */
static int grow(struct np_memory *m, long node)
{
    return grow_table(&m->pages, &m->nnodes, node);
}

/* The hugetlb count of m for pages of `kib`, made when new (sizes kept in
 * order); NULL when m counts NP_MEMORY_HUGE_SIZES other sizes. */
static struct np_memory_huge *huge_of(struct np_memory *m, unsigned long kib)
{
    int i = 0;
    while (i < NP_MEMORY_HUGE_SIZES && m->huge[i].kib != 0 && m->huge[i].kib < kib)
        i++;
    if (i == NP_MEMORY_HUGE_SIZES)
        return NULL;
    if (m->huge[i].kib == kib)
        return &m->huge[i];
    if (m->huge[NP_MEMORY_HUGE_SIZES - 1].kib != 0)
        return NULL;
    memmove(&m->huge[i + 1], &m->huge[i], (size_t)(NP_MEMORY_HUGE_SIZES - 1 - i) * sizeof *m->huge);
    m->huge[i] = (struct np_memory_huge){kib, NULL, 0};
    return &m->huge[i];
}

/* Adds `n` pages of `page_kib` on `node` to m, as 4 KiB pages and, for
 * hugetlb pages, to their size's count.  0, or -1 (ENOMEM). */
static int add(struct np_memory *m, long node, unsigned long long n, unsigned long long page_kib,
               bool huge)
{
    if (m == NULL || node < 0 || node > NP_MEMORY_MAX_NODE)
        return 0;
    if (grow(m, node) != 0)
        return -1;
    m->pages[node] += (long long)(n * (page_kib / BASE_KIB));
    if (!huge)
        return 0;
    struct np_memory_huge *h = huge_of(m, (unsigned long)page_kib);
    if (h == NULL)
        return 0;
    if (grow_table(&h->pages, &h->nnodes, node) != 0)
        return -1;
    h->pages[node] += (long long)n;
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

/* True for the name of a file whose pages are the process's own (as
 * /proc/PID/maps writes it, or numa_maps, which escapes spaces as \040):
 * hugetlbfs's anonymous huge pages, a memfd (ZGC's heap is one), a SysV
 * shared memory segment (-XX:+UseSHM), a shared anonymous mapping. */
static bool own_file(const char *name)
{
    return strncmp(name, "/anon_hugepage", 14) == 0 || strncmp(name, "/memfd:", 7) == 0 ||
           strncmp(name, "/SYSV", 5) == 0 || strncmp(name, "/dev/zero (deleted)", 19) == 0 ||
           strncmp(name, "/dev/zero\\040(deleted)", 22) == 0;
}

/* The start of a numa_maps line's third token, or NULL: after the address
 * and the policy ("prefer (many)" holds a space, and is followed by ':'
 * and its nodes). */
static const char *third_token(const char *line)
{
    const char *p = strchr(line, ' ');
    if (p == NULL)
        return NULL;
    p++;
    if (strncmp(p, "prefer (many)", 13) == 0)
        p += 13;
    p = strchr(p, ' ');
    return p != NULL ? p + 1 : NULL;
}

/* True for a mapping of the process's own: no file, or one of own_file's.
 * The third token names the file, if any: the kernel escapes spaces and
 * '=' in file names. */
static bool own_mapping(const char *line)
{
    const char *p = third_token(line);
    return p == NULL || strncmp(p, "file=", 5) != 0 || own_file(p + 5);
}

/* True for a hugetlb mapping: numa_maps writes "huge" after the name, which
 * cannot hold " huge " (spaces in names are escaped). */
static bool huge_mapping(const char *line)
{
    return strstr(line, " huge ") != NULL;
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
    bool huge = huge_mapping(line);
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
        for (int k = 0; k < 2; k++)
            if (add(to[k], node, v, page_kib, huge) != 0)
                return -1;
    return 0;
}

int np_memory_read_file(const char *path, struct np_memory *own, struct np_memory *all)
{
    struct np_memory *m[2] = {own, all};
    for (int k = 0; k < 2; k++)
        if (m[k] != NULL)
            *m[k] = (struct np_memory){.pages = NULL};
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

/* ---- each page once: files mapped at more than one address ------------- */

/* A shared mapping of a file, from /proc/PID/maps. */
struct view {
    unsigned long lo, hi;          /* its addresses */
    unsigned long long off;        /* the file offset at lo */
    unsigned long long dev, ino;   /* the file */
    bool own;                      /* a file of the process's own (own_file) */
    int alias;                     /* its alias (below), or -1 */
    bool resident;                 /* numa_maps counts pages in it */
    char *line;                    /* its numa_maps line, while aliases are counted */
};

/* Views of one file whose offsets overlap, chained. */
struct alias {
    int first, n;                  /* its views: views[first .. first + n) in file order */
    unsigned long long off_lo, off_hi;
    unsigned long long page_kib;   /* the views' page size, from numa_maps (4 without) */
    bool huge;
    int resident;                  /* views with pages */
};

struct aliases {
    struct view *v;
    int nv;
    struct view **by_addr;         /* the views in address order */
    struct alias *a;
    int na;
};

static void aliases_free(struct aliases *x)
{
    for (int i = 0; i < x->nv; i++)
        free(x->v[i].line);
    free(x->v);
    free(x->a);
    free(x->by_addr);
    *x = (struct aliases){0};
}

static int by_file(const void *pa, const void *pb)
{
    const struct view *a = pa, *b = pb;
    if (a->dev != b->dev)
        return a->dev < b->dev ? -1 : 1;
    if (a->ino != b->ino)
        return a->ino < b->ino ? -1 : 1;
    if (a->off != b->off)
        return a->off < b->off ? -1 : 1;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static int by_addr(const void *pa, const void *pb)
{
    const struct view *a = *(const struct view *const *)pa, *b = *(const struct view *const *)pb;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* The shared file mappings of process pid whose file ranges overlap
 * another's of the same file, into *x (empty when there are none).  0, or
 * -1 with errno (x then empty). */
static int find_aliases(pid_t pid, struct aliases *x)
{
    *x = (struct aliases){0};
    char path[64];
    if (pid == 0)
        snprintf(path, sizeof path, "/proc/self/maps");
    else
        snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    char *line = NULL;
    size_t len = 0;
    int cap = 0, e = 0;
    while (e == 0 && getline(&line, &len, f) > 0) {
        unsigned long lo, hi;
        unsigned long long off, ino;
        unsigned dmaj, dmin;
        char perms[8];
        int name_at = 0;
        if (sscanf(line, "%lx-%lx %7s %llx %x:%x %llu %n", &lo, &hi, perms, &off, &dmaj, &dmin,
                   &ino, &name_at) < 7 || perms[3] != 's' || ino == 0 || hi <= lo)
            continue;
        if (x->nv == cap) {
            int ncap = cap > 0 ? 2 * cap : 16;
            struct view *g = realloc(x->v, (size_t)ncap * sizeof *g);
            if (g == NULL) {
                e = ENOMEM;
                break;
            }
            x->v = g;
            cap = ncap;
        }
        x->v[x->nv++] = (struct view){lo, hi, off, ((unsigned long long)dmaj << 32) | dmin, ino,
                                      name_at > 0 && own_file(line + name_at), -1, false, NULL};
    }
    if (e == 0 && ferror(f))
        e = EIO;
    free(line);
    fclose(f);
    if (e == 0 && x->nv > 1) {
        qsort(x->v, (size_t)x->nv, sizeof *x->v, by_file);
        /* Chains of overlapping file ranges, in file order; only chains of
         * two views or more are kept. */
        int kept = 0;
        for (int i = 0; i < x->nv;) {
            int j = i + 1;
            unsigned long long end = x->v[i].off + (x->v[i].hi - x->v[i].lo);
            while (j < x->nv && x->v[j].dev == x->v[i].dev && x->v[j].ino == x->v[i].ino &&
                   x->v[j].off < end) {
                unsigned long long e2 = x->v[j].off + (x->v[j].hi - x->v[j].lo);
                end = e2 > end ? e2 : end;
                j++;
            }
            if (j - i > 1) {
                struct alias *g = realloc(x->a, (size_t)(x->na + 1) * sizeof *g);
                if (g == NULL) {
                    e = ENOMEM;
                    break;
                }
                x->a = g;
                memmove(&x->v[kept], &x->v[i], (size_t)(j - i) * sizeof *x->v);
                x->a[x->na] = (struct alias){kept, j - i, x->v[kept].off, end, BASE_KIB, false, 0};
                for (int k = kept; k < kept + (j - i); k++)
                    x->v[k].alias = x->na;
                x->na++;
                kept += j - i;
            }
            i = j;
        }
        x->nv = kept;
        if (e == 0 && kept > 0 && (x->by_addr = malloc((size_t)kept * sizeof *x->by_addr)) == NULL)
            e = ENOMEM;
        for (int i = 0; e == 0 && i < kept; i++)
            x->by_addr[i] = &x->v[i];
        if (e == 0 && kept > 0)
            qsort(x->by_addr, (size_t)kept, sizeof *x->by_addr, by_addr);
    }
    if (e != 0 || x->na == 0) {
        aliases_free(x);
        if (e != 0) {
            errno = e;
            return -1;
        }
    }
    return 0;
}

/* The view of x starting at address `lo`, or NULL. */
static struct view *view_at(struct aliases *x, unsigned long lo)
{
    int l = 0, h = x->nv;
    while (l < h) {
        int mid = l + (h - l) / 2;
        if (x->by_addr[mid]->lo < lo)
            l = mid + 1;
        else
            h = mid;
    }
    return l < x->nv && x->by_addr[l]->lo == lo ? x->by_addr[l] : NULL;
}

/* The node of each of the n pages of process pid at `addrs` into
 * `status` (a node, or a negative errno: -ENOENT, -EFAULT when none is
 * resident): move_pages(2) in query mode, the only way numapin calls it.
 * With no target nodes it moves nothing (tests/stress/check_imports.sh
 * checks that this is its one call). */
static long query_nodes(pid_t pid, unsigned long n, void **addrs, int *status)
{
    return numa_move_pages(pid, n, addrs, NULL, status, 0);
}

#define QUERY_BATCH 4096

/* Adds the pages of alias `a` resident through any of its views to *all
 * and, for a file of the process's own, to *own and *aliased (any may be
 * NULL), each file offset once.  0; 1 when move_pages refused (errno
 * says why; nothing added); or -1 when memory ran out. */
static int count_alias(pid_t pid, const struct aliases *x, const struct alias *a,
                       struct np_memory *own, struct np_memory *all, struct np_memory *aliased)
{
    unsigned long long page = a->page_kib * 1024;
    size_t nbits = (size_t)((a->off_hi - a->off_lo + page - 1) / page);
    /* A bit per page of the file's range, set when a view first shows it;
     * the pages counted by node meanwhile, added once every view is read. */
    unsigned char *seen = calloc((nbits + 7) / 8, 1);
    long long *by_node = NULL;
    int nnodes = 0;
    void **addrs = malloc(QUERY_BATCH * sizeof *addrs);
    int *status = malloc(QUERY_BATCH * sizeof *status);
    int e = seen == NULL || addrs == NULL || status == NULL ? ENOMEM : 0;
    int refused = 0;
    for (int i = a->first; e == 0 && refused == 0 && i < a->first + a->n; i++) {
        const struct view *v = &x->v[i];
        if (!v->resident)
            continue;
        for (unsigned long at = v->lo; e == 0 && at < v->hi;) {
            unsigned long n = 0, from = at;
            for (; n < QUERY_BATCH && at < v->hi; at += page)
                addrs[n++] = (void *)at;
            if (query_nodes(pid, n, addrs, status) != 0) {
                refused = errno != 0 ? errno : EIO;
                break;
            }
            for (unsigned long k = 0; k < n; k++) {
                if (status[k] < 0 || status[k] > NP_MEMORY_MAX_NODE)
                    continue;
                size_t bit = (size_t)((v->off + (from - v->lo) + k * page - a->off_lo) / page);
                if (bit >= nbits || (seen[bit / 8] & (1u << (bit % 8))) != 0)
                    continue;
                seen[bit / 8] |= (unsigned char)(1u << (bit % 8));
                if (grow_table(&by_node, &nnodes, status[k]) != 0) {
                    e = ENOMEM;
                    break;
                }
                by_node[status[k]]++;
            }
        }
    }
    free(addrs);
    free(status);
    free(seen);
    bool mine = x->v[a->first].own;
    for (int node = 0; e == 0 && refused == 0 && node < nnodes; node++) {
        unsigned long long c = (unsigned long long)by_node[node];
        if (c > 0 && (add(all, node, c, a->page_kib, a->huge) != 0 ||
                      (mine && (add(own, node, c, a->page_kib, a->huge) != 0 ||
                                add(aliased, node, c, a->page_kib, a->huge) != 0))))
            e = ENOMEM;
    }
    free(by_node);
    if (e != 0 || refused != 0) {
        errno = e != 0 ? e : refused;
        return e != 0 ? -1 : 1;
    }
    return 0;
}

/* The numa_maps line's page size (kernelpagesize_kB, the last token), or 0
 * when it counts no page. */
static unsigned long long line_page_kib(const char *line)
{
    const char *tok_end, *tok = prev_token(line, line + strlen(line), &tok_end);
    unsigned long long v;
    return tok != NULL && key_value(tok, tok_end, "kernelpagesize_kB", NULL, &v) ? v : 0;
}

/* Splits numa_maps text in place into lines (each '\n' made '\0'); the end
 * of the last. */
static char *split_lines(char *text, size_t len)
{
    for (char *p = text; (p = memchr(p, '\n', (size_t)(text + len - p))) != NULL; p++)
        *p = '\0';
    return text + len;
}

/* True when two numa_maps lines of [text, end) name the same file of the
 * process's own: only then can its views overlap, and the maps say which
 * do.  A file's name stands for it here: each such file (a memfd, a SysV
 * segment, hugetlbfs's or /dev/zero's anonymous file) has only the one. */
static bool own_file_twice(const char *text, const char *end)
{
    enum { MAX_OWN = 64 };
    const char *name[MAX_OWN];
    size_t name_len[MAX_OWN];
    int n = 0;
    for (const char *l = text; l < end; l += strlen(l) + 1) {
        const char *p = third_token(l);
        if (p == NULL || strncmp(p, "file=", 5) != 0 || !own_file(p + 5))
            continue;
        p += 5;
        size_t len = strcspn(p, " ");
        for (int i = 0; i < n; i++)
            if (name_len[i] == len && memcmp(name[i], p, len) == 0)
                return true;
        if (n == MAX_OWN)
            return true; /* too many to compare: the maps answer */
        name[n] = p;
        name_len[n++] = len;
    }
    return false;
}

/* np_memory_read, with the own pages of files mapped at more than one
 * address also into *aliased (by node; may be NULL).  The maps, which give
 * each shared mapping's file range, are read only where views can overlap:
 * always for *all, which counts every file, and for the own pages when a
 * file of the process's own has two lines. */
static int read_pid(pid_t pid, struct np_memory *own, struct np_memory *all,
                    struct np_memory *aliased)
{
    char path[64];
    if (pid == 0)
        snprintf(path, sizeof path, "/proc/self/numa_maps");
    else
        snprintf(path, sizeof path, "/proc/%d/numa_maps", (int)pid);
    struct np_memory *m[3] = {own, all, aliased};
    for (int k = 0; k < 3; k++)
        if (m[k] != NULL)
            *m[k] = (struct np_memory){.pages = NULL};
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    /* The whole file at once: numa_maps has no NUL. */
    char *text = NULL;
    size_t cap = 0;
    errno = 0;
    ssize_t got = getdelim(&text, &cap, '\0', f);
    int e = got < 0 && !feof(f) ? (errno != 0 ? errno : EIO) : text == NULL ? ENOMEM : 0;
    fclose(f);
    char *end = e == 0 ? split_lines(text, got > 0 ? (size_t)got : 0) : text;
    struct aliases x = {0};
    /* Without the maps (a process that is going), numa_maps' counts. */
    if (e == 0 && (all != NULL || own_file_twice(text, end)) && find_aliases(pid, &x) != 0)
        x = (struct aliases){0};
    /* An empty table, not NULL: read, and no page anywhere. */
    for (int k = 0; k < 3; k++)
        if (e == 0 && m[k] != NULL && grow(m[k], 0) != 0)
            e = ENOMEM;
    for (char *line = text; e == 0 && line < end; line += strlen(line) + 1) {
        struct view *v = x.nv > 0 ? view_at(&x, strtoul(line, NULL, 16)) : NULL;
        unsigned long long kib = v != NULL ? line_page_kib(line) : 0;
        if (kib > 0) {
            /* Counted below, or as it is when the pages cannot be asked. */
            struct alias *a = &x.a[v->alias];
            a->page_kib = kib > a->page_kib ? kib : a->page_kib;
            a->huge = a->huge || huge_mapping(line);
            a->resident++;
            v->resident = true;
            if ((v->line = strdup(line)) == NULL)
                e = ENOMEM;
        } else if (np_memory_line(line, own, all) != 0) {
            e = ENOMEM;
        }
    }
    free(text);
    for (int i = 0; e == 0 && i < x.na; i++) {
        const struct alias *a = &x.a[i];
        const bool mine = x.v[a->first].own;
        int rc = a->resident > 1 ? count_alias(pid, &x, a, own, all, aliased) : 1;
        if (rc == 0)
            continue;
        if (rc < 0) {
            e = ENOMEM;
            break;
        }
        /* One view with pages, or move_pages refused: numa_maps' counts. */
        for (int k = a->first; e == 0 && k < a->first + a->n; k++)
            if (x.v[k].line != NULL &&
                (np_memory_line(x.v[k].line, own, all) != 0 ||
                 (mine && aliased != NULL && np_memory_line(x.v[k].line, aliased, NULL) != 0)))
                e = ENOMEM;
    }
    aliases_free(&x);
    if (e != 0) {
        for (int k = 0; k < 3; k++)
            if (m[k] != NULL)
                np_memory_free(m[k]);
        errno = e;
        return -1;
    }
    return 0;
}

int np_memory_read(pid_t pid, struct np_memory *own, struct np_memory *all)
{
    return read_pid(pid, own, all, NULL);
}

void np_memory_free(struct np_memory *m)
{
    free(m->pages);
    for (int i = 0; i < NP_MEMORY_HUGE_SIZES; i++)
        free(m->huge[i].pages);
    *m = (struct np_memory){.pages = NULL};
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

void np_memory_huge_str(char *buf, size_t len, const struct np_memory *m)
{
    if (len == 0)
        return;
    snprintf(buf, len, "%s", m->pages == NULL ? "unknown" : "none");
    int top = 0;
    for (int i = 0; m->pages != NULL && i < NP_MEMORY_HUGE_SIZES; i++)
        if (m->huge[i].kib != 0 && m->huge[i].nnodes > top)
            top = m->huge[i].nnodes;
    size_t o = 0;
    for (int n = 0; n < top && o < len; n++)
        for (int i = 0; i < NP_MEMORY_HUGE_SIZES && o < len; i++) {
            const struct np_memory_huge *h = &m->huge[i];
            if (h->kib == 0 || n >= h->nnodes || h->pages[n] == 0)
                continue;
            char size[32];
            np_hugepages_size_str(size, sizeof size, (uint64_t)h->kib * 1024);
            int w = snprintf(buf + o, len - o, "%s%d:%lldx%s", o ? "," : "", n, h->pages[n], size);
            if (w < 0)
                break;
            o += (size_t)w;
        }
}

long long np_memory_huge_bytes(const struct np_memory *m, int node)
{
    long long b = 0;
    for (int i = 0; i < NP_MEMORY_HUGE_SIZES; i++)
        if (m->huge[i].kib != 0 && node >= 0 && node < m->huge[i].nnodes)
            b += m->huge[i].pages[node] * (long long)m->huge[i].kib * 1024;
    return b;
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
    char list[256], num[24];
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
    np_json_open(j, "huge_pages", '{', false);
    for (int i = 0; i < NP_MEMORY_HUGE_SIZES; i++) {
        const struct np_memory_huge *h = &m->huge[i];
        bool any = false;
        for (int n = 0; h->kib != 0 && n < h->nnodes; n++)
            any = any || h->pages[n] > 0;
        if (!any)
            continue;
        snprintf(num, sizeof num, "%lu", h->kib);
        np_json_open(j, num, '{', false);
        for (int n = 0; n < h->nnodes; n++)
            if (h->pages[n] > 0) {
                snprintf(num, sizeof num, "%d", n);
                np_json_int(j, num, h->pages[n]);
            }
        np_json_close(j);
    }
    np_json_close(j);
    np_json_close(j);
}

/* ---- moving this process's pages ---------------------------------------- */

/* How a writable mapping of this process moves (movable). */
enum { MOVE_NONE, MOVE_ALL, MOVE_COPIES };

/* What a line of /proc/self/maps names: MOVE_ALL for a readable mapping
 * whose pages are all the process's own: private and anonymous ([heap],
 * [stack], no name, anonymous huge pages), or shared and writable of a
 * file of its own (a memfd such as ZGC's heap, a SysV segment,
 * /dev/zero); MOVE_COPIES for a private mapping of a file, whose pages the
 * process wrote are its own copies (a library's .data and .got, and the
 * RELRO part the loader relocated before making it read-only; the CDS
 * archive's read-write part) but whose others are the file's page cache,
 * which other processes share or will; MOVE_NONE for the rest, the
 * kernel's vdso, vvar and vsyscall pages among them. */
static int movable(const char *line, unsigned long *lo, unsigned long *hi)
{
    char perms[8] = "";
    int name_at = 0;
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", lo, hi, perms, &name_at) < 3)
        return MOVE_NONE;
    if (perms[0] != 'r' || (perms[3] != 'p' && perms[3] != 's'))
        return MOVE_NONE;
    const char *name = name_at > 0 ? line + name_at : "";
    if (perms[3] == 's')
        return perms[1] == 'w' && own_file(name) ? MOVE_ALL : MOVE_NONE;
    if (*name == '/')
        return strncmp(name, "/anon_hugepage", 14) == 0 ? MOVE_ALL : MOVE_COPIES;
    if (*name == '\n' || *name == '\0')
        return MOVE_ALL;
    return *name == '[' && strncmp(name, "[vvar", 5) != 0 && strncmp(name, "[vdso", 5) != 0 &&
                   strncmp(name, "[vsyscall", 9) != 0
               ? MOVE_ALL
               : MOVE_NONE;
}

/* mbind of [lo, hi) to the policy `p` with `flags`. */
static long bind_range(unsigned long lo, unsigned long hi, const struct np_policy *p, unsigned flags)
{
    return mbind((void *)lo, hi - lo, p->mode, p->empty ? NULL : p->mask,
                 p->empty ? 0 : p->nbits + 1, flags);
}

/* A private mapping of a file, [lo, hi): the policy over all of it, and
 * MPOL_MF_MOVE over each run of the process's own copies only, the pages
 * /proc/self/pagemap (`pagemap`, open) shows present and not the file's
 * (anonymous): moving the file's page cache would take it from the other
 * processes that read it.  0, or -1 with errno from the first mbind. */
static int bind_copies(int pagemap, unsigned long lo, unsigned long hi, const struct np_policy *p)
{
    if (bind_range(lo, hi, p, 0) != 0)
        return -1;
    const uint64_t present = 1ULL << 63, file = 1ULL << 61;
    unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE), run = 0, at = lo;
    uint64_t e[512];
    while (at < hi) {
        size_t want = (hi - at) / page < 512 ? (hi - at) / page : 512;
        ssize_t got = pread(pagemap, e, want * sizeof *e, (off_t)(at / page * sizeof *e));
        size_t n = got > 0 ? (size_t)got / sizeof *e : 0;
        for (size_t i = 0; i < n; i++, at += page) {
            bool copy = (e[i] & present) && !(e[i] & file);
            if (copy && run == 0)
                run = at;
            else if (!copy && run != 0) {
                bind_range(run, at, p, MPOL_MF_MOVE);
                run = 0;
            }
        }
        if (n == 0)
            break; /* unreadable: the policy alone from here */
    }
    if (run != 0)
        bind_range(run, at, p, MPOL_MF_MOVE);
    return 0;
}

/* Whether a process other than this one maps the file dev:ino, from every
 * /proc/PID/maps: 0 none (every other process's maps read), 1 one does,
 * -1 unknown (a process's maps could not be read: EACCES without the
 * right to read them).  A process that ends meanwhile maps nothing. */
static int mapped_elsewhere(unsigned long long dev, unsigned long long ino)
{
    DIR *d = opendir("/proc");
    if (d == NULL)
        return -1;
    pid_t self = getpid();
    int found = 0;
    struct dirent *de;
    char path[64], *line = NULL;
    size_t len = 0;
    while (found == 0 && (de = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end != '\0' || pid <= 0 || pid == self)
            continue;
        snprintf(path, sizeof path, "/proc/%ld/maps", pid);
        FILE *f = fopen(path, "re");
        if (f == NULL) {
            if (errno != ENOENT && errno != ESRCH)
                found = -1;
            continue;
        }
        while (found == 0 && getline(&line, &len, f) > 0) {
            unsigned long long off, i;
            unsigned dmaj, dmin;
            if (sscanf(line, "%*x-%*x %*s %llx %x:%x %llu", &off, &dmaj, &dmin, &i) == 4 &&
                i == ino && (((unsigned long long)dmaj << 32) | dmin) == dev)
                found = 1;
        }
        fclose(f);
    }
    free(line);
    closedir(d);
    return found;
}

/* The second pass of np_memory_move_self over the files of the process's
 * own that it maps at more than one address (JDK 17 ZGC's heap views):
 * MPOL_MF_MOVE leaves their pages, whose map count is above one, so
 * they are moved with MPOL_MF_MOVE_ALL, which moves a page however many
 * mappings hold it, but only over a file that no other process maps (all
 * their maps read: a page of it could otherwise be another process's).
 * The kernel allows MPOL_MF_MOVE_ALL with CAP_SYS_NICE only.  Fills
 * r->aliased_errno: 0 moved, EPERM refused, EBUSY another process maps
 * the file (or may: its maps unreadable). */
static void move_aliases(const struct np_policy *p, struct np_move *r)
{
    struct aliases x;
    if (find_aliases(0, &x) != 0 || x.na == 0)
        return;
    for (int i = 0; i < x.na; i++) {
        const struct alias *a = &x.a[i];
        if (!x.v[a->first].own)
            continue;
        if (mapped_elsewhere(x.v[a->first].dev, x.v[a->first].ino) != 0) {
            r->aliased_errno = EBUSY;
            continue;
        }
        for (int k = a->first; k < a->first + a->n; k++) {
            const struct view *v = &x.v[k];
            if (bind_range(v->lo, v->hi, p, MPOL_MF_MOVE_ALL) != 0 &&
                errno != EFAULT && errno != ENOMEM) {
                r->aliased_errno = errno;
                break;
            }
        }
    }
    aliases_free(&x);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The mbind pass of a move: the policy `p`, with MPOL_MF_MOVE, over every
 * movable mapping of this process (of a private file mapping, over the
 * process's copies only: bind_copies); r->mappings and r->refused counted.
 * 0, or -1 with errno when out of memory or every mapping refused. */
static int bind_own(const struct np_policy *p, struct np_move *r)
{
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL)
        return -1;
    /* The mappings first, then mbind: mbind may merge mappings, which
     * changes the file being read. */
    unsigned long (*ranges)[3] = NULL;
    int n = 0, cap = 0, e = 0;
    char *line = NULL;
    size_t len = 0;
    while (getline(&line, &len, maps) > 0) {
        unsigned long lo, hi;
        int how = movable(line, &lo, &hi);
        if (how == MOVE_NONE)
            continue;
        if (n == cap) {
            int ncap = cap > 0 ? 2 * cap : 256;
            unsigned long (*g)[3] = realloc(ranges, (size_t)ncap * sizeof *g);
            if (g == NULL) {
                e = ENOMEM;
                break;
            }
            ranges = g;
            cap = ncap;
        }
        ranges[n][0] = lo;
        ranges[n][1] = hi;
        ranges[n++][2] = (unsigned long)how;
    }
    free(line);
    fclose(maps);
    int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    for (int i = 0; e == 0 && i < n; i++) {
        long rc = ranges[i][2] == MOVE_COPIES
                      ? bind_copies(pagemap, ranges[i][0], ranges[i][1], p)
                      : bind_range(ranges[i][0], ranges[i][1], p, MPOL_MF_MOVE);
        if (rc == 0) {
            r->mappings++;
        } else if (errno != EFAULT && errno != ENOMEM) {
            /* EFAULT, ENOMEM: the mapping went away meanwhile. */
            if (r->refused++ == 0)
                r->fail_errno = errno;
        }
    }
    free(ranges);
    if (pagemap >= 0)
        close(pagemap);
    if (e != 0) {
        errno = e;
        return -1;
    }
    if (r->mappings == 0 && r->refused > 0) {
        errno = r->fail_errno;
        return -1;
    }
    return 0;
}

static int policy_usable(const struct np_policy *p)
{
    if (p->mode < 0 || p->error != 0 || p->mask == NULL) {
        errno = p->mode < 0 ? EINVAL : p->error != 0 ? p->error : ENOSYS;
        return -1;
    }
    return 0;
}

int np_memory_bind_self(const struct np_policy *p, struct np_move *r)
{
    memset(r, 0, sizeof *r);
    double t0 = now_ms();
    if (policy_usable(p) != 0 || bind_own(p, r) != 0)
        return -1;
    r->ms = now_ms() - t0;
    return 0;
}

int np_memory_move_self(const struct np_policy *p, hwloc_const_bitmap_t nodes, struct np_move *r)
{
    memset(r, 0, sizeof *r);
    double t0 = now_ms();
    if (policy_usable(p) != 0)
        return -1;
    struct np_memory m;
    if (np_memory_read(0, &m, NULL) != 0)
        return -1;
    r->before = np_memory_on(&m, nodes);
    long long total_before = np_memory_total(&m);
    np_memory_free(&m);
    if (bind_own(p, r) != 0)
        return -1;
    struct np_memory aliased;
    if (read_pid(0, &m, NULL, &aliased) == 0 &&
        np_memory_total(&aliased) - np_memory_on(&aliased, nodes) > 0) {
        np_memory_free(&m);
        np_memory_free(&aliased);
        move_aliases(p, r);
        if (read_pid(0, &m, NULL, &aliased) != 0)
            m.pages = aliased.pages = NULL;
    }
    if (m.pages != NULL) {
        r->resident = np_memory_total(&m);
        r->after = np_memory_on(&m, nodes);
        r->aliased_left = np_memory_total(&aliased) - np_memory_on(&aliased, nodes);
        /* What came there, less what the process allocated meanwhile. */
        long long grown = r->resident > total_before ? r->resident - total_before : 0;
        r->moved = r->after - r->before - grown > 0 ? r->after - r->before - grown : 0;
        np_memory_free(&m);
        np_memory_free(&aliased);
    }
    r->ms = now_ms() - t0;
    return 0;
}
