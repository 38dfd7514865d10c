/* np_autogroup: group=auto.  JVMs of one user on one host claim distinct
 * groups without a coordinator: group i is held by whoever holds an
 * exclusive flock(2) on lock file i in a per-user directory, so the lowest
 * free group goes to the first JVM to ask, and a JVM that dies (even by
 * SIGKILL) frees its group at once: the kernel drops its locks.
 *
 * The directory is lockdir= when given, else $XDG_RUNTIME_DIR/numapin when
 * XDG_RUNTIME_DIR is set, else /tmp/numapin-UID.  It must be a real
 * directory (not a symlink), owned by this user, with no access for group
 * or others (mode 0700 or narrower); it is created so.  The error for one
 * that is not says which of these fails and the command that fixes it.  Lock files are opened without following
 * symlinks and created 0600.  Nothing depends on a process id: JVMs in
 * different PID and mount namespaces (containers) that share the
 * directory (one bind-mounted into each, at any path) exclude each other
 * the same way, since an flock belongs to the file. */
#ifndef NP_AUTOGROUP_H
#define NP_AUTOGROUP_H

#include <stddef.h>

/* Claims the lowest free group of `groups` in `dir` (NULL: the default
 * directory).  Returns the group, with *fd the lock file to keep open for
 * the life of the process; or -1 with a message in err (every group taken,
 * or an unsafe directory). */
int np_autogroup_claim(const char *dir, int groups, int *fd, char *err, size_t errlen);

/* The default directory, into buf. */
const char *np_autogroup_dir(char *buf, size_t len);

#endif
