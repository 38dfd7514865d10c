/* numapin's JFR events: see jfr.h and docs/jfr.md.
 *
 * Only the JDK's supported API, called through JNI: jdk.jfr.EventFactory
 * defines the six event types at run time; FlightRecorder tells whether
 * it is initialised and which recordings run; addPeriodicEvent asks for
 * each periodic type (numapin.NodeMemory, numapin.AccessLocality,
 * numapin.ThreadAccess) at the period the recordings set, through a
 * Runnable that releases a java.util.concurrent.Semaphore of the type's
 * own (java.lang.invoke.MethodHandleProxies over Semaphore.release: no
 * class of numapin's own, no bytecode).  numapin's thread waits on
 * NodeMemory's, and looks at the others' each time it wakes.
 *
 * JNI rules kept everywhere: a pending exception is checked after each
 * call that can throw, and cleared (one warning for the first; a pending
 * exception would break the thread it was left on, an application thread
 * in its ThreadStart); local references live in a local frame popped
 * before returning; the classes and factories are global references, set
 * by numapin's thread before the first epoch (np_sink.h) and read-only
 * after, so that the placing threads read them without a lock. */
#define _GNU_SOURCE
#include "jfr.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "np_access.h"
#include "np_memory.h"
#include "np_text.h"
#include "np_thread.h"

#define POLL_MS 1000        /* how often numapin looks for recordings */
#define POLL_FAST_MS 100    /* ... during the JVM's first FAST_FOR_MS */
#define FAST_FOR_MS 10000
#define MAX_RECORDINGS 64   /* running recordings told apart; more are all "new" */
#define DEFER_MS 1000       /* the first look, when no recording starts with the JVM */
#define GATHER_MS 10        /* how long queued placements wait for more before a commit */

static JavaVM *vm;
static struct np_agent *agent;
static char *options_text;  /* the option string, printable ASCII */
static pid_t (*tid_of)(JNIEnv *, jobject);
static atomic_bool stopping;
static np_once warned;
static long defer_ms;      /* how long numapin's thread waits before it attaches */
/* numapin's thread waits on wake_cond (CLOCK_MONOTONIC): woken by a stop,
 * by JFR asking for NodeMemory (wake_tick), and by the first placement
 * queued while it sleeps with none (wake_idle). */
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cond = PTHREAD_COND_INITIALIZER;
static bool wake_tick, wake_idle;     /* under wake_lock */
static clockid_t wake_clock = CLOCK_REALTIME; /* wake_cond's, CLOCK_MONOTONIC once set */
/* The thread whose JVMTI ThreadStart runs on the calling thread, while it
 * runs (np_jfr_thread_starting): its placement's `thread` without a call
 * into Java, which costs a new thread microseconds.  A thread-specific
 * value rather than a __thread variable, whose use in a library loaded at
 * run time would make the agent depend on the dynamic loader itself. */
static pthread_key_t starting_key;
static bool starting_ok;

/* java.base, and jdk.jfr's FlightRecorder: found when the thread starts. */
static jclass c_object, c_integer, c_long, c_double, c_boolean, c_void, c_string, c_thread, c_thread_group,
    c_list, c_arrays, c_semaphore, c_time_unit, c_runnable, c_lookup, c_method_type,
    c_method_handle, c_method_handles, c_mh_proxies, c_flight_recorder;
static jmethodID m_to_string, m_integer_of, m_long_of, m_double_of, m_boolean_of, m_current_thread,
    m_thread_group, m_group_parent, m_group_count, m_group_enumerate, m_list_size, m_list_get,
    m_as_list, m_sem_new, m_sem_try, m_sem_drain, m_public_lookup, m_find_virtual,
    m_method_type, m_bind_to, m_as_interface, m_is_available, m_is_initialized;
/* The rest of jdk.jfr: found when JFR is first initialised. */
static jclass c_recording, c_recording_state, c_event_factory, c_event, c_annotation_element,
    c_value_descriptor, c_name, c_label, c_description, c_category, c_period, c_stack_trace,
    c_data_amount, c_percentage;
static jmethodID m_get_recorder, m_get_recordings, m_add_periodic, m_rec_state, m_rec_id,
    m_factory_create, m_new_event, m_should_commit, m_set, m_commit, m_annotation_new,
    m_annotation_mark, m_descriptor_new;
static jobject o_int_type, o_long_type, o_double_type, o_boolean_type, o_void_type, o_running,
    o_millis;

struct class_ref {
    jclass *out;
    const char *name;
};
struct method_ref {
    jmethodID *out;
    jclass *cls;
    const char *name, *sig;
    bool is_static;
};
struct field_ref {
    jobject *out;
    jclass *cls;
    const char *name, *sig;
};

