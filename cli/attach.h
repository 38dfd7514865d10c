/* np_attach: whether `jcmd PID ...` may be run on a process without harm.
 *
 * HotSpot's attach handshake sends SIGQUIT to a JVM whose attach listener
 * is not running yet.  SIGQUIT kills a process that leaves it at its
 * default (any program that is not a JVM, a JVM started with -Xrs, one
 * still starting), and makes a JVM started with
 * -XX:+DisableAttachMechanism print a thread dump on its own stdout.  So
 * jcmd is run only on a process that is known to be a HotSpot JVM ready
 * for attach:
 *  - libjvm.so is mapped in it (/proc/PID/maps);
 *  - and either its attach listener already runs (the socket .java_pidN in
 *    its /tmp: jcmd connects without a signal),
 *  - or it catches SIGQUIT (/proc/PID/status SigCgt) and its performance
 *    data (hsperfdata, the file jps and jcmd read) says the attach
 *    mechanism is enabled.
 * Paths are taken through /proc/PID/root and the process's own PID in its
 * namespace (NSpid), so a JVM in a container is judged by its own /tmp.
 * Nothing here signals or writes anything. */
#ifndef NP_ATTACH_H
#define NP_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

/* Returns 1 when jcmd may attach to pid, else 0 with the reason in why
 * (one clause, e.g. "it is not a JVM (no libjvm.so mapped)"). */
int np_attach_safe(pid_t pid, char *why, size_t len);

/* Reads a HotSpot performance data buffer (len bytes): the value of the
 * string counter `name` into out.  Returns 0, or -1 when the buffer is
 * not HotSpot performance data or has no such string. */
int np_perfdata_string(const unsigned char *buf, size_t len, const char *name, char *out,
                       size_t outlen);

#endif
