/* jvmview: what the views of `numapin check` (--svg, --watch) tell of a
 * running JVM beyond np_inspect: which numapin group it is, the plan, and
 * which of its threads are tier threads, the JVM's own, or others.
 *
 * Read from outside, without touching the process:
 *  - the agent's options: an -agentpath:...numapin...=OPTS or
 *    -agentlib:numapin=OPTS in /proc/PID/cmdline, else in the
 *    JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS or _JAVA_OPTIONS of
 *    /proc/PID/environ (readable by the process's user and root);
 *  - the plan: np_plan_build on this machine with the options' groups and
 *    domain, as the agent computed it;
 *  - the group: the options' group=N; for group=auto, or an agent attached
 *    later (no options to read), the plan group holding the CPUs the tier
 *    threads are bound to.
 * Tier threads are those the options' threads= globs match (numapin's
 * default globs when there is no option).  The JVM's own threads are
 * HotSpot's GC, JIT and service threads, known by name (CLI_JVM_THREADS). */
#ifndef NP_JVMVIEW_H
#define NP_JVMVIEW_H

#include <stdbool.h>
#include <sys/types.h>

#include "np_glob.h"
#include "inspect.h"
#include "np_options.h"
#include "np_plan.h"
#include "np_topo.h"

/* HotSpot's own threads, as the JVM and the kernel (15 bytes) name them. */
#define CLI_JVM_THREADS                                                                          \
    "GC Thread*|G1 *|VM Thread|VM Periodic*|C1 Compiler*|C2 Compiler*|JVMCI*|Sweeper thread|" \
    "Signal Dispatch*|Service Thread|Monitor Deflat*|Notification*|Attach Listener|"           \
    "Reference Handl*|Finalizer|Common-Cleaner|ZWorker*|ZDirector*|ZDriver*|ZStat|ZUnmapper*|"  \
    "ZRuntime*|Shenandoah*|Parallel GC*|JFR *"

enum cli_kind { CLI_TIER, CLI_OTHER, CLI_JVM_OWN };

struct cli_jvm {
    bool have_agent;         /* the agent's options were found */
    char agent_from[32];     /* "command line", "JAVA_TOOL_OPTIONS", ... */
    bool options_ok;         /* they parsed */
    struct np_options opt;   /* parsed, else the defaults */
    bool have_plan;
    struct np_plan plan;
    int group;               /* -1: unknown */
    bool group_inferred;     /* from the tier threads' CPUs */
    struct np_globs tier, own;
};

/* Looks at the agent, the plan and the group of process `seen->pid` on
 * machine t.  `tier` (may be NULL) replaces the options' globs (check
 * --threads).  Returns 0, or -1 when memory runs out. */
int cli_jvm_open(struct cli_jvm *j, const struct np_topo *t, const struct np_inspect *seen,
                 const struct np_globs *tier);
void cli_jvm_close(struct cli_jvm *j);

enum cli_kind cli_jvm_kind(const struct cli_jvm *j, const char *name);

/* The group's nodes (NULL when the group is unknown). */
hwloc_const_bitmap_t cli_jvm_nodes(const struct cli_jvm *j);

/* One line: "group 1 of 2 (from JAVA_TOOL_OPTIONS): nodes 1, CPUs 1,
 * domain node" or why it is unknown. */
void cli_jvm_describe(const struct cli_jvm *j, char *buf, size_t len);

/* The agent's option string among a process's arguments (NUL-separated,
 * as /proc/PID/cmdline) or a whitespace-separated options variable
 * (sep ' '): the first -agentpath whose library's file name holds
 * "numapin", or -agentlib:numapin, into out ("" when it has no options).
 * Returns 1 when found, 0 when not. */
int cli_jvm_find_agent(const char *args, size_t len, char sep, char *out, size_t outlen);

/* `numapin check PID --svg FILE` (jvmsvg.c): the machine drawn by lstopo
 * (draw.h), each plan group in its colour, each tier thread's Java name
 * hung where it is bound, the JVM's own and the other threads counted in
 * the legend, and the process's resident memory in each node.  Returns 0,
 * or -1 with a message in err (the file is then not written). */
int cli_jvm_svg(const struct np_topo *t, const struct np_inspect *seen, const struct cli_jvm *j,
                const char *path, char *err, size_t errlen);

/* `numapin check PID --watch` (watch.c). */
struct cli_watch {
    pid_t pid;
    double seconds;                /* between frames */
    int count;                     /* frames, then exit; 0: until q, Ctrl-C or the JVM's end */
    const struct np_globs *filter; /* --threads: the threads listed; NULL all */
    const struct np_named *names;  /* the JVM's names, taken once before */
    int nnames;
};

/* Runs the view on stdout until done; `first` is the first look at the
 * process.  Returns the exit status: 0 (quit, count reached, the JVM
 * ended), 1 (a failure, named on stderr). */
int cli_watch(const struct np_topo *t, const struct cli_jvm *j, const struct np_inspect *first,
              const struct cli_watch *w);

#endif
