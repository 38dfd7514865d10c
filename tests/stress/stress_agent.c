/* stress_agent: the whole ThreadStart/ThreadEnd path of np_agent, without a
 * JVM, from many threads at once.  Built three ways by mk/hardening.mk:
 * plain, ASan+UBSan (LeakSanitizer checks that np_agent_destroy frees
 * everything) and TSan (no data race between callbacks).
 *
 *   stress_agent [--threads N] [--rounds R]
 *
 * The machine is the fake one of the unit tests laid over this one
 * (HWLOC_SYNTHETIC "pack:1 numa:2 core:1 pu:1", HWLOC_THISSYSTEM=1): fake
 * node 0 is CPU 0, fake node 1 CPU 1, so binding is real; a memory policy
 * on node 1 fails with EINVAL (the host has node 0 only), which exercises
 * the memory-failure path.  Needs CPUs 0 and 1.
 *
 * For each configuration, each round starts N threads that wait at a
 * barrier, then all call np_agent_thread_start at once (a name that
 * matches threads= for 3 threads in 4, one that does not for the rest), read
 * back their own CPU binding, and publish their tid.  Meanwhile a rescan
 * thread calls np_agent_seen on every published tid, the way the agent's
 * rescan thread does, and "renames" one thread in 8 of those that did not
 * match, so that it is placed from outside.  When all threads of the round
 * have started and been seen, the slot counts are checked, and all threads
 * call np_agent_thread_ended at once (where the agent wants ThreadEnd; under
 * cpus=node their exits end them) and exit.  At the end the placement
 * record must count exactly the threads started (placed or would-place,
 * skipped, renamed, memory failures), none live, every slot empty, and the
 * log file must hold one well-formed line per event (no torn or mixed
 * lines: each is one write(2)).  Exit status 0, or 1 with the failures on
 * stderr.
 *
 * First, thread ids that are no thread of this process (a child process,
 * init, nonsense) go through np_agent_seen, as ids read from the JVM's
 * memory do: nothing may be bound or recorded.
 *
 * Last, re-plans under load: while rounds of threads start and end, the
 * rescan thread's work runs again and again, as when the process's cpuset
 * keeps changing: np_agent_replan onto CPUs 0-1, 0 and 1 in turn (each
 * publishing new targets while callbacks read the old ones), and
 * np_agent_check (drift restore, the marker).  Every placed thread must
 * read back one of CPUs 0 and 1, every thread count once, and nothing be
 * left live in a slot; under TSan, no data race. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "np_agent.h"

#include <numaif.h>

static int failures;

#define CHECK(cond, ...)                                                                         \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "stress_agent: FAIL %s:%d: ", __FILE__, __LINE__);                   \
            fprintf(stderr, __VA_ARGS__);                                                        \
            fputc('\n', stderr);                                                                 \
            __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);                                  \
        }                                                                                        \
    } while (0)

struct config {
    const char *options;   /* without log= */
    bool dryrun;
    bool mem_fails;        /* every placed thread's memory policy is refused */
    int expect_cpus;       /* -1: one of CPUs 0 and 1; else that CPU */
};

/* The configurations run one after another in this process: with two
 * groups each takes scope=threads, so that the checks see each thread's own
 * placement rather than the process's (the whole-JVM default binds the
 * process; unbind_process() undoes that before the next configuration). */
static const struct config configs[] = {
    /* One group over both fake nodes: two cores to balance over. */
    {"groups=1,cpus=core,mem=bind:0", false, false, -1},
    {"group=0,groups=2,cpus=node,scope=threads", false, false, 0},
    {"group=1,groups=2,cpus=pu,scope=threads", false, true, 1},
    {"groups=1,cpus=pu,mem=none", false, false, -1},
    {"group=0,groups=2,cpus=core,mem=bind,scope=threads", false, false, 0},
    {"groups=1,cpus=core,dryrun", true, false, -1},
};

