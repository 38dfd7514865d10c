/* np_record: slot choice, counts, and concurrent use. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "np_record.h"
#include "tests.h"

static void expect_live(struct np_record *r, const int *want, int n)
{
    int got[16];
    np_record_slot_live(r, got);
    for (int i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "slot %d has %d live threads, want %d", i, got[i], want[i]);
}

static void expect_used(struct np_record *r, const int *want, int n)
{
    int got[16];
    np_record_slot_used(r, got);
    for (int i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "slot %d was used %d times, want %d", i, got[i], want[i]);
}

static struct np_record_stats stats(struct np_record *r)
{
    struct np_record_stats st;
    np_record_stats(r, &st);
    return st;
}

START_TEST(least_loaded)
{
    struct np_record *r = np_record_create(3, NP_RECORD_KEEP_ENDED);
    ck_assert_ptr_nonnull(r);
    struct np_ref a = np_record_add(r, "a", 101, NP_PLACED, true);
    struct np_ref b = np_record_add(r, "b", 102, NP_PLACED, true);
    struct np_ref c = np_record_add(r, "c", 103, NP_PLACED, true);
    struct np_ref d = np_record_add(r, "d", 104, NP_PLACED, true);
    ck_assert(a.e && b.e && c.e && d.e);
    ck_assert_int_eq(a.e->slot, 0);
    ck_assert_int_eq(b.e->slot, 1);
    ck_assert_int_eq(c.e->slot, 2);
    ck_assert_int_eq(d.e->slot, 0); /* all tied at one: lowest index */
    expect_live(r, (int[]){2, 1, 1}, 3);
    np_record_end(r, b);
    expect_live(r, (int[]){2, 0, 1}, 3);
    ck_assert(!b.e->live);
    struct np_ref e = np_record_add(r, "e", 105, NP_PLACED, true);
    ck_assert_int_eq(e.e->slot, 1); /* the freed slot */
    struct np_ref f = np_record_add(r, "f", 106, NP_PLACED, true);
    ck_assert_int_eq(f.e->slot, 1); /* tie between 1 and 2: lowest */
    expect_live(r, (int[]){2, 2, 1}, 3);
    struct np_ref g = np_record_add(r, "g", 107, NP_PLACED, true);
    ck_assert_int_eq(g.e->slot, 2);
    /* Ending twice counts once. */
    np_record_end(r, a);
    np_record_end(r, a);
    expect_live(r, (int[]){1, 2, 2}, 3);
    expect_used(r, (int[]){2, 3, 2}, 3);
    np_record_destroy(r);
}
END_TEST

START_TEST(no_slot)
{
    struct np_record *r = np_record_create(2, NP_RECORD_KEEP_ENDED);
    ck_assert_ptr_nonnull(r);
    struct np_ref s = np_record_add(r, "main", 1, NP_SKIPPED, false);
    ck_assert_ptr_nonnull(s.e);
    ck_assert_int_eq(s.e->slot, -1);
    ck_assert(s.e->live);
    ck_assert_str_eq(s.e->name, "main");
    ck_assert_int_eq(s.e->tid, 1);
    expect_live(r, (int[]){0, 0}, 2);
    np_record_end(r, s);
    expect_live(r, (int[]){0, 0}, 2);
    np_record_destroy(r);
    /* No slots at all: take_slot gives none. */
    r = np_record_create(0, NP_RECORD_KEEP_ENDED);
    ck_assert_ptr_nonnull(r);
    s = np_record_add(r, "x", 2, NP_PLACED, true);
    ck_assert_int_eq(s.e->slot, -1);
    np_record_destroy(r);
}
END_TEST

START_TEST(failed_frees_slot)
{
    struct np_record *r = np_record_create(2, NP_RECORD_KEEP_ENDED);
    ck_assert_ptr_nonnull(r);
    struct np_ref a = np_record_add(r, "a", 1, NP_PLACED, true);
    ck_assert_int_eq(a.e->slot, 0);
    np_record_set(r, a, NP_FAILED, 22, 0, false, false);
    ck_assert_int_eq(a.e->slot, -1);
    ck_assert_int_eq(a.e->cpu_errno, 22);
    expect_live(r, (int[]){0, 0}, 2);
    expect_used(r, (int[]){0, 0}, 2);
    struct np_ref b = np_record_add(r, "b", 2, NP_PLACED, true);
    ck_assert_int_eq(b.e->slot, 0);
    np_record_end(r, a); /* no slot: nothing to release */
    expect_live(r, (int[]){1, 0}, 2);
    np_record_destroy(r);
}
END_TEST

