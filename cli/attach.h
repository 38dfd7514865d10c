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
 * Nothing here signals anything or writes to a file. */
#ifndef NP_ATTACH_H
#define NP_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

/* Returns 1 when jcmd may attach to pid, else 0 with the reason in why
 * (one clause, e.g. "it is not a JVM (no libjvm.so mapped)"). */
int np_attach_safe(pid_t pid, char *why, size_t len);

/* How long np_attach_dump waits for the JVM, in seconds, and the
 * largest thread dump it takes. */
#define NP_ATTACH_TIMEOUT 30
#define NP_ATTACH_MAX_BYTES (256 << 20)

/* The JVM's thread dump as it writes it (names in its modified UTF-8,
 * which jcmd turns into U+FFFD where they are not UTF-8), from its attach
 * listener: only when that runs already (the socket .java_pidN in its
 * /tmp, of its user, listened on by the process itself), so no signal is
 * sent.  Returns 0 with the dump in *out (NUL-terminated, free()) and
 * *len, or -1 with the reason in err. */
int np_attach_dump(pid_t pid, char **out, size_t *len, char *err, size_t errlen);

/* Reads a HotSpot performance data buffer (len bytes): the value of the
 * string counter `name` into out.  Returns 0, or -1 when the buffer is
 * not HotSpot performance data or has no such string. */
int np_perfdata_string(const unsigned char *buf, size_t len, const char *name, char *out,
                       size_t outlen);

#endif
