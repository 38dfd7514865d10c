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
 * Built by mk/lifecycle.mk into build/bench/libjvmti_floor.so:
 *   java -agentpath:build/bench/libjvmti_floor.so[=pin=Bench-] ...
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jvmti.h>

static const char *pin; /* the prefix of the names to bind, or NULL */

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
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
    if (options != NULL && *options != '\0') {
        if (strncmp(options, "pin=", 4) != 0 || options[4] == '\0') {
            fprintf(stderr, "jvmti_floor: unknown option '%s': the only option is pin=PREFIX\n",
                    options);
            return JNI_ERR;
        }
        pin = strdup(options + 4);
    }
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || jvmti == NULL) {
        fprintf(stderr, "jvmti_floor: no JVMTI 1.2 environment\n");
        return JNI_ERR;
    }
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