static const struct class_ref base_classes[] = {
    {&c_object, "java/lang/Object"}, {&c_integer, "java/lang/Integer"},
    {&c_long, "java/lang/Long"}, {&c_double, "java/lang/Double"},
    {&c_boolean, "java/lang/Boolean"}, {&c_void, "java/lang/Void"},
    {&c_string, "java/lang/String"}, {&c_thread, "java/lang/Thread"},
    {&c_thread_group, "java/lang/ThreadGroup"}, {&c_list, "java/util/List"},
    {&c_arrays, "java/util/Arrays"}, {&c_semaphore, "java/util/concurrent/Semaphore"},
    {&c_time_unit, "java/util/concurrent/TimeUnit"}, {&c_runnable, "java/lang/Runnable"},
    {&c_lookup, "java/lang/invoke/MethodHandles$Lookup"},
    {&c_method_type, "java/lang/invoke/MethodType"},
    {&c_method_handle, "java/lang/invoke/MethodHandle"},
    {&c_method_handles, "java/lang/invoke/MethodHandles"},
    {&c_mh_proxies, "java/lang/invoke/MethodHandleProxies"},
};
static const struct method_ref base_methods[] = {
    {&m_to_string, &c_object, "toString", "()Ljava/lang/String;", false},
    {&m_integer_of, &c_integer, "valueOf", "(I)Ljava/lang/Integer;", true},
    {&m_long_of, &c_long, "valueOf", "(J)Ljava/lang/Long;", true},
    {&m_double_of, &c_double, "valueOf", "(D)Ljava/lang/Double;", true},
    {&m_boolean_of, &c_boolean, "valueOf", "(Z)Ljava/lang/Boolean;", true},
    {&m_current_thread, &c_thread, "currentThread", "()Ljava/lang/Thread;", true},
    {&m_thread_group, &c_thread, "getThreadGroup", "()Ljava/lang/ThreadGroup;", false},
    {&m_group_parent, &c_thread_group, "getParent", "()Ljava/lang/ThreadGroup;", false},
    {&m_group_count, &c_thread_group, "activeCount", "()I", false},
    {&m_group_enumerate, &c_thread_group, "enumerate", "([Ljava/lang/Thread;Z)I", false},
    {&m_list_size, &c_list, "size", "()I", false},
    {&m_list_get, &c_list, "get", "(I)Ljava/lang/Object;", false},
    {&m_as_list, &c_arrays, "asList", "([Ljava/lang/Object;)Ljava/util/List;", true},
    {&m_sem_new, &c_semaphore, "<init>", "(I)V", false},
    {&m_sem_try, &c_semaphore, "tryAcquire", "(JLjava/util/concurrent/TimeUnit;)Z", false},
    {&m_sem_drain, &c_semaphore, "drainPermits", "()I", false},
    {&m_public_lookup, &c_method_handles, "publicLookup",
     "()Ljava/lang/invoke/MethodHandles$Lookup;", true},
    {&m_find_virtual, &c_lookup, "findVirtual",
     "(Ljava/lang/Class;Ljava/lang/String;Ljava/lang/invoke/MethodType;)"
     "Ljava/lang/invoke/MethodHandle;", false},
    {&m_method_type, &c_method_type, "methodType",
     "(Ljava/lang/Class;)Ljava/lang/invoke/MethodType;", true},
    {&m_bind_to, &c_method_handle, "bindTo",
     "(Ljava/lang/Object;)Ljava/lang/invoke/MethodHandle;", false},
    {&m_as_interface, &c_mh_proxies, "asInterfaceInstance",
     "(Ljava/lang/Class;Ljava/lang/invoke/MethodHandle;)Ljava/lang/Object;", true},
};
static const struct field_ref base_fields[] = {
    {&o_int_type, &c_integer, "TYPE", "Ljava/lang/Class;"},
    {&o_long_type, &c_long, "TYPE", "Ljava/lang/Class;"},
    {&o_double_type, &c_double, "TYPE", "Ljava/lang/Class;"},
    {&o_boolean_type, &c_boolean, "TYPE", "Ljava/lang/Class;"},
    {&o_void_type, &c_void, "TYPE", "Ljava/lang/Class;"},
    {&o_millis, &c_time_unit, "MILLISECONDS", "Ljava/util/concurrent/TimeUnit;"},
};
static const struct class_ref recorder_classes[] = {
    {&c_flight_recorder, "jdk/jfr/FlightRecorder"},
};
static const struct method_ref recorder_methods[] = {
    {&m_is_available, &c_flight_recorder, "isAvailable", "()Z", true},
    {&m_is_initialized, &c_flight_recorder, "isInitialized", "()Z", true},
};
static const struct class_ref jfr_classes[] = {
    {&c_recording, "jdk/jfr/Recording"}, {&c_recording_state, "jdk/jfr/RecordingState"},
    {&c_event_factory, "jdk/jfr/EventFactory"}, {&c_event, "jdk/jfr/Event"},
    {&c_annotation_element, "jdk/jfr/AnnotationElement"},
    {&c_value_descriptor, "jdk/jfr/ValueDescriptor"}, {&c_name, "jdk/jfr/Name"},
    {&c_label, "jdk/jfr/Label"}, {&c_description, "jdk/jfr/Description"},
    {&c_category, "jdk/jfr/Category"}, {&c_period, "jdk/jfr/Period"},
    {&c_stack_trace, "jdk/jfr/StackTrace"}, {&c_data_amount, "jdk/jfr/DataAmount"},
    {&c_percentage, "jdk/jfr/Percentage"},
};
static const struct method_ref jfr_methods[] = {
    {&m_get_recorder, &c_flight_recorder, "getFlightRecorder", "()Ljdk/jfr/FlightRecorder;", true},
    {&m_get_recordings, &c_flight_recorder, "getRecordings", "()Ljava/util/List;", false},
    {&m_add_periodic, &c_flight_recorder, "addPeriodicEvent",
     "(Ljava/lang/Class;Ljava/lang/Runnable;)V", true},
    {&m_rec_state, &c_recording, "getState", "()Ljdk/jfr/RecordingState;", false},
    {&m_rec_id, &c_recording, "getId", "()J", false},
    {&m_factory_create, &c_event_factory, "create",
     "(Ljava/util/List;Ljava/util/List;)Ljdk/jfr/EventFactory;", true},
    {&m_new_event, &c_event_factory, "newEvent", "()Ljdk/jfr/Event;", false},
    {&m_should_commit, &c_event, "shouldCommit", "()Z", false},
    {&m_set, &c_event, "set", "(ILjava/lang/Object;)V", false},
    {&m_commit, &c_event, "commit", "()V", false},
    {&m_annotation_new, &c_annotation_element, "<init>",
     "(Ljava/lang/Class;Ljava/lang/Object;)V", false},
    {&m_annotation_mark, &c_annotation_element, "<init>", "(Ljava/lang/Class;)V", false},
    {&m_descriptor_new, &c_value_descriptor, "<init>",
     "(Ljava/lang/Class;Ljava/lang/String;Ljava/util/List;)V", false},
};
/* numapin.agent.JfrEmit (agent/java/numapin/agent/JfrEmit.java), defined
 * from the bytes the build puts here (make: np_jfr_emit_class): commits a
 * numapin.Placement in one call, and is NodeMemory's periodic hook.  Set
 * by numapin's thread before the sink first listens; without it numapin
 * emits no events. */
extern const unsigned char np_jfr_emit_class[];
extern const unsigned int np_jfr_emit_class_len;
static jclass c_emit;
static jmethodID m_emit_placement, m_emit_ticking, m_emit_flushing;

static const struct field_ref jfr_fields[] = {
    {&o_running, &c_recording_state, "RUNNING", "Ljdk/jfr/RecordingState;"},
};

/* ------------------------------------------------------------ event types */

enum kind { STRING, INT, LONG, BOOL, THREAD, BYTES, PERCENT };

/* BYTES: a long with @DataAmount(BYTES); PERCENT: a double with
 * @Percentage (a fraction, 0.987 shown as 98.7%). */
struct field {
    const char *name, *label, *description;
    enum kind kind;
};

struct type {
    const char *name, *label, *description;
    const char *period; /* @Period, for the periodic event */
    const struct field *fields;
    int n;
    jobject factory;    /* global, once defined */
    _Atomic(jobject) tick; /* global: released at the type's period (periodic types) */
};

union value {
    const char *s;
    long long i;
    double d;
    bool b;
    jobject o;
};

enum { P_THREAD, P_NAME, P_TID, P_GROUP, P_NODES, P_CPUS, P_MEM, P_MEM_ERROR, P_HOW, P_VERIFIED,
       P_EARLIER, P_COUNT };
static const struct field placement_fields[P_COUNT] = {
    {"thread", "Thread", "The placed thread; null when it has ended", THREAD},
    {"threadName", "Thread Name", "The name numapin matched against threads=", STRING},
    {"osThreadId", "OS Thread Id", "The placed thread's Linux thread id (tid)", LONG},
    {"group", "Group", "This JVM's group (group=)", INT},
    {"nodes", "Nodes", "The group's NUMA nodes", STRING},
    {"cpus", "CPUs", "The CPUs the thread was bound to", STRING},
    {"memoryPolicy", "Memory Policy",
     "The memory policy the thread was given; unchanged when placed from outside; "
     "null when setting it failed", STRING},
    {"memoryError", "Memory Error", "Why setting the memory policy failed (an errno name)",
     STRING},
    {"how", "How",
     "start: on the thread at its start; attach: at a late attach; rescan: after a rename",
     STRING},
    {"verified", "Verified", "The placement read back as made", BOOL},
    {"earlier", "Placed Earlier",
     "Placed before numapin saw the recording run; emitted when it did", BOOL},
};

enum { L_GROUP, L_GROUPS, L_DOMAIN, L_NODES, L_CPUS, L_CPUS_MODE, L_CPUKIND, L_SLOTS, L_MEM,
       L_THREADS, L_SCOPE, L_DRYRUN, L_OPTIONS, L_COUNT };
static const struct field plan_fields[L_COUNT] = {
    {"group", "Group", "This JVM's group (group=)", INT},
    {"groups", "Groups", "Groups sharing the machine (groups=)", INT},
    {"domain", "Domain", "What a group is placed on: node, package or l3", STRING},
    {"nodes", "Nodes", "The group's NUMA nodes", STRING},
    {"cpus", "CPUs", "The CPUs placed threads use", STRING},
    {"cpusMode", "CPUs Mode", "node: all the group's CPUs; core or pu: one each", STRING},
    {"cpukind", "CPU Kind", "The CPU kind placed threads use (cpukind=)", STRING},
    {"slots", "Slots", "Cores or hardware threads placed threads are spread over", INT},
    {"memoryPolicy", "Memory Policy", "The memory policy placed threads get", STRING},
    {"threads", "Threads", "The thread-name globs that are placed (threads=)", STRING},
    {"scope", "Scope", "threads, or jvm: the whole JVM bound to the group too", STRING},
    {"dryrun", "Dry Run", "Plan and log only, bind nothing", BOOL},
    {"options", "Options", "numapin's option string as given", STRING},
};

enum { A_LEVEL, A_MESSAGE, A_COUNT };
static const struct field advice_fields[A_COUNT] = {
    {"level", "Level", "The log level of the advice line: warning or info", STRING},
    {"message", "Message", "The advice, as the log line says it after \"advice: \"", STRING},
};

enum { M_NODE, M_RESIDENT, M_GROUP_NODE, M_HUGE, M_COUNT };
static const struct field memory_fields[M_COUNT] = {
    {"node", "Node", "The NUMA node (OS index)", INT},
    {"resident", "Resident", "The process's memory resident on the node", BYTES},
    {"groupNode", "Group Node", "The node is one of this JVM's group", BOOL},
    {"hugePages", "Huge Pages", "Of the resident memory, what is in hugetlb pages (any size)",
     BYTES},
};

