/* np_thread: the times numapin's threads wait until (np_after_ms), and the
 * detached threads it starts (np_thread_detached). */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <time.h>

#include "np_thread.h"
#include "tests.h"

static long long ns_of(struct timespec t)
{
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

START_TEST(after_ms_is_that_far_ahead_on_the_clock_asked)
{
    static const long ms[] = {0, 1, 999, 1000, 1001, 1999, 123456};
    static const clockid_t clocks[] = {CLOCK_MONOTONIC, CLOCK_REALTIME};
    for (size_t c = 0; c < sizeof clocks / sizeof clocks[0]; c++)
        for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
            struct timespec before, after;
            clock_gettime(clocks[c], &before);
            struct timespec t = np_after_ms(clocks[c], ms[i]);
            clock_gettime(clocks[c], &after);
            ck_assert_msg(t.tv_nsec >= 0 && t.tv_nsec < 1000000000L, "%ld ms: tv_nsec %ld", ms[i],
                          t.tv_nsec);
            long long want = ms[i] * 1000000LL;
            ck_assert_msg(ns_of(t) - ns_of(before) >= want && ns_of(t) - ns_of(after) <= want,
                          "%ld ms on clock %d: %lld ns after the call began", ms[i], (int)clocks[c],
                          ns_of(t) - ns_of(before));
        }
}
END_TEST

static sem_t ran;
static int detach_state = -1;

static void *record_and_post(void *arg)
{
    (void)arg;
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        pthread_attr_getdetachstate(&a, &detach_state);
        pthread_attr_destroy(&a);
    }
    sem_post(&ran);
    return NULL;
}

START_TEST(a_detached_thread_runs_its_function)
{
    ck_assert_int_eq(sem_init(&ran, 0, 0), 0);
    ck_assert_int_eq(np_thread_detached(record_and_post, NULL), 0);
    struct timespec until = np_after_ms(CLOCK_REALTIME, 30000);
    ck_assert_msg(sem_timedwait(&ran, &until) == 0, "the thread did not run within 30 s");
    ck_assert_int_eq(detach_state, PTHREAD_CREATE_DETACHED);
}
END_TEST

Suite *thread_suite(void)
{
    Suite *s = suite_create("thread");
    TCase *tc = tcase_create("thread");
    tcase_add_test(tc, after_ms_is_that_far_ahead_on_the_clock_asked);
    tcase_add_test(tc, a_detached_thread_runs_its_function);
    suite_add_tcase(s, tc);
    return s;
}