struct round {
    struct np_agent *agent;
    const struct config *cfg;
    int nthreads;
    pthread_barrier_t start, seen, end;
    _Atomic pid_t *tids;        /* published after thread_start; 0 before */
    bool *matches;
    atomic_int bad_binding;
};

struct worker {
    struct round *r;
    int index;
    int round_no;
};

static bool name_matches(int index) { return index % 4 != 3; }
static bool renamed(int index) { return !name_matches(index) && index % 8 == 7; }

static void worker_name(char *buf, size_t len, int round_no, int index)
{
    if (name_matches(index))
        snprintf(buf, len, "ForkJoinPool-%d-worker-%d", round_no, index);
    else
        snprintf(buf, len, "Other \"%d\"\t%d", round_no, index); /* quoted in the log */
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct round *r = w->r;
    char name[64];
    worker_name(name, sizeof name, w->round_no, w->index);
    pid_t tid = gettid();
    pthread_barrier_wait(&r->start);
    np_agent_thread_start(r->agent, name, NULL, tid);
    if (name_matches(w->index) && !r->cfg->dryrun) {
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1 ||
            (r->cfg->expect_cpus >= 0 && !CPU_ISSET(r->cfg->expect_cpus, &set)) ||
            (!CPU_ISSET(0, &set) && !CPU_ISSET(1, &set)))
            atomic_fetch_add(&r->bad_binding, 1);
    }
    atomic_store(&r->tids[w->index], tid);
    pthread_barrier_wait(&r->seen); /* the rescan thread has seen everyone */
    pthread_barrier_wait(&r->end);  /* the slot counts have been checked */
    if (np_agent_wants_thread_end(r->agent))
        np_agent_thread_ended(r->agent, tid); /* else its exit ends it, as in the JVM */
    return NULL;
}

/* The agent's rescan thread: sees every thread of the round as it starts;
 * renames some of the threads whose names did not match. */
static void *rescan_main(void *arg)
{
    struct round *r = arg;
    bool *done = calloc((size_t)r->nthreads, sizeof *done);
    int left = r->nthreads;
    while (left > 0) {
        for (int i = 0; i < r->nthreads; i++) {
            pid_t tid = atomic_load(&r->tids[i]);
            if (done[i] || tid == 0)
                continue;
            char name[64];
            if (renamed(i))
                snprintf(name, sizeof name, "ForkJoinPool-renamed-worker-%d", i);
            else
                worker_name(name, sizeof name, 0, i);
            np_agent_seen(r->agent, name, NULL, tid, NP_HOW_RESCAN);
            done[i] = true;
            left--;
        }
        sched_yield();
    }
    free(done);
    pthread_barrier_wait(&r->seen);
    return NULL;
}

static int count_lines(const char *text, const char *needle)
{
    int n = 0;
    for (const char *l = text; *l; ) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        if (memmem(l, len, needle, strlen(needle)) != NULL)
            n++;
        l += len + (e != NULL);
    }
    return n;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf != NULL && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) {
            char *b = realloc(buf, cap *= 2);
            if (b == NULL)
                free(buf);
            buf = b;
        }
    }
    fclose(f);
    if (buf != NULL)
        buf[len] = '\0';
    return buf;
}

/* Every line of the log has the unified-logging shape; returns how many
 * do not. */
static int malformed_lines(const char *text)
{
    regex_t re;
    if (regcomp(&re, "^\\[[0-9]+\\.[0-9]{3}s\\]\\[(error|warning|info|debug|trace)\\]\\[numapin\\] "
                     "[a-z\"]", REG_EXTENDED | REG_NOSUB) != 0)
        return -1;
    int bad = 0;
    for (const char *l = text; *l; ) {
        const char *e = strchr(l, '\n');
        if (e == NULL) {
            bad++; /* no final newline: a torn line */
            break;
        }
        char line[4096];
        size_t len = (size_t)(e - l) < sizeof line - 1 ? (size_t)(e - l) : sizeof line - 1;
        memcpy(line, l, len);
        line[len] = '\0';
        /* exactly one "[numapin] " per line: two lines were not mixed */
        if (regexec(&re, line, 0, NULL, 0) != 0 || strstr(line + 1, "[numapin] ") != strstr(line, "[numapin] ")) {
            if (bad < 5)
                fprintf(stderr, "stress_agent: malformed log line: %s\n", line);
            bad++;
        }
        l = e + 1;
    }
    regfree(&re);
    return bad;
}