enum { G_NODES, G_SAMPLED, G_LOCAL, G_SAMPLES, G_MIGRATED, G_UNSAMPLED, G_COUNT };
static const struct field access_fields[G_COUNT] = {
    {"nodes", "Nodes", "The group's memory nodes, that accesses are local to", STRING},
    {"sampled", "Sampled", "The kernel samples this JVM's accesses (NUMA hinting faults)", BOOL},
    {"accessLocal", "Access Local",
     "Of the sampled accesses, the share to memory on the group's nodes (to a tenth of a "
     "percent, rounded down); NaN with no sample", PERCENT},
    {"accessSamples", "Access Samples",
     "The kernel's recent samples of the threads' accesses, on any node (it halves its "
     "counts at each scan)", LONG},
    {"accessMigrated", "Access Migrated", "Pages the kernel migrated on those samples", LONG},
    {"unsampled", "Unsampled", "Why the kernel samples none, and the fix; null when sampled",
     STRING},
};

enum { T_THREAD, T_NAME, T_TID, T_NODES, T_LOCAL, T_SAMPLES, T_MIGRATED, T_COUNT };
static const struct field thread_access_fields[T_COUNT] = {
    {"thread", "Thread", "The placed thread", THREAD},
    {"threadName", "Thread Name", "The name numapin matched against threads=", STRING},
    {"osThreadId", "OS Thread Id", "The placed thread's Linux thread id (tid)", LONG},
    {"nodes", "Nodes", "The group's memory nodes, that accesses are local to", STRING},
    {"accessLocal", "Access Local",
     "Of the thread's sampled accesses, the share to memory on the group's nodes (to a tenth "
     "of a percent, rounded down); NaN with no sample", PERCENT},
    {"accessSamples", "Access Samples",
     "The kernel's recent samples of the thread's accesses, on any node (it halves its counts "
     "at each scan)", LONG},
    {"accessMigrated", "Access Migrated", "Pages the kernel migrated on the thread's samples",
     LONG},
};

/* Placement's period is a chunk's end only for its hook, which commits
 * the placements still queued when a recording stops or a chunk ends;
 * the events themselves are made as threads are placed. */
static struct type t_placement = {
    "numapin.Placement", "Thread Placement",
    "numapin bound a thread to its group's CPUs (and, at its start, set its memory policy)",
    "endChunk", placement_fields, P_COUNT, NULL, NULL};
static struct type t_plan = {
    "numapin.Plan", "Placement Plan",
    "numapin's plan for this JVM: its group, nodes and CPUs, and the options; once a recording",
    NULL, plan_fields, L_COUNT, NULL, NULL};
static struct type t_advice = {
    "numapin.Advice", "Placement Advice",
    "A setup numapin saw that leaves performance on the table, with the fix", NULL,
    advice_fields, A_COUNT, NULL, NULL};
static struct type t_memory = {
    "numapin.NodeMemory", "Memory per Node",
    "The process's own resident memory (heap, stacks, native; not mapped files) on each NUMA node",
    "10 s",
    memory_fields, M_COUNT, NULL, NULL};
static struct type t_access = {
    "numapin.AccessLocality", "Access Locality",
    "The kernel's sampled memory accesses of the whole process, and the share on the group's "
    "nodes, or why the kernel samples none",
    "10 s", access_fields, G_COUNT, NULL, NULL};
static struct type t_thread_access = {
    "numapin.ThreadAccess", "Thread Access Locality",
    "A placed thread's sampled memory accesses and the share on the group's nodes; only where "
    "the kernel samples (numapin.AccessLocality says why not)",
    "10 s", thread_access_fields, T_COUNT, NULL, NULL};
static struct type *const types[] = {&t_placement, &t_plan, &t_advice, &t_memory, &t_access,
                                     &t_thread_access};

/* ---------------------------------------------------------------- JNI */

/* o, the result of the JNI call just made; NULL when it threw (the
 * exception left pending for ok()).  Checking at once is what JNI asks
 * (-Xcheck:jni says so otherwise). */
static jobject chk(JNIEnv *env, jobject o)
{
    return (*env)->ExceptionCheck(env) ? NULL : o;
}

/* True when no exception is pending; else describes and clears it, and
 * warns (once) that `what` failed. */
static bool ok(JNIEnv *env, const char *what)
{
    if (!(*env)->ExceptionCheck(env))
        return true;
    jthrowable e = (*env)->ExceptionOccurred(env);
    (*env)->ExceptionClear(env);
    char text[512] = "an exception";
    if (e != NULL && m_to_string != NULL) {
        jstring s = (jstring)(*env)->CallObjectMethod(env, e, m_to_string);
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionClear(env);
        } else if (s != NULL) {
            const char *c = (*env)->GetStringUTFChars(env, s, NULL);
            if (c != NULL) {
                snprintf(text, sizeof text, "%s", c);
                (*env)->ReleaseStringUTFChars(env, s, c);
            }
            (*env)->ExceptionClear(env);
        }
        if (s != NULL)
            (*env)->DeleteLocalRef(env, s);
    }
    if (e != NULL)
        (*env)->DeleteLocalRef(env, e);
    np_log(np_once_level(&warned, NP_LOG_WARNING),
           "JFR: %s failed: %s; numapin's events may be missing from the recording (repeats are "
           "logged at debug level)", what, text);
    return false;
}

/* Finds classes (global refs), methods and static fields.  Returns 0, or
 * -1 with no exception pending; `quiet`: a missing class is not
 * warned of (the caller tells why). */
static int find(JNIEnv *env, const struct class_ref *cs, size_t nc, const struct method_ref *ms,
                size_t nm, const struct field_ref *fs, size_t nf, bool quiet)
{
    for (size_t i = 0; i < nc; i++) {
        jclass local = chk(env, (*env)->FindClass(env, cs[i].name));
        if (local == NULL) {
            if (quiet)
                (*env)->ExceptionClear(env);
            else
                ok(env, cs[i].name);
            return -1;
        }
        *cs[i].out = (jclass)(*env)->NewGlobalRef(env, local);
        (*env)->DeleteLocalRef(env, local);
        if (*cs[i].out == NULL)
            return ok(env, "NewGlobalRef"), -1;
    }
    for (size_t i = 0; i < nm; i++) {
        jclass c = *ms[i].cls;
        *ms[i].out = ms[i].is_static ? (*env)->GetStaticMethodID(env, c, ms[i].name, ms[i].sig)
                                     : (*env)->GetMethodID(env, c, ms[i].name, ms[i].sig);
        if (*ms[i].out == NULL)
            return ok(env, ms[i].name), -1;
    }
    for (size_t i = 0; i < nf; i++) {
        jfieldID f = (*env)->GetStaticFieldID(env, *fs[i].cls, fs[i].name, fs[i].sig);
        jobject v = f != NULL ? (*env)->GetStaticObjectField(env, *fs[i].cls, f) : NULL;
        if (v == NULL || (*fs[i].out = (*env)->NewGlobalRef(env, v)) == NULL)
            return ok(env, fs[i].name), -1;
        (*env)->DeleteLocalRef(env, v);
    }
    return 0;
}

#define FIND(cs, ms, fs, quiet)                                                                   \
    find(env, cs, sizeof cs / sizeof *cs, ms, sizeof ms / sizeof *ms, fs,                         \
         sizeof fs / sizeof *fs, quiet)

/* A Java string of the UTF-8 text s (names, globs, advice): JNI takes
 * modified UTF-8, which writes a character beyond the BMP as two
 * surrogates; ASCII, the common case, is the same in both. */
static jstring text_string(JNIEnv *env, const char *s)
{
    const char *p = s;
    while (*p != '\0' && (unsigned char)*p < 0x80)
        p++;
    if (*p == '\0')
        return (*env)->NewStringUTF(env, s);
    char *m = np_text_to_mutf8(s);
    jstring str = m != NULL ? (*env)->NewStringUTF(env, m) : NULL;
    free(m);
    return str;
}

