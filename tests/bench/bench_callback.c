/* bench_callback: what numapin's own work at a thread's start and end
 * costs that thread, without a JVM and its noise.  Threads are started and
 * joined one after another, as ThreadBench.java does; each calls
 * np_agent_thread_start (what agent/agent.c calls in ThreadStart, on the
 * new thread) and, where numapin wants ThreadEnd, np_agent_thread_ended,
 * and reads its own CPU time (CLOCK_THREAD_CPUTIME_ID) before and after.
 * Under cpus=node the entry ends as the thread exits, after what is timed,
 * as in the JVM, where that comes after join() has returned.  The same loop
 * without the calls measures the clock reads, which are taken off.
 *
 *   bench_callback THREADS OPTIONS...
 *
 * For each agent OPTIONS string, in turn (one agent at a time, in this
 * process), after THREADS/10 threads not counted, prints one line:
 *
 *   callback median_us=M p10_us=A p90_us=B threads=N options=OPTIONS
 *
 * Nothing is asserted: tests/bench/threads.sh puts the numbers in
 * docs/performance.md. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "np_agent.h"

struct run {
    struct np_agent *agent; /* NULL: the clock alone */
    char name[32];
    long long ns;
};

static long long thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *thread_main(void *arg)
{
    struct run *r = arg;
    long long t0 = thread_cpu_ns();
    if (r->agent != NULL) {
        pid_t tid = gettid();
        np_agent_thread_start(r->agent, r->name, NULL, tid);
        if (np_agent_wants_thread_end(r->agent))
            np_agent_thread_ended(r->agent, tid);
    }
    r->ns = thread_cpu_ns() - t0;
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Runs `n` counted threads (after n/10 not counted) under `agent`; their
 * times, sorted, in ns[]. */
static int measure(struct np_agent *agent, int n, long long *ns)
{
    int warmup = n / 10;
    for (int i = 0; i < warmup + n; i++) {
        struct run r = {agent, "", 0};
        snprintf(r.name, sizeof r.name, "Bench-%d", i);
        pthread_t t;
        if (pthread_create(&t, NULL, thread_main, &r) != 0 || pthread_join(t, NULL) != 0) {
            perror("bench_callback: pthread_create");
            return -1;
        }
        if (i >= warmup)
            ns[i - warmup] = r.ns;
    }
    qsort(ns, (size_t)n, sizeof *ns, by_value);
    return 0;
}

int main(int argc, char **argv)
{
    int n = argc > 2 ? atoi(argv[1]) : 0;
    if (n < 10) {
        fprintf(stderr, "usage: bench_callback THREADS OPTIONS...\n");
        return 2;
    }
    long long *ns = malloc((size_t)n * sizeof *ns);
    if (ns == NULL || measure(NULL, n, ns) != 0)
        return 1;
    long long clock = ns[n / 2];
    for (int k = 2; k < argc; k++) {
        struct np_agent *a = NULL;
        if (np_agent_create(argv[k], &a) != NP_OK || a == NULL) {
            fprintf(stderr, "bench_callback: numapin does not start with %s\n", argv[k]);
            return 1;
        }
        if (measure(a, n, ns) != 0)
            return 1;
        np_agent_destroy(a);
        printf("callback median_us=%.2f p10_us=%.2f p90_us=%.2f threads=%d options=%s\n",
               (double)(ns[n / 2] - clock) / 1e3, (double)(ns[n / 10] - clock) / 1e3,
               (double)(ns[n - 1 - n / 10] - clock) / 1e3, n, argv[k]);
        fflush(stdout);
    }
    free(ns);
    return 0;
}
