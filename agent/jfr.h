/* jfr: numapin's placements in JDK Flight Recorder recordings.
 *
 * While a recording runs, numapin's sink (core/np_sink.h) turns what the
 * agent does into events, defined at run time through jdk.jfr.EventFactory
 * and committed from JNI by numapin's thread: numapin.Placement (each
 * placement; one made at a thread's start is queued there and committed
 * at once by numapin's thread, through numapin.agent.JfrEmit, a class the
 * agent defines), numapin.Plan (once a recording),
 * numapin.Advice (each advice line) and the periodic numapin.NodeMemory
 * (the process's resident memory per node, every 10 s unless the
 * recording's settings say otherwise).  Placements made before the
 * recording started are emitted when numapin sees it start.
 *
 * A thread of numapin's ("numapin jfr", attached as a daemon) looks for
 * running recordings every second (ten times a second during the JVM's
 * first ten seconds, from its first second unless a recording starts
 * with the JVM), defines the event types the first time JFR is
 * initialised, and emits what the periodic event asks for.  Until a
 * recording runs, placing a thread costs one atomic load; where the
 * jdk.jfr module or JFR is missing, the thread logs so once at debug
 * level and ends.  docs/jfr.md tells how to read the events. */
#ifndef NP_JFR_H
#define NP_JFR_H

#include <jni.h>
#include <stdbool.h>
#include <sys/types.h>

#include "np_agent.h"

/* Installs the sink, when a->opt.jfr (after np_agent_create, before any
 * callback).  `options` is the agent's option string as given, for
 * numapin.Plan; tid_of gives a running java.lang.Thread's OS thread id,
 * or -1. */
void np_jfr_init(JavaVM *vm, struct np_agent *a, const char *options,
                 pid_t (*tid_of)(JNIEnv *jni, jobject thread));

/* Live phase (VMInit, or a late attach): starts numapin's JFR thread.
 * Unless `at_once` (a recording starts with the JVM, which loads JFR
 * anyway; a late attach), the thread first waits a second, and a JVM
 * that ends sooner (java -version, a build tool's fork) never loads
 * jdk.jfr for numapin. */
void np_jfr_start(JNIEnv *jni, bool at_once);

/* VMDeath: no more events; the thread ends (committing what is queued). */
void np_jfr_stop(JNIEnv *jni);

/* JVMTI ThreadStart of `thread`, on the calling thread: its placement's
 * event names it (thread is valid until the call with NULL, at the
 * callback's end). */
void np_jfr_thread_starting(jobject thread);

#endif