/* One field's value as an object (a local ref; NULL for a null value). */
static jobject box(JNIEnv *env, enum kind k, const union value *v)
{
    jobject o = NULL;
    switch (k) {
    case STRING: o = v->s != NULL ? text_string(env, v->s) : NULL; break;
    case INT: o = (*env)->CallStaticObjectMethod(env, c_integer, m_integer_of, (jint)v->i); break;
    case LONG:
    case BYTES: o = (*env)->CallStaticObjectMethod(env, c_long, m_long_of, (jlong)v->i); break;
    case PERCENT:
        o = (*env)->CallStaticObjectMethod(env, c_double, m_double_of, (jdouble)v->d);
        break;
    case BOOL:
        o = (*env)->CallStaticObjectMethod(env, c_boolean, m_boolean_of, (jboolean)v->b);
        break;
    case THREAD: o = v->o != NULL ? (*env)->NewLocalRef(env, v->o) : NULL; break;
    }
    return chk(env, o);
}

/* Commits one event of type t with these values (one a field), when the
 * recordings want it. */
static void emit(JNIEnv *env, const struct type *t, const union value *v)
{
    if ((*env)->PushLocalFrame(env, 16) != 0) {
        ok(env, "PushLocalFrame");
        return;
    }
    jobject ev = chk(env, (*env)->CallObjectMethod(env, t->factory, m_new_event));
    bool good = ok(env, "EventFactory.newEvent") && ev != NULL;
    if (good) {
        jboolean wanted = (*env)->CallBooleanMethod(env, ev, m_should_commit);
        good = ok(env, "Event.shouldCommit") && wanted;
    }
    if (good) {
        for (int i = 0; good && i < t->n; i++) {
            jobject o = box(env, t->fields[i].kind, &v[i]);
            if (!(good = ok(env, t->fields[i].name)) || o == NULL)
                continue;
            (*env)->CallVoidMethod(env, ev, m_set, (jint)i, o);
            good = ok(env, "Event.set");
            (*env)->DeleteLocalRef(env, o);
        }
        if (good) {
            (*env)->CallVoidMethod(env, ev, m_commit);
            ok(env, "Event.commit");
        }
    }
    (*env)->ExceptionClear(env); /* nothing is left on the thread */
    (*env)->PopLocalFrame(env, NULL);
}

/* new AnnotationElement(type, value), a local ref. */
static jobject annotation(JNIEnv *env, jclass type, jobject value)
{
    return chk(env, (*env)->NewObject(env, c_annotation_element, m_annotation_new, type, value));
}

static jobject annotation_str(JNIEnv *env, jclass type, const char *value)
{
    jstring s = chk(env, (*env)->NewStringUTF(env, value));
    return s != NULL ? annotation(env, type, s) : NULL;
}

/* Arrays.asList(items[0..n)), a local ref. */
static jobject list_of(JNIEnv *env, jobject *items, int n)
{
    jobjectArray a = chk(env, (*env)->NewObjectArray(env, n, c_object, NULL));
    for (int i = 0; a != NULL && i < n; i++) {
        if (items[i] == NULL)
            return NULL; /* an exception is pending */
        (*env)->SetObjectArrayElement(env, a, i, items[i]);
    }
    return a != NULL ? chk(env, (*env)->CallStaticObjectMethod(env, c_arrays, m_as_list, a)) : NULL;
}

/* The annotations of a field: @Label, @Description, maybe @DataAmount
 * or @Percentage. */
static jobject field_annotations(JNIEnv *env, const struct field *f)
{
    jobject fa[3];
    int n = 0;
    if ((fa[n++] = annotation_str(env, c_label, f->label)) == NULL ||
        (fa[n++] = annotation_str(env, c_description, f->description)) == NULL ||
        (f->kind == BYTES && (fa[n++] = annotation_str(env, c_data_amount, "BYTES")) == NULL) ||
        (f->kind == PERCENT &&
         (fa[n++] = chk(env, (*env)->NewObject(env, c_annotation_element, m_annotation_mark,
                                               c_percentage))) == NULL))
        return NULL;
    return list_of(env, fa, n);
}

/* Defines an event type through EventFactory: @Name, @Label,
 * @Description, @Category("numapin"), @StackTrace(false), maybe @Period,
 * and its fields.  Returns 0, or -1 (warned, nothing pending). */
static int define(JNIEnv *env, struct type *t)
{
    if ((*env)->PushLocalFrame(env, 64 + 8 * t->n) != 0)
        return ok(env, "PushLocalFrame"), -1;
    jobject ann[6], fields[16], annotations = NULL, field_list = NULL, factory = NULL;
    int na = 0;
    jobjectArray category = chk(env, (*env)->NewObjectArray(env, 1, c_string, NULL));
    jstring numapin = category != NULL ? chk(env, (*env)->NewStringUTF(env, "numapin")) : NULL;
    jobject no = numapin != NULL ? chk(env, (*env)->CallStaticObjectMethod(env, c_boolean,
                                                                           m_boolean_of, JNI_FALSE))
                                 : NULL;
    if (no == NULL || t->n > 16)
        goto out;
    (*env)->SetObjectArrayElement(env, category, 0, numapin);
    if ((ann[na++] = annotation_str(env, c_name, t->name)) == NULL ||
        (ann[na++] = annotation_str(env, c_label, t->label)) == NULL ||
        (ann[na++] = annotation_str(env, c_description, t->description)) == NULL ||
        (ann[na++] = annotation(env, c_category, category)) == NULL ||
        (ann[na++] = annotation(env, c_stack_trace, no)) == NULL ||
        (t->period != NULL && (ann[na++] = annotation_str(env, c_period, t->period)) == NULL) ||
        (annotations = list_of(env, ann, na)) == NULL)
        goto out;
    for (int i = 0; i < t->n; i++) {
        const struct field *f = &t->fields[i];
        jobject type = f->kind == STRING ? c_string : f->kind == INT ? o_int_type
                       : f->kind == LONG || f->kind == BYTES ? o_long_type
                       : f->kind == PERCENT ? o_double_type : f->kind == BOOL ? o_boolean_type
                       : c_thread;
        jobject list = field_annotations(env, f);
        jstring name = list != NULL ? chk(env, (*env)->NewStringUTF(env, f->name)) : NULL;
        fields[i] = name != NULL ? chk(env, (*env)->NewObject(env, c_value_descriptor,
                                                              m_descriptor_new, type, name, list))
                                 : NULL;
        if (fields[i] == NULL)
            goto out;
    }
    if ((field_list = list_of(env, fields, t->n)) != NULL)
        factory = chk(env, (*env)->CallStaticObjectMethod(env, c_event_factory, m_factory_create,
                                                 annotations, field_list));
    if (factory != NULL && !(*env)->ExceptionCheck(env))
        t->factory = (*env)->NewGlobalRef(env, factory);
out:
    ok(env, t->name);
    (*env)->PopLocalFrame(env, NULL);
    if (t->factory == NULL)
        np_log(np_once_level(&warned, NP_LOG_WARNING),
               "JFR: cannot define the event type %s: recordings get no numapin events", t->name);
    return t->factory != NULL ? 0 : -1;
}

/* A new Semaphore with no permit, a global ref; NULL when that failed
 * (warned). */
static jobject new_semaphore(JNIEnv *env)
{
    jobject sem = chk(env, (*env)->NewObject(env, c_semaphore, m_sem_new, (jint)0));
    jobject global = sem != NULL ? (*env)->NewGlobalRef(env, sem) : NULL;
    if (sem != NULL)
        (*env)->DeleteLocalRef(env, sem);
    if (global == NULL)
        ok(env, "new Semaphore");
    return global;
}

/* Asks JFR to call for the periodic type t at its period: a Runnable that
 * releases t's semaphore, or, given `hook_of`, the one that JfrEmit's
 * static method returns (ticking: wakes numapin's thread, emit_tick;
 * flushing: commits the queue on JFR's thread, emit_flush). */
