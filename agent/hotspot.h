/* np_hotspot: reads HotSpot's flags from the JVM we are loaded into (and
 * sets one, at load: np_hotspot_set_bool).
 *
 * HotSpot exports gHotSpotVMStructs and gHotSpotVMTypes from libjvm.so, the
 * tables its serviceability agent and profilers use to find its data
 * structures.  JVMFlag's static `flags` array and `numFlags` count are
 * listed there, so a flag's value is read from the JVM itself, after
 * ergonomics, instead of being guessed from the command line.  No JVM
 * header is needed; a JVM without the tables (not HotSpot) reads as
 * "unknown". */
#ifndef NP_HOTSPOT_H
#define NP_HOTSPOT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Finds the tables in the library that contains `addr_in_libjvm` (any
 * address inside libjvm.so; NULL searches the global namespace).  Returns
 * 0, or -1 when they are not there. */
int np_hotspot_init(const void *addr_in_libjvm);

/* Reads a flag.  Returns 0, or -1 when the flag or the tables are missing. */
int np_hotspot_bool(const char *name, bool *out);
/* For flags of HotSpot types uint (32 bits). */
int np_hotspot_uint(const char *name, uint32_t *out);
/* For flags of HotSpot type int (32 bits, signed), e.g. ActiveProcessorCount. */
int np_hotspot_int(const char *name, int32_t *out);
/* For flags of HotSpot types intx, uintx and size_t (64 bits). */
int np_hotspot_intx(const char *name, int64_t *out);

/* For flags of HotSpot type ccstr (a C string, e.g. AllocateHeapAt):
 * *out is the flag's string, NULL when the flag is not set; it belongs to
 * HotSpot.  Returns 0, or -1 when the flag or the tables are missing. */
int np_hotspot_ccstr(const char *name, const char **out);

/* Where a flag's value came from: HotSpot's origin (JVMFlag::_flags, its
 * low four bits: 0 default, 1 command line, 2 environment, 3 flags file,
 * 4 management, 5 ergonomics, ...).  Returns 0, or -1 when unknown. */
#define NP_HOTSPOT_ERGONOMIC 5
int np_hotspot_origin(const char *name, int *out);

/* Sets a bool flag, for the agent to mend in Agent_OnLoad what HotSpot
 * decided before it loaded: only a flag HotSpot reads afterwards means
 * anything, and only while the JVM runs nothing but the loading thread.
 * Returns 0, or -1 when the flag or the tables are missing. */
int np_hotspot_set_bool(const char *name, bool value);

/* The OS thread id of a HotSpot JavaThread (the value of its
 * java.lang.Thread's `eetop` field), through JavaThread::_osthread and
 * OSThread::_thread_id.  Returns -1 when unknown (no tables, a thread not
 * started or already gone).  The JavaThread must stay alive meanwhile: call
 * it only for threads JVMTI has just listed. */
pid_t np_hotspot_os_tid(uintptr_t java_thread);

#endif