/* Ending by thread id: the live entry of that id only; an id with none,
 * or ended already, changes nothing. */
START_TEST(end_by_tid)
{
    struct np_record *r = np_record_create(2, NP_RECORD_KEEP_ENDED);
    ck_assert_ptr_nonnull(r);
    np_record_add(r, "a", 10, NP_PLACED, true);
    np_record_add(r, "b", 11, NP_PLACED, true);
    expect_live(r, (int[]){1, 1}, 2);
    np_record_end_tid(r, 10);
    expect_live(r, (int[]){0, 1}, 2);
    ck_assert_ptr_null(np_record_find_live(r, 10).e);
    ck_assert_ptr_nonnull(np_record_find_live(r, 11).e);
    np_record_end_tid(r, 10);
    np_record_end_tid(r, 99);
    expect_live(r, (int[]){0, 1}, 2);
    struct np_counts c;
    np_record_counts(r, &c);
    ck_assert_int_eq(c.live, 1);
    ck_assert_int_eq(c.placed, 2);
    np_record_destroy(r);
}
END_TEST

START_TEST(counts)
{
    struct np_record *r = np_record_create(4, NP_RECORD_KEEP_ENDED);
    ck_assert_ptr_nonnull(r);
    struct np_ref p1 = np_record_add(r, "p1", 1, NP_PLACED, true);
    struct np_ref p2 = np_record_add(r, "p2", 2, NP_PLACED, true);
    struct np_ref p3 = np_record_add(r, "p3", 3, NP_PLACED, true);
    np_record_add(r, "s1", 4, NP_SKIPPED, false);
    np_record_add(r, "s2", 5, NP_SKIPPED, false);
    np_record_add(r, "w1", 6, NP_WOULD_PLACE, false);
    struct np_ref f1 = np_record_add(r, "f1", 7, NP_PLACED, true);
    np_record_set(r, p2, NP_PLACED, 0, 22, true, false);   /* memory failed */
    np_record_set(r, p3, NP_PLACED, 0, 0, true, true);
    np_record_set(r, f1, NP_FAILED, 1, 0, false, false);
    np_record_end(r, p1);
    np_record_end(r, f1);
    struct np_counts c;
    np_record_counts(r, &c);
    ck_assert_int_eq(c.placed, 3);
    ck_assert_int_eq(c.would_place, 1);
    ck_assert_int_eq(c.skipped, 2);
    ck_assert_int_eq(c.failed, 1);
    ck_assert_int_eq(c.mem_failed, 1);
    /* live: p2, p3 and w1 (p1 and f1 ended, skipped ones never count) */
    ck_assert_int_eq(c.live, 3);
    np_record_destroy(r);
}
END_TEST

struct each_state {
    char names[64];
    int n;
};

static void each_fn(const struct np_entry *e, void *arg)
{
    struct each_state *s = arg;
    strncat(s->names, e->name, sizeof s->names - strlen(s->names) - 1);
    s->n++;
}

/* np_record_each visits tids 1, 2, 3, then 10 on, in order. */
struct each_tids {
    int n;
    bool in_order;
};

static void each_tid_fn(const struct np_entry *e, void *arg)
{
    struct each_tids *s = arg;
    int want = s->n < 3 ? s->n + 1 : s->n - 3 + 10;
    s->in_order = s->in_order && e->tid == want;
    s->n++;
}