static int add_periodic(JNIEnv *env, struct type *t, jmethodID hook_of)
{
    if ((*env)->PushLocalFrame(env, 16) != 0)
        return ok(env, "PushLocalFrame"), -1;
    int rc = -1;
    jobject ev, lookup, mt, mh, bound, hook;
    jstring release;
    jclass cls;
    if ((ev = chk(env, (*env)->CallObjectMethod(env, t->factory, m_new_event))) == NULL ||
        (cls = (*env)->GetObjectClass(env, ev)) == NULL)
        goto out;
    if (hook_of != NULL) {
        if ((hook = chk(env, (*env)->CallStaticObjectMethod(env, c_emit, hook_of))) == NULL)
            goto out;
    } else if ((lookup = chk(env, (*env)->CallStaticObjectMethod(env, c_method_handles,
                                                          m_public_lookup))) == NULL ||
        (mt = chk(env, (*env)->CallStaticObjectMethod(env, c_method_type, m_method_type,
                                                      o_void_type))) == NULL ||
        (release = chk(env, (*env)->NewStringUTF(env, "release"))) == NULL ||
        (mh = chk(env, (*env)->CallObjectMethod(env, lookup, m_find_virtual, c_semaphore, release,
                                                mt))) == NULL ||
        (bound = chk(env, (*env)->CallObjectMethod(env, mh, m_bind_to, atomic_load(&t->tick)))) ==
            NULL ||
        (hook = chk(env, (*env)->CallStaticObjectMethod(env, c_mh_proxies, m_as_interface,
                                                        c_runnable, bound))) == NULL)
        goto out;
    (*env)->CallStaticVoidMethod(env, c_flight_recorder, m_add_periodic, cls, hook);
    rc = 0;
out:
    if (!ok(env, "FlightRecorder.addPeriodicEvent"))
        rc = -1;
    (*env)->PopLocalFrame(env, NULL);
    return rc;
}

/* ------------------------------------------------------------ threads */

/* The running Java threads with their OS ids, for the `thread` field of
 * placements told from another thread. */
struct threads {
    jobjectArray all; /* a local ref */
    pid_t *tids;
    int n;
};

static void threads_free(JNIEnv *env, struct threads *t)
{
    if (t->all != NULL)
        (*env)->DeleteLocalRef(env, t->all);
    free(t->tids);
    memset(t, 0, sizeof *t);
}

/* Lists the threads of the root thread group.  Returns 0 or -1. */
static int threads_list(JNIEnv *env, struct threads *t)
{
    memset(t, 0, sizeof *t);
    if (tid_of == NULL)
        return -1;
    jobject me = chk(env, (*env)->CallStaticObjectMethod(env, c_thread, m_current_thread));
    jobject g = me != NULL ? chk(env, (*env)->CallObjectMethod(env, me, m_thread_group)) : NULL;
    jobject up;
    while (g != NULL && (up = chk(env, (*env)->CallObjectMethod(env, g, m_group_parent))) != NULL) {
        (*env)->DeleteLocalRef(env, g);
        g = up;
    }
    jint count = g != NULL && ok(env, "ThreadGroup")
                     ? (*env)->CallIntMethod(env, g, m_group_count) : 0;
    if (ok(env, "ThreadGroup.activeCount") && g != NULL && count >= 0) {
        jint room = count + count / 2 + 16;
        t->all = chk(env, (*env)->NewObjectArray(env, room, c_thread, NULL));
        t->n = t->all != NULL ? (*env)->CallIntMethod(env, g, m_group_enumerate, t->all, JNI_TRUE)
                              : 0;
        if (!ok(env, "ThreadGroup.enumerate"))
            t->n = 0;
        t->tids = calloc((size_t)(t->n > 0 ? t->n : 1), sizeof *t->tids);
        for (int i = 0; t->tids != NULL && i < t->n; i++) {
            jobject th = chk(env, (*env)->GetObjectArrayElement(env, t->all, i));
            t->tids[i] = th != NULL ? tid_of(env, th) : -1;
            if (th != NULL)
                (*env)->DeleteLocalRef(env, th);
        }
    }
    if (me != NULL)
        (*env)->DeleteLocalRef(env, me);
    if (g != NULL)
        (*env)->DeleteLocalRef(env, g);
    if (t->tids == NULL) {
        threads_free(env, t);
        return -1;
    }
    return 0;
}

/* The thread with this OS id (a local ref), or NULL. */
static jobject threads_find(JNIEnv *env, const struct threads *t, pid_t tid)
{
    for (int i = 0; i < t->n; i++)
        if (t->tids[i] == tid)
            return chk(env, (*env)->GetObjectArrayElement(env, t->all, i));
    return NULL;
}

/* The threads while np_agent_listen tells the earlier placements: only
 * numapin's thread calls it, and reads this. */
static struct threads replay;

/* ---------------------------------------------------------------- sink */

/* A numapin.Placement through JfrEmit: the strings made here, the rest
 * done in Java in one call. */
static void emit_placement(JNIEnv *env, const union value *v)
{
    jstring str[P_COUNT] = {NULL};
    static const int strings[] = {P_NAME, P_NODES, P_CPUS, P_MEM, P_MEM_ERROR, P_HOW};
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++) {
        int f = strings[i];
        if (v[f].s != NULL && (str[f] = chk(env, text_string(env, v[f].s))) == NULL) {
            ok(env, placement_fields[f].name);
            return;
        }
    }
    (*env)->CallStaticVoidMethod(env, c_emit, m_emit_placement, t_placement.factory, v[P_THREAD].o,
                                 str[P_NAME], (jlong)v[P_TID].i, (jint)v[P_GROUP].i, str[P_NODES],
                                 str[P_CPUS], str[P_MEM], str[P_MEM_ERROR], str[P_HOW],
                                 (jboolean)v[P_VERIFIED].b, (jboolean)v[P_EARLIER].b);
    ok(env, "JfrEmit.placement");
    (*env)->ExceptionClear(env); /* nothing is left on the thread */
}

/* Placements made at a thread's start while a recording runs, waiting for
 * numapin's thread to commit them: committing on the new thread itself
 * costs it about 20 us of CPU, queueing a copy and a global ref.  The
 * first placement queued while numapin's thread sleeps with none wakes
 * it; it then lets placements gather for GATHER_MS, unwoken, and commits
 * them together, so that a stream of thread starts costs one wake-up
 * every GATHER_MS, not one each.  Under wake_lock. */
struct pending {
    struct pending *next;
    jobject thread;          /* a global ref */
    union value v[P_COUNT];  /* strings point into text */
    char text[];
};
static struct pending *pending_head, **pending_tail = &pending_head;

/* Queues placement e, made on the calling thread in its ThreadStart.
 * Returns false when it could not (the caller emits it itself). */
static bool enqueue(JNIEnv *env, const struct np_placement_event *e)
{
    static const int strings[] = {P_NAME, P_NODES, P_CPUS, P_MEM, P_MEM_ERROR, P_HOW};
    const char *text[P_COUNT] = {NULL};
    text[P_NAME] = e->name;
    text[P_NODES] = e->nodes;
    text[P_CPUS] = e->cpus;
    text[P_MEM] = e->mem;
    text[P_MEM_ERROR] = e->mem_error;
    text[P_HOW] = np_how_name(e->how);
    size_t len = 0;
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++)
        len += text[strings[i]] != NULL ? strlen(text[strings[i]]) + 1 : 0;
    jobject starting = starting_ok ? pthread_getspecific(starting_key) : NULL;
    struct pending *p = starting != NULL ? malloc(sizeof *p + len) : NULL;
    if (p == NULL)
        return false;
    if ((p->thread = (*env)->NewGlobalRef(env, starting)) == NULL) {
        ok(env, "NewGlobalRef");
        free(p);
        return false;
    }
    char *at = p->text;
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++) {
        int f = strings[i];
        p->v[f].s = NULL;
        if (text[f] != NULL) {
            size_t n = strlen(text[f]) + 1;
            memcpy(at, text[f], n);
            p->v[f].s = at;
            at += n;
        }
    }
    p->v[P_THREAD].o = p->thread;
    p->v[P_TID].i = e->tid;
    p->v[P_GROUP].i = e->group;
    p->v[P_VERIFIED].b = e->verified;
    p->v[P_EARLIER].b = e->earlier;
    p->next = NULL;
    pthread_mutex_lock(&wake_lock);
    if (wake_idle && pending_head == NULL)
        pthread_cond_broadcast(&wake_cond);
    *pending_tail = p;
    pending_tail = &p->next;
    pthread_mutex_unlock(&wake_lock);
    return true;
}

/* Held while numapin's thread commits placements it took off the queue,
 * so that a chunk's end (emit_flush) waits for them to be in the chunk. */
static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER;
#define FLUSH_WAIT_MS 200   /* the longest a chunk's end waits for them */