/* The CPUs this process started on. */
static cpu_set_t started_on;

/* Undoes what a scope=jvm configuration did to this process (bound it to
 * its group's CPUs and memory), so that the next one starts as the first
 * did: on the CPUs it started on, with the default memory policy.  Only
 * the main thread is left by then. */
static void unbind_process(void)
{
    if (sched_setaffinity(0, sizeof started_on, &started_on) != 0 ||
        set_mempolicy(MPOL_DEFAULT, NULL, 0) != 0) {
        fprintf(stderr, "stress_agent: cannot undo the process binding: %s\n", strerror(errno));
        exit(2);
    }
}

/* An agent for configuration k with OPTIONS, placing the fork-join
 * workers, no rescan thread, logging at debug level to DIR/NAME-k.log
 * (its path in log_path); NULL, counted as a failure, if it does not start. */
static struct np_agent *start_agent(const char *options, const char *name, const char *dir, int k,
                                    char *log_path, size_t len)
{
    char opts[1200];
    snprintf(log_path, len, "%s/%s-%d.log", dir, name, k);
    snprintf(opts, sizeof opts, "%s,threads=ForkJoinPool-*-worker-*,rescan=0,log=debug:%s", options,
             log_path);
    struct np_agent *a = NULL;
    if (np_agent_create(opts, &a) != NP_OK || a == NULL || !a->active) {
        CHECK(0, "np_agent_create(\"%s\") failed", opts);
        if (a != NULL)
            np_agent_destroy(a);
        return NULL;
    }
    return a;
}

