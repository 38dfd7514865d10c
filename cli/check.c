/* `numapin check PID`: where the threads of a running process may run and
 * last ran, by name, and where its memory is (inspect.c).
 *
 * Java names come from the JVM's own thread dump: read from its attach
 * listener when that runs already (attach.c: the JVM's bytes, names in
 * its modified UTF-8), else from `jcmd PID Thread.print` (--jcmd PATH,
 * else the jcmd beside the process's java, else /usr/bin/jcmd), whose
 * handshake starts the listener.  A thread dump stops the JVM at a
 * safepoint for a moment, as jcmd always does.  Either is asked only of a
 * process known to be a HotSpot JVM ready for attach (attach.c), since
 * jcmd's handshake signals the process.  --kernel-names reads only /proc,
 * touching nothing. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jvmview.h"
#include "attach.h"
#include "watch.h"
#include "np_cpulist.h"
#include "inspect.h"
#include "np_glob.h"


static const char usage[] =
    "usage: numapin check PID [--threads GLOB|GLOB...] [--json] [--jcmd PATH | --kernel-names]\n"
    "                         [--svg FILE] [--watch [SECONDS] [--count N]]\n"
    "Where the threads of process PID may run (cpus, their nodes) and last ran, and its\n"
    "memory per node.  Java thread names come from `jcmd PID Thread.print` (a brief\n"
    "safepoint in the JVM); --kernel-names uses the kernel's 15-byte names and touches nothing.\n"
    "--svg FILE: the machine drawn by lstopo, each group in its colour, the tier threads\n"
    "named where they are bound, the JVM's own threads counted, memory per node.\n"
    "--watch [SECONDS]: a live view, refreshed every SECONDS (1), read from /proc only;\n"
    "q or Ctrl-C quits; --count N: N frames, then exit (plain text when not a terminal).\n";

/* The jcmd of the JDK the process runs: bin/jcmd beside its bin/java. */
static int jcmd_beside(pid_t pid, char *buf, size_t len)
{
    char dir[PATH_MAX];
    if (cli_exe_dir(pid, dir, sizeof dir) != 0 || strlen(dir) + sizeof "/jcmd" > len)
        return -1;
    snprintf(buf, len, "%s/jcmd", dir);
    return access(buf, X_OK);
}


/* What check was asked for beyond the listing. */
struct view {
    const char *svg;      /* --svg FILE */
    bool watch;           /* --watch [SECONDS] */
    double seconds;
    int count;            /* --count N; 0: until the JVM exits or q */
};

static int check(long pid, const struct np_globs *filter, const char *jcmd, bool json,
                 bool kernel_only, const struct view *v);

/* The period of --watch: seconds from 0.1 to 3600.  0, or 2 after one line
 * and the usage. */
static int parse_seconds(const char *arg, double *out)
{
    char *end;
    errno = 0;
    double s = strtod(arg, &end);
    if (errno != 0 || *end != '\0' || end == arg || !(s >= 0.1 && s <= 3600)) {
        fprintf(stderr, "numapin check: --watch takes seconds from 0.1 to 3600, not '%s'\n%s", arg,
                usage);
        return 2;
    }
    *out = s;
    return 0;
}

/* "--watch SECONDS": a number right after --watch is its interval when the
 * process id came before it (numapin check PID --watch 2); taken out of
 * argv.  Returns 0, or 2 after a usage error. */
static int watch_seconds(int *argc, char **argv, struct view *v)
{
    bool pid_seen = false;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            break;
        if (strcmp(a, "--threads") == 0 || strcmp(a, "--jcmd") == 0 || strcmp(a, "--svg") == 0 ||
            strcmp(a, "--count") == 0) {
            i++;
            continue;
        }
        if (strcmp(a, "--watch") == 0 && pid_seen && i + 1 < *argc && argv[i + 1][0] != '-') {
            if (parse_seconds(argv[i + 1], &v->seconds) != 0)
                return 2;
            memmove(&argv[i + 1], &argv[i + 2], (size_t)(*argc - i - 2) * sizeof *argv);
            (*argc)--;
            argv[*argc] = NULL;
            continue;
        }
        if (a[0] != '-')
            pid_seen = true;
    }
    return 0;
}