/* Commits the queued placements: on numapin's thread, or on JFR's at a
 * chunk's end. */
static void flush(JNIEnv *env)
{
    pthread_mutex_lock(&wake_lock);
    struct pending *p = pending_head;
    pending_head = NULL;
    pending_tail = &pending_head;
    pthread_mutex_unlock(&wake_lock);
    while (p != NULL) {
        struct pending *next = p->next;
        if ((*env)->PushLocalFrame(env, 16) == 0) {
            emit_placement(env, p->v);
            (*env)->PopLocalFrame(env, NULL);
        } else {
            ok(env, "PushLocalFrame");
        }
        (*env)->DeleteGlobalRef(env, p->thread);
        free(p);
        p = next;
    }
}

/* The calling thread's JNIEnv, when it may call Java now. */
static JNIEnv *here(void)
{
    JNIEnv *env = NULL;
    if (vm == NULL || (*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK || env == NULL)
        return NULL;
    return (*env)->ExceptionCheck(env) ? NULL : env; /* never call over a pending exception */
}

static void tell_placement(struct np_sink *s, const struct np_placement_event *e)
{
    (void)s;
    JNIEnv *env = here();
    if (env == NULL)
        return;
    if ((*env)->PushLocalFrame(env, 8) != 0) {
        ok(env, "PushLocalFrame");
        return;
    }
    if (e->live && e->how == NP_HOW_START && !e->earlier && enqueue(env, e)) {
        (*env)->PopLocalFrame(env, NULL);
        return;
    }
    union value v[P_COUNT];
    v[P_THREAD].o = NULL;
    if (e->live && e->how == NP_HOW_START && !e->earlier) {
        /* Told on the thread itself, at its start, and not queued. */
        v[P_THREAD].o = chk(env, (*env)->CallStaticObjectMethod(env, c_thread, m_current_thread));
    } else if (e->live && e->earlier &&
               (v[P_THREAD].o = threads_find(env, &replay, e->tid)) != NULL) {
        /* Listed before the earlier placements were told; a thread that
         * was still starting then (no OS thread yet) is looked for again. */
    } else if (e->live) {
        struct threads t;
        if (threads_list(env, &t) == 0) {
            v[P_THREAD].o = threads_find(env, &t, e->tid);
            threads_free(env, &t);
        }
    }
    ok(env, "finding the placed thread");
    v[P_NAME].s = e->name;
    v[P_TID].i = e->tid;
    v[P_GROUP].i = e->group;
    v[P_NODES].s = e->nodes;
    v[P_CPUS].s = e->cpus;
    v[P_MEM].s = e->mem;
    v[P_MEM_ERROR].s = e->mem_error;
    v[P_HOW].s = np_how_name(e->how);
    v[P_VERIFIED].b = e->verified;
    v[P_EARLIER].b = e->earlier;
    emit_placement(env, v);
    (*env)->PopLocalFrame(env, NULL);
}

static void tell_plan(struct np_sink *s, const struct np_report_plan *p)
{
    (void)s;
    JNIEnv *env = here();
    if (env == NULL)
        return;
    char kind[32];
    union value v[L_COUNT];
    v[L_GROUP].i = p->group;
    v[L_GROUPS].i = p->groups;
    v[L_DOMAIN].s = np_domain_name(p->domain);
    v[L_NODES].s = p->node;
    v[L_CPUS].s = p->cpus;
    v[L_CPUS_MODE].s = np_cpus_mode_name(p->cpus_mode);
    v[L_CPUKIND].s = np_cpukind_name(p->cpukind, kind, sizeof kind);
    v[L_SLOTS].i = p->nslots;
    v[L_MEM].s = p->mem;
    v[L_THREADS].s = p->threads;
    v[L_SCOPE].s = np_scope_name(p->scope);
    v[L_DRYRUN].b = p->dryrun;
    v[L_OPTIONS].s = options_text;
    emit(env, &t_plan, v);
}

static void tell_advice(struct np_sink *s, enum np_level level, const char *text)
{
    (void)s;
    JNIEnv *env = here();
    if (env == NULL)
        return;
    union value v[A_COUNT];
    v[A_LEVEL].s = np_level_name(level);
    v[A_MESSAGE].s = text;
    emit(env, &t_advice, v);
}

static struct np_sink sink = {
    .plan = tell_plan, .placement = tell_placement, .advice = tell_advice,
};

/* The process's own resident memory (np_memory: not the files it maps,
 * each page once) on each node of the machine, and its hugetlb pages. */
static void node_memory(JNIEnv *env)
{
    struct np_memory m;
    if (np_memory_read(0, &m, NULL) != 0) {
        np_log(np_once_level(&warned, NP_LOG_WARNING),
               "JFR: cannot read /proc/self/numa_maps: %s (%s); numapin.NodeMemory has no events",
               strerror(errno), np_errno_name(errno));
        return;
    }
    static bool told;
    if (!told)
        np_log(NP_LOG_DEBUG, "JFR: numapin.NodeMemory: first events, at the period the "
                             "recordings ask for");
    told = true;
    hwloc_obj_t n = NULL;
    const struct np_targets *t = np_agent_targets(agent);
    while ((n = hwloc_get_next_obj_by_type(agent->topo.topology, HWLOC_OBJ_NUMANODE, n)) != NULL) {
        union value v[M_COUNT];
        v[M_NODE].i = (long long)n->os_index;
        v[M_RESIDENT].i = n->os_index < (unsigned)m.nnodes ? m.pages[n->os_index] * 4096 : 0;
        v[M_GROUP_NODE].b = !t->none && hwloc_bitmap_isset(t->mine->nodes, n->os_index);
        v[M_HUGE].i = np_memory_huge_bytes(&m, (int)n->os_index);
        emit(env, &t_memory, v);
    }
    np_memory_free(&m);
}

/* The share of a's samples on nodes as a fraction, as the summary's
 * access_local= gives it; NaN with no sample. */
static double local_share(const struct np_access *a, hwloc_const_bitmap_t nodes)
{
    long long permille = nodes != NULL ? np_access_permille(a, nodes) : -1;
    return permille >= 0 ? (double)permille / 1000 : NAN;
}

/* numapin.AccessLocality when `group`: the process's sampled accesses
 * (np_agent_access_now, as the summary reads them at exit), or why the
 * kernel samples none; numapin.ThreadAccess when `threads`, where it
 * samples: each live placed thread's. */
static void access_locality(JNIEnv *env, bool group, bool threads)
{
    const struct np_targets *t = np_agent_targets(agent);
    hwloc_const_bitmap_t nodes = t->none ? NULL : t->mem_nodes;
    char list[256] = "", why[512];
    if (nodes != NULL)
        np_cpulist(list, sizeof list, nodes);
    struct np_access all;
    struct np_thread_access *each;
    int neach;
    bool sampled = np_agent_access_now(agent, &each, &neach, &all, why, sizeof why);
    union value v[G_COUNT];
    v[G_NODES].s = list;
    v[G_SAMPLED].b = sampled;
    v[G_LOCAL].d = sampled ? local_share(&all, nodes) : NAN;
    v[G_SAMPLES].i = sampled ? np_access_total(&all) : 0;
    v[G_MIGRATED].i = sampled ? all.migrated : 0;
    v[G_UNSAMPLED].s = sampled ? NULL : why;
    static bool told;
    if (group && !told)
        np_log(NP_LOG_DEBUG, "JFR: numapin.AccessLocality: first events, at the period the "
                             "recordings ask for");
    told |= group;
    if (group)
        emit(env, &t_access, v);
    np_access_free(&all);
    struct np_live *l = NULL;
    int n = sampled && threads ? np_record_placed(agent->record, &l) : 0;
    if (n <= 0 || (*env)->PushLocalFrame(env, 16) != 0) {
        if (n > 0)
            ok(env, "PushLocalFrame");
        free(l);
        np_thread_access_free(each, neach);
        return;
    }
    /* Without the list (no thread ids from HotSpot), the events have a
     * null thread: the tid and name still say which. */
    struct threads java;
    if (threads_list(env, &java) != 0)
        ok(env, "listing the placed threads");
    int emitted = 0;
    for (int i = 0; i < n; i++) {
        const struct np_access *a = np_thread_access_find(each, neach, l[i].tid);
        char name[512];
        if (l[i].outcome != NP_PLACED || a == NULL)
            continue; /* ended meanwhile */
        if (np_record_name(agent->record, l[i].ref, name, sizeof name) == 0) {
            union value tv[T_COUNT];
            tv[T_THREAD].o = threads_find(env, &java, l[i].tid);
            ok(env, "finding the placed thread");
            tv[T_NAME].s = name;
            tv[T_TID].i = l[i].tid;
            tv[T_NODES].s = list;
            tv[T_LOCAL].d = local_share(a, nodes);
            tv[T_SAMPLES].i = np_access_total(a);
            tv[T_MIGRATED].i = a->migrated;
            emit(env, &t_thread_access, tv);
            emitted++;
            if (tv[T_THREAD].o != NULL)
                (*env)->DeleteLocalRef(env, tv[T_THREAD].o);
        }
    }
    np_thread_access_free(each, neach);
    static bool told_threads;
    if (!told_threads)
        np_log(NP_LOG_DEBUG, "JFR: numapin.ThreadAccess: first events, %d of %d placed threads "
                             "(%d Java threads listed)", emitted, n, java.n);
    told_threads = true;
    threads_free(env, &java);
    (*env)->PopLocalFrame(env, NULL);
    free(l);
}

/* True when JFR called for t since the last look (permits coalesced). */
static bool due(JNIEnv *env, struct type *t)
{
    jobject tick = atomic_load(&t->tick);
    if (tick == NULL)
        return false;
    jboolean got = (*env)->CallBooleanMethod(env, tick, m_sem_try, (jlong)0, o_millis);
    if (!ok(env, "Semaphore.tryAcquire") || !got)
        return false;
    (*env)->CallIntMethod(env, tick, m_sem_drain);
    return ok(env, "Semaphore.drainPermits");
}

/* JfrEmit.tick(): JFR asks for NodeMemory (its periodic hook). */
static void JNICALL emit_tick(JNIEnv *env, jclass k)
{
    (void)env;
    (void)k;
    pthread_mutex_lock(&wake_lock);
    wake_tick = true;
    pthread_cond_broadcast(&wake_cond);
    pthread_mutex_unlock(&wake_lock);
}

static void flush(JNIEnv *env);

/* JfrEmit.flush(): a chunk ends (a recording stops, or JFR starts a new
 * chunk): the placements queued are committed now, on JFR's thread, so
 * that the chunk holds them, after those numapin's thread is committing
 * (waited for FLUSH_WAIT_MS at most: a chunk's end never hangs on it). */
static void JNICALL emit_flush(JNIEnv *env, jclass k)
{
    (void)k;
    struct timespec until = np_after_ms(CLOCK_REALTIME, FLUSH_WAIT_MS);
    bool held = pthread_mutex_timedlock(&flush_lock, &until) == 0;
    flush(env);
    if (held)
        pthread_mutex_unlock(&flush_lock);
}

/* Defines numapin.agent.JfrEmit in the boot loader, where jdk.jfr's
 * classes are (a class of the boot loader's unnamed module reads every
 * module), and its native tick().  Returns 0, or -1 with one debug line (a
 * runtime older than the class file: numapin then emits no events). */
static int define_emit(JNIEnv *env)
{
    jclass k = (*env)->DefineClass(env, "numapin/agent/JfrEmit", NULL,
                                   (const jbyte *)np_jfr_emit_class, (jsize)np_jfr_emit_class_len);
    JNINativeMethod natives[] = {{(char *)"tick", (char *)"()V", (void *)emit_tick},
                                 {(char *)"flush", (char *)"()V", (void *)emit_flush}};
    jmethodID m = k != NULL ? (*env)->GetStaticMethodID(env, k, "placement",
                                                        "(Ljdk/jfr/EventFactory;Ljava/lang/Thread;"
                                                        "Ljava/lang/String;JILjava/lang/String;"
                                                        "Ljava/lang/String;Ljava/lang/String;"
                                                        "Ljava/lang/String;Ljava/lang/String;ZZ)V")
                            : NULL;
    jmethodID t = m != NULL ? (*env)->GetStaticMethodID(env, k, "ticking", "()Ljava/lang/Runnable;")
                            : NULL;
    jmethodID f = t != NULL ? (*env)->GetStaticMethodID(env, k, "flushing", "()Ljava/lang/Runnable;")
                            : NULL;
    if (f != NULL && (*env)->RegisterNatives(env, k, natives, 2) != 0)
        f = NULL;
    if ((*env)->ExceptionCheck(env) || f == NULL || (c_emit = (*env)->NewGlobalRef(env, k)) == NULL) {
        ok(env, "numapin.agent.JfrEmit");
        np_log(NP_LOG_DEBUG, "JFR: cannot define numapin.agent.JfrEmit in this Java runtime: "
                             "numapin emits no JFR events");
        return -1;
    }
    m_emit_placement = m;
    m_emit_ticking = t;
    m_emit_flushing = f;
    (*env)->DeleteLocalRef(env, k);
    return 0;
}

/* ------------------------------------------------------------ watching */

static bool defined;     /* the event types exist (numapin's thread only) */
static jlong seen[MAX_RECORDINGS];
static int nseen;

/* The ids of the running recordings into ids[]; their number, or -1 when
 * JFR is not initialised.  Defines the event types the first time it is. */
static int running(JNIEnv *env, jlong *ids, bool *gave_up)
{
    jboolean init = (*env)->CallStaticBooleanMethod(env, c_flight_recorder, m_is_initialized);
    if (!ok(env, "FlightRecorder.isInitialized") || !init)
        return -1;
    if (!defined) {
        if (FIND(jfr_classes, jfr_methods, jfr_fields, false) != 0) {
            *gave_up = true;
            return -1;
        }
        for (size_t i = 0; i < sizeof types / sizeof *types; i++)
            if (define(env, types[i]) != 0) {
                *gave_up = true;
                return -1;
            }
        if (define_emit(env) != 0) {
            *gave_up = true;
            return -1;
        }
        /* NodeMemory is emitted as soon as JFR asks (its period ends at a
         * recording's end too): its hook wakes numapin's thread.  The
         * others are looked at whenever the thread wakes. */
        atomic_store(&t_access.tick, new_semaphore(env));
        atomic_store(&t_thread_access.tick, new_semaphore(env));
        if (add_periodic(env, &t_memory, m_emit_ticking) != 0)
            np_log(NP_LOG_DEBUG, "JFR: %s is not periodic here: no events of it", t_memory.name);
        if (add_periodic(env, &t_placement, m_emit_flushing) != 0)
            np_log(NP_LOG_DEBUG, "JFR: no hook at a chunk's end: a recording that stops may miss "
                                 "the placements of its last %d ms", GATHER_MS);
        struct type *periodic[] = {&t_access, &t_thread_access};
        for (size_t i = 0; i < sizeof periodic / sizeof *periodic; i++)
            if (atomic_load(&periodic[i]->tick) == NULL || add_periodic(env, periodic[i], NULL) != 0)
                np_log(NP_LOG_DEBUG, "JFR: %s is not periodic here: no events of it",
                       periodic[i]->name);
        defined = true;
        np_log(NP_LOG_DEBUG, "JFR: defined numapin.Placement, numapin.Plan, numapin.Advice, "
                             "numapin.NodeMemory, numapin.AccessLocality and "
                             "numapin.ThreadAccess");
    }
    jobject rec = chk(env, (*env)->CallStaticObjectMethod(env, c_flight_recorder, m_get_recorder));
    jobject list =
        rec != NULL ? chk(env, (*env)->CallObjectMethod(env, rec, m_get_recordings)) : NULL;
    jint size = list != NULL ? (*env)->CallIntMethod(env, list, m_list_size) : 0;
    int n = 0;
    for (jint i = 0; ok(env, "FlightRecorder.getRecordings") && i < size; i++) {
        jobject r = chk(env, (*env)->CallObjectMethod(env, list, m_list_get, i));
        jobject state = r != NULL ? chk(env, (*env)->CallObjectMethod(env, r, m_rec_state)) : NULL;
        if (state != NULL && (*env)->IsSameObject(env, state, o_running)) {
            jlong id = (*env)->CallLongMethod(env, r, m_rec_id);
            if (n < MAX_RECORDINGS && !(*env)->ExceptionCheck(env))
                ids[n++] = id;
        }
        if (state != NULL)
            (*env)->DeleteLocalRef(env, state);
        if (r != NULL)
            (*env)->DeleteLocalRef(env, r);
    }
    return n;
}

/* Looks at the recordings: tells a new one everything so far, stops
 * telling when none runs. */
static void poll(JNIEnv *env, bool *gave_up)
{
    if ((*env)->PushLocalFrame(env, 32) != 0) {
        ok(env, "PushLocalFrame");
        return;
    }
    jlong ids[MAX_RECORDINGS];
    int n = running(env, ids, gave_up);
    bool fresh = false;
    char list[256] = "";
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        bool known = false;
        for (int k = 0; k < nseen && !known; k++)
            known = seen[k] == ids[i];
        fresh |= !known;
        if (used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%lld", i ? "," : "",
                                     (long long)ids[i]);
    }
    if (n <= 0) {
        if (nseen > 0)
            np_log(NP_LOG_DEBUG, "JFR: no recording runs: numapin's events stop");
        np_agent_unlisten(agent);
        nseen = 0;
    } else if (fresh) {
        threads_list(env, &replay);
        int told = np_agent_listen(agent);
        threads_free(env, &replay);
        if (atomic_load(&stopping))
            np_agent_unlisten(agent); /* VMDeath came meanwhile */
        np_log(NP_LOG_DEBUG, "JFR: recordings %s run: told the plan, the advice and %d "
                             "placements made before", list, told);
    }
    if (n >= 0) {
        memcpy(seen, ids, (size_t)n * sizeof *ids);
        nseen = n;
    }
    (*env)->ExceptionClear(env);
    (*env)->PopLocalFrame(env, NULL);
}

