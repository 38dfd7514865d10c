/* The JVMTI floor of the thread start+join benchmark (tests/bench/threads.sh):
 * the least an agent that looks at thread names can do.  It enables the
 * ThreadStart and ThreadEnd events; on ThreadStart it reads the new thread's
 * name with GetThreadInfo and frees what that returned (the name, the
 * thread_group and context_class_loader local references); ThreadEnd does
 * nothing.  No output.  Only Agent_OnLoad is exported.
 *
 * With the option `pin=PREFIX`, ThreadStart then also binds a thread whose
 * name starts with PREFIX to the one CPU it runs on (sched_setaffinity):
 * the floor of cpus=core and cpus=pu, what a thread bound to one CPU costs
 * whoever binds it, without the choosing, checking and logging numapin
 * adds.  (Bind every thread and `main` is bound too, and with it each
 * thread it starts: a different benchmark.)
 *
 * With `spin=NS` instead, ThreadStart first busy-waits NS nanoseconds of
 * the monotonic clock: a known cost, which shows what the pairs of
 * threads.sh resolve (a floor against itself plus 1 µs a thread).  With
 * `load_spin=NS`, Agent_OnLoad busy-waits NS nanoseconds before it returns:
 * a known cost at JVM start-up, the control of tests/bench/startup.sh.
 * With `idle`, it makes its JVMTI environment and enables no event: no
 * agent at all for the threads, as one side of a pair of threads.sh.
 *
 * Built by mk/lifecycle.mk into build/bench/libjvmti_floor.so:
 *   java -agentpath:build/bench/libjvmti_floor.so[=pin=Bench-|=spin=1000|=load_spin=1000000|=idle] ...
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jvmti.h>

static const char *pin; /* the prefix of the names to bind, or NULL */
static long spin_ns;    /* the busy wait at each ThreadStart */

/* The number after `name=` in options, or -1 when options is not that. */
static long option_ns(const char *options, const char *name)
{
    size_t n = strlen(name);
    char *end = NULL;
    if (strncmp(options, name, n) != 0 || options[n] != '=')
        return -1;
    long v = strtol(options + n + 1, &end, 10);
    return v > 0 && *end == '\0' ? v : -1;
}

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    if (spin_ns > 0)
        for (long long until = now_ns() + spin_ns; now_ns() < until;)
            ;
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof info);
    if ((*jvmti)->GetThreadInfo(jvmti, thread, &info) != JVMTI_ERROR_NONE)
        return;
    int bind = pin != NULL && info.name != NULL && strncmp(info.name, pin, strlen(pin)) == 0;
    (*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
    if (info.thread_group != NULL)
        (*jni)->DeleteLocalRef(jni, info.thread_group);
    if (info.context_class_loader != NULL)
        (*jni)->DeleteLocalRef(jni, info.context_class_loader);
    int cpu;
    if (bind && (cpu = sched_getcpu()) >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        sched_setaffinity(0, sizeof one, &one);
    }
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    (void)jni;
    (void)thread;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    long load_spin_ns = 0;
    int idle = 0;
    if (options != NULL && *options != '\0') {
        if (strcmp(options, "idle") == 0) {
            idle = 1;
        } else if (strncmp(options, "pin=", 4) == 0 && options[4] != '\0') {
            pin = strdup(options + 4);
        } else if ((spin_ns = option_ns(options, "spin")) < 0 &&
                   (load_spin_ns = option_ns(options, "load_spin")) < 0) {
            fprintf(stderr, "jvmti_floor: unknown option '%s': the options are pin=PREFIX, "
                    "spin=NANOSECONDS, load_spin=NANOSECONDS and idle\n", options);
            return JNI_ERR;
        }
    }
    if (load_spin_ns > 0)
        for (long long until = now_ns() + load_spin_ns; now_ns() < until;)
            ;
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || jvmti == NULL) {
        fprintf(stderr, "jvmti_floor: no JVMTI 1.2 environment\n");
        return JNI_ERR;
    }
    if (idle)
        return JNI_OK;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ThreadStart = on_thread_start;
    cb.ThreadEnd = on_thread_end;
    if ((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb) != JVMTI_ERROR_NONE ||
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_THREAD_START, NULL) !=
            JVMTI_ERROR_NONE ||
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_THREAD_END, NULL) !=
            JVMTI_ERROR_NONE) {
        fprintf(stderr, "jvmti_floor: cannot enable ThreadStart and ThreadEnd\n");
        return JNI_ERR;
    }
    return JNI_OK;
}
