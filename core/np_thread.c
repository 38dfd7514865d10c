#include "np_thread.h"

#include <pthread.h>

struct timespec np_after_ms(clockid_t clock, long ms)
{
    struct timespec t;
    clock_gettime(clock, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += ms % 1000 * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

int np_thread_detached(void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    int e = pthread_attr_init(&attr);
    if (e != 0)
        return e;
    pthread_t t;
    e = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (e == 0)
        e = pthread_create(&t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return e;
}
