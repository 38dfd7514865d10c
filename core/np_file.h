/* np_file: the files numapin writes (log, report), opened safely.
 *
 * Paths come from the command line and often name shared directories
 * (/tmp): see np_file_open for what is refused.  Nothing here logs. */
#ifndef NP_FILE_H
#define NP_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* Opens `path` for writing, created with mode 0600: appending to it when
 * `append`, else emptying it (after the checks).  Returns the descriptor
 * (close-on-exec), or -1 with errno. */
int np_file_open(const char *path, bool append);

/* Expands `pattern` into out: "%p" becomes this process's id, "%%" a '%',
 * as in HotSpot's -Xlog file names.  Returns 0, or -1 with errno EINVAL
 * for any other '%' sequence, ENAMETOOLONG when the result does not fit. */
int np_file_path(const char *pattern, char *out, size_t len);

#endif
