/* numapin's JVMTI entry points: the only code that sees the JVM.
 *
 * It turns JVMTI events into plain calls of core/np_agent.h:
 *  - ThreadStart runs on the new thread itself, before its run() method,
 *    so the calling thread is the one to place and gettid() is its OS id.
 *    It fires for `main` and for threads started after VMInit: GC and JIT
 *    threads, and the JVM's threads started earlier, never reach us.
 *  - ThreadEnd runs on the ending thread, and frees its core or hardware
 *    thread for the next one under cpus=core|pu.  Under cpus=node it is
 *    not enabled (np_agent_wants_thread_end): the core sees a thread's
 *    end as it exits, and the JVM posts nothing.
 *  - VMInit reads the flags HotSpot settled on (UseNUMA, GC and compiler
 *    thread counts) for the start-up advice, and starts the rescan thread.
 *  - The rescan thread (rescan=MS) is a native thread that attaches to the
 *    JVM, as the daemon `numapin rescan`, only when its first period has
 *    passed: a JVM that ends sooner has no Java thread of numapin's, and
 *    its start-up waits for none.  It lists the running threads every MS ms
 *    and hands each to np_agent_seen with its OS id (HotSpot's VMStructs:
 *    java.lang.Thread.eetop -> JavaThread -> OSThread), which places the
 *    ones renamed to a matching name since they started; then calls
 *    np_agent_check (the cpuset, drifted threads, the marker).  A late
 *    attach does one such pass at once, for the threads already running.
 *  - VMDeath logs the summary and writes the report (report=FILE).
 *  - Thread names come in the JVM's modified UTF-8 and go to the core as
 *    UTF-8 text (name_text), once: every output reads that.
 * Callbacks run concurrently; np_agent locks what they share. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <jvmti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "np_agent.h"
#include "np_text.h"
#include "np_thread.h"
#include "hotspot.h"
#include "jfr.h"

static struct np_agent *agent;
static np_once warned_jvmti;

/* The rescan thread's state.  rescan_stop is set before rescan_cond is
 * signalled (under rescan_lock: its first period, not yet attached) and
 * rescan_monitor notified (attached), and read under each of them. */
static JavaVM *java_vm;
static jrawMonitorID rescan_monitor;
static atomic_int rescan_stop;
static pthread_mutex_t rescan_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rescan_cond = PTHREAD_COND_INITIALIZER;
static jfieldID eetop; /* java.lang.Thread.eetop: the JavaThread* */
/* Set once HotSpot's id of a thread was seen to be the kernel's (after
 * eetop is set): ThreadStart and ThreadEnd then read the calling thread's
 * id from HotSpot instead of making a system call. */
static atomic_int tid_from_hotspot;

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

/* The thread's name, into a buffer the caller frees with Deallocate (NULL
 * when JVMTI cannot tell), releasing the rest of what GetThreadInfo
 * returns. */
static char *thread_name(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jvmtiError *e)
{
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof info);
    *e = (*jvmti)->GetThreadInfo(jvmti, thread, &info);
    if (*e != JVMTI_ERROR_NONE)
        return NULL;
    if (info.thread_group != NULL)
        (*jni)->DeleteLocalRef(jni, info.thread_group);
    if (info.context_class_loader != NULL)
        (*jni)->DeleteLocalRef(jni, info.context_class_loader);
    return info.name;
}

/* A name as the JVM gives it (modified UTF-8) as the core takes it: its
 * UTF-8 text, and its escaped form where the text is not the name
 * exactly (np_text.h).  Most names are UTF-8 already and pass as they are;
 * what is allocated is in *owned and *escaped, for free(). */
static const char *name_text(const char *name, char **owned, char **escaped)
{
    *owned = *escaped = NULL;
    if (name == NULL)
        return "";
    if (np_text_is_utf8(name))
        return name;
    *owned = np_text_from_mutf8(name, escaped);
    return *owned != NULL ? *owned : "\xef\xbf\xbd"; /* out of memory: U+FFFD */
}

/* np_agent_thread_start or np_agent_seen (how) with the text of `name`,
 * which the JVM gave. */
static void hand_name(const char *name, pid_t tid, bool start, enum np_how how)
{
    char *owned, *escaped;
    const char *text = name_text(name, &owned, &escaped);
    if (start)
        np_agent_thread_start(agent, text, escaped, tid);
    else
        np_agent_seen(agent, text, escaped, tid, how);
    free(owned);
    free(escaped);
}