START_TEST(each_in_order_and_stable)
{
    struct np_record *r = np_record_create(1, NP_RECORD_KEEP_ENDED);
    ck_assert_ptr_nonnull(r);
    char name[32];
    snprintf(name, sizeof name, "A");
    struct np_ref first = np_record_add(r, name, 1, NP_PLACED, false);
    name[0] = 'Z'; /* the record keeps its own copy */
    np_record_add(r, "B", 2, NP_SKIPPED, false);
    np_record_add(r, "C", 3, NP_SKIPPED, false);
    struct each_state st = {"", 0};
    np_record_each(r, each_fn, &st);
    ck_assert_str_eq(st.names, "ABC");
    ck_assert_int_eq(st.n, 3);
    /* Many more entries than the record allocates at once, over chunks
     * of every size: each pointer stays valid, each entry its own. */
    static struct np_ref many[3000];
    for (int i = 0; i < 3000; i++)
        ck_assert_ptr_nonnull((many[i] = np_record_add(r, "many", i + 10, NP_SKIPPED, false)).e);
    ck_assert_str_eq(first.e->name, "A");
    ck_assert_int_eq(first.e->tid, 1);
    for (int i = 0; i < 3000; i++) {
        ck_assert_int_eq(many[i].e->tid, i + 10);
        ck_assert_str_eq(many[i].e->name, "many");
        if (i > 0)
            ck_assert_ptr_ne(many[i].e, many[i - 1].e);
    }
    ck_assert_int_eq(stats(r).held, 3 + 3000);
    struct each_tids et = {0, true};
    np_record_each(r, each_tid_fn, &et);
    ck_assert_int_eq(et.n, 3003);
    ck_assert(et.in_order);
    np_record_destroy(r);
}
END_TEST

#define THREADS 16
#define PER_THREAD 1000
#define SLOTS 5
#define HOLD 8 /* more than SLOTS: every batch uses every slot */

struct seen_state {
    char *tids;
    int n;
};

static void seen_once(const struct np_entry *e, void *arg)
{
    struct seen_state *st = arg;
    ck_assert_int_ge(e->tid, 0);
    ck_assert_int_lt(e->tid, THREADS * PER_THREAD);
    char want[32];
    snprintf(want, sizeof want, "t%d-%d", e->tid / PER_THREAD, e->tid % PER_THREAD);
    ck_assert_str_eq(e->name, want);
    ck_assert(!st->tids[e->tid]);
    st->tids[e->tid] = 1;
    ck_assert(!e->live);
    st->n++;
}


struct worker {
    struct np_record *r;
    int id;
    int bad_slot;
};

static void *worker(void *arg)
{
    struct worker *w = arg;
    char name[32];
    struct np_ref held[HOLD];
    for (int i = 0; i < PER_THREAD; i += HOLD) {
        /* Hold HOLD at a time, so slots are loaded while others add. */
        for (int k = 0; k < HOLD; k++) {
            snprintf(name, sizeof name, "t%d-%d", w->id, i + k);
            held[k] = np_record_add(w->r, name, w->id * PER_THREAD + i + k, NP_PLACED, true);
            if (held[k].e == NULL || held[k].e->slot < 0 || held[k].e->slot >= SLOTS)
                w->bad_slot++;
        }
        for (int k = 0; k < HOLD; k++)
            if (held[k].e != NULL)
                np_record_end(w->r, held[k]);
    }
    return NULL;
}

START_TEST(concurrent)
{
    struct np_record *r = np_record_create(SLOTS, NP_RECORD_KEEP_ENDED);
    ck_assert_ptr_nonnull(r);
    pthread_t th[THREADS];
    struct worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){r, i, 0};
        ck_assert_int_eq(pthread_create(&th[i], NULL, worker, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(w[i].bad_slot, 0);
    }
    int live[SLOTS], used = 0;
    np_record_slot_live(r, live);
    for (int s = 0; s < SLOTS; s++) {
        ck_assert_msg(live[s] == 0, "slot %d still has %d live threads", s, live[s]);
    }
    int slot_used[SLOTS];
    np_record_slot_used(r, slot_used);
    for (int s = 0; s < SLOTS; s++) {
        ck_assert_int_gt(slot_used[s], 0);
        used += slot_used[s];
    }
    ck_assert_int_eq(used, THREADS * PER_THREAD);
    struct np_counts c;
    np_record_counts(r, &c);
    ck_assert_int_eq(c.placed, THREADS * PER_THREAD);
    ck_assert_int_eq(c.live, 0);
    ck_assert_int_eq(c.skipped + c.failed + c.would_place + c.mem_failed, 0);
    /* Ended entries were reused: the record holds at most the threads
     * live at once (HOLD per worker) and the ended ones it keeps. */
    struct np_record_stats st = stats(r);
    ck_assert_int_le(st.held, NP_RECORD_KEEP_ENDED);
    ck_assert_int_eq(st.ended, NP_RECORD_KEEP_ENDED);
    ck_assert_uint_eq(st.added, THREADS * PER_THREAD);
    /* Each entry held has its own name and tid, once. */
    struct seen_state seen = {calloc(THREADS * PER_THREAD, 1), 0};
    np_record_each(r, seen_once, &seen);
    ck_assert_int_eq(seen.n, st.held);
    free(seen.tids);
    np_record_destroy(r);
}
END_TEST

