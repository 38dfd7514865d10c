/* The numapin command-line tool: one file a command, over the core and
 * these helpers (cli_util.c).
 *
 * Commands parse their arguments, call the core, print, and return the
 * exit status: 0 done, 1 a failure (named in one line on stderr), 2 bad
 * arguments (the line, then the command's usage). */
#ifndef NP_CLI_H
#define NP_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "np_modes.h"
#include "np_topo.h"

/* Each takes its argv with argv[0] the command's name ("plan"). */
int cli_plan(int argc, char **argv);
int cli_topo(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_groups(int argc, char **argv);
int cli_report(int argc, char **argv);

/* Prints "numapin CMD: MESSAGE" and then `usage` to stderr; returns 2. */
int cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Refuses an option given twice: a command takes each of its options
 * once, so a second --html (or any other) would silently win.  `c` is
 * what getopt_long returned, `longopts` the command's table, `seen` the
 * options taken so far (zeroed by the caller before its loop).  Returns 0;
 * or prints "--OPT is given twice: give it once" with the usage and
 * returns 2. */
int cli_once(const char *cmd, const char *usage, const struct option *longopts, int c,
             bool seen[256]);

/* Reads a mode argument (--cpus core) by the core's names of it.  Returns
 * 0 with *out set; or prints "--OPT takes A, B or C, not 'V'" with the
 * usage and returns 2. */
int cli_mode(const char *cmd, const char *usage, const char *opt, const struct np_names *names,
             const char *v, int *out);

/* Reads a count argument (--groups 3) from min to max.  Returns 0 with
 * *out set; or prints "--OPT takes WHAT from MIN to MAX, not 'V'" with the
 * usage and returns 2. */
int cli_count(const char *cmd, const char *usage, const char *opt, const char *what, long min,
              long max, const char *v, int *out);

/* The machine a command looks at: this one, or the one described by
 * --topology FILE.xml or --synthetic DESC, narrowed by --restrict CPUS as
 * under a cgroup cpuset.  CLI_MACHINE_OPTIONS goes into a command's
 * getopt_long table; cli_machine_option takes its letters. */
struct cli_machine {
    const char *xml, *synthetic, *restrict_cpus;
};
#define CLI_MACHINE_OPTIONS                                 \
    {"topology", required_argument, NULL, 't'},             \
    {"synthetic", required_argument, NULL, 's'},            \
    {"restrict", required_argument, NULL, 'r'}
#define CLI_MACHINE_USAGE "[--topology FILE.xml | --synthetic DESC] [--restrict CPUS]"

/* Takes getopt's `c` when it is one of CLI_MACHINE_OPTIONS: returns 1. */
int cli_machine_option(struct cli_machine *m, int c, const char *arg);

/* Loads the machine into *t.  Returns 0; or prints why and returns the
 * exit status (1, or 2 for arguments that exclude each other or a bad CPU
 * list). */
int cli_machine_load(const char *cmd, const char *usage, const struct cli_machine *m,
                     struct np_topo *t);

/* The HotSpot flags that fit a JVM placed whole on a group of `cpus` CPUs,
 * sized as if the machine were the group: "-XX:ActiveProcessorCount=N"
 * (GC and JIT thread counts, Runtime.availableProcessors() and the common
 * pool follow from it).  HotSpot sizes all of them before an agent loads,
 * so they go on the JVM's command line (numapin groups puts them in
 * JAVA_TOOL_OPTIONS; numapin plan --java-flags prints them). */
void cli_java_flags(int cpus, char *buf, size_t len);

/* The CPUs of each of `groups` groups on this machine, planned as the agent
 * plans them with the option string `options` (its domain=; NULL for the
 * defaults), into cpus[0..groups).  Returns 0, or -1 with a message in
 * err. */
int cli_group_cpus(int groups, const char *options, int *cpus, char *err, size_t errlen);

/* The directory of process pid's executable (0: this process) into buf,
 * e.g. "/usr/lib/jvm/java-17/bin".  Returns 0, or -1. */
int cli_exe_dir(pid_t pid, char *buf, size_t len);

/* One report for the page of a run (report.c). */
struct cli_page_input {
    const char *report;             /* the path of a report=FILE */
    const char *label;              /* shown beside it, e.g. its log; may be NULL */
    const char *const *advice;      /* advice lines from the JVM's log */
    int nadvice;
};

/* Writes the page of the reports `in` to out (one self-contained HTML
 * file, whole or not at all), the machine drawn is the one m names (this
 * one by default), with `results` (text, e.g. numapin groups' table; NULL:
 * none) under the groups' table.  A report that cannot be read (or is not
 * a numapin report of format 1 to 4, docs/view.md) is an error, or, when
 * `lenient`, a line on the page.  Always errors: out being one of the reports
 * (cli_not_input), one file given twice, two reports of one pid.  A
 * report's advice is its own "advice"; in->advice (lines of the JVM's
 * log) is shown only for a report without it (format 1).  Returns 0, or
 * -1 with one line in err. */
int cli_page(const char *out, const struct cli_page_input *in, int n, bool lenient,
             const struct cli_machine *m, const char *results, char *err, size_t errlen);

/* Writes data to path whole or not at all, as the agent writes its report
 * (np_file_out): into a new file beside it (mode 0600), synced, then
 * renamed over path.  What np_file refuses at path (a symbolic link, a
 * directory or anything but a regular file, a second hard link, another
 * user's file in a sticky directory) is refused, never followed or
 * replaced.  Returns 0, or -1 with one line in err ("cannot write PATH:
 * the folder DIR does not exist"), nothing left behind. */
int cli_write_file(const char *path, const char *data, size_t len, char *err, size_t errlen);

/* Reads fd to its end, in blocks, into a new buffer (free()),
 * NUL-terminated: *buf and *len.  `hint` is the size expected (0 when
 * unknown: /proc files, sockets), `limit` the most taken.  Returns 0, or
 * -1 with errno: EFBIG past limit, ENOMEM, or read(2)'s (EAGAIN when a
 * socket's time limit ran out). */
int cli_read_fd(int fd, size_t hint, size_t limit, char **buf, size_t *len);

/* Refuses to write `out` over the input `in`: the same file by device and
 * inode, whether named by the same path, a hard link or a symbolic link.
 * Returns 0 when out names no file yet, or another file than in (or in
 * cannot be read: the command says so when it reads it); else -1 with one
 * line in err ("will not write OUT over the input IN (the same file): give
 * another output file"). */
int cli_not_input(const char *out, const char *in, char *err, size_t errlen);

/* What a child run by cli_filter gave. */
struct cli_filtered {
    int status;      /* exit status, or 128+signal */
    char *out, *err; /* its stdout and stderr, NUL-terminated */
    size_t len, errlen;
};

/* Runs argv[0] (looked up in PATH) with `input` on its stdin, capturing
 * stdout and stderr, killed after `seconds`.  Returns 0 with *out filled
 * (cli_filtered_free); -2 when the program is not found, -1 for any other
 * failure (it did not finish in time, out of memory), a message in err. */
int cli_filter(char *const argv[], const char *input, size_t inlen, int seconds,
               struct cli_filtered *out, char *err, size_t errlen);
void cli_filtered_free(struct cli_filtered *f);

#endif
