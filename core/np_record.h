/* np_record: the placement record, what numapin knows of the threads.
 *
 * The single source that the log lines, the summary and reports read.  It
 * holds an entry for every live thread numapin saw, the most recently
 * ended ones (NP_RECORD_KEEP_ENDED of them), and running totals over every
 * thread ever seen, so its size follows the threads alive, not the threads
 * ever started: an ended entry beyond those kept is reused for the next
 * thread.
 *
 * Entries live in fixed-size chunks, so a pointer to one stays valid; but
 * an entry may be reused for another thread once its own has ended.  An
 * np_ref names an entry in one use (its generation): every call taking a
 * ref does nothing and fails when the entry has been reused since.  All
 * fields are read and written under the record's lock, which is the
 * record's own: the record is opaque, read and changed only through these
 * functions.  It also counts live placed threads per slot (a core or
 * hardware thread under cpus=core|pu) to pick the least-loaded one. */
#ifndef NP_RECORD_H
#define NP_RECORD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* How numapin saw a thread: on the thread itself at its start, or from
 * another thread, at a late attach or by the periodic rescan; or why it
 * set a placed thread's CPUs again from outside: they had drifted from
 * what numapin set (a cpuset rewrite, a taskset), or the plan changed
 * with the process's cpuset. */
enum np_how { NP_HOW_START, NP_HOW_ATTACH, NP_HOW_RESCAN, NP_HOW_DRIFT, NP_HOW_REPLAN };

/* "start", "attach", "rescan", "drift", "replan": as the log and the
 * report show it. */
const char *np_how_name(enum np_how how);

enum np_outcome {
    NP_SKIPPED,       /* name matched no pattern */
    NP_PLACED,        /* CPUs bound and verified (memory may have failed) */
    NP_WOULD_PLACE,   /* dry run */
    NP_FAILED,        /* CPU binding failed or did not verify */
};

struct np_entry {
    /* The thread's name as UTF-8 text (np_text.h), and after its NUL, in
     * the same allocation, its escaped form when the text is not the name
     * exactly (np_entry_escaped), else a second NUL. */
    char *name;
    pid_t tid;
    enum np_outcome outcome;
    int slot;          /* index into the slots of plan `plan`; -1 when none */
    unsigned plan;     /* the plan (np_record_replan) the slot belongs to */
    unsigned mem_plan; /* the plan whose memory policy the thread set itself */
    bool live;         /* between ThreadStart and ThreadEnd */
    enum np_how how;
    int cpu_errno;
    int mem_errno;
    bool cpu_ok;       /* CPUs read back as placed */
    bool mem_ok;       /* memory policy read back as requested (or none) */
    bool settled;      /* its placement is done (np_record_set, np_record_settle) */
    unsigned told;     /* the listener's epoch it was last claimed in (np_record_claim) */
    int drift;         /* times its CPUs were found not to be what numapin set */
    bool drifted;      /* found so and left so (drift=log), not back since */
    unsigned gen;      /* how many times the entry was reused */
    unsigned long seq; /* order of addition, over the record's life */
    struct np_entry *next_live;  /* chain of live entries with the same tid hash */
    struct np_entry *next_ended; /* ended entries, oldest first */
};

/* An entry in one use: e is NULL when there is none. */
struct np_ref {
    struct np_entry *e;
    unsigned gen;
};

/* An entry's escaped name (np_text_from_mutf8), or NULL when its name
 * text is the name exactly. */
const char *np_entry_escaped(const struct np_entry *e);

/* Totals over every thread ever recorded, and the live placed ones. */
struct np_counts {
    int placed, would_place, skipped, failed, mem_failed, live;
    int drift;         /* placed threads found with other CPUs than numapin set */
};

/* Ended entries kept (for the report) before their entries are reused. */
#define NP_RECORD_KEEP_ENDED 1024

struct np_record;

/* Sizes, for tests and the stress test. */
struct np_record_stats {
    int held;              /* entries in use: live, or ended and kept */
    int ended;             /* ended entries kept */
    unsigned long added;   /* entries ever added */
};

/* A record for `nslots` slots, keeping `keep_ended` ended entries
 * (NP_RECORD_KEEP_ENDED in the agent).  NULL when memory runs out. */
struct np_record *np_record_create(int nslots, int keep_ended);
void np_record_destroy(struct np_record *r);

/* Adds an entry for thread `tid` named `name`.  With take_slot, also picks
 * the slot with the fewest live threads (lowest index on ties) and counts
 * the thread there.  Returns the entry (e NULL when memory runs out). */
struct np_ref np_record_add(struct np_record *r, const char *name, pid_t tid,
                            enum np_outcome outcome, bool take_slot);

/* Like np_record_add (which records NP_HOW_START), with the name's escaped
 * form (NULL when the text `name` is the name exactly), saying how numapin saw
 * the thread, and also returning the live count including the new entry
 * in *live and its slot (or -1) in *slot, a slot of plan *plan.  A slot
 * taken is `prefer` (a slot index, or -1 for none) when that is one of the
 * least loaded: the slot of the CPU the thread runs on, which it then
 * need not leave. */
struct np_ref np_record_add_live(struct np_record *r, const char *name, const char *escaped, pid_t tid,
                                 enum np_outcome outcome, bool take_slot, int prefer,
                                 enum np_how how, int *live, int *slot, unsigned *plan);

/* Live threads placed (or, in a dry run, that would be). */
int np_record_live(struct np_record *r);

/* Sets an entry's outcome after binding, and marks its placement done.
 * Returns 0, or -1 (nothing changed) when the entry was reused. */
int np_record_set(struct np_record *r, struct np_ref ref, enum np_outcome outcome,
                  int cpu_errno, int mem_errno, bool cpu_ok, bool mem_ok);