/* Ended entries beyond those kept are reused: the record's size follows
 * the threads alive, and the totals still count every thread. */
START_TEST(reuse_bounded)
{
    struct np_record *r = np_record_create(2, 3);
    ck_assert_ptr_nonnull(r);
    struct np_ref held[4];
    char name[32];
    for (int i = 0; i < 10000; i++) {
        snprintf(name, sizeof name, "worker-%d", i);
        struct np_ref e = np_record_add(r, name, 1000 + i, i % 3 ? NP_PLACED : NP_SKIPPED, true);
        ck_assert_ptr_nonnull(e.e);
        ck_assert_str_eq(e.e->name, name);
        ck_assert_int_eq(e.e->tid, 1000 + i);
        ck_assert(e.e->live);
        if (i >= 4)
            np_record_end(r, held[i % 4]);
        held[i % 4] = e;
    }
    /* 4 live and 3 ended kept: the entry ended last (after the last add)
     * went straight to the free list. */
    ck_assert_int_eq(stats(r).held, 4 + 3);
    ck_assert_int_eq(stats(r).ended, 3);
    struct np_counts c;
    np_record_counts(r, &c);
    ck_assert_int_eq(c.skipped, 3334);
    ck_assert_int_eq(c.placed, 6666);
    ck_assert_int_eq(c.live, 2); /* of the last 4, 9997 and 9998 (i % 3 != 0) */
    int live[2];
    np_record_slot_live(r, live);
    ck_assert_int_eq(live[0] + live[1], 4); /* take_slot: skipped entries took one too */
    int used[2];
    np_record_slot_used(r, used);
    ck_assert_int_eq(used[0] + used[1], 10000);
    np_record_destroy(r);
}
END_TEST

/* However many threads were live at once, the record keeps (and lists) at
 * most keep_ended of them once they have ended. */
START_TEST(ended_kept_at_most)
{
    struct np_record *r = np_record_create(0, NP_RECORD_KEEP_ENDED);
    ck_assert_ptr_nonnull(r);
    static struct np_ref live[5000];
    for (int i = 0; i < 5000; i++)
        live[i] = np_record_add(r, "worker", 100 + i, NP_PLACED, false);
    for (int i = 0; i < 5000; i++)
        np_record_end(r, live[i]);
    struct np_record_stats st = stats(r);
    ck_assert_int_eq(st.ended, NP_RECORD_KEEP_ENDED);
    ck_assert_int_eq(st.held, NP_RECORD_KEEP_ENDED);
    struct np_counts c;
    np_record_counts(r, &c);
    ck_assert_int_eq(c.placed, 5000);
    np_record_destroy(r);
}
END_TEST