static void run_config(const struct config *cfg, int nthreads, int rounds, const char *dir, int k)
{
    int held = 0;
    char log_path[512];
    struct np_agent *a = start_agent(cfg->options, "agent", dir, k, log_path, sizeof log_path);
    if (a == NULL)
        return;
    int matching = 0, nonmatching = 0, renames = 0;
    for (int round_no = 0; round_no < rounds; round_no++) {
        struct round r = {.agent = a, .cfg = cfg, .nthreads = nthreads};
        r.tids = calloc((size_t)nthreads, sizeof *r.tids);
        pthread_barrier_init(&r.start, NULL, (unsigned)nthreads);
        pthread_barrier_init(&r.seen, NULL, (unsigned)nthreads + 1);
        pthread_barrier_init(&r.end, NULL, (unsigned)nthreads + 1);
        pthread_t *th = calloc((size_t)nthreads, sizeof *th);
        struct worker *ws = calloc((size_t)nthreads, sizeof *ws);
        pthread_t rescan;
        int created = 0;
        for (int i = 0; i < nthreads; i++) {
            ws[i] = (struct worker){&r, i, round_no};
            int e = pthread_create(&th[i], NULL, worker_main, &ws[i]);
            if (e != 0) {
                fprintf(stderr, "stress_agent: pthread_create: %s\n", strerror(e));
                exit(2); /* the barriers would never open */
            }
            created++;
            matching += name_matches(i) && !renamed(i);
            nonmatching += !name_matches(i) && !renamed(i);
            renames += renamed(i);
        }
        if (pthread_create(&rescan, NULL, rescan_main, &r) != 0) {
            fprintf(stderr, "stress_agent: pthread_create failed\n");
            exit(2);
        }
        pthread_join(rescan, NULL); /* returns after the `seen` barrier */
        /* Everyone has started and been seen: the live counts per slot
         * are the placed threads spread over the slots, at most one apart. */
        int *live = calloc((size_t)np_agent_targets(a)->nslots, sizeof *live);
        np_record_slot_live(a->record, live);
        int sum = 0, lo = 1 << 30, hi = 0;
        for (int s = 0; s < np_agent_targets(a)->nslots; s++) {
            sum += live[s];
            lo = live[s] < lo ? live[s] : lo;
            hi = live[s] > hi ? live[s] : hi;
        }
        int placed_now = 0;
        for (int i = 0; i < nthreads; i++)
            placed_now += name_matches(i) || renamed(i);
        if (a->opt.cpus != NP_CPUS_NODE) {
            CHECK(sum == placed_now, "round %d of '%s': %d threads live in slots, %d placed", round_no,
                  cfg->options, sum, placed_now);
            CHECK(hi - lo <= 1, "round %d of '%s': slot live counts %d..%d differ by more than one",
                  round_no, cfg->options, lo, hi);
        }
        CHECK(np_record_live(a->record) == placed_now, "round %d of '%s': record live %d, expected %d",
              round_no, cfg->options, np_record_live(a->record), placed_now);
        free(live);
        pthread_barrier_wait(&r.end);
        for (int i = 0; i < created; i++)
            pthread_join(th[i], NULL);
        CHECK(atomic_load(&r.bad_binding) == 0, "round %d of '%s': %d placed threads read back the "
              "wrong CPUs", round_no, cfg->options, atomic_load(&r.bad_binding));
        pthread_barrier_destroy(&r.start);
        pthread_barrier_destroy(&r.seen);
        pthread_barrier_destroy(&r.end);
        free(r.tids);
        free(th);
        free(ws);
    }

    struct np_counts c;
    np_record_counts(a->record, &c);
    int placed = matching + renames;
    int got_placed = cfg->dryrun ? c.would_place : c.placed;
    CHECK(got_placed == placed, "'%s': %s=%d, expected %d", cfg->options,
          cfg->dryrun ? "would_place" : "placed", got_placed, placed);
    CHECK((cfg->dryrun ? c.placed : c.would_place) == 0, "'%s': placed %d would_place %d",
          cfg->options, c.placed, c.would_place);
    CHECK(c.skipped == nonmatching, "'%s': skipped=%d, expected %d", cfg->options, c.skipped,
          nonmatching);
    CHECK(c.failed == 0, "'%s': failed=%d", cfg->options, c.failed);
    /* Threads placed from outside keep their policy: not a memory failure. */
    int mem_failed = cfg->mem_fails ? matching : 0;
    CHECK(c.mem_failed == mem_failed, "'%s': mem_failed=%d, expected %d", cfg->options, c.mem_failed,
          mem_failed);
    CHECK(c.live == 0, "'%s': %d threads still live after every ThreadEnd", cfg->options, c.live);
    CHECK(np_record_live(a->record) == 0, "'%s': record live %d", cfg->options,
          np_record_live(a->record));
    int *live = calloc((size_t)np_agent_targets(a)->nslots, sizeof *live);
    np_record_slot_live(a->record, live);
    for (int s = 0; s < np_agent_targets(a)->nslots; s++)
        CHECK(live[s] == 0, "'%s': slot %d has %d live threads after every ThreadEnd", cfg->options,
              s, live[s]);
    free(live);
    /* Ended threads' entries were reused: the record holds at most the
     * threads alive at once and the ended ones it keeps. */
    struct np_record_stats rs;
    np_record_stats(a->record, &rs);
    CHECK(rs.added == (unsigned long)rounds * (unsigned long)nthreads,
          "'%s': %lu entries added, expected one per thread started (%d)", cfg->options,
          rs.added, rounds * nthreads);
    CHECK(rs.held <= NP_RECORD_KEEP_ENDED,
          "'%s': the record holds %d entries after %d threads ended, %d at most kept",
          cfg->options, rs.held, rounds * nthreads, NP_RECORD_KEEP_ENDED);
    held = rs.held;
    np_agent_summary(a);
    np_agent_destroy(a);
    unbind_process();

    char *text = read_file(log_path);
    CHECK(text != NULL, "cannot read %s", log_path);
    if (text != NULL) {
        const char *verb = cfg->dryrun ? "] would-place \"" : "] placed \"";
        CHECK(count_lines(text, verb) == placed, "'%s': %d '%s' lines, expected %d", cfg->options,
              count_lines(text, verb), verb, placed);
        /* Renamed threads were skipped first. */
        CHECK(count_lines(text, "] skipped \"") == nonmatching + renames,
              "'%s': %d skipped lines, expected %d", cfg->options, count_lines(text, "] skipped \""),
              nonmatching + renames);
        CHECK(count_lines(text, "how=rescan") == renames, "'%s': %d how=rescan lines, expected %d",
              cfg->options, count_lines(text, "how=rescan"), renames);
        CHECK(count_lines(text, "] summary ") == 1, "'%s': %d summary lines", cfg->options,
              count_lines(text, "] summary "));
        int bad = malformed_lines(text);
        CHECK(bad == 0, "'%s': %d malformed log lines in %s", cfg->options, bad, log_path);
        free(text);
    }
    struct stat st;
    CHECK(stat(log_path, &st) == 0 && (st.st_mode & 0777) == 0600, "'%s': log file mode %o, not 0600",
          cfg->options, (unsigned)(st.st_mode & 0777));
    printf("stress_agent: %-40s rounds=%d threads=%d placed=%d skipped=%d renamed=%d mem_failed=%d "
           "entries_held=%d\n",
           cfg->options, rounds, nthreads, cfg->dryrun ? c.would_place : c.placed, c.skipped, renames,
           c.mem_failed, held);
    fflush(stdout);
}