static pid_t os_tid(JNIEnv *jni, jthread thread);
static pid_t os_tid_unlocked(jthread thread, JNIEnv *jni);

/* The calling thread's OS id (thread is the calling thread, which cannot
 * end meanwhile: no monitor is taken, as its starter may hold it). */
static pid_t self_tid(JNIEnv *jni, jthread thread)
{
    pid_t tid = atomic_load_explicit(&tid_from_hotspot, memory_order_acquire) ? os_tid_unlocked(thread, jni) : -1;
    return tid > 0 ? tid : (pid_t)syscall(SYS_gettid);
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    jvmtiError e;
    char *name = thread_name(jvmti, jni, thread, &e);
    if (e != JVMTI_ERROR_NONE) {
        jvmti_failed(jvmti, "GetThreadInfo", e);
        return;
    }
    np_jfr_thread_starting(thread);
    hand_name(name, self_tid(jni, thread), true, NP_HOW_START);
    np_jfr_thread_starting(NULL);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    np_agent_thread_ended(agent, self_tid(jni, thread));
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

/* The OS id of a running thread, or -1.  A thread that ends clears its
 * java.lang.Thread's eetop holding that object's monitor (HotSpot's
 * ensure_join, which Thread.join waits on), and its JavaThread is freed
 * only after: read under the same monitor, a non-zero eetop is a
 * JavaThread still there. */
static pid_t os_tid(JNIEnv *jni, jthread thread)
{
    if (eetop == NULL || (*jni)->MonitorEnter(jni, thread) != JNI_OK)
        return -1;
    pid_t tid = os_tid_unlocked(thread, jni);
    (*jni)->MonitorExit(jni, thread);
    return tid;
}

/* The same without the monitor: for a thread that cannot end meanwhile. */
static pid_t os_tid_unlocked(jthread thread, JNIEnv *jni)
{
    if (eetop == NULL)
        return -1;
    return np_hotspot_os_tid((uintptr_t)(*jni)->GetLongField(jni, thread, eetop));
}

/* True when the JVM's list of running threads is to end the entries of
 * threads gone from it (np_agent_running): ends are seen at exit, and
 * HotSpot's thread ids were seen to be the kernel's, which the entries
 * hold. */
static bool ends_from_list(void)
{
    return !np_agent_wants_thread_end(agent) && eetop != NULL &&
           atomic_load_explicit(&tid_from_hotspot, memory_order_acquire);
}

/* Lists the running threads: hands each to np_agent_seen as seen `how`
 * (when hand_over), and, when ends_from_list, gives their OS ids to
 * np_agent_running, which ends the entries of the threads gone from the
 * list; if one id cannot be read, nothing is ended. */
static void scan(jvmtiEnv *jvmti, JNIEnv *jni, enum np_how how, bool hand_over)
{
    bool running = ends_from_list();
    unsigned long since = running ? np_agent_listing(agent) : 0;
    jint n = 0;
    jthread *threads = NULL;
    jvmtiError e = (*jvmti)->GetAllThreads(jvmti, &n, &threads);
    if (e != JVMTI_ERROR_NONE) {
        jvmti_failed(jvmti, "GetAllThreads", e);
        return;
    }
    pid_t *tids = running ? malloc((size_t)(n > 0 ? n : 1) * sizeof *tids) : NULL;
    int k = 0;
    for (jint i = 0; i < n; i++) {
        pid_t tid = os_tid(jni, threads[i]);
        if (tids != NULL && tid > 0)
            tids[k++] = tid;
        else
            running = false;
        if (hand_over) {
            char *name = thread_name(jvmti, jni, threads[i], &e);
            if (e == JVMTI_ERROR_NONE) {
                hand_name(name, tid, false, how);
                (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
            }
        }
        (*jni)->DeleteLocalRef(jni, threads[i]);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)threads);
    if (running)
        np_agent_running(agent, since, tids, k);
    free(tids);
}

/* Waits the first period on the monotonic clock, or until VMDeath.
 * Returns false when the JVM is ending: the thread then never attaches. */
static bool first_period(long ms)
{
    struct timespec until = np_after_ms(CLOCK_MONOTONIC, ms);
    pthread_mutex_lock(&rescan_lock);
    int e = 0;
    while (e == 0 && !atomic_load(&rescan_stop)) /* 0: signalled, or woken for nothing */
        e = pthread_cond_clockwait(&rescan_cond, &rescan_lock, CLOCK_MONOTONIC, &until);
    pthread_mutex_unlock(&rescan_lock);
    return !atomic_load(&rescan_stop);
}

static void rescan_loop(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jlong period = agent->opt.rescan_ms;
    (*jvmti)->RawMonitorEnter(jvmti, rescan_monitor);
    while (!atomic_load(&rescan_stop)) {
        (*jvmti)->RawMonitorExit(jvmti, rescan_monitor);
        if (eetop != NULL)
            scan(jvmti, jni, NP_HOW_RESCAN, true);
        np_agent_check(agent); /* cpuset, drift, the marker */
        (*jvmti)->RawMonitorEnter(jvmti, rescan_monitor);
        if (!atomic_load(&rescan_stop))
            (*jvmti)->RawMonitorWait(jvmti, rescan_monitor, period);
    }
    (*jvmti)->RawMonitorExit(jvmti, rescan_monitor);
}

static void *rescan_main(void *arg)
{
    jvmtiEnv *jvmti = arg;
    if (!first_period(agent->opt.rescan_ms))
        return NULL;
    JNIEnv *jni = NULL;
    JavaVMAttachArgs args = {JNI_VERSION_1_8, (char *)"numapin rescan", NULL};
    if ((*java_vm)->AttachCurrentThreadAsDaemon(java_vm, (void **)&jni, &args) != JNI_OK ||
        jni == NULL) {
        if (!atomic_load(&rescan_stop))
            np_log(np_once_level(&warned_jvmti, NP_LOG_WARNING),
                   "cannot attach the rescan thread to the JVM: renamed threads are not placed, "
                   "and drift and cpuset changes are not followed");
        return NULL;
    }
    rescan_loop(jvmti, jni);
    (*jni)->ExceptionClear(jni);
    (*java_vm)->DetachCurrentThread(java_vm);
    return NULL;
}

/* java.lang.Thread, from one of its objects: the class of its chain just
 * below Object, for Thread extends Object.  JNI's FindClass, called with
 * no Java frame, would ask the system class loader, running Java code for
 * some 60 µs at VMInit. */
static jclass thread_class_of(JNIEnv *jni, jthread thread)
{
    jclass c = (*jni)->GetObjectClass(jni, thread);
    while (c != NULL) {
        jclass super = (*jni)->GetSuperclass(jni, c);
        jclass above = super != NULL ? (*jni)->GetSuperclass(jni, super) : NULL;
        if (above == NULL) {
            if (super != NULL)
                (*jni)->DeleteLocalRef(jni, super);
            return c;
        }
        (*jni)->DeleteLocalRef(jni, above);
        (*jni)->DeleteLocalRef(jni, c);
        c = super;
    }
    return NULL;
}

/* Finds Thread.eetop and HotSpot's tables; starts the rescan thread when
 * rescan= is not 0 (without Thread.eetop it only checks the cpuset and
 * drift).  Live phase only. */
static void start_rescan(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jthread self = NULL;
    if ((*jvmti)->GetCurrentThread(jvmti, &self) != JVMTI_ERROR_NONE)
        self = NULL;
    jclass thread_class = self != NULL ? thread_class_of(jni, self) : NULL;
    if (thread_class != NULL)
        eetop = (*jni)->GetFieldID(jni, thread_class, "eetop", "J");
    if ((*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionClear(jni);
        eetop = NULL;
    }
    if (eetop != NULL && os_tid_unlocked(self, jni) == (pid_t)syscall(SYS_gettid))
        atomic_store_explicit(&tid_from_hotspot, 1, memory_order_release);
    if (thread_class != NULL)
        (*jni)->DeleteLocalRef(jni, thread_class);
    if (self != NULL)
        (*jni)->DeleteLocalRef(jni, self);
    if (agent->opt.rescan_ms == 0)
        return;
    jvmtiError e = (*jvmti)->CreateRawMonitor(jvmti, "numapin rescan", &rescan_monitor);
    if (e != JVMTI_ERROR_NONE) {
        jvmti_failed(jvmti, "CreateRawMonitor", e);
        return;
    }
    int pe = np_thread_detached(rescan_main, jvmti);
    if (pe != 0)
        np_log(np_once_level(&warned_jvmti, NP_LOG_WARNING),
               "cannot start the rescan thread: %s (%s): renamed threads are not placed, and "
               "drift and cpuset changes are not followed", strerror(pe), np_errno_name(pe));
}

/* HotSpot's tables (np_hotspot_init), looked for once: at load, or at
 * attach.  `addr_in_libjvm`: any function of the JNI or invocation table,
 * which live in libjvm.so.  Called from Agent_OnLoad, VMInit and
 * Agent_OnAttach, never two at once. */
static bool hotspot(const void *addr_in_libjvm)
{
    static int found = -1;
    if (found < 0)
        found = np_hotspot_init(addr_in_libjvm) == 0;
    return found;
}

static void read_flags(JNIEnv *jni)
{
    struct np_jvm_facts f = {-1, -1, -1, -1, -1};
    if (hotspot((const void *)(*jni)->GetVersion)) {
        bool b;
        f.use_numa = np_hotspot_bool("UseNUMA", &b) == 0 ? b : -1;
        f.parallel_gc_threads = flag_uint("ParallelGCThreads");
        f.conc_gc_threads = flag_uint("ConcGCThreads");
        f.ci_compiler_count = flag_intx("CICompilerCount");
        int32_t apc; /* HotSpot type int: 32 bits, not intx */
        f.cpus_seen = np_hotspot_int("ActiveProcessorCount", &apc) == 0 && apc > 0 ? (int)apc : -1;
    } else {
        np_log(NP_LOG_DEBUG, "HotSpot's VMStructs tables are not there: no advice on JVM "
                             "flags, and renamed or already running threads are not placed");
    }
    np_agent_jvm_facts(agent, &f);
}

static int set_flag_false(const char *name)
{
    return np_hotspot_set_bool(name, false);
}

static int flag_bool(const char *name)
{
    bool b;
    return np_hotspot_bool(name, &b) == 0 ? b : -1;
}

static long long flag_size(const char *name)
{
    int64_t v;
    return np_hotspot_intx(name, &v) == 0 && v >= 0 ? (long long)v : -1;
}

/* Agent_OnLoad, the whole JVM placed: HotSpot's NUMA flags, read before
 * it reserves the heap, for np_agent_use_numa_at_load to mend, and its
 * large-page and heap flags, for np_agent_large_pages_at_load to check
 * the huge pages there.  Ergonomics has sized the heap by then (MaxHeapSize;
 * HotSpot reserves all of it in huge pages at once, whatever
 * InitialHeapSize), and the GC rounds it up to its alignment later. */
static enum np_status numa_at_load(JavaVM *vm)
{
    struct np_numa_flags f = {-1, -1, -1};
    bool found = hotspot((const void *)(*vm)->GetEnv);
    bool b;
    int origin;
    if (found && np_hotspot_bool("UseNUMA", &b) == 0)
        f.use_numa = b;
    if (found && np_hotspot_bool("UseNUMAInterleaving", &b) == 0)
        f.interleaving = b;
    if (found && np_hotspot_origin("UseNUMAInterleaving", &origin) == 0)
        f.interleaving_ergonomic = origin == NP_HOTSPOT_ERGONOMIC;
    np_agent_use_numa_at_load(agent, &f, found ? set_flag_false : NULL);

    struct np_heap_flags h = {-1, -1, -1, -1, -1, -1, -1, -1, -1, NULL};
    if (found) {
        h.large_pages = flag_bool("UseLargePages");
        h.thp = flag_bool("UseTransparentHugePages");
        h.shm = flag_bool("UseSHM"); /* JDK 17 has it, JDK 25 not */
        h.pretouch = flag_bool("AlwaysPreTouch");
        h.page_size = flag_size("LargePageSizeInBytes");
        h.max_heap = flag_size("MaxHeapSize");
        h.code_cache = flag_size("ReservedCodeCacheSize");
        h.segmented = flag_bool("SegmentedCodeCache");
        const char *at;
        if (np_hotspot_ccstr("AllocateHeapAt", &at) == 0) {
            h.heap_at_set = at != NULL && at[0] != '\0';
            h.heap_at = at;
        }
    }
    return np_agent_large_pages_at_load(agent, &h, "");
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)thread;
    read_flags(jni);
    start_rescan(jvmti, jni);
    const char *recording; /* -XX:StartFlightRecording, or unknown: JFR loads now */
    np_jfr_start(jni, np_hotspot_ccstr("StartFlightRecording", &recording) != 0 ||
                          (recording != NULL && recording[0] != '\0'));
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    /* Threads still running may call back after this: the agent stays
     * allocated for the life of the process. */
    np_jfr_stop(jni);
    if (ends_from_list())
        scan(jvmti, jni, NP_HOW_RESCAN, false); /* threads joined but not yet exited end here */
    np_agent_summary(agent);
    np_agent_report(agent);
    atomic_store(&rescan_stop, 1);
    pthread_mutex_lock(&rescan_lock);
    pthread_cond_broadcast(&rescan_cond);
    pthread_mutex_unlock(&rescan_lock);
    if (rescan_monitor != NULL) {
        (*jvmti)->RawMonitorEnter(jvmti, rescan_monitor);
        (*jvmti)->RawMonitorNotifyAll(jvmti, rescan_monitor);
        (*jvmti)->RawMonitorExit(jvmti, rescan_monitor);
    }
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_THREAD_START, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_THREAD_END, NULL);
}