/* A ref to an entry reused for another thread changes nothing. */
START_TEST(stale_ref)
{
    struct np_record *r = np_record_create(2, 0);
    ck_assert_ptr_nonnull(r);
    struct np_ref old = np_record_add(r, "renamed-later", 10, NP_SKIPPED, false);
    ck_assert_ptr_nonnull(old.e);
    struct np_ref found = np_record_find_live(r, 10);
    ck_assert_ptr_eq(found.e, old.e);
    ck_assert_uint_eq(found.gen, old.gen);
    np_record_end(r, old);                        /* the thread ends... */
    ck_assert_ptr_null(np_record_find_live(r, 10).e);
    struct np_ref now = np_record_add(r, "other", 11, NP_PLACED, true); /* ...its entry is reused */
    ck_assert_ptr_eq(now.e, old.e);
    ck_assert_uint_eq(now.gen, old.gen + 1);
    /* A rescan holding the old ref renames, sets, copies, ends: refused. */
    ck_assert_int_eq(np_record_rename(r, found, "Match-1", NULL, NP_PLACED, true, NP_HOW_RESCAN), -1);
    ck_assert_int_eq(np_record_set(r, found, NP_FAILED, 1, 0, false, false), -1);
    struct np_entry copy;
    ck_assert_int_eq(np_record_copy(r, found, &copy), -1);
    np_record_end(r, found);
    ck_assert_str_eq(now.e->name, "other");
    ck_assert_int_eq(now.e->tid, 11);
    ck_assert_int_eq(now.e->outcome, NP_PLACED);
    ck_assert(now.e->live);
    ck_assert_int_eq(now.e->slot, 0);
    expect_live(r, (int[]){1, 0}, 2);
    struct np_counts c;
    np_record_counts(r, &c);
    ck_assert_int_eq(c.skipped, 1);
    ck_assert_int_eq(c.placed, 1);
    ck_assert_int_eq(c.failed, 0);
    ck_assert_int_eq(c.live, 1);
    ck_assert_int_eq(np_record_copy(r, now, &copy), 0);
    ck_assert_int_eq(copy.tid, 11);
    ck_assert_ptr_null(copy.name);
    np_record_destroy(r);
    /* An ended entry, kept, is no longer renamed either. */
    r = np_record_create(2, 5);
    ck_assert_ptr_nonnull(r);
    now = np_record_add(r, "other", 11, NP_PLACED, true);
    np_record_end(r, now);
    ck_assert_int_eq(np_record_rename(r, now, "again", NULL, NP_PLACED, true, NP_HOW_RESCAN), -1);
    ck_assert_str_eq(now.e->name, "other");
    np_record_destroy(r);
}
END_TEST

/* The totals follow each entry's latest state, also once it is reused. */
START_TEST(totals_follow_changes)
{
    struct np_record *r = np_record_create(1, 0);
    ck_assert_ptr_nonnull(r);
    struct np_ref a = np_record_add(r, "a", 1, NP_SKIPPED, false);
    ck_assert_int_eq(np_record_rename(r, a, "A", NULL, NP_PLACED, true, NP_HOW_RESCAN), 0); /* renamed to match */
    ck_assert_int_eq(a.e->slot, 0);
    ck_assert_int_eq(np_record_set(r, a, NP_PLACED, 0, 22, true, false), 0); /* memory failed */
    struct np_counts c;
    np_record_counts(r, &c);
    ck_assert_int_eq(c.skipped, 0);
    ck_assert_int_eq(c.placed, 1);
    ck_assert_int_eq(c.mem_failed, 1);
    ck_assert_int_eq(c.live, 1);
    np_record_end(r, a);
    struct np_ref b = np_record_add(r, "b", 2, NP_PLACED, true);
    ck_assert_ptr_eq(b.e, a.e);
    ck_assert(b.e->mem_ok);
    ck_assert_int_eq(np_record_set(r, b, NP_FAILED, 1, 0, false, false), 0);
    np_record_counts(r, &c);
    ck_assert_int_eq(c.placed, 1);
    ck_assert_int_eq(c.mem_failed, 1);
    ck_assert_int_eq(c.failed, 1);
    ck_assert_int_eq(c.live, 0);
    expect_used(r, (int[]){1}, 1);
    np_record_destroy(r);
}
END_TEST

struct names {
    char list[256];
};

static void collect(const struct np_entry *e, void *arg)
{
    struct names *n = arg;
    strncat(n->list, e->name, sizeof n->list - strlen(n->list) - 2);
    strcat(n->list, e->live ? " " : "- ");
}

/* each lists the live entries and the ended ones kept, in the order they
 * were added, whichever storage they reuse. */
START_TEST(each_keeps_recent_ended)
{
    struct np_record *r = np_record_create(0, 2);
    ck_assert_ptr_nonnull(r);
    struct np_ref t[6];
    const char *names[] = {"a", "b", "c", "d", "e", "f"};
    for (int i = 0; i < 4; i++)
        t[i] = np_record_add(r, names[i], i + 1, NP_PLACED, false);
    np_record_end(r, t[0]);
    np_record_end(r, t[2]);
    np_record_end(r, t[1]);
    t[4] = np_record_add(r, names[4], 5, NP_PLACED, false); /* reuses a's entry */
    ck_assert_ptr_eq(t[4].e, t[0].e);
    t[5] = np_record_add(r, names[5], 6, NP_PLACED, false); /* keeps c and b */
    struct names n = {""};
    np_record_each(r, collect, &n);
    ck_assert_str_eq(n.list, "b- c- d e f ");
    np_record_destroy(r);
}
END_TEST