/* Thread ids that are no thread of this process (another process, init,
 * nonsense), handed to np_agent_seen as the rescan and a late attach do
 * with ids read from the JVM's memory: numapin must bind nothing, record
 * nothing, log no placement. */
static void foreign_tids(const char *dir)
{
    char log_path[512], options[700];
    snprintf(log_path, sizeof log_path, "%s/foreign.log", dir);
    snprintf(options, sizeof options, "group=0,groups=2,scope=threads,threads=*,rescan=0,log=debug:%s",
             log_path);
    struct np_agent *a = NULL;
    if (np_agent_create(options, &a) != NP_OK || a == NULL || !a->active) {
        CHECK(0, "np_agent_create(\"%s\") failed", options);
        return;
    }
    pid_t child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    CHECK(child > 0, "fork failed");
    cpu_set_t before, after;
    CPU_ZERO(&before);
    CPU_ZERO(&after);
    CHECK(sched_getaffinity(child, sizeof before, &before) == 0, "sched_getaffinity(child)");
    const pid_t tids[] = {child, 1, 0, -1, -child, 4194304 + 7, 2147483647};
    for (size_t i = 0; i < sizeof tids / sizeof *tids; i++) {
        np_agent_seen(a, "ForkJoinPool-1-worker-1", NULL, tids[i], NP_HOW_RESCAN);
        np_agent_seen(a, "Worker", NULL, tids[i], NP_HOW_ATTACH);
    }
    CHECK(sched_getaffinity(child, sizeof after, &after) == 0 && CPU_EQUAL(&before, &after),
          "another process's CPU binding was changed");
    struct np_counts c;
    np_record_counts(a->record, &c);
    CHECK(c.placed == 0 && c.would_place == 0 && c.skipped == 0 && c.failed == 0,
          "threads of no process of ours were recorded: placed=%d skipped=%d failed=%d", c.placed,
          c.skipped, c.failed);
    np_agent_destroy(a);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    char *text = read_file(log_path);
    CHECK(text != NULL && count_lines(text, "] placed \"") == 0 && count_lines(text, "] skipped \"") == 0,
          "placement lines for threads of no process of ours in %s", log_path);
    free(text);
    unlink(log_path);
    printf("stress_agent: foreign thread ids: nothing bound, nothing recorded\n");
}