/* What Agent_OnLoad and Agent_OnAttach return.  At load, any failure stops
 * the JVM (HotSpot exits), except another copy acting: this one does
 * nothing and the JVM goes on.  At attach, jcmd prints the value as its
 * "return code": 1 bad options, 2 a failure under strict, 3 numapin
 * already loaded (docs/lifecycle.md), the reason being in the JVM's
 * stderr and log. */
static jint status(enum np_status st, int late)
{
    if (st == NP_OK)
        return JNI_OK;
    if (!late)
        return st == NP_ERR_LOADED ? JNI_OK : JNI_ERR;
    return (jint)st;
}

static jint start(JavaVM *vm, const char *options, int late)
{
    if (agent != NULL) {
        /* This very library again: its statics are the acting copy's. */
        np_agent_warn_loaded(options);
        return status(NP_ERR_LOADED, late);
    }
    java_vm = vm;
    jvmtiEnv *jvmti = NULL;
    jint rc = (*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2);
    if (rc != JNI_OK || jvmti == NULL) {
        np_log_fatal("cannot get a JVMTI environment (GetEnv returned %d)", (int)rc);
        return JNI_ERR;
    }
    /* What the JVM runs, for np_agent to tell a JDK tool (jps, javac...):
     * set by the launcher before Agent_OnLoad. */
    char *command = NULL;
    if ((*jvmti)->GetSystemProperty(jvmti, "sun.java.command", &command) != JVMTI_ERROR_NONE)
        command = NULL;
    struct np_start how = {late != 0, command};
    enum np_status st = np_agent_start(options, &how, &agent);
    if (command != NULL)
        (*jvmti)->Deallocate(jvmti, (unsigned char *)command);
    if (st != NP_OK)
        return status(st, late);
    if (!agent->active)
        return JNI_OK;
    np_jfr_init(vm, agent, options, os_tid);
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
        JVMTI_EVENT_THREAD_START, JVMTI_EVENT_VM_DEATH, JVMTI_EVENT_VM_INIT,
        JVMTI_EVENT_THREAD_END, /* last: only when wanted */
    };
    size_t n = sizeof events / sizeof *events - !np_agent_wants_thread_end(agent);
    for (size_t i = 0; i < n; i++) {
        e = (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL);
        if (e != JVMTI_ERROR_NONE) {
            jvmti_failed(jvmti, "SetEventNotificationMode", e);
            return JNI_ERR;
        }
    }
    if (!late && (st = numa_at_load(vm)) != NP_OK)
        return status(st, late);
    if (late) {
        /* Live phase already: no VMInit will come.  Place what runs now,
         * and move the memory the JVM holds when it is placed whole. */
        np_agent_attached(agent);
        JNIEnv *jni = NULL;
        if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_8) != JNI_OK || jni == NULL) {
            np_log(NP_LOG_WARNING, "attached, but without a JNI environment: threads already "
                                   "running are not placed");
            return JNI_OK;
        }
        read_flags(jni);
        start_rescan(jvmti, jni);
        np_jfr_start(jni, true);
        if (eetop != NULL)
            scan(jvmti, jni, NP_HOW_ATTACH, true);
    }
    return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    return start(vm, options, 0);
}

/* HotSpot unloads an agent whose Agent_OnAttach fails, and JDK 17's
 * os::dll_unload then logs the library's path from memory dlclose has just
 * freed.  A second reference marked RTLD_NODELETE keeps the library, and
 * that path, where they are: the JVM holds pages it will not use. */
static void stay_loaded(void)
{
    Dl_info self;
    if (dladdr((void *)stay_loaded, &self) != 0 && self.dli_fname != NULL)
        (void)dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    jint rc = start(vm, options, 1);
    if (rc != JNI_OK)
        stay_loaded();
    return rc;
}