START_TEST(replan_moves_live_slots)
{
    /* Three live threads in three slots, one ended: a re-plan to two slots
     * gives the live ones slots of the new plan, least loaded, in the
     * order they came; the ended one keeps its own plan's slot. */
    struct np_record *r = np_record_create(3, NP_RECORD_KEEP_ENDED);
    struct np_ref a = np_record_add(r, "a", 201, NP_PLACED, true);
    struct np_ref b = np_record_add(r, "b", 202, NP_PLACED, true);
    struct np_ref c = np_record_add(r, "c", 203, NP_PLACED, true);
    struct np_ref n = np_record_add(r, "n", 204, NP_PLACED, false); /* cpus=node: no slot */
    struct np_ref s = np_record_add(r, "s", 205, NP_SKIPPED, false);
    ck_assert_int_eq(c.e->slot, 2);
    np_record_end(r, b);
    unsigned long before = np_record_changes(r);
    ck_assert_int_eq(np_record_plan(r), 0);
    ck_assert_int_eq(np_record_replan(r, 2, 1), 0);
    ck_assert_uint_gt(np_record_changes(r), before);
    ck_assert_int_eq(np_record_plan(r), 1);
    ck_assert_int_eq(a.e->slot, 0);
    ck_assert_int_eq(a.e->plan, 1);
    ck_assert_int_eq(c.e->slot, 1);
    ck_assert_int_eq(c.e->plan, 1);
    ck_assert_int_eq(n.e->slot, -1);
    ck_assert_int_eq(n.e->plan, 1);
    ck_assert_int_eq(b.e->slot, 1);  /* ended: its slot under plan 0 */
    ck_assert_int_eq(b.e->plan, 0);
    ck_assert_int_eq(a.e->mem_plan, 0); /* it set its policy under plan 0 */
    expect_live(r, (int[]){1, 1}, 2);
    expect_used(r, (int[]){1, 1}, 2);
    /* A thread after the re-plan gets a slot of plan 1, and says so. */
    int live, slot;
    unsigned plan;
    struct np_ref d = np_record_add_live(r, "d", NULL, 206, NP_PLACED, true, -1, NP_HOW_START, &live, &slot, &plan);
    ck_assert_int_eq(plan, 1);
    ck_assert_int_eq(slot, 0);
    ck_assert_int_eq(d.e->mem_plan, 1);
    int used[2];
    ck_assert_int_eq(np_record_slot_used_of(r, 1, used, 2), 0);
    ck_assert_int_eq(used[0], 2);
    ck_assert_int_eq(np_record_slot_used_of(r, 0, used, 2), -1);
    ck_assert_int_eq(np_record_slot_used_of(r, 1, used, 3), -1);
    /* Listing for the drift check: placed and failed live ones, in order. */
    np_record_set(r, c, NP_FAILED, 1, 0, false, false);
    struct np_live *l;
    int k = np_record_placed(r, &l);
    ck_assert_int_eq(k, 4); /* a, c (failed), n, d; not b (ended) nor s (skipped) */
    ck_assert_int_eq(l[0].tid, 201);
    ck_assert_int_eq(l[1].tid, 203);
    ck_assert_int_eq(l[1].outcome, NP_FAILED);
    ck_assert_int_eq(l[2].tid, 204);
    ck_assert_int_eq(l[3].tid, 206);
    /* Placement done: once np_record_set (c) or np_record_settle (n) said so. */
    ck_assert(!l[0].settled);
    ck_assert(l[1].settled);
    ck_assert(!l[2].settled);
    free(l);
    np_record_settle(r, n);
    ck_assert_int_eq(np_record_placed(r, &l), 4);
    ck_assert(l[2].settled);
    free(l);
    (void)s;
    np_record_destroy(r);
}
END_TEST