/* ---- re-plans while threads start and end ---------------------------- */

struct churn {
    struct np_agent *agent;
    pthread_barrier_t start, end;
    atomic_int bad_binding;
    int round_no;
};

static void *churn_worker(void *arg)
{
    struct churn *c = arg;
    char name[64];
    snprintf(name, sizeof name, "ForkJoinPool-%d-worker-%lu", c->round_no, (unsigned long)gettid());
    pthread_barrier_wait(&c->start);
    np_agent_thread_start(c->agent, name, NULL, gettid());
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) < 1 ||
        (!CPU_ISSET(0, &set) && !CPU_ISSET(1, &set)))
        atomic_fetch_add(&c->bad_binding, 1);
    pthread_barrier_wait(&c->end);
    if (np_agent_wants_thread_end(c->agent))
        np_agent_thread_ended(c->agent, gettid());
    return NULL;
}

struct replanner {
    struct np_agent *agent;
    atomic_int stop;
    int replans;
};

static void *replanner_main(void *arg)
{
    struct replanner *p = arg;
    hwloc_bitmap_t sets[3];
    sets[0] = hwloc_bitmap_alloc();
    hwloc_bitmap_set_range(sets[0], 0, 1);
    sets[1] = hwloc_bitmap_alloc();
    hwloc_bitmap_set(sets[1], 0);
    sets[2] = hwloc_bitmap_alloc();
    hwloc_bitmap_set(sets[2], 1);
    for (int k = 0; !atomic_load(&p->stop); k++) {
        p->replans += np_agent_replan(p->agent, sets[k % 3]) == 1;
        np_agent_check(p->agent);
        sched_yield();
    }
    /* End on both CPUs, as the agent started. */
    p->replans += np_agent_replan(p->agent, sets[0]) == 1;
    for (int i = 0; i < 3; i++)
        hwloc_bitmap_free(sets[i]);
    return NULL;
}