int cli_check(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"threads", required_argument, NULL, 't'}, {"json", no_argument, NULL, 'j'},
        {"jcmd", required_argument, NULL, 'c'},    {"kernel-names", no_argument, NULL, 'k'},
        {"svg", required_argument, NULL, 's'},     {"watch", optional_argument, NULL, 'w'},
        {"count", required_argument, NULL, 'n'},   {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *threads = NULL, *jcmd = NULL;
    bool json = false, kernel_only = false, counted = false;
    struct view v = {.seconds = 1};
    bool seen[256] = {false};
    int c;
    if ((c = watch_seconds(&argc, argv, &v)) != 0)
        return c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (cli_once("check", usage, longopts, c, seen) != 0)
            return 2;
        switch (c) {
        case 't': threads = optarg; break;
        case 'j': json = true; break;
        case 'c': jcmd = optarg; break;
        case 'k': kernel_only = true; break;
        case 's': v.svg = optarg; break;
        case 'w':
            v.watch = true;
            if (optarg != NULL && parse_seconds(optarg, &v.seconds) != 0)
                return 2;
            break;
        case 'n':
            if (np_parse_int(optarg, 1, 1000000, &v.count) != 0) {
                fprintf(stderr, "numapin check: --count takes a number of frames from 1 to 1000000, "
                                "not '%s'\n%s", optarg, usage);
                return 2;
            }
            counted = true;
            break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    if (counted && !v.watch) {
        fprintf(stderr, "numapin check: --count counts the frames of --watch: give --watch too\n%s", usage);
        return 2;
    }
    if (v.watch && json) {
        fprintf(stderr, "numapin check: --watch and --json exclude each other\n%s", usage);
        return 2;
    }
    int pid = 0;
    if (optind != argc - 1 || np_parse_int(argv[optind], 1, INT_MAX, &pid) != 0) {
        fprintf(stderr, "numapin check: give one process id\n%s", usage);
        return 2;
    }
    /* The same globs as the agent's threads= option. */
    struct np_globs filter = {0};
    if (threads != NULL && np_globs_parse(threads, &filter) != 0) {
        fprintf(stderr, "numapin check: invalid --threads '%s': valid values are %s\n", threads,
                NP_GLOBS_VALID);
        return 2;
    }
    int status = check(pid, threads != NULL ? &filter : NULL, jcmd, json, kernel_only, &v);
    np_globs_free(&filter);
    return status;
}

/* The JVM's names for its threads, from its thread dump, into *names;
 * none (one line saying why) when it cannot be had or --kernel-names. */
static int java_names(long pid, const char *jcmd, bool kernel_only, struct np_named **names)
{
    char jpath[PATH_MAX], err[PATH_MAX + 512], why[512];
    int nnames = 0, ambiguous = 0;
    *names = NULL;
    if (kernel_only)
        return 0;
    if (!np_attach_safe((pid_t)pid, why, sizeof why)) {
        fprintf(stderr, "numapin check: not asking process %ld for Java thread names: %s; the "
                        "kernel's names are shown\n", pid, why);
        return 0;
    }
    /* With its attach listener running, the JVM's own bytes; else jcmd,
     * whose handshake starts the listener, and which gives names that
     * are not UTF-8 (a character beyond the BMP, U+0000, a lone
     * surrogate) as U+FFFD: then the JVM's own bytes again, now that the
     * listener runs. */
    struct cli_filtered dump = {0};
    char *raw = NULL;
    size_t rawlen;
    int rc = 0;
    if (np_attach_dump((pid_t)pid, &raw, &rawlen, err, sizeof err) != 0) {
        if (jcmd == NULL && jcmd_beside((pid_t)pid, jpath, sizeof jpath) == 0)
            jcmd = jpath;
        if (jcmd == NULL)
            jcmd = "/usr/bin/jcmd";
        char pidarg[24];
        snprintf(pidarg, sizeof pidarg, "%ld", pid);
        char *argv[] = {(char *)jcmd, pidarg, "Thread.print", NULL};
        rc = cli_filter(argv, NULL, 0, 30, &dump, err, sizeof err);
        if (rc == 0)
            rc = dump.status;
        if (rc == 0 && strstr(dump.out, "\xef\xbf\xbd") != NULL)
            (void)np_attach_dump((pid_t)pid, &raw, &rawlen, why, sizeof why);
    }
    if (rc == 0)
        nnames = np_inspect_parse_dump(raw != NULL ? raw : dump.out, names, &ambiguous);
    if (rc != 0 || nnames <= 0) {
        if (rc > 0)
            snprintf(err, sizeof err, "%s %ld Thread.print exited with %d", jcmd, pid, rc);
        else if (rc == 0)
            snprintf(err, sizeof err, "its thread dump listed no thread");
        fprintf(stderr, "numapin check: no Java thread names (%s): the kernel's names are shown\n",
                err);
        nnames = 0;
    } else if (ambiguous > 0) {
        fprintf(stderr, "numapin check: %d thread ids appear more than once in the thread dump (a "
                        "thread name holding a line break): their kernel names are shown\n",
                ambiguous);
    }
    free(raw);
    cli_filtered_free(&dump);
    return nnames;
}

/* Everything after the arguments: returns the exit status. */
static int check(long pid, const struct np_globs *filter, const char *jcmd, bool json,
                 bool kernel_only, const struct view *v)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld", pid);
    if (access(path, F_OK) != 0) {
        fprintf(stderr, "numapin check: no process %ld\n", pid);
        return 1;
    }

    char err[PATH_MAX + 512];
    struct np_topo t;
    if (np_topo_load(&t, NULL, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "numapin check: %s\n", err);
        return 1;
    }
    if (!t.thissystem) {
        fprintf(stderr, "numapin check: the topology (%s) is not this machine's: a process's "
                        "threads are read on this one (set HWLOC_THISSYSTEM=1 if it is)\n", t.source);
        np_topo_destroy(&t);
        return 1;
    }
    struct np_named *names = NULL;
    int nnames = java_names(pid, jcmd, kernel_only, &names);
    struct np_inspect result;
    int rc = np_inspect_collect(&t, (pid_t)pid, names, nnames, &result, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "numapin check: %s\n", err);
        np_inspect_named_free(names, nnames);
        np_topo_destroy(&t);
        return 1;
    }
    int status = 0;
    if (v->svg != NULL || v->watch) {
        struct cli_jvm j;
        if (cli_jvm_open(&j, &t, &result, filter) != 0) {
            fprintf(stderr, "numapin check: out of memory\n");
            status = 1;
        } else if (v->svg != NULL && cli_jvm_svg(&t, &result, &j, v->svg, err, sizeof err) != 0) {
            fprintf(stderr, "numapin check: %s\n", err);
            status = 1;
        } else if (v->watch) {
            struct cli_watch w = {.pid = (pid_t)pid, .seconds = v->seconds, .count = v->count,
                                  .filter = filter, .names = names, .nnames = nnames};
            status = cli_watch(&t, &j, &result, &w);
        }
        cli_jvm_close(&j);
    }
    /* The listing, as without --svg; the live view replaces it. */
    if (status == 0 && !v->watch)
        np_inspect_print(&result, filter, json, stdout);
    np_inspect_named_free(names, nnames);
    np_inspect_free(&result);
    np_topo_destroy(&t);
    return status;
}
