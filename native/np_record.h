/* np_record: the placement record, one entry per thread numapin saw.
 *
 * The single source that the log lines, the summary and reports read.
 * Entries live in fixed-size chunks, so a pointer to one stays valid while
 * others are added; all fields are read and written under the record's
 * lock.  It also counts live placed threads per slot (a core or hardware
 * thread under cpus=core|pu) to pick the least-loaded one. */
#ifndef NP_RECORD_H
#define NP_RECORD_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

enum np_outcome {
    NP_SKIPPED,       /* name matched no pattern */
    NP_PLACED,        /* CPUs bound and verified (memory may have failed) */
    NP_WOULD_PLACE,   /* dry run */
    NP_FAILED,        /* CPU binding failed or did not verify */
};

struct np_entry {
    char *name;
    pid_t tid;
    enum np_outcome outcome;
    int slot;          /* index into the group's slots; -1 when none */
    bool live;         /* between ThreadStart and ThreadEnd */
    int cpu_errno;
    int mem_errno;
    bool mem_ok;       /* memory policy read back as requested (or none) */
    struct np_entry *next_live; /* chain of live entries with the same tid hash */
};

struct np_counts {
    int placed, would_place, skipped, failed, mem_failed, live;
};

#define NP_RECORD_CHUNK 1024
#define NP_RECORD_BUCKETS 4096

struct np_record {
    pthread_mutex_t lock;
    struct np_entry **chunks;
    int nchunks;
    int n;
    int live;           /* live threads placed (or dry-run placed) */
    int nslots;
    int *slot_live;     /* live placed threads per slot */
    int *slot_used;     /* threads ever placed per slot */
    struct np_entry *by_tid[NP_RECORD_BUCKETS]; /* live entries by tid */
};

int np_record_init(struct np_record *r, int nslots);
void np_record_destroy(struct np_record *r);

/* Adds an entry for thread `tid` named `name`.  With take_slot, also picks
 * the slot with the fewest live threads (lowest index on ties) and counts
 * the thread there.  Returns the entry, or NULL when memory runs out. */
struct np_entry *np_record_add(struct np_record *r, const char *name, pid_t tid,
                               enum np_outcome outcome, bool take_slot);

/* Like np_record_add, also returning the live count including the new
 * entry in *live. */
struct np_entry *np_record_add_live(struct np_record *r, const char *name, pid_t tid,
                                    enum np_outcome outcome, bool take_slot, int *live);

/* Live threads placed (or, in a dry run, that would be). */
int np_record_live(struct np_record *r);

/* Sets an entry's outcome after binding. */
void np_record_set(struct np_record *r, struct np_entry *e, enum np_outcome outcome,
                   int cpu_errno, int mem_errno, bool mem_ok);

/* The live entry of thread `tid`, or NULL.  The pointer stays valid (entries
 * are never freed before np_record_destroy), but read its fields through
 * np_record_copy. */
struct np_entry *np_record_find_live(struct np_record *r, pid_t tid);

/* Copies an entry's fields under the lock; name is set to NULL in the copy. */
void np_record_copy(struct np_record *r, const struct np_entry *e, struct np_entry *out);

/* Renames an entry and sets its outcome (a thread placed after a rename). */
int np_record_rename(struct np_record *r, struct np_entry *e, const char *name,
                     enum np_outcome outcome, bool take_slot);

/* The thread ended: it no longer counts in its slot. */
void np_record_end(struct np_record *r, struct np_entry *e);

void np_record_counts(struct np_record *r, struct np_counts *c);

/* Copies the live count of each slot into out[0..nslots). */
void np_record_slot_live(struct np_record *r, int *out);

/* Calls fn on every entry, in the order they were added, under the lock. */
void np_record_each(struct np_record *r, void (*fn)(const struct np_entry *, void *), void *arg);

#endif
