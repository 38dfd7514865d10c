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
 * own callbacks and events, as when loaded alone.  Only the agent whose
 * turn it is gets ThreadStart and ThreadEnd, and it gets them as it asked
 * for them itself: each environment's SetEventNotificationMode goes
 * through the pair agent (its function table is a copy of the JVM's with
 * that one entry changed), which notes what the agent asks for the two
 * events, JVM-wide, and applies it only in the agent's turn.  The native
 * method ThreadBench.turn(int) (0 for A, 1 for B) disables the two events
 * for one agent's environments and gives the other's what they asked
 * for; so an agent that never enables ThreadEnd pays for no ThreadEnd in
 * its turn.  ThreadBench calls it only between threads, after a join
 * (HotSpot posts ThreadEnd before it lets join() return), so each thread
 * is seen by one agent from its start to its end.  The events the agents
 * enable besides, and the two for one thread, go to the JVM as asked, and
 * whatever an agent does once per process (numapin binds the process at
 * load, and runs its log and rescan threads) applies to both turns.
 *
 * Exported: Agent_OnLoad, Agent_OnUnload, and Java_ThreadBench_turn,
 * which HotSpot finds in agent libraries.  Built by mk/lifecycle.mk into
 * build/bench/libjvmti_pair.so. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jni.h>
#include <jvmti.h>

#define AGENTS 2
#define ENVS 4 /* JVMTI environments noted per agent */

/* The events the turns switch. */
static const jvmtiEvent turned[] = {JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END};
#define TURNED (sizeof turned / sizeof *turned)

/* One agent's JVMTI environment. */
struct env {
    jvmtiEnv *env;
    const struct jvmtiInterface_1_ *jvm; /* the JVM's functions */
    struct jvmtiInterface_1_ fns;        /* the environment's: the JVM's, but one */
    jvmtiEventMode asked[TURNED];        /* what the agent last asked, JVM-wide */
};

struct agent {
    void *lib;
    struct env env[ENVS];
    int nenv;
};

static struct agent agents[AGENTS];
static JavaVM *real_vm;
static struct JNIInvokeInterface_ proxy_fns;
static JavaVM proxy_vm = &proxy_fns; /* what the agents see */
static struct agent *loading;  /* whose Agent_OnLoad is running */
/* Whose turn it is (while an agent loads, that agent's); under lock. */
static struct agent *current;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

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

/* An agent's SetEventNotificationMode: what it asks of ThreadStart or
 * ThreadEnd JVM-wide is noted, and reaches the JVM in its turn. */
static jvmtiError JNICALL pair_set_event(jvmtiEnv *j, jvmtiEventMode mode, jvmtiEvent type,
                                         jthread thread, ...)
{
    pthread_mutex_lock(&lock);
    for (int a = 0; a < AGENTS; a++)
        for (int i = 0; i < agents[a].nenv; i++) {
            struct env *e = &agents[a].env[i];
            if (e->env != j)
                continue;
            jvmtiError rc = JVMTI_ERROR_NONE;
            size_t k = 0;
            while (thread == NULL && k < TURNED && turned[k] != type)
                k++;
            if (thread == NULL && k < TURNED)
                e->asked[k] = mode;
            if (thread != NULL || k == TURNED || current == &agents[a])
                rc = e->jvm->SetEventNotificationMode(j, mode, type, thread);
            pthread_mutex_unlock(&lock);
            return rc;
        }
    pthread_mutex_unlock(&lock);
    return JVMTI_ERROR_INVALID_ENVIRONMENT;
}

/* The JVM's GetEnv; a JVMTI environment made while an agent loads is that
 * agent's, and its event switches go through pair_set_event. */
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
        pthread_mutex_lock(&lock);
        struct env *e = &loading->env[loading->nenv++];
        e->env = *penv;
        e->jvm = *e->env;
        e->fns = *e->jvm;
        e->fns.SetEventNotificationMode = pair_set_event;
        for (size_t k = 0; k < TURNED; k++)
            e->asked[k] = JVMTI_DISABLE;
        *e->env = &e->fns;
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

/* Gives agent `which` its turn: the turned events as it asked for them,
 * and none for the other.  Returns 0, or -1 when the JVM refused. */
static int switch_to(struct agent *which)
{
    int rc = 0;
    pthread_mutex_lock(&lock);
    current = which;
    for (int a = 0; a < AGENTS; a++)
        for (int i = 0; i < agents[a].nenv; i++) {
            struct env *e = &agents[a].env[i];
            for (size_t k = 0; k < TURNED; k++) {
                jvmtiEventMode mode = &agents[a] == which ? e->asked[k] : JVMTI_DISABLE;
                if (e->jvm->SetEventNotificationMode(e->env, mode, turned[k], NULL) !=
                    JVMTI_ERROR_NONE)
                    rc = -1;
            }
        }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* ThreadBench.turn(int): the agent that sees the threads started next. */
JNIEXPORT void JNICALL Java_ThreadBench_turn(JNIEnv *jni, jclass cls, jint which)
{
    (void)cls;
    if (which < 0 || which >= AGENTS || switch_to(&agents[which]) != 0) {
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
    pthread_mutex_lock(&lock);
    current = a; /* its own event switches apply as it loads */
    pthread_mutex_unlock(&lock);
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
        switch_to(&agents[0]) != 0) {
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
