/* np_file: the files numapin writes (log, report, caches), opened safely.
 *
 * Paths come from the command line and often name shared directories
 * (/tmp): see np_file_open for what is refused.  Nothing here logs. */
#ifndef NP_FILE_H
#define NP_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* Opens `path` for writing, created with mode 0600: appending to it when
 * `append`, else emptying it (after the checks).  Returns the descriptor
 * (close-on-exec), or -1 with errno; when numapin itself refused the file
 * (see np_file.c), *why (unless why is NULL) says why in a clause ("is a
 * symbolic link, which numapin does not follow"), else it is NULL. */
int np_file_open(const char *path, bool append, const char **why);

/* True when the file open as `fd` is also what `path` names (through any
 * symlink or hard link). */
bool np_file_same(int fd, const char *path);

/* A file written whole or not at all: np_file_out_open checks at start-up
 * that `path` may be written (its directory, kept open, writable by us;
 * the file, if there, one np_file_open would take) without creating
 * anything; np_file_out_write then writes the data into a new temporary
 * file (0600) in that directory, syncs it and renames it onto the path, so
 * a reader sees the old file or the whole new one, never a part. */
struct np_file_out {
    int dirfd;          /* -1: not open */
    char base[256];     /* the file's name in the directory */
};

/* Returns 0, or -1 with errno (and *why as for np_file_open). */
int np_file_out_open(struct np_file_out *f, const char *path, const char **why);
/* Returns 0, or an errno value (the temporary file is removed). */
int np_file_out_write(struct np_file_out *f, const char *data, size_t len);
void np_file_out_close(struct np_file_out *f);

/* Writes `data` into a new temporary file (0600) in the directory open as
 * `dirfd`, synced first when `sync`, and renames it onto `name`: a reader
 * sees the old file or the whole new one.  Returns 0, or an errno value
 * (the temporary file is removed). */
int np_file_replace(int dirfd, const char *name, const void *data, size_t len, bool sync);

/* A directory private to this user, for files shared by this user's JVMs
 * (group=auto's locks, the topology cache): opens `dir` (O_RDONLY), creating
 * it 0700, and refuses a symlink, another owner, or any access for group or
 * others.  Write access would let others plant or replace files the JVMs
 * trust (take or steal a group, feed a false topology); search access
 * lets them open files whose own mode allows it; read access alone lists
 * what is in use.  A directory private to its owner is the one rule that
 * leaves none of these.  Returns the descriptor, or -1 with one line in err
 * naming `what` ("group lock directory"), the directory, what is wrong and
 * the command that fixes it, or `option` ("lockdir=") to give another. */
int np_file_private_dir(const char *dir, const char *what, const char *option, char *err,
                        size_t errlen);

/* The default such directory, into buf: $XDG_RUNTIME_DIR/numapin when
 * XDG_RUNTIME_DIR is set (an absolute path), else /tmp/numapin-UID. */
const char *np_file_private_default(char *buf, size_t len);

/* Expands `pattern` into out: "%p" becomes this process's id, "%%" a '%',
 * as in HotSpot's -Xlog file names.  Returns 0, or -1 with errno EINVAL
 * for any other '%' sequence, ENAMETOOLONG when the result does not fit. */
int np_file_path(const char *pattern, char *out, size_t len);

#endif
