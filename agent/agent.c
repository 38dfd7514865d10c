/* numapin's JVMTI entry points: the only code that sees the JVM.
 *
 * It turns JVMTI events into plain calls of native/np_agent.h:
 *  - ThreadStart runs on the new thread itself, before its run() method,
 *    so the calling thread is the one to place and gettid() is its OS id.
 *    It fires only for threads started after VMInit: GC and JIT threads,
 *    and threads started earlier, never reach us.
 *  - ThreadEnd runs on the ending thread, and frees its core or hardware
 *    thread for the next one under cpus=core|pu.
 *  - VMInit reads the flags HotSpot settled on (UseNUMA, GC and compiler
 *    thread counts) for the start-up advice.
 *  - VMDeath logs the summary.
 * Callbacks run concurrently; np_agent locks what they share. */
#define _GNU_SOURCE
#include <jvmti.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "np_agent.h"
#include "np_hotspot.h"

static struct np_agent *agent;
static np_once warned_jvmti;

static void jvmti_failed(jvmtiEnv *jvmti, const char *what, jvmtiError e)
{
    char *name = NULL;
    if (jvmti == NULL || (*jvmti)->GetErrorName(jvmti, e, &name) != JVMTI_ERROR_NONE)
        name = NULL;
    np_log(np_once_level(&warned_jvmti, NP_LOG_WARNING), "JVMTI %s failed: %s (%d)", what,
           name != NULL ? name : "unknown error", (int)e);
    if (name != NULL)
        (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof info);
    jvmtiError e = (*jvmti)->GetThreadInfo(jvmti, thread, &info);
    if (e != JVMTI_ERROR_NONE) {
        jvmti_failed(jvmti, "GetThreadInfo", e);
        return;
    }
    np_agent_thread_start(agent, info.name != NULL ? info.name : "",
                          (pid_t)syscall(SYS_gettid));
    (*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
    if (info.thread_group != NULL)
        (*jni)->DeleteLocalRef(jni, info.thread_group);
    if (info.context_class_loader != NULL)
        (*jni)->DeleteLocalRef(jni, info.context_class_loader);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti, (void)jni, (void)thread;
    np_agent_thread_end(agent);
}

static long flag_uint(const char *name)
{
    uint32_t v;
    return np_hotspot_uint(name, &v) == 0 ? (long)v : -1;
}

static long flag_intx(const char *name)
{
    int64_t v;
    return np_hotspot_intx(name, &v) == 0 ? (long)v : -1;
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti, (void)thread;
    /* Any function of the JNI table lives in libjvm.so. */
    struct np_jvm_facts f = {-1, -1, -1, -1, -1};
    if (np_hotspot_init((const void *)(*jni)->GetVersion) == 0) {
        bool b;
        f.use_numa = np_hotspot_bool("UseNUMA", &b) == 0 ? b : -1;
        f.parallel_gc_threads = flag_uint("ParallelGCThreads");
        f.conc_gc_threads = flag_uint("ConcGCThreads");
        f.ci_compiler_count = flag_intx("CICompilerCount");
        long apc = flag_intx("ActiveProcessorCount");
        f.cpus_seen = apc > 0 ? (int)apc : -1;
    } else {
        np_log(NP_LOG_DEBUG, "HotSpot's VMStructs tables are not there: no advice on JVM flags");
    }
    np_agent_jvm_facts(agent, &f);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jni;
    /* Threads still running may call back after this: the agent stays
     * allocated for the life of the process. */
    np_agent_summary(agent);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_THREAD_START, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_THREAD_END, NULL);
}

static jint start(JavaVM *vm, const char *options, int late)
{
    if (agent != NULL) {
        np_log(NP_LOG_WARNING, "numapin is already loaded; this copy does nothing");
        return JNI_OK;
    }
    if (np_agent_create(options, &agent) != NP_OK)
        return JNI_ERR;
    if (!agent->active)
        return JNI_OK;

    jvmtiEnv *jvmti = NULL;
    jint rc = (*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2);
    if (rc != JNI_OK || jvmti == NULL) {
        np_log_fatal("cannot get a JVMTI environment (GetEnv returned %d)", (int)rc);
        return JNI_ERR;
    }
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ThreadStart = on_thread_start;
    cb.ThreadEnd = on_thread_end;
    cb.VMDeath = on_vm_death;
    cb.VMInit = on_vm_init;
    jvmtiError e = (*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb);
    if (e != JVMTI_ERROR_NONE) {
        jvmti_failed(jvmti, "SetEventCallbacks", e);
        return JNI_ERR;
    }
    static const jvmtiEvent events[] = {
        JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END, JVMTI_EVENT_VM_DEATH,
        JVMTI_EVENT_VM_INIT,
    };
    for (size_t i = 0; i < sizeof events / sizeof *events; i++) {
        e = (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL);
        if (e != JVMTI_ERROR_NONE) {
            jvmti_failed(jvmti, "SetEventNotificationMode", e);
            return JNI_ERR;
        }
    }
    if (late)
        np_log(NP_LOG_WARNING, "attached to a running JVM: threads already running are not "
                               "placed, only threads started from now on");
    return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    return start(vm, options, 0);
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    return start(vm, options, 1);
}