START_TEST(drift_counts)
{
    struct np_record *r = np_record_create(1, NP_RECORD_KEEP_ENDED);
    struct np_ref a = np_record_add(r, "worker-a", 301, NP_PLACED, true);
    struct np_ref b = np_record_add(r, "worker-b", 302, NP_PLACED, true);
    /* Put back twice: counted twice, never left drifted. */
    ck_assert_int_eq(np_record_drift(r, a, false), 0);
    ck_assert_int_eq(np_record_drift(r, a, false), 0);
    ck_assert_int_eq(a.e->drift, 2);
    ck_assert(!a.e->drifted);
    /* Noted and left (drift=log) until it is back. */
    ck_assert_int_eq(np_record_drift(r, b, true), 0);
    struct np_live *l;
    ck_assert_int_eq(np_record_placed(r, &l), 2);
    ck_assert(!l[0].drifted);
    ck_assert_int_eq(l[0].drift, 2);
    ck_assert(l[1].drifted);
    free(l);
    np_record_back(r, b);
    ck_assert(!b.e->drifted);
    ck_assert_int_eq(b.e->drift, 1);
    struct np_counts c;
    np_record_counts(r, &c);
    ck_assert_int_eq(c.drift, 3);
    char name[16];
    ck_assert_int_eq(np_record_name(r, b, name, sizeof name), 0);
    ck_assert_str_eq(name, "worker-b");
    ck_assert_int_eq(np_record_name(r, a, name, 5), 0);
    ck_assert_str_eq(name, "work"); /* cut to fit */
    np_record_destroy(r);
    /* A reused entry: nothing counted, no name. */
    r = np_record_create(1, 0);
    struct np_ref x = np_record_add(r, "x", 401, NP_PLACED, true);
    np_record_end(r, x);
    struct np_ref y = np_record_add(r, "y", 402, NP_PLACED, true);
    ck_assert_ptr_eq(x.e, y.e);
    ck_assert_int_eq(np_record_drift(r, x, false), -1);
    ck_assert_int_eq(np_record_name(r, x, name, sizeof name), -1);
    np_record_counts(r, &c);
    ck_assert_int_eq(c.drift, 0);
    np_record_destroy(r);
}
END_TEST

/* Claims: a placement is told once in each epoch, only once settled. */
START_TEST(claims_once_per_epoch)
{
    struct np_record *r = np_record_create(0, NP_RECORD_KEEP_ENDED);
    struct np_entry c;
    struct np_ref a = np_record_add(r, "a", 201, NP_PLACED, false);
    struct np_ref s = np_record_add(r, "s", 202, NP_SKIPPED, false);
    struct np_ref f = np_record_add(r, "f", 203, NP_PLACED, false);
    /* Placing, not settled yet: neither claim takes it. */
    ck_assert(!np_record_claim(r, a, 1, &c));
    struct np_entry *all;
    ck_assert_int_eq(np_record_claim_all(r, 1, &all), 0);
    np_record_copies_free(all, 0);
    ck_assert_int_eq(np_record_set(r, a, NP_PLACED, 0, 22, true, false), 0);
    ck_assert_int_eq(np_record_set(r, f, NP_FAILED, 1, 0, false, false), 0);
    ck_assert(!np_record_claim(r, s, 1, &c)); /* skipped */
    ck_assert(!np_record_claim(r, f, 1, &c)); /* failed */
    ck_assert(np_record_claim(r, a, 1, &c));
    ck_assert_str_eq(c.name, "a");
    ck_assert_int_eq(c.tid, 201);
    ck_assert_int_eq(c.mem_errno, 22);
    ck_assert(c.cpu_ok && !c.mem_ok);
    free(c.name);
    ck_assert(!np_record_claim(r, a, 1, &c)); /* once in epoch 1 */
    ck_assert_int_eq(np_record_claim_all(r, 1, &all), 0);
    np_record_copies_free(all, 0);
    /* A new epoch: told again, by whichever claims first. */
    struct np_ref b = np_record_add(r, "b", 204, NP_PLACED, false);
    np_record_set(r, b, NP_PLACED, 0, 0, true, true);
    ck_assert(np_record_claim(r, b, 2, &c));
    free(c.name);
    np_record_end(r, a); /* ended, still held: still a placement to tell */
    ck_assert_int_eq(np_record_claim_all(r, 2, &all), 1);
    ck_assert_str_eq(all[0].name, "a");
    ck_assert(!all[0].live);
    np_record_copies_free(all, 1);
    ck_assert(!np_record_claim(r, a, 2, &c));
    ck_assert_int_eq(np_record_claim_all(r, 3, &all), 2);
    ck_assert_str_eq(all[0].name, "a"); /* in the order added */
    ck_assert_str_eq(all[1].name, "b");
    np_record_copies_free(all, 2);
    /* A skipped thread renamed to a match is placing again until set. */
    ck_assert_int_eq(np_record_rename(r, s, "s2", NULL, NP_PLACED, false, NP_HOW_RESCAN), 0);
    ck_assert(!np_record_claim(r, s, 3, &c));
    np_record_set(r, s, NP_PLACED, 0, 0, true, true);
    ck_assert(np_record_claim(r, s, 3, &c));
    ck_assert_str_eq(c.name, "s2");
    ck_assert_int_eq(c.how, NP_HOW_RESCAN);
    free(c.name);
    np_record_destroy(r);
}
END_TEST

