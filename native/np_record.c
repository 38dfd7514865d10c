#define _GNU_SOURCE
#include "np_record.h"

#include <stdlib.h>
#include <string.h>

int np_record_init(struct np_record *r, int nslots)
{
    memset(r, 0, sizeof *r);
    r->nslots = nslots;
    r->slot_live = calloc(nslots > 0 ? (size_t)nslots : 1, sizeof *r->slot_live);
    r->slot_used = calloc(nslots > 0 ? (size_t)nslots : 1, sizeof *r->slot_used);
    if (r->slot_live == NULL || r->slot_used == NULL) {
        free(r->slot_live);
        free(r->slot_used);
        return -1;
    }
    return pthread_mutex_init(&r->lock, NULL) == 0 ? 0 : -1;
}

void np_record_destroy(struct np_record *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->chunks[i / NP_RECORD_CHUNK][i % NP_RECORD_CHUNK].name);
    for (int c = 0; c < r->nchunks; c++)
        free(r->chunks[c]);
    free(r->chunks);
    free(r->slot_live);
    free(r->slot_used);
    pthread_mutex_destroy(&r->lock);
    memset(r, 0, sizeof *r);
}

static unsigned bucket(pid_t tid)
{
    return (unsigned)tid % NP_RECORD_BUCKETS;
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

struct np_entry *np_record_find_live(struct np_record *r, pid_t tid)
{
    pthread_mutex_lock(&r->lock);
    struct np_entry *e = r->by_tid[bucket(tid)];
    while (e != NULL && e->tid != tid)
        e = e->next_live;
    pthread_mutex_unlock(&r->lock);
    return e;
}

void np_record_copy(struct np_record *r, const struct np_entry *e, struct np_entry *out)
{
    pthread_mutex_lock(&r->lock);
    *out = *e;
    pthread_mutex_unlock(&r->lock);
    out->name = NULL;
    out->next_live = NULL;
}

static int least_loaded(const struct np_record *r)
{
    int best = 0;
    for (int s = 1; s < r->nslots; s++)
        if (r->slot_live[s] < r->slot_live[best])
            best = s;
    return best;
}

struct np_entry *np_record_add(struct np_record *r, const char *name, pid_t tid,
                               enum np_outcome outcome, bool take_slot)
{
    int live;
    return np_record_add_live(r, name, tid, outcome, take_slot, &live);
}

int np_record_live(struct np_record *r)
{
    pthread_mutex_lock(&r->lock);
    int live = r->live;
    pthread_mutex_unlock(&r->lock);
    return live;
}

struct np_entry *np_record_add_live(struct np_record *r, const char *name, pid_t tid,
                                    enum np_outcome outcome, bool take_slot, int *live)
{
    char *copy = strdup(name);
    if (copy == NULL)
        return NULL;
    struct np_entry *e = NULL;
    pthread_mutex_lock(&r->lock);
    if (r->n == r->nchunks * NP_RECORD_CHUNK) {
        struct np_entry **chunks = realloc(r->chunks, (size_t)(r->nchunks + 1) * sizeof *chunks);
        if (chunks == NULL)
            goto out;
        r->chunks = chunks;
        if ((chunks[r->nchunks] = calloc(NP_RECORD_CHUNK, sizeof **chunks)) == NULL)
            goto out;
        r->nchunks++;
    }
    e = &r->chunks[r->n / NP_RECORD_CHUNK][r->n % NP_RECORD_CHUNK];
    r->n++;
    e->name = copy;
    copy = NULL;
    e->tid = tid;
    e->outcome = outcome;
    e->mem_ok = true;
    e->slot = -1;
    e->live = true;
    /* A tid seen live again belongs to a new thread: the old entry's
     * thread is gone (its ThreadEnd was not seen). */
    for (struct np_entry *o = r->by_tid[bucket(tid)]; o != NULL; o = o->next_live)
        if (o->tid == tid) {
            if (o->slot >= 0)
                r->slot_live[o->slot]--;
            if (o->outcome != NP_SKIPPED && o->outcome != NP_FAILED)
                r->live--;
            o->live = false;
            unlink_live(r, o);
            break;
        }
    e->next_live = r->by_tid[bucket(tid)];
    r->by_tid[bucket(tid)] = e;
    r->live += outcome != NP_SKIPPED;
    if (take_slot && r->nslots > 0) {
        e->slot = least_loaded(r);
        r->slot_live[e->slot]++;
        r->slot_used[e->slot]++;
    }
out:
    *live = r->live;
    pthread_mutex_unlock(&r->lock);
    free(copy);
    return e;
}

void np_record_set(struct np_record *r, struct np_entry *e, enum np_outcome outcome,
                   int cpu_errno, int mem_errno, bool mem_ok)
{
    pthread_mutex_lock(&r->lock);
    if (outcome == NP_FAILED && e->live && e->outcome != NP_FAILED) {
        r->live--; /* not placed after all */
        if (e->slot >= 0) {
            r->slot_live[e->slot]--;
            r->slot_used[e->slot]--;
            e->slot = -1;
        }
    }
    e->outcome = outcome;
    e->cpu_errno = cpu_errno;
    e->mem_errno = mem_errno;
    e->mem_ok = mem_ok;
    pthread_mutex_unlock(&r->lock);
}

void np_record_end(struct np_record *r, struct np_entry *e)
{
    pthread_mutex_lock(&r->lock);
    if (e->live && e->slot >= 0)
        r->slot_live[e->slot]--;
    if (e->live && e->outcome != NP_SKIPPED && e->outcome != NP_FAILED)
        r->live--;
    if (e->live)
        unlink_live(r, e);
    e->live = false;
    pthread_mutex_unlock(&r->lock);
}

int np_record_rename(struct np_record *r, struct np_entry *e, const char *name,
                     enum np_outcome outcome, bool take_slot)
{
    char *copy = strdup(name);
    if (copy == NULL)
        return -1;
    pthread_mutex_lock(&r->lock);
    free(e->name);
    e->name = copy;
    if (e->outcome == NP_SKIPPED && outcome != NP_SKIPPED && e->live) {
        r->live++;
        if (take_slot && r->nslots > 0 && e->slot < 0) {
            e->slot = least_loaded(r);
            r->slot_live[e->slot]++;
            r->slot_used[e->slot]++;
        }
    }
    e->outcome = outcome;
    pthread_mutex_unlock(&r->lock);
    return 0;
}

void np_record_counts(struct np_record *r, struct np_counts *c)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_lock(&r->lock);
    for (int i = 0; i < r->n; i++) {
        const struct np_entry *e = &r->chunks[i / NP_RECORD_CHUNK][i % NP_RECORD_CHUNK];
        switch (e->outcome) {
        case NP_SKIPPED: c->skipped++; break;
        case NP_PLACED: c->placed++; break;
        case NP_WOULD_PLACE: c->would_place++; break;
        case NP_FAILED: c->failed++; break;
        }
        c->mem_failed += e->outcome == NP_PLACED && !e->mem_ok;
        c->live += e->live && e->outcome != NP_SKIPPED && e->outcome != NP_FAILED;
    }
    pthread_mutex_unlock(&r->lock);
}

void np_record_slot_live(struct np_record *r, int *out)
{
    pthread_mutex_lock(&r->lock);
    memcpy(out, r->slot_live, (size_t)r->nslots * sizeof *out);
    pthread_mutex_unlock(&r->lock);
}

void np_record_each(struct np_record *r, void (*fn)(const struct np_entry *, void *), void *arg)
{
    pthread_mutex_lock(&r->lock);
    for (int i = 0; i < r->n; i++)
        fn(&r->chunks[i / NP_RECORD_CHUNK][i % NP_RECORD_CHUNK], arg);
    pthread_mutex_unlock(&r->lock);
}