/* The time ms milliseconds from now on wake_cond's clock. */
static struct timespec after_ms(long ms)
{
    return np_after_ms(wake_clock, ms);
}

/* Waits until JFR asks for NodeMemory, a stop, or ms milliseconds pass;
 * placements queued end the wait GATHER_MS after the first.  Returns
 * true when JFR asked. */
static bool wait_for(long ms)
{
    pthread_mutex_lock(&wake_lock);
    int e = 0;
    if (pending_head == NULL) {
        struct timespec until = after_ms(ms);
        wake_idle = true;
        while (e == 0 && pending_head == NULL && !wake_tick && !atomic_load(&stopping))
            e = pthread_cond_timedwait(&wake_cond, &wake_lock, &until);
        wake_idle = false;
    }
    if (pending_head != NULL) {
        struct timespec until = after_ms(GATHER_MS < ms ? GATHER_MS : ms);
        e = 0;
        while (e == 0 && !wake_tick && !atomic_load(&stopping))
            e = pthread_cond_timedwait(&wake_cond, &wake_lock, &until);
    }
    bool tick = wake_tick;
    wake_tick = false;
    pthread_mutex_unlock(&wake_lock);
    return tick && !atomic_load(&stopping);
}

static long ms_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* What numapin's thread needs first: java.base's classes, and JFR's
 * FlightRecorder when there is one.  Returns 0, or -1 (told why). */