/* Concurrent placements while epochs start: in each epoch a settled
 * placement is claimed at most once, by itself or by the replay; in the
 * last epoch, every placement is claimed once. */
#define RACE_THREADS 3000
#define RACE_EPOCHS 40
struct claimer {
    struct np_record *r;
    atomic_uint *epoch;
    unsigned char told[RACE_EPOCHS][RACE_THREADS]; /* claims by the placing thread */
};

static void *claimer_main(void *arg)
{
    struct claimer *c = arg;
    for (int i = 0; i < RACE_THREADS; i++) {
        struct np_ref e = np_record_add(c->r, "w", (pid_t)(1000000 + i), NP_PLACED, false);
        np_record_set(c->r, e, NP_PLACED, 0, 0, true, true);
        unsigned ep = atomic_load(c->epoch);
        struct np_entry copy;
        if (ep != 0 && np_record_claim(c->r, e, ep, &copy)) {
            c->told[ep][copy.tid - 1000000]++;
            free(copy.name);
        }
        np_record_end(c->r, e);
    }
    return NULL;
}

static void claim_all_into(struct np_record *r, unsigned ep, unsigned char *count)
{
    struct np_entry *all;
    int n = np_record_claim_all(r, ep, &all);
    ck_assert_int_ge(n, 0);
    for (int i = 0; i < n; i++)
        count[all[i].tid - 1000000]++;
    np_record_copies_free(all, n);
}

START_TEST(claims_race_with_epochs)
{
    /* Keep every ended entry: the replay must see all of them. */
    struct np_record *r = np_record_create(0, 2 * RACE_THREADS);
    atomic_uint epoch = 0;
    struct claimer *cl = calloc(1, sizeof *cl);
    static unsigned char replayed[RACE_EPOCHS][RACE_THREADS];
    cl->r = r;
    cl->epoch = &epoch;
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, claimer_main, cl), 0);
    for (unsigned ep = 1; ep < RACE_EPOCHS; ep++) {
        atomic_store(&epoch, ep); /* before the record is read, as np_agent_listen does */
        claim_all_into(r, ep, replayed[ep]);
        usleep(200);
    }
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    unsigned last = RACE_EPOCHS - 1;
    claim_all_into(r, last, replayed[last]); /* those placed after the last replay */
    for (unsigned ep = 1; ep < RACE_EPOCHS; ep++)
        for (int i = 0; i < RACE_THREADS; i++) {
            int n = replayed[ep][i] + cl->told[ep][i];
            ck_assert_msg(n <= 1, "thread %d told %d times in epoch %u", i, n, ep);
            ck_assert_msg(ep != last || n == 1, "thread %d not told in the last epoch", i);
        }
    free(cl);
    np_record_destroy(r);
}
END_TEST

Suite *record_suite(void)
{
    Suite *s = suite_create("record");
    TCase *tc = tcase_create("record");
    tcase_add_test(tc, least_loaded);
    tcase_add_test(tc, replan_moves_live_slots);
    tcase_add_test(tc, drift_counts);
    tcase_add_test(tc, no_slot);
    tcase_add_test(tc, failed_frees_slot);
    tcase_add_test(tc, end_by_tid);
    tcase_add_test(tc, counts);
    tcase_add_test(tc, each_in_order_and_stable);
    tcase_add_test(tc, concurrent);
    tcase_add_test(tc, reuse_bounded);
    tcase_add_test(tc, stale_ref);
    tcase_add_test(tc, ended_kept_at_most);
    tcase_add_test(tc, totals_follow_changes);
    tcase_add_test(tc, each_keeps_recent_ended);
    tcase_add_test(tc, claims_once_per_epoch);
    tcase_add_test(tc, claims_race_with_epochs);
    suite_add_tcase(s, tc);
    return s;
}
