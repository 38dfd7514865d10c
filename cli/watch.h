/* watch: the frames of `numapin check PID --watch`, in the manner of top.
 *
 * A frame is: a header (the process, its numapin group and plan, the
 * thread counts), the process's resident memory per node with its change
 * since the previous frame and since the view began, then one row per
 * thread: its id, Java name, kind (tier, other, jvm), the CPUs it may
 * run on, the CPU it runs on now and that CPU's node, the share of
 * samples it spent on its home node (the group's nodes, or the nodes of
 * its CPUs when the group is unknown), and its migrations since the view
 * began.  Rows: tier threads first, then other threads, then the JVM's
 * own; at most 80 columns off a terminal, and on one no wider or taller
 * than the terminal. */
#ifndef NP_WATCH_H
#define NP_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "jvmview.h"
#include "inspect.h"

/* What the view counted for one thread since it began. */
struct cli_watch_thread {
    pid_t tid;
    enum cli_kind kind;
    long samples, home;     /* samples taken, those on its home node */
    long long migrations;   /* since the view began; -1 unknown */
};

struct cli_watch_view {
    const struct np_inspect *now;         /* this frame's look */
    const struct cli_watch_thread *stats; /* one per now->threads[i], same order */
    const long long *prev_kb, *first_kb;  /* memory per node at the last frame and the first */
    int nprev_kb, nfirst_kb;
    const char *plan;                     /* cli_jvm_describe */
    const struct np_globs *filter;        /* rows shown; NULL all */
    bool names_from_jvm;                  /* the JVM named threads: mark kernel names */
    double elapsed;                       /* seconds since the view began */
    int frame;
};

/* Formats one frame into *out (malloc'd) for a terminal of `cols` columns
 * and `rows` rows (either 0: unknown, unbounded).  Widths are display
 * columns (wcwidth under C.UTF-8): each line is cut to `cols` at a whole
 * character, the name and CPU columns padded to their width, so a name
 * of wide (CJK), combining or written-out characters keeps the columns
 * after it in line.  At most `rows` lines: the title and the plan line
 * first, the count of the thread rows left out last ("+12 more"), the
 * rest as room allows (lay_out in watch.c).  Every process-supplied
 * string (names, the command) is shown as np_text_shown writes it.
 * With `tty`, the frame starts at the top left, each line shorter than
 * the width erases the rest of its row, and what is below the frame is
 * erased; a frame of `rows` lines has no newline after its last (it
 * would scroll): it redraws in place, without flicker.  Without, plain
 * text, each line ending in a newline.  Returns 0, or -1 when memory runs
 * out. */
int cli_watch_frame(const struct cli_watch_view *v, int cols, int rows, bool tty, char **out,
                    size_t *len);

/* The text the view leaves on the normal screen when the process exits:
 * `frame` (as cli_watch_frame made it) without its escape sequences and
 * ending in a newline, so that a message after it starts at column 0.
 * *out is malloc'd.  Returns 0, or -1 when memory runs out. */
int cli_watch_last(const char *frame, size_t len, char **out, size_t *outlen);

#endif