static int setup(JNIEnv *env)
{
    if (FIND(base_classes, base_methods, base_fields, false) != 0)
        return -1;
    if (find(env, recorder_classes, 1, recorder_methods, 2, NULL, 0, true) != 0) {
        np_log(NP_LOG_DEBUG, "JFR: this Java runtime has no jdk.jfr module: numapin emits no "
                             "JFR events");
        return -1;
    }
    jboolean available = (*env)->CallStaticBooleanMethod(env, c_flight_recorder, m_is_available);
    if (!ok(env, "FlightRecorder.isAvailable") || !available) {
        np_log(NP_LOG_DEBUG, "JFR: Flight Recorder is not available in this JVM: numapin emits "
                             "no JFR events");
        return -1;
    }
    return 0;
}

/* Waits defer_ms, or until np_jfr_stop.  Returns false when the JVM is
 * ending: then the thread never attaches, and jdk.jfr is never loaded
 * for numapin's sake. */
static bool deferred(void)
{
    if (defer_ms <= 0)
        return !atomic_load(&stopping);
    struct timespec until = after_ms(defer_ms);
    pthread_mutex_lock(&wake_lock);
    int e = 0;
    while (e == 0 && !atomic_load(&stopping)) /* 0: signalled, or woken for nothing */
        e = pthread_cond_timedwait(&wake_cond, &wake_lock, &until);
    pthread_mutex_unlock(&wake_lock);
    return !atomic_load(&stopping);
}

static void *watch(void *arg)
{
    (void)arg;
    if (!deferred())
        return NULL;
    JNIEnv *env = NULL;
    JavaVMAttachArgs args = {JNI_VERSION_1_8, (char *)"numapin jfr", NULL};
    if ((*vm)->AttachCurrentThreadAsDaemon(vm, (void **)&env, &args) != JNI_OK || env == NULL) {
        np_log(NP_LOG_DEBUG, "JFR: cannot attach numapin's thread to the JVM: no JFR events");
        return NULL;
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bool gave_up = setup(env) != 0, ticked = false;
    long polled = -POLL_MS;
    while (!gave_up && !atomic_load(&stopping)) {
        /* Woken for queued placements alone, it commits them; it looks
         * for recordings at its period, or when JFR asked for NodeMemory. */
        long now = ms_since(&t0), period = now < FAST_FOR_MS ? POLL_FAST_MS : POLL_MS;
        if (ticked || now - polled >= period) {
            poll(env, &gave_up);
            polled = now;
        }
        pthread_mutex_lock(&flush_lock);
        flush(env);
        pthread_mutex_unlock(&flush_lock);
        if (ticked && defined && nseen > 0)
            node_memory(env);
        if (defined && nseen > 0) {
            bool group = due(env, &t_access), threads = due(env, &t_thread_access);
            if (group || threads)
                access_locality(env, group, threads);
        }
        long left = period - (ms_since(&t0) - polled);
        ticked = wait_for(left > 0 ? left : 1);
    }
    flush(env);
    np_agent_unlisten(agent);
    (*env)->ExceptionClear(env);
    (*vm)->DetachCurrentThread(vm);
    return NULL;
}

/* ---------------------------------------------------------------- API */

void np_jfr_init(JavaVM *java_vm, struct np_agent *a, const char *options,
                 pid_t (*thread_tid)(JNIEnv *jni, jobject thread))
{
    if (!a->opt.jfr)
        return;
    vm = java_vm;
    agent = a;
    tid_of = thread_tid;
    starting_ok = pthread_key_create(&starting_key, NULL) == 0;
    options_text = strdup(options != NULL ? options : "");
    for (char *p = options_text; p != NULL && *p; p++)
        if (*p < 0x20 || *p > 0x7e)
            *p = '?'; /* NewStringUTF takes modified UTF-8 only */
    np_agent_set_sink(a, &sink);
}

void np_jfr_start(JNIEnv *env, bool at_once)
{
    (void)env; /* numapin's thread does the JNI work, off the JVM's start-up path */
    static atomic_bool started;
    if (agent == NULL || atomic_exchange(&started, true))
        return;
    defer_ms = at_once ? 0 : DEFER_MS;
    pthread_condattr_t ca;
    int e = pthread_condattr_init(&ca);
    if (e == 0) {
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        e = pthread_cond_init(&wake_cond, &ca);
        pthread_condattr_destroy(&ca);
    }
    if (e == 0)
        wake_clock = CLOCK_MONOTONIC;
    else
        defer_ms = 0; /* no monotonic clock to wait on: look at once */
    e = np_thread_detached(watch, NULL);
    if (e != 0)
        np_log(np_once_level(&warned, NP_LOG_WARNING),
               "JFR: cannot start numapin's JFR thread: %s (%s); recordings get no numapin events",
               strerror(e), np_errno_name(e));
}

void np_jfr_stop(JNIEnv *env)
{
    (void)env;
    if (agent == NULL)
        return;
    atomic_store(&stopping, true);
    pthread_mutex_lock(&wake_lock);
    pthread_cond_broadcast(&wake_cond);
    pthread_mutex_unlock(&wake_lock);
    np_agent_unlisten(agent);
}

void np_jfr_thread_starting(jobject thread)
{
    if (starting_ok)
        pthread_setspecific(starting_key, thread);
}