static void run_replans(const char *options, int nthreads, int rounds, const char *dir, int k)
{
    char log_path[512];
    struct np_agent *a = start_agent(options, "replan", dir, k, log_path, sizeof log_path);
    if (a == NULL)
        return;
    struct replanner p = {.agent = a};
    pthread_t rp;
    if (pthread_create(&rp, NULL, replanner_main, &p) != 0) {
        fprintf(stderr, "stress_agent: pthread_create failed\n");
        exit(2);
    }
    int bad = 0;
    for (int round_no = 0; round_no < rounds; round_no++) {
        struct churn c = {.agent = a, .round_no = round_no};
        pthread_barrier_init(&c.start, NULL, (unsigned)nthreads);
        pthread_barrier_init(&c.end, NULL, (unsigned)nthreads);
        pthread_t *th = calloc((size_t)nthreads, sizeof *th);
        for (int i = 0; i < nthreads; i++)
            if (pthread_create(&th[i], NULL, churn_worker, &c) != 0) {
                fprintf(stderr, "stress_agent: pthread_create failed\n");
                exit(2); /* the barriers would never open */
            }
        for (int i = 0; i < nthreads; i++)
            pthread_join(th[i], NULL);
        bad += atomic_load(&c.bad_binding);
        pthread_barrier_destroy(&c.start);
        pthread_barrier_destroy(&c.end);
        free(th);
    }
    atomic_store(&p.stop, 1);
    pthread_join(rp, NULL);
    CHECK(bad == 0, "'%s': %d placed threads read back no CPU of 0-1 during re-plans", options, bad);
    CHECK(p.replans > 0, "'%s': no re-plan happened", options);
    struct np_counts c;
    np_record_counts(a->record, &c);
    CHECK(c.placed == rounds * nthreads, "'%s': placed=%d, expected %d", options, c.placed,
          rounds * nthreads);
    CHECK(c.failed == 0 && c.skipped == 0, "'%s': failed=%d skipped=%d", options, c.failed, c.skipped);
    CHECK(c.live == 0, "'%s': %d threads still live", options, c.live);
    const struct np_targets *t = np_agent_targets(a);
    int *live = calloc((size_t)t->nslots, sizeof *live);
    CHECK(np_record_plan(a->record) == t->gen, "'%s': the record's plan %u is not the targets' %u",
          options, np_record_plan(a->record), t->gen);
    np_record_slot_live(a->record, live);
    for (int s = 0; s < t->nslots; s++)
        CHECK(live[s] == 0, "'%s': slot %d has %d live threads after every ThreadEnd", options, s,
              live[s]);
    free(live);
    np_agent_summary(a);
    np_agent_destroy(a);
    unbind_process();
    char *text = read_file(log_path);
    CHECK(text != NULL, "cannot read %s", log_path);
    if (text != NULL) {
        CHECK(count_lines(text, "] replan ") >= p.replans, "'%s': %d replan lines for %d re-plans",
              options, count_lines(text, "] replan "), p.replans);
        CHECK(count_lines(text, "] placed \"") >= rounds * nthreads, "'%s': %d placed lines",
              options, count_lines(text, "] placed \""));
        int m = malformed_lines(text);
        CHECK(m == 0, "'%s': %d malformed log lines in %s", options, m, log_path);
        free(text);
    }
    printf("stress_agent: re-plans %-28s rounds=%d threads=%d placed=%d replans=%d drift=%d\n",
           options, rounds, nthreads, c.placed, p.replans, c.drift);
    fflush(stdout);
    if (failures == 0)
        unlink(log_path);
}

int main(int argc, char **argv)
{
    int nthreads = 64, rounds = 50;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--threads") == 0)
            nthreads = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
    }
    if (nthreads < 8 || rounds < 1) {
        fprintf(stderr, "usage: stress_agent [--threads N>=8] [--rounds R>=1]\n");
        return 2;
    }
    if (sched_getaffinity(0, sizeof started_on, &started_on) != 0 || !CPU_ISSET(0, &started_on) ||
        !CPU_ISSET(1, &started_on)) {
        fprintf(stderr, "stress_agent: needs CPUs 0 and 1\n");
        return 2;
    }
    setenv("HWLOC_SYNTHETIC", "pack:1 numa:2 core:1 pu:1", 1);
    setenv("HWLOC_THISSYSTEM", "1", 1);
    unsetenv("HWLOC_XMLFILE");
    char dir[] = "/tmp/numapin-stress-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("stress_agent: mkdtemp");
        return 2;
    }
    foreign_tids(dir);
    for (size_t k = 0; k < sizeof configs / sizeof *configs; k++)
        run_config(&configs[k], nthreads, rounds, dir, (int)k);
    static const char *const replan_configs[] = {
        "groups=1,cpus=core,mem=none", "group=1,groups=2,cpus=node,mem=none",
        "groups=1,cpus=pu,mem=bind:0", "group=0,groups=2,cpus=core,scope=jvm,mem=none",
    };
    for (size_t k = 0; k < sizeof replan_configs / sizeof *replan_configs; k++)
        run_replans(replan_configs[k], nthreads / 2, rounds / 2 > 0 ? rounds / 2 : 1, dir, (int)k);
    if (failures == 0) {
        for (size_t k = 0; k < sizeof configs / sizeof *configs; k++) {
            char p[600];
            snprintf(p, sizeof p, "%s/agent-%zu.log", dir, k);
            unlink(p);
        }
        rmdir(dir);
    } else {
        fprintf(stderr, "stress_agent: logs kept in %s\n", dir);
    }
    printf("stress_agent: %d failures\n", failures);
    return failures == 0 ? 0 : 1;
}
