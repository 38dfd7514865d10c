#define _GNU_SOURCE
#include "np_record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Entries are in chunks that never move, so a pointer to one stays valid:
 * the first FIRST_CHUNK entries, each next chunk twice the last up to
 * CHUNK, then CHUNK each.  A JVM that places a few threads allocates and
 * clears a few kilobytes, not CHUNK entries, in its first ThreadStart. */
#define FIRST_CHUNK 32
#define GROWING 5                                    /* chunks of FIRST_CHUNK << k, k < GROWING */
#define CHUNK (FIRST_CHUNK << GROWING)               /* 1024 */
#define GROWN (FIRST_CHUNK * ((1 << GROWING) - 1))   /* entries in the growing chunks: 992 */
#define BUCKETS 4096   /* live entries by tid */

struct np_record {
    pthread_mutex_t lock;
    struct np_entry **chunks;
    int nchunks;
    int n;              /* entries in use or free */
    int cap;            /* entries in the chunks */
    unsigned long seq;  /* entries ever added */
    struct np_entry *ended_first, *ended_last; /* ended and kept, oldest first */
    int nended;
    struct np_entry *free_first; /* ended beyond those kept: ready for reuse */
    int nfree;
    int keep_ended;
    struct np_counts total;
    int nslots;
    int *slot_live;     /* live placed threads per slot */
    int *slot_used;     /* threads ever placed per slot */
    unsigned plan;      /* the plan the slots are those of */
    unsigned long changes;
    struct np_entry *by_tid[BUCKETS];
};

const char *np_how_name(enum np_how how)
{
    switch (how) {
    case NP_HOW_START: return "start";
    case NP_HOW_ATTACH: return "attach";
    case NP_HOW_RESCAN: return "rescan";
    case NP_HOW_DRIFT: return "drift";
    case NP_HOW_REPLAN: return "replan";
    }
    return "unknown";
}

struct np_record *np_record_create(int nslots, int keep_ended)
{
    struct np_record *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->nslots = nslots;
    r->keep_ended = keep_ended;
    r->slot_live = calloc(nslots > 0 ? (size_t)nslots : 1, sizeof *r->slot_live);
    r->slot_used = calloc(nslots > 0 ? (size_t)nslots : 1, sizeof *r->slot_used);
    if (r->slot_live == NULL || r->slot_used == NULL || pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r->slot_live);
        free(r->slot_used);
        free(r);
        return NULL;
    }
    return r;
}

static int chunk_entries(int k)
{
    return k < GROWING ? FIRST_CHUNK << k : CHUNK;
}

static struct np_entry *entry_at(const struct np_record *r, int i)
{
    if (i < GROWN) {
        int k = 31 - __builtin_clz((unsigned)(i / FIRST_CHUNK + 1));
        return &r->chunks[k][i - FIRST_CHUNK * ((1 << k) - 1)];
    }
    i -= GROWN;
    return &r->chunks[GROWING + i / CHUNK][i % CHUNK];
}

