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
 * own; at most 80 columns. */
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

/* Formats one frame into *out (malloc'd): at most `rows` lines when rows
 * > 0 (the rest counted in the last), lines cut at `cols` when cols > 0.
 * With `tty`, each line ends by erasing the rest of the terminal line and
 * the frame starts at the top left and erases what is below it (so it
 * redraws in place, without flicker); without, plain text.  Returns 0, or
 * -1 when memory runs out. */
int cli_watch_frame(const struct cli_watch_view *v, int cols, int rows, bool tty, char **out,
                    size_t *len);

#endif
