/* np_thread: numapin's own threads and their timed waits.
 *
 * The agent's background threads (the log writer aside, which is joined)
 * run detached: nothing waits for them, and the JVM may exit while they
 * sleep.  Their waits end at a time computed on the clock their condition
 * variable was made with. */
#ifndef NP_THREAD_H
#define NP_THREAD_H

#include <time.h>

/* The time `ms` milliseconds (>= 0) from now on `clock`. */
struct timespec np_after_ms(clockid_t clock, long ms);

/* Runs fn(arg) on a new detached thread.  Returns 0, or pthread_create's
 * (or pthread_attr_init's) error number. */
int np_thread_detached(void *(*fn)(void *), void *arg);

#endif