void np_record_destroy(struct np_record *r)
{
    if (r == NULL)
        return;
    for (int i = 0; i < r->n; i++)
        free(entry_at(r, i)->name);
    for (int c = 0; c < r->nchunks; c++)
        free(r->chunks[c]);
    free(r->chunks);
    free(r->slot_live);
    free(r->slot_used);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static unsigned bucket(pid_t tid)
{
    return (unsigned)tid % BUCKETS;
}

/* What one entry adds to the totals (live aside). */
static void tally(struct np_counts *c, const struct np_entry *e, int sign)
{
    switch (e->outcome) {
    case NP_SKIPPED: c->skipped += sign; break;
    case NP_PLACED: c->placed += sign; break;
    case NP_WOULD_PLACE: c->would_place += sign; break;
    case NP_FAILED: c->failed += sign; break;
    }
    c->mem_failed += sign * (e->outcome == NP_PLACED && !e->mem_ok);
}

/* A live thread placed, or that a dry run would place. */
static bool counts_live(const struct np_entry *e)
{
    return e->live && (e->outcome == NP_PLACED || e->outcome == NP_WOULD_PLACE);
}

/* The ref still names the entry's current use.  Under the lock. */
static bool current(struct np_ref ref)
{
    return ref.e != NULL && ref.e->gen == ref.gen;
}

/* Under the lock. */
static void unlink_live(struct np_record *r, struct np_entry *e)
{
    for (struct np_entry **p = &r->by_tid[bucket(e->tid)]; *p != NULL; p = &(*p)->next_live)
        if (*p == e) {
            *p = e->next_live;
            e->next_live = NULL;
            return;
        }
}

/* The thread of a live entry is gone: release its slot, and keep the
 * entry among the ended ones; the oldest ended entry beyond those kept
 * goes to the free list, its name returned in *drop for the caller to free
 * outside the lock.  Under the lock. */
static void end_locked(struct np_record *r, struct np_entry *e, char **drop)
{
    if (!e->live)
        return;
    r->changes++;
    r->total.live -= counts_live(e);
    if (e->slot >= 0)
        r->slot_live[e->slot]--;
    unlink_live(r, e);
    e->live = false;
    e->next_ended = NULL;
    if (r->ended_last != NULL)
        r->ended_last->next_ended = e;
    else
        r->ended_first = e;
    r->ended_last = e;
    r->nended++;
    if (r->nended > r->keep_ended) {
        struct np_entry *old = r->ended_first;
        r->ended_first = old->next_ended;
        if (r->ended_first == NULL)
            r->ended_last = NULL;
        r->nended--;
        *drop = old->name;
        old->name = NULL;
        old->gen++; /* every ref to its last use is stale from now on */
        old->next_ended = r->free_first;
        r->free_first = old;
        r->nfree++;
    }
}

/* An entry for a new thread: a free one, or a new one.  Under the lock. */
static struct np_entry *take_entry(struct np_record *r)
{
    if (r->free_first != NULL) {
        struct np_entry *e = r->free_first;
        r->free_first = e->next_ended;
        r->nfree--;
        return e;
    }
    if (r->n == r->cap) {
        struct np_entry **chunks = realloc(r->chunks, (size_t)(r->nchunks + 1) * sizeof *chunks);
        if (chunks == NULL)
            return NULL;
        r->chunks = chunks;
        int n = chunk_entries(r->nchunks);
        if ((chunks[r->nchunks] = calloc((size_t)n, sizeof **chunks)) == NULL)
            return NULL;
        r->nchunks++;
        r->cap += n;
    }
    return entry_at(r, r->n++);
}

/* The live entry of thread `tid`, or NULL; under the lock. */
static struct np_entry *live_locked(struct np_record *r, pid_t tid)
{
    struct np_entry *e = r->by_tid[bucket(tid)];
    while (e != NULL && e->tid != tid)
        e = e->next_live;
    return e;
}

struct np_ref np_record_find_live(struct np_record *r, pid_t tid)
{
    pthread_mutex_lock(&r->lock);
    struct np_entry *e = live_locked(r, tid);
    struct np_ref ref = {e, e != NULL ? e->gen : 0};
    pthread_mutex_unlock(&r->lock);
    return ref;
}

int np_record_copy(struct np_record *r, struct np_ref ref, struct np_entry *out)
{
    pthread_mutex_lock(&r->lock);
    bool ok = current(ref);
    if (ok)
        *out = *ref.e;
    pthread_mutex_unlock(&r->lock);
    if (!ok)
        return -1;
    out->name = NULL;
    out->next_live = out->next_ended = NULL;
    return 0;
}

/* The slot with the fewest live threads: `prefer` when it is one of
 * them, else the lowest such. */
static int least_loaded(const struct np_record *r, int prefer)
{
    int best = 0;
    for (int s = 1; s < r->nslots; s++)
        if (r->slot_live[s] < r->slot_live[best])
            best = s;
    if (prefer >= 0 && prefer < r->nslots && r->slot_live[prefer] == r->slot_live[best])
        best = prefer;
    return best;
}

/* Counts a live entry in the least-loaded slot.  Under the lock. */
static void take_slot_locked(struct np_record *r, struct np_entry *e, int prefer)
{
    if (r->nslots > 0 && e->slot < 0) {
        e->plan = r->plan;
        e->slot = least_loaded(r, prefer);
        r->slot_live[e->slot]++;
        r->slot_used[e->slot]++;
    }
}

/* name and escaped (or NULL) in one allocation, as np_entry holds them. */
static char *name_dup(const char *name, const char *escaped)
{
    size_t n = strlen(name) + 1, m = escaped != NULL ? strlen(escaped) + 1 : 1;
    char *copy = malloc(n + m);
    if (copy != NULL) {
        memcpy(copy, name, n);
        memcpy(copy + n, escaped != NULL ? escaped : "", m);
    }
    return copy;
}

const char *np_entry_escaped(const struct np_entry *e)
{
    if (e->name == NULL)
        return NULL;
    const char *x = e->name + strlen(e->name) + 1;
    return *x != '\0' ? x : NULL;
}

struct np_ref np_record_add(struct np_record *r, const char *name, pid_t tid,
                            enum np_outcome outcome, bool take_slot)
{
    int live, slot;
    unsigned plan;
    return np_record_add_live(r, name, NULL, tid, outcome, take_slot, -1, NP_HOW_START, &live, &slot,
                              &plan);
}

int np_record_live(struct np_record *r)
{
    pthread_mutex_lock(&r->lock);
    int live = r->total.live;
    pthread_mutex_unlock(&r->lock);
    return live;
}

struct np_ref np_record_add_live(struct np_record *r, const char *name, const char *escaped, pid_t tid,
                                 enum np_outcome outcome, bool take_slot, int prefer,
                                 enum np_how how, int *live, int *slot, unsigned *plan)
{
    struct np_ref ref = {NULL, 0};
    char *drop = NULL;
    *slot = -1;
    char *copy = name_dup(name, escaped);
    if (copy == NULL) {
        *live = np_record_live(r);
        return ref;
    }
    pthread_mutex_lock(&r->lock);
    /* A tid seen live again belongs to a new thread: the old entry's
     * thread is gone (its ThreadEnd was not seen). */
    for (struct np_entry *o = r->by_tid[bucket(tid)]; o != NULL; o = o->next_live)
        if (o->tid == tid) {
            end_locked(r, o, &drop);
            break;
        }
    struct np_entry *e = take_entry(r);
    if (e != NULL) {
        char *old = e->name;
        unsigned gen = e->gen;
        *e = (struct np_entry){
            .name = copy, .tid = tid, .outcome = outcome, .slot = -1, .live = true, .how = how,
            .cpu_ok = true, .mem_ok = true, .gen = gen, .seq = r->seq++, .next_live = r->by_tid[bucket(tid)],
            .plan = r->plan, .mem_plan = r->plan,
        };
        r->changes++;
        copy = old; /* freed below, outside the lock */
        r->by_tid[bucket(tid)] = e;
        tally(&r->total, e, +1);
        r->total.live += counts_live(e);
        if (take_slot)
            take_slot_locked(r, e, prefer);
        ref = (struct np_ref){e, e->gen};
        *slot = e->slot;
    }
    *live = r->total.live;
    *plan = r->plan;
    pthread_mutex_unlock(&r->lock);
    free(copy);
    free(drop);
    return ref;
}

int np_record_set(struct np_record *r, struct np_ref ref, enum np_outcome outcome,
                  int cpu_errno, int mem_errno, bool cpu_ok, bool mem_ok)
{
    pthread_mutex_lock(&r->lock);
    if (!current(ref)) {
        pthread_mutex_unlock(&r->lock);
        return -1;
    }
    struct np_entry *e = ref.e;
    tally(&r->total, e, -1);
    r->total.live -= counts_live(e);
    if (outcome == NP_FAILED && e->slot >= 0) {
        /* not placed after all */
        if (e->live)
            r->slot_live[e->slot]--;
        r->slot_used[e->slot]--;
        e->slot = -1;
    }
    e->outcome = outcome;
    e->cpu_errno = cpu_errno;
    e->mem_errno = mem_errno;
    e->cpu_ok = cpu_ok;
    e->mem_ok = mem_ok;
    e->settled = true;
    tally(&r->total, e, +1);
    r->total.live += counts_live(e);
    r->changes++;
    pthread_mutex_unlock(&r->lock);
    return 0;
}

void np_record_settle(struct np_record *r, struct np_ref ref)
{
    pthread_mutex_lock(&r->lock);
    if (current(ref) && !ref.e->settled) {
        ref.e->settled = true;
        r->changes++;
    }
    pthread_mutex_unlock(&r->lock);
}

void np_record_end_tid(struct np_record *r, pid_t tid)
{
    char *drop = NULL;
    pthread_mutex_lock(&r->lock);
    struct np_entry *e = live_locked(r, tid);
    if (e != NULL)
        end_locked(r, e, &drop);
    pthread_mutex_unlock(&r->lock);
    free(drop);
}

unsigned long np_record_next_seq(struct np_record *r)
{
    pthread_mutex_lock(&r->lock);
    unsigned long seq = r->seq;
    pthread_mutex_unlock(&r->lock);
    return seq;
}

int np_pid_compare(const void *x, const void *y)
{
    pid_t a = *(const pid_t *)x, b = *(const pid_t *)y;
    return (a > b) - (a < b);
}

int np_record_end_absent(struct np_record *r, pid_t *tids, int n, unsigned long before)
{
    int ended = 0;
    if (n > 0)
        qsort(tids, (size_t)n, sizeof *tids, np_pid_compare);
    pthread_mutex_lock(&r->lock);
    for (size_t b = 0; b < BUCKETS; b++)
        for (struct np_entry *e = r->by_tid[b], *next; e != NULL; e = next) {
            next = e->next_live;
            if (e->seq >= before ||
                (n > 0 && bsearch(&e->tid, tids, (size_t)n, sizeof *tids, np_pid_compare) != NULL))
                continue;
            char *drop = NULL;
            end_locked(r, e, &drop);
            free(drop);
            ended++;
        }
    pthread_mutex_unlock(&r->lock);
    return ended;
}

void np_record_end(struct np_record *r, struct np_ref ref)
{
    char *drop = NULL;
    pthread_mutex_lock(&r->lock);
    if (current(ref))
        end_locked(r, ref.e, &drop);
    pthread_mutex_unlock(&r->lock);
    free(drop);
}

int np_record_rename(struct np_record *r, struct np_ref ref, const char *name, const char *escaped,
                     enum np_outcome outcome, bool take_slot, enum np_how how)
{
    char *copy = name_dup(name, escaped);
    if (copy == NULL)
        return -1;
    pthread_mutex_lock(&r->lock);
    struct np_entry *e = ref.e;
    bool ok = current(ref) && e->live;
    if (ok) {
        char *old = e->name;
        e->name = copy;
        copy = old;
        tally(&r->total, e, -1);
        r->total.live -= counts_live(e);
        bool placing = e->outcome == NP_SKIPPED && outcome != NP_SKIPPED;
        e->outcome = outcome;
        e->how = how;
        e->settled = !placing && e->settled;
        if (placing && take_slot)
            take_slot_locked(r, e, -1);
        tally(&r->total, e, +1);
        r->total.live += counts_live(e);
        r->changes++;
    }
    pthread_mutex_unlock(&r->lock);
    free(copy);
    return ok ? 0 : -1;
}

void np_record_counts(struct np_record *r, struct np_counts *c)
{
    pthread_mutex_lock(&r->lock);
    *c = r->total;
    pthread_mutex_unlock(&r->lock);
}

void np_record_slot_live(struct np_record *r, int *out)
{
    pthread_mutex_lock(&r->lock);
    memcpy(out, r->slot_live, (size_t)r->nslots * sizeof *out);
    pthread_mutex_unlock(&r->lock);
}

void np_record_slot_used(struct np_record *r, int *out)
{
    pthread_mutex_lock(&r->lock);
    memcpy(out, r->slot_used, (size_t)r->nslots * sizeof *out);
    pthread_mutex_unlock(&r->lock);
}

int np_record_slot_used_of(struct np_record *r, unsigned plan, int *out, int n)
{
    pthread_mutex_lock(&r->lock);
    bool ok = r->plan == plan && r->nslots == n;
    if (ok)
        memcpy(out, r->slot_used, (size_t)n * sizeof *out);
    pthread_mutex_unlock(&r->lock);
    return ok ? 0 : -1;
}

void np_record_stats(struct np_record *r, struct np_record_stats *st)
{
    pthread_mutex_lock(&r->lock);
    st->held = r->n - r->nfree;
    st->ended = r->nended;
    st->added = r->seq;
    pthread_mutex_unlock(&r->lock);
}

static int by_seq(const void *a, const void *b)
{
    unsigned long x = (*(struct np_entry *const *)a)->seq, y = (*(struct np_entry *const *)b)->seq;
    return (x > y) - (x < y);
}

/* The entries held (free ones aside), or only the live ones, in the order
 * they were added.  Under the lock; NULL when memory runs out. */
static struct np_entry **in_order(struct np_record *r, bool live_only, int *n)
{
    struct np_entry **order = malloc((size_t)(r->n > 0 ? r->n : 1) * sizeof *order);
    *n = 0;
    if (order == NULL)
        return NULL;
    for (int i = 0; i < r->n; i++) {
        struct np_entry *e = entry_at(r, i);
        if (e->name != NULL && (e->live || !live_only))
            order[(*n)++] = e;
    }
    qsort(order, (size_t)*n, sizeof *order, by_seq);
    return order;
}

void np_record_each(struct np_record *r, void (*fn)(const struct np_entry *, void *), void *arg)
{
    pthread_mutex_lock(&r->lock);
    int held;
    struct np_entry **order = in_order(r, false, &held);
    if (order != NULL) {
        for (int i = 0; i < held; i++)
            fn(order[i], arg);
        free(order);
    } else {
        for (int i = 0; i < r->n; i++) /* out of memory: storage order */
            if (entry_at(r, i)->name != NULL)
                fn(entry_at(r, i), arg);
    }
    pthread_mutex_unlock(&r->lock);
}

unsigned np_record_plan(struct np_record *r)
{
    pthread_mutex_lock(&r->lock);
    unsigned plan = r->plan;
    pthread_mutex_unlock(&r->lock);
    return plan;
}

int np_record_replan(struct np_record *r, int nslots, unsigned plan)
{
    int *live = calloc(nslots > 0 ? (size_t)nslots : 1, sizeof *live);
    int *used = calloc(nslots > 0 ? (size_t)nslots : 1, sizeof *used);
    if (live == NULL || used == NULL) {
        free(live);
        free(used);
        return -1;
    }
    pthread_mutex_lock(&r->lock);
    int n;
    struct np_entry **order = in_order(r, true, &n);
    if (order == NULL) {
        pthread_mutex_unlock(&r->lock);
        free(live);
        free(used);
        return -1;
    }
    int *old_live = r->slot_live, *old_used = r->slot_used;
    r->slot_live = live;
    r->slot_used = used;
    r->nslots = nslots;
    r->plan = plan;
    for (int i = 0; i < n; i++) {
        struct np_entry *e = order[i];
        e->plan = plan;
        if (e->slot >= 0) {
            e->slot = -1;
            take_slot_locked(r, e, -1);
        }
    }
    r->changes++;
    pthread_mutex_unlock(&r->lock);
    free(order);
    free(old_live);
    free(old_used);
    return 0;
}

int np_record_placed(struct np_record *r, struct np_live **out)
{
    *out = NULL;
    pthread_mutex_lock(&r->lock);
    int n;
    struct np_entry **order = in_order(r, true, &n);
    struct np_live *l = order != NULL ? malloc((size_t)(n > 0 ? n : 1) * sizeof *l) : NULL;
    int k = 0;
    for (int i = 0; l != NULL && i < n; i++) {
        struct np_entry *e = order[i];
        if (e->outcome != NP_PLACED && e->outcome != NP_FAILED)
            continue;
        l[k++] = (struct np_live){
            .ref = {e, e->gen}, .tid = e->tid, .outcome = e->outcome, .slot = e->slot,
            .plan = e->plan, .drift = e->drift, .drifted = e->drifted, .settled = e->settled,
        };
    }
    pthread_mutex_unlock(&r->lock);
    free(order);
    if (l == NULL)
        return -1;
    *out = l;
    return k;
}

int np_record_drift(struct np_record *r, struct np_ref ref, bool left)
{
    pthread_mutex_lock(&r->lock);
    bool ok = current(ref);
    if (ok) {
        ref.e->drift++;
        ref.e->drifted = left;
        r->total.drift++;
        r->changes++;
    }
    pthread_mutex_unlock(&r->lock);
    return ok ? 0 : -1;
}

void np_record_back(struct np_record *r, struct np_ref ref)
{
    pthread_mutex_lock(&r->lock);
    if (current(ref) && ref.e->drifted) {
        ref.e->drifted = false;
        r->changes++;
    }
    pthread_mutex_unlock(&r->lock);
}

int np_record_name(struct np_record *r, struct np_ref ref, char *buf, size_t len)
{
    pthread_mutex_lock(&r->lock);
    bool ok = current(ref) && ref.e->name != NULL;
    if (ok && len > 0)
        snprintf(buf, len, "%s", ref.e->name);
    pthread_mutex_unlock(&r->lock);
    return ok ? 0 : -1;
}

unsigned long np_record_changes(struct np_record *r)
{
    pthread_mutex_lock(&r->lock);
    unsigned long c = r->changes;
    pthread_mutex_unlock(&r->lock);
    return c;
}

/* Under the lock. */
static bool claimable(const struct np_entry *e, unsigned epoch)
{
    return e->outcome == NP_PLACED && e->settled && e->told != epoch;
}

/* A copy of e with its own name, or -1.  Under the lock. */
static int copy_locked(const struct np_entry *e, struct np_entry *out)
{
    *out = *e;
    out->next_live = out->next_ended = NULL;
    out->name = name_dup(e->name, np_entry_escaped(e));
    return out->name != NULL ? 0 : -1;
}

bool np_record_claim(struct np_record *r, struct np_ref ref, unsigned epoch, struct np_entry *out)
{
    pthread_mutex_lock(&r->lock);
    bool ok = current(ref) && claimable(ref.e, epoch) && copy_locked(ref.e, out) == 0;
    if (ok)
        ref.e->told = epoch;
    pthread_mutex_unlock(&r->lock);
    return ok;
}

int np_record_claim_all(struct np_record *r, unsigned epoch, struct np_entry **out)
{
    pthread_mutex_lock(&r->lock);
    int held, n = 0;
    struct np_entry **order = in_order(r, false, &held);
    struct np_entry *copies = order != NULL ? calloc((size_t)(held > 0 ? held : 1), sizeof *copies)
                                            : NULL;
    bool ok = copies != NULL;
    for (int i = 0; ok && i < held; i++)
        if (claimable(order[i], epoch))
            ok = copy_locked(order[i], &copies[n++]) == 0;
    if (ok)
        for (int i = 0; i < held; i++)
            if (claimable(order[i], epoch))
                order[i]->told = epoch;
    pthread_mutex_unlock(&r->lock);
    free(order);
    if (!ok) {
        np_record_copies_free(copies, n);
        *out = NULL;
        return -1;
    }
    *out = copies;
    return n;
}

void np_record_copies_free(struct np_entry *copies, int n)
{
    for (int i = 0; copies != NULL && i < n; i++)
        free(copies[i].name);
    free(copies);
}
