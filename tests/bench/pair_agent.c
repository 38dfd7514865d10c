/* Two JVMTI agents in one JVM, taking turns: the harness behind the thread
 * start+join target (tests/bench/threads.sh).  On this shared machine the
 * speed of starting a thread drifts by several percent from one second to
 * the next, so two JVMs run one after the other cannot be compared to 2%.
 * Here the two agents share one JVM and alternate every few thousand
 * threads, and ThreadBench's `pairs` mode compares neighbouring blocks.
 *
 *   java -agentpath:libjvmti_pair.so=A_LIB[=A_OPTIONS]#B_LIB[=B_OPTIONS] \
 *        ThreadBench pairs WARMUP BLOCK PAIRS
 *
 * Each library is loaded (dlopen) and its own Agent_OnLoad called, with a
 * JavaVM that hands every call to the JVM's and notes the JVMTI
 * environments the agent gets: each agent has its own environments, its
 * own callbacks and events, as when loaded alone.  Both agents must enable
 * ThreadStart and ThreadEnd at load (numapin and floor_agent.c do).  Then
 * only agent A gets them: the native method ThreadBench.turn(int) (0 for
 * A, 1 for B) enables the two events for one agent's environments and
 * disables them for the other's.  ThreadBench calls it only between
 * threads, after a join (HotSpot posts ThreadEnd before it lets join()
 * return), so each thread is seen by one agent from its start to its end.
 * The events the agents enabled besides (VMInit, VMDeath) stay as they set
 * them, and whatever an agent does once per process (numapin binds the
 * process at load, and runs its log and rescan threads) applies to both
 * turns.
 *
 * Exported: Agent_OnLoad, Agent_OnUnload, and Java_ThreadBench_turn,
 * which HotSpot finds in agent libraries.  Built by mk/lifecycle.mk into
 * build/bench/libjvmti_pair.so. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jni.h>
#include <jvmti.h>

#define AGENTS 2
#define ENVS 4 /* JVMTI environments noted per agent */

struct agent {
    void *lib;
    jvmtiEnv *env[ENVS];
    int nenv;
};

static struct agent agents[AGENTS];
static JavaVM *real_vm;
static struct JNIInvokeInterface_ proxy_fns;
static JavaVM proxy_vm = &proxy_fns; /* what the agents see */
static struct agent *loading;  /* whose Agent_OnLoad is running */

static jint JNICALL proxy_destroy(JavaVM *vm)
{
    (void)vm;
    return (*real_vm)->DestroyJavaVM(real_vm);
}

static jint JNICALL proxy_attach(JavaVM *vm, void **penv, void *args)
{
    (void)vm;
    return (*real_vm)->AttachCurrentThread(real_vm, penv, args);
}

static jint JNICALL proxy_detach(JavaVM *vm)
{
    (void)vm;
    return (*real_vm)->DetachCurrentThread(real_vm);
}

static jint JNICALL proxy_attach_daemon(JavaVM *vm, void **penv, void *args)
{
    (void)vm;
    return (*real_vm)->AttachCurrentThreadAsDaemon(real_vm, penv, args);
}

/* The JVM's GetEnv; a JVMTI environment made while an agent loads is that
 * agent's. */
static jint JNICALL proxy_get_env(JavaVM *vm, void **penv, jint version)
{
    (void)vm;
    jint rc = (*real_vm)->GetEnv(real_vm, penv, version);
    if (rc == JNI_OK && loading != NULL &&
        (version & JVMTI_VERSION_MASK_INTERFACE_TYPE) == JVMTI_VERSION_INTERFACE_JVMTI) {
        if (loading->nenv == ENVS) {
            fprintf(stderr, "jvmti_pair: an agent made more than %d JVMTI environments\n", ENVS);
            return JNI_ERR;
        }
        loading->env[loading->nenv++] = *penv;
    }
    return rc;
}

/* Sets ThreadStart and ThreadEnd for every environment of agent a. */
static int events(const struct agent *a, jvmtiEventMode mode)
{
    for (int i = 0; i < a->nenv; i++) {
        jvmtiEnv *j = a->env[i];
        if ((*j)->SetEventNotificationMode(j, mode, JVMTI_EVENT_THREAD_START, NULL) !=
                JVMTI_ERROR_NONE ||
            (*j)->SetEventNotificationMode(j, mode, JVMTI_EVENT_THREAD_END, NULL) !=
                JVMTI_ERROR_NONE)
            return -1;
    }
    return 0;
}

/* ThreadBench.turn(int): the agent that sees the threads started next. */
JNIEXPORT void JNICALL Java_ThreadBench_turn(JNIEnv *jni, jclass cls, jint which)
{
    (void)cls;
    if (which < 0 || which >= AGENTS || events(&agents[1 - which], JVMTI_DISABLE) != 0 ||
        events(&agents[which], JVMTI_ENABLE) != 0) {
        jclass e = (*jni)->FindClass(jni, "java/lang/IllegalStateException");
        if (e != NULL)
            (*jni)->ThrowNew(jni, e, "jvmti_pair: cannot switch the agents' thread events");
    }
}

/* Loads "LIB[=OPTIONS]" as agent a. */
static int load(struct agent *a, char *spec, char *reserved)
{
    char *options = strchr(spec, '=');
    if (options != NULL)
        *options++ = '\0';
    if ((a->lib = dlopen(spec, RTLD_NOW | RTLD_LOCAL)) == NULL) {
        fprintf(stderr, "jvmti_pair: %s\n", dlerror());
        return -1;
    }
    jint(JNICALL * on_load)(JavaVM *, char *, void *) = NULL;
    *(void **)&on_load = dlsym(a->lib, "Agent_OnLoad");
    if (on_load == NULL) {
        fprintf(stderr, "jvmti_pair: %s has no Agent_OnLoad\n", spec);
        return -1;
    }
    loading = a;
    jint rc = on_load(&proxy_vm, options, reserved);
    loading = NULL;
    if (rc != JNI_OK) {
        fprintf(stderr, "jvmti_pair: %s failed to load (%d)\n", spec, (int)rc);
        return -1;
    }
    if (a->nenv == 0) {
        fprintf(stderr, "jvmti_pair: %s made no JVMTI environment\n", spec);
        return -1;
    }
    return 0;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    char *b = options != NULL ? strchr(options, '#') : NULL;
    if (b == NULL || b == options || b[1] == '\0') {
        fprintf(stderr, "jvmti_pair: the options are A_LIB[=A_OPTIONS]#B_LIB[=B_OPTIONS]\n");
        return JNI_ERR;
    }
    *b++ = '\0';
    real_vm = vm;
    proxy_fns = **vm;
    proxy_fns.DestroyJavaVM = proxy_destroy;
    proxy_fns.AttachCurrentThread = proxy_attach;
    proxy_fns.DetachCurrentThread = proxy_detach;
    proxy_fns.GetEnv = proxy_get_env;
    proxy_fns.AttachCurrentThreadAsDaemon = proxy_attach_daemon;
    if (load(&agents[0], options, reserved) != 0 || load(&agents[1], b, reserved) != 0 ||
        events(&agents[1], JVMTI_DISABLE) != 0) {
        fprintf(stderr, "jvmti_pair: cannot load the two agents\n");
        return JNI_ERR;
    }
    return JNI_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
    (void)vm;
    for (int i = AGENTS - 1; i >= 0; i--) {
        void(JNICALL * on_unload)(JavaVM *) = NULL;
        if (agents[i].lib != NULL)
            *(void **)&on_unload = dlsym(agents[i].lib, "Agent_OnUnload");
        if (on_unload != NULL)
            on_unload(&proxy_vm);
    }
}