/* Marks an entry's placement done, as np_record_set does, without
 * changing its outcome (a thread placed from outside). */
void np_record_settle(struct np_record *r, struct np_ref ref);

/* The live entry of thread `tid` (e NULL when none). */
struct np_ref np_record_find_live(struct np_record *r, pid_t tid);

/* Copies an entry's fields under the lock; name is set to NULL in the copy.
 * Returns 0, or -1 when the entry was reused. */
int np_record_copy(struct np_record *r, struct np_ref ref, struct np_entry *out);

/* Renames a live entry (`escaped` as in np_record_add_live) and sets its outcome, seen `how` (a thread placed
 * after a rename).  Returns 0, or -1 when the entry has ended or was reused, or
 * memory ran out. */
int np_record_rename(struct np_record *r, struct np_ref ref, const char *name, const char *escaped,
                     enum np_outcome outcome, bool take_slot, enum np_how how);

/* The thread ended: it no longer counts in its slot, and its entry is kept
 * among the most recent ended ones; the oldest ended entry beyond those
 * kept is freed for reuse.  Ending twice, or a reused entry, changes
 * nothing. */
void np_record_end(struct np_record *r, struct np_ref ref);

/* The same for thread tid's live entry, if it has one, found and ended
 * under one lock (the thread ending, at its ThreadEnd). */
void np_record_end_tid(struct np_record *r, pid_t tid);

/* The order number the next entry added gets (np_entry.seq). */
unsigned long np_record_next_seq(struct np_record *r);

/* Ends the live entries added before `before` (np_record_next_seq) whose
 * thread id is not among the n `tids` (any order; sorted in place): those
 * of a list of the running threads taken after `before` was read.
 * Returns how many it ended. */
int np_record_end_absent(struct np_record *r, pid_t *tids, int n, unsigned long before);

/* qsort(3) and bsearch(3) order of pid_t values. */
int np_pid_compare(const void *a, const void *b);

/* The totals (every thread ever recorded) and the live count. */
void np_record_counts(struct np_record *r, struct np_counts *c);

/* Copies the live count of each slot into out[0..nslots). */
void np_record_slot_live(struct np_record *r, int *out);

/* Copies the count of threads ever placed in each slot into
 * out[0..nslots). */
void np_record_slot_used(struct np_record *r, int *out);

/* The same, when the slots are those of plan `plan` and there are n of
 * them: returns 0, or -1 (out unchanged) when the record's plan is
 * another (a re-plan came between). */
int np_record_slot_used_of(struct np_record *r, unsigned plan, int *out, int n);

void np_record_stats(struct np_record *r, struct np_record_stats *st);

/* Calls fn on every entry held (live threads, and the most recently ended
 * ones), in the order they were added, under the lock. */
void np_record_each(struct np_record *r, void (*fn)(const struct np_entry *, void *), void *arg);

/* The plan changed (the process's cpuset did): from now on there are
 * `nslots` slots, those of plan `plan`.  Every live thread that had a slot
 * gets one of the new ones, the least loaded, in the order they were
 * added; counts per slot start again.  Ended entries keep the slot of
 * their own plan.  Returns 0, or -1 (nothing changed) when memory runs
 * out. */
int np_record_replan(struct np_record *r, int nslots, unsigned plan);

/* The current plan (0 until the first np_record_replan). */
unsigned np_record_plan(struct np_record *r);

/* A live thread that numapin placed, or failed to, as np_record_placed
 * lists them. */
struct np_live {
    struct np_ref ref;
    pid_t tid;
    enum np_outcome outcome;
    int slot;
    unsigned plan;
    int drift;
    bool drifted;
    bool settled;      /* placed already: not a thread still placing itself */
};

/* The live entries whose outcome is NP_PLACED or NP_FAILED, in the order
 * they were added: returns how many, with *out allocated (free()), or -1
 * when memory runs out. */
int np_record_placed(struct np_record *r, struct np_live **out);

/* Notes that a placed thread's CPUs were found not to be what numapin set:
 * counted once (per thread and in the totals); `left` marks it as left so
 * (drift=log) until np_record_back.  Returns 0, or -1 when the entry was
 * reused. */
int np_record_drift(struct np_record *r, struct np_ref ref, bool left);

/* A thread marked drifted is on its CPUs again. */
void np_record_back(struct np_record *r, struct np_ref ref);

/* Copies an entry's name into buf (cut to fit).  Returns 0, or -1 when the
 * entry was reused. */
int np_record_name(struct np_record *r, struct np_ref ref, char *buf, size_t len);

/* A number that changes whenever anything in the record does: whoever
 * shows the record elsewhere (the marker) knows when to show it again. */
unsigned long np_record_changes(struct np_record *r);

/* Claims for a listener (a JFR recording, see np_agent_listen) that hears
 * of each placement once in each of its epochs (a nonzero number).  An
 * entry can be claimed when it is NP_PLACED and settled.
 *
 * np_record_claim claims one entry for `epoch`: returns true, with a copy
 * in *out (its name malloc'd, for the caller to free), when the entry can
 * be claimed and was not claimed in this epoch yet; false otherwise. */
bool np_record_claim(struct np_record *r, struct np_ref ref, unsigned epoch, struct np_entry *out);

/* Claims every entry held that can be claimed and was not in `epoch`:
 * copies them, in the order they were added, into *out (malloc'd, each
 * name malloc'd; free with np_record_copies_free).  Returns their number,
 * or -1 (nothing claimed) when memory runs out. */
int np_record_claim_all(struct np_record *r, unsigned epoch, struct np_entry **out);

void np_record_copies_free(struct np_entry *copies, int n);

#endif
