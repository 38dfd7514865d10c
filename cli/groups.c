/* `numapin groups`: runs one command as N JVM groups and merges the results.
 *
 *   numapin groups --groups N [--agent LIB] [--options OPTS] [--logs DIR] [--html OUT.html]
 *                  -- CMD ARGS...
 *
 * Starts N copies of CMD at once.  Copy i gets, in its environment,
 * JAVA_TOOL_OPTIONS with -agentpath:LIB=group=i,groups=N[,OPTS] appended
 * (so every JVM it starts loads numapin as group i), NUMAPIN_GROUP=i and
 * NUMAPIN_GROUPS=N; "{group}" in its arguments and in OPTS becomes i, and
 * "{group+K}" becomes i+K (a port per group: {group+8080}).  Its output goes
 * to DIR/group-i.log.  When all have exited, it prints one table: per group
 * the exit status, numapin's summary (placed threads, CPUs, resident pages
 * and the share on the group's nodes) and the fields of the last
 * "result key=value ..." line the program printed, then totals
 * over the groups that ended well: exit 0, or 128 + the SIGINT or SIGTERM
 * passed on to them (sums; for keys ending in _ms, the worst group).
 * With --html, each JVM also writes report=DIR/group-i-PID.json, and the
 * page of the run (report.c) is written from them, with the advice lines
 * of each log.  A group whose command did not start, or that exited 126
 * or 127 (a shell's "cannot run", "not found") before numapin's summary,
 * gets one line on stderr: the command, why, and its log.  Exit status:
 * 0 when every group exited 0 (and the page was written).
 *
 * A command whose JVMs load numapin already (JAVA_TOOL_OPTIONS,
 * JDK_JAVA_OPTIONS, _JAVA_OPTIONS or its own arguments) is refused: the
 * first copy loaded acts, so every JVM would be that copy's group.  A
 * SIGINT or SIGTERM is passed to every group; those still running GRACE_S
 * seconds later (stuck in shutdown hooks) are killed, saying so. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "np_cpulist.h"
#include "np_text.h"

#define MAX_KEYS 32

struct result {
    int status;            /* exit status, or 128+signal */
    char summary[384];     /* placed= cpus= mem_pages= mem_local= access_local= of numapin's summary line */
    int nkeys;
    char keys[MAX_KEYS][32];
    double values[MAX_KEYS];
};

/* Seconds the groups get to end after a SIGINT or SIGTERM (shutdown hooks
 * run then) before they are killed. */
#define GRACE_S 10

static volatile sig_atomic_t forwarded;
static pid_t *children;   /* 0 once reaped */
static int nchildren;

static void forward(int sig)
{
    forwarded = sig;
    for (int i = 0; i < nchildren; i++)
        if (children[i] > 0)
            kill(children[i], sig);
}

/* A token of a JVM options string or command line that loads numapin:
 * -agentpath:PATH[=...] with PATH this agent or a file named like it,
 * or -agentlib:numapin[=...]. */
static bool loads_numapin(const char *tok, const char *agent)
{
    if (strncmp(tok, "-agentlib:numapin", 17) == 0 && (tok[17] == '\0' || tok[17] == '='))
        return true;
    if (strncmp(tok, "-agentpath:", 11) != 0)
        return false;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%.*s", (int)strcspn(tok + 11, "="), tok + 11);
    const char *base = strrchr(path, '/');
    struct stat a, b;
    return strstr(base != NULL ? base + 1 : path, "numapin") != NULL ||
           (stat(path, &a) == 0 && stat(agent, &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino);
}

/* Where numapin is loaded already, beside the copy groups adds: in the JVM
 * options of the environment or in the command.  Prints one line and
 * returns 1 when it is. */
static int already_loaded(char **cmd, const char *agent)
{
    static const char *const vars[] = {"JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"};
    for (size_t v = 0; v < sizeof vars / sizeof *vars; v++) {
        const char *val = getenv(vars[v]);
        char *copy = val != NULL ? strdup(val) : NULL, *save = NULL;
        for (char *t = copy ? strtok_r(copy, " \t", &save) : NULL; t; t = strtok_r(NULL, " \t", &save))
            if (loads_numapin(t, agent)) {
                fprintf(stderr, "numapin groups: %s already loads numapin (%s), so every JVM would "
                                "act as that one's group: remove it from %s (numapin groups gives "
                                "each group its own agent)\n", vars[v], t, vars[v]);
                free(copy);
                return 1;
            }
        free(copy);
    }
    for (int i = 0; cmd[i] != NULL; i++)
        if (loads_numapin(cmd[i], agent)) {
            fprintf(stderr, "numapin groups: the command already loads numapin (%s), so every JVM "
                            "would act as that one's group: remove it (numapin groups gives each "
                            "group its own agent through JAVA_TOOL_OPTIONS)\n", cmd[i]);
            return 1;
        }
    return 0;
}

/* Waits for every group; after a forwarded signal, those still running
 * GRACE_S seconds later are killed, saying so. */
static void reap(struct result *r)
{
    int left = nchildren;
    struct timespec since = {0, 0};
    bool killed = false;
    while (left > 0) {
        for (int g = 0; g < nchildren; g++) {
            int st;
            if (children[g] <= 0 || waitpid(children[g], &st, WNOHANG) != children[g])
                continue;
            r[g].status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            children[g] = 0;
            left--;
        }
        if (left == 0)
            break;
        if (forwarded && since.tv_sec == 0)
            clock_gettime(CLOCK_MONOTONIC, &since);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (since.tv_sec != 0 && !killed && now.tv_sec - since.tv_sec >= GRACE_S) {
            for (int g = 0; g < nchildren; g++)
                if (children[g] > 0) {
                    fprintf(stderr, "numapin groups: group %d (pid %d) still running %d s after "
                                    "%s: killed\n", g, (int)children[g], GRACE_S,
                            forwarded == SIGINT ? "SIGINT" : "SIGTERM");
                    kill(children[g], SIGKILL);
                }
            killed = true;
        }
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    }
}

/* The agent that came with this executable: build/libnumapin.so beside
 * build/numapin, or, installed, ../lib/MULTIARCH/numapin/libnumapin.so
 * relative to /usr/bin/numapin. */
static void default_agent(char *buf, size_t len)
{
    char self[PATH_MAX - 64];
    if (cli_exe_dir(0, self, sizeof self) != 0) {
        snprintf(buf, len, "libnumapin.so");
        return;
    }
    snprintf(buf, len, "%s/libnumapin.so", self);
#ifdef NP_MULTIARCH
    if (access(buf, F_OK) != 0)
        snprintf(buf, len, "%s/../lib/" NP_MULTIARCH "/numapin/libnumapin.so", self);
#endif
}

/* The largest K of "{group+K}": group + K stays an int. */
#define MAX_GROUP_ADD 1000000000

/* The placeholder at p: "{group}" or "{group+K}" (K decimal, 0 to
 * MAX_GROUP_ADD).  Returns its length with *add set to 0 or K; 0 when p
 * starts no placeholder (also "{groups}", "{group-1}", ...); -1 when p
 * starts "{group+" but is no valid placeholder. */
static int placeholder(const char *p, int *add)
{
    static const char key[] = "{group";
    const size_t klen = sizeof key - 1;
    if (strncmp(p, key, klen) != 0)
        return 0;
    if (p[klen] == '}') {
        *add = 0;
        return (int)klen + 1;
    }
    if (p[klen] != '+')
        return 0;
    const char *num = p + klen + 1, *end = strchr(num, '}');
    char buf[16];
    size_t n = end != NULL ? (size_t)(end - num) : 0;
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, num, n);
    buf[n] = '\0';
    if (np_parse_int(buf, 0, MAX_GROUP_ADD, add) != 0)
        return -1;
    return (int)(klen + n + 2);
}

/* The first invalid "{group+...}" of arg, or NULL. */
static const char *bad_placeholder(const char *arg)
{
    int add;
    for (const char *p = strchr(arg, '{'); p != NULL; p = strchr(p + 1, '{'))
        if (placeholder(p, &add) < 0)
            return p;
    return NULL;
}

/* arg with every "{group}" replaced by the group number and every
 * "{group+K}" by the group number plus K (arg holds no invalid
 * placeholder: bad_placeholder).  NULL when out of memory. */
static char *replace_group(const char *arg, int group)
{
    /* A placeholder is at least 7 bytes and becomes at most 10 digits. */
    char *out = malloc(2 * strlen(arg) + 1), *o = out;
    if (out == NULL)
        return NULL;
    for (const char *p = arg; *p != '\0';) {
        int add, n = placeholder(p, &add);
        if (n <= 0) {
            *o++ = *p++;
            continue;
        }
        o += sprintf(o, "%d", group + add);
        p += n;
    }
    *o = '\0';
    return out;
}

/* Why a group's child did not start its command, as it tells the parent
 * through a close-on-exec pipe: nothing arrives when the exec succeeds. */
enum start_failure { START_OK, START_LOG, START_EXEC, START_MEMORY };

struct start_report {
    int what;  /* enum start_failure */
    int err;   /* errno */
};

/* In the child: tells the parent through fd why it stops, and exits 127. */
static void start_failed(int fd, enum start_failure what, int err)
{
    struct start_report rep = {what, err};
    if (fd >= 0 && write(fd, &rep, sizeof rep) != (ssize_t)sizeof rep) {
        /* the exit status says it failed */
    }
    _exit(127);
}

/* In the child: environment, output, exec.  Never returns.  java_flags:
 * the HotSpot flags that fit the group ("" for none), before the agent.
 * report: the pipe (close-on-exec) that tells the parent why the command
 * did not start. */
static void run_child(int group, int groups, const char *agent, const char *opts,
                      const char *java_flags, const char *log, char **cmd, int report)
{
    const char *old = getenv("JAVA_TOOL_OPTIONS");
    char *jto = NULL, num[16];
    char *gopts = opts ? replace_group(opts, group) : NULL;
    if (asprintf(&jto, "%s%s%s%s-agentpath:%s=group=%d,groups=%d%s%s", old ? old : "",
                 old && *old ? " " : "", java_flags, *java_flags ? " " : "", agent, group, groups,
                 gopts ? "," : "", gopts ? gopts : "") < 0)
        start_failed(report, START_MEMORY, ENOMEM);
    setenv("JAVA_TOOL_OPTIONS", jto, 1);
    snprintf(num, sizeof num, "%d", group);
    setenv("NUMAPIN_GROUP", num, 1);
    snprintf(num, sizeof num, "%d", groups);
    setenv("NUMAPIN_GROUPS", num, 1);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        start_failed(report, START_LOG, errno);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    int n = 0;
    while (cmd[n] != NULL)
        n++;
    char **argv = calloc((size_t)n + 1, sizeof *argv);
    for (int i = 0; argv != NULL && i < n; i++)
        if ((argv[i] = replace_group(cmd[i], group)) == NULL)
            start_failed(report, START_MEMORY, ENOMEM);
    if (argv == NULL)
        start_failed(report, START_MEMORY, ENOMEM);
    execvp(argv[0], argv);
    int err = errno;
    fprintf(stderr, "numapin groups: cannot run %s: %s\n", argv[0], strerror(err));
    start_failed(report, START_EXEC, err);
}

/* The last line of a group's log that is not empty, shown as a person
 * reads it (np_text_shown), cut to fit buf; "" when there is none. */
static void last_log_line(const char *log, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(log, "re");
    if (f == NULL)
        return;
    char *line = NULL, *last = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '\0')
            continue;
        free(last);
        last = strdup(line);
    }
    free(line);
    fclose(f);
    if (last != NULL)
        np_text_shown(buf, len, last);
    free(last);
}

/* One line on stderr for a group whose command did not start (rep, from
 * its child), or that exited 126 or 127 (what a shell returns for a
 * program it cannot run, or cannot find) before numapin's summary: the
 * command, why, and where its log is. */
static void say_why_not_started(int g, const char *cmd0, const struct start_report *rep,
                                const struct result *r, const char *log)
{
    char *cmd = replace_group(cmd0, g);
    char *shown = np_text_shown_dup(cmd != NULL ? cmd : cmd0);
    const char *name = shown != NULL ? shown : "the command";
    if (rep->what == START_EXEC) {
        fprintf(stderr, "numapin groups: group %d: cannot run %s: %s (its log: %s)\n", g, name,
                strerror(rep->err), log);
    } else if (rep->what == START_LOG) {
        fprintf(stderr, "numapin groups: group %d: cannot write its log %s: %s, so %s was not run\n",
                g, log, strerror(rep->err), name);
    } else if (rep->what == START_MEMORY) {
        fprintf(stderr, "numapin groups: group %d: out of memory before %s could start (its log: %s)\n",
                g, name, log);
    } else if ((r->status == 126 || r->status == 127) && r->summary[0] == '\0') {
        char last[512];
        last_log_line(log, last, sizeof last);
        fprintf(stderr, "numapin groups: group %d: %s exited %d (%s) before numapin's summary%s%s%s "
                        "(its log: %s)\n", g, name, r->status,
                r->status == 127 ? "a program it runs was not found" : "a program it runs could not be run",
                last[0] != '\0' ? "; its log ends: \"" : "", last, last[0] != '\0' ? "\"" : "", log);
    }
    free(shown);
    free(cmd);
}

/* Reads a group's log: numapin's summary and the program's last result line. */
static void read_log(const char *log, struct result *r)
{
    FILE *f = fopen(log, "re");
    if (f == NULL)
        return;
    char line[4096];
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        const char *s = strstr(line, "][numapin] summary ");
        if (s != NULL) {
            static const char *const keys[] = {" placed=", " cpus=", " mem_pages=", " mem_local=",
                                               " access_local="};
            size_t used = 0;
            r->summary[0] = '\0';
            for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
                const char *at = strstr(s, keys[k]);
                if (at != NULL && used < sizeof r->summary)
                    used += (size_t)snprintf(r->summary + used, sizeof r->summary - used, "%.*s",
                                             (int)strcspn(at + 1, " ") + 1, at);
            }
            continue;
        }
        if (strncmp(line, "result ", 7) != 0)
            continue;
        r->nkeys = 0;
        char *save = NULL;
        for (char *tok = strtok_r(line + 7, " ", &save); tok && r->nkeys < MAX_KEYS;
             tok = strtok_r(NULL, " ", &save)) {
            char *eq = strchr(tok, '=');
            char *end;
            if (eq == NULL || eq - tok >= 32)
                continue;
            double v = strtod(eq + 1, &end);
            if (end == eq + 1)
                continue;
            snprintf(r->keys[r->nkeys], sizeof r->keys[0], "%.*s", (int)(eq - tok), tok);
            r->values[r->nkeys++] = v;
        }
    }
    fclose(f);
}

static int is_latency(const char *key)
{
    size_t n = strlen(key);
    return n > 3 && strcmp(key + n - 3, "_ms") == 0;
}

/* A group whose figures the total counts: it exited 0, or it ended on the
 * SIGINT or SIGTERM passed on to it (a server's usual way to stop: exit
 * 128 + the signal), having printed its result line. */
static bool totalled(const struct result *r)
{
    return r->status == 0 || (forwarded != 0 && r->status == 128 + forwarded);
}

static void print_table(FILE *out, int groups, const struct result *r, const char *dir)
{
    /* Columns: the keys of the first group that printed a result. */
    const struct result *keys = NULL;
    for (int g = 0; g < groups && keys == NULL; g++)
        if (r[g].nkeys > 0)
            keys = &r[g];
    fprintf(out, "%-6s %-6s", "group", "exit");
    for (int k = 0; keys && k < keys->nkeys; k++)
        fprintf(out, " %12s", keys->keys[k]);
    fprintf(out, "  numapin\n");
    double total[MAX_KEYS] = {0};
    int counted = 0;
    for (int g = 0; g < groups; g++) {
        bool ok = totalled(&r[g]);
        counted += ok;
        fprintf(out, "%-6d %-6d", g, r[g].status);
        for (int k = 0; keys && k < keys->nkeys; k++) {
            double v = 0;
            int found = 0;
            for (int j = 0; j < r[g].nkeys; j++)
                if (strcmp(r[g].keys[j], keys->keys[k]) == 0) {
                    v = r[g].values[j];
                    found = 1;
                }
            if (found)
                fprintf(out, " %12.2f", v);
            else
                fprintf(out, " %12s", "-");
            if (!ok)
                continue; /* a failed group's figures are not totalled */
            if (is_latency(keys->keys[k]))
                total[k] = v > total[k] ? v : total[k];
            else
                total[k] += v;
        }
        fprintf(out, "  %s\n", r[g].summary[0] ? r[g].summary + (r[g].summary[0] == ' ') : "(no summary)");
    }
    if (keys != NULL && counted > 0) {
        fprintf(out, "%-6s %-6s", "total", "");
        for (int k = 0; k < keys->nkeys; k++)
            fprintf(out, " %12.2f", total[k]);
        if (counted == groups)
            fprintf(out, "  (sums; worst group for *_ms)\n");
        else
            fprintf(out, "  (sums of the %d groups that ended well; worst of them for *_ms)\n", counted);
    } else if (keys != NULL) {
        fprintf(out, "%-6s %-6s  (no group ended well: nothing totalled)\n", "total", "");
    }
    fprintf(out, "logs: %s/group-N.log\n", dir);
}

/* mkdir -p, each new directory 0700. */
static int make_dirs(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(path, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* Each group's HotSpot flags (cli_java_flags), planned as the agents will
 * plan (the options' domain=, "{group}" read as 0).  0, or -1 after one
 * line saying the JVMs go without them. */
static int group_flags(int groups, const char *opts, char (*flags)[64])
{
    char err[1024];
    char *o = opts != NULL ? replace_group(opts, 0) : NULL;
    int *cpus = calloc((size_t)groups, sizeof *cpus);
    int rc = cpus != NULL && (opts == NULL || o != NULL) ? cli_group_cpus(groups, o, cpus, err, sizeof err)
                                                          : (snprintf(err, sizeof err, "out of memory"), -1);
    for (int g = 0; rc == 0 && g < groups; g++)
        cli_java_flags(cpus[g], flags[g], sizeof flags[g]);
    if (rc != 0)
        fprintf(stderr, "numapin groups: %s: the JVMs get no -XX:ActiveProcessorCount\n", err);
    free(cpus);
    free(o);
    return rc;
}

static const char usage[] =
    "usage: numapin groups --groups N [--agent LIB] [--options OPTS] [--logs DIR] [--html OUT.html]\n"
    "                      [--no-java-flags] -- CMD ARGS...\n"
    "Runs CMD as N JVM groups at once: copy i gets -agentpath:LIB=group=i,groups=N[,OPTS]\n"
    "in JAVA_TOOL_OPTIONS, NUMAPIN_GROUP=i and NUMAPIN_GROUPS=N in its environment, {group}\n"
    "in its arguments and OPTS replaced by i, and {group+K} by i+K (K from 0 to 1000000000).\n"
    "JAVA_TOOL_OPTIONS also gets -XX:ActiveProcessorCount=C, C the group's CPUs, which sizes\n"
    "the JVM's GC and JIT threads to its group; --no-java-flags leaves it out.\n"
    "--html OUT.html: each JVM writes a report (DIR/group-i-PID.json), and one page for the\n"
    "run is written from them (as numapin report does).\n";

/* The advice lines of a group's log, each once, into *out. */
static int log_advice(const char *log, char ***out)
{
    static const char key[] = "[numapin] advice: ";
    *out = NULL;
    FILE *f = fopen(log, "re");
    if (f == NULL)
        return 0;
    int n = 0;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        char *a = strstr(line, key);
        if (a == NULL)
            continue;
        a += sizeof key - 1;
        a[strcspn(a, "\n")] = '\0';
        bool seen = false;
        for (int i = 0; i < n && !seen; i++)
            seen = strcmp((*out)[i], a) == 0;
        char **m = seen || n >= 64 ? NULL : realloc(*out, (size_t)(n + 1) * sizeof *m);
        if (m == NULL)
            continue;
        *out = m;
        if ((m[n] = strdup(a)) != NULL)
            n++;
    }
    free(line);
    fclose(f);
    return n;
}

/* The page of the run: every report each group's JVMs wrote. */
static int write_page(const char *html, const char *dir, int groups, const struct result *r,
                      char (*logs)[PATH_MAX], const char *table)
{
    struct cli_page_input *in = NULL;
    char **labels = NULL, **patterns = NULL, ***advice = calloc((size_t)groups, sizeof *advice);
    int *nadvice = calloc((size_t)groups, sizeof *nadvice), n = 0, rc = -1;
    glob_t *found = calloc((size_t)groups, sizeof *found);
    char err[2048];
    snprintf(err, sizeof err, "out of memory");
    if (advice == NULL || nadvice == NULL || found == NULL)
        goto done;
    int total = 0;
    for (int g = 0; g < groups; g++) {
        char pattern[PATH_MAX + 32];
        snprintf(pattern, sizeof pattern, "%s/group-%d-*.json", dir, g);
        int e = glob(pattern, 0, NULL, &found[g]);
        if (e != 0 && e != GLOB_NOMATCH)
            goto done;
        total += found[g].gl_pathc > 0 ? (int)found[g].gl_pathc : 1;
        nadvice[g] = log_advice(logs[g], &advice[g]);
    }
    in = calloc((size_t)total, sizeof *in);
    labels = calloc((size_t)total, sizeof *labels);
    patterns = calloc((size_t)groups, sizeof *patterns);
    if (in == NULL || labels == NULL || patterns == NULL)
        goto done;
    for (int g = 0; g < groups; g++) {
        size_t k = found[g].gl_pathc;
        for (size_t i = 0; i < (k > 0 ? k : 1); i++, n++) {
            if (k == 0) {
                if (asprintf(&patterns[g], "%s/group-%d-PID.json", dir, g) < 0)
                    goto done;
                in[n].report = patterns[g];
            } else {
                in[n].report = found[g].gl_pathv[i];
            }
            if (asprintf(&labels[n], "group %d, exit %d, log %s", g, r[g].status, logs[g]) < 0)
                goto done;
            in[n].label = labels[n];
            in[n].advice = (const char *const *)advice[g];
            in[n].nadvice = nadvice[g];
        }
    }
    struct cli_machine m = {0};
    rc = cli_page(html, in, n, true, &m, table, err, sizeof err);
done:
    if (rc != 0)
        fprintf(stderr, "numapin groups: --html %s: %s\n", html, err);
    else
        printf("page: %s\n", html);
    for (int g = 0; found != NULL && g < groups; g++)
        globfree(&found[g]);
    for (int g = 0; advice != NULL && g < groups; g++) {
        for (int i = 0; i < nadvice[g]; i++)
            free(advice[g][i]);
        free(advice[g]);
    }
    for (int i = 0; labels != NULL && i < n; i++)
        free(labels[i]);
    for (int g = 0; patterns != NULL && g < groups; g++)
        free(patterns[g]);
    free(found);
    free(advice);
    free(nadvice);
    free(labels);
    free(patterns);
    free(in);
    return rc;
}

/* Reports an earlier run left in dir: not to be mistaken for this run's. */
static void remove_old_reports(const char *dir)
{
    char pattern[PATH_MAX + 32];
    glob_t g;
    snprintf(pattern, sizeof pattern, "%s/group-*-*.json", dir);
    if (glob(pattern, 0, NULL, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; i++)
            unlink(g.gl_pathv[i]);
    globfree(&g);
}

int cli_groups(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"groups", required_argument, NULL, 'n'},
        {"agent", required_argument, NULL, 'a'},
        {"options", required_argument, NULL, 'o'},
        {"logs", required_argument, NULL, 'l'},
        {"html", required_argument, NULL, 'p'},
        {"no-java-flags", no_argument, NULL, 'J'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int groups = 0, c, java_flags = 1;
    char agent[PATH_MAX];
    argv[0] = "numapin groups"; /* how getopt names us in its messages */
    const char *opts = NULL, *dir = "numapin-groups-logs", *html = NULL;
    char *with_report = NULL, absdir[PATH_MAX - 64], real[PATH_MAX];
    default_agent(agent, sizeof agent);
    optind = 1;
    bool seen[256] = {false};
    /* "+": stop at the first non-option, the command. */
    while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
        if (cli_once("groups", usage, longopts, c, seen) != 0)
            return 2;
        switch (c) {
        case 'n':
            if ((c = cli_count("groups", usage, "groups", "a number", 1, NP_MAX_GROUPS, optarg,
                               &groups)) != 0)
                return c;
            break;
        case 'a': snprintf(agent, sizeof agent, "%s", optarg); break;
        case 'o': opts = optarg; break;
        case 'l': dir = optarg; break;
        case 'p': html = optarg; break;
        case 'J': java_flags = 0; break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    if (groups == 0 || optind >= argc) {
        fprintf(stderr, "numapin groups: %s\n%s", groups ? "no command given" : "--groups is required",
                usage);
        return 2;
    }
    if (access(agent, R_OK) != 0) {
        fprintf(stderr, "numapin groups: agent %s: %s (use --agent)\n", agent, strerror(errno));
        return 2;
    }
    if (already_loaded(argv + optind, agent))
        return 2;
    if (html != NULL && opts != NULL && strstr(opts, "report=") != NULL) {
        fprintf(stderr, "numapin groups: --html has each JVM write its report itself: leave "
                        "report= out of --options\n%s", usage);
        return 2;
    }
    const char *where = opts, *bad = opts != NULL ? bad_placeholder(opts) : NULL;
    for (int i = optind; bad == NULL && i < argc; i++)
        bad = bad_placeholder(where = argv[i]);
    if (bad != NULL) {
        size_t n = strcspn(bad, "}");
        return cli_usage_error("groups", usage,
                               "invalid placeholder '%.*s' in '%s': use {group} or {group+K}, K from 0 to %d",
                               (int)(n + (bad[n] == '}')), bad, where, MAX_GROUP_ADD);
    }
    if (make_dirs(dir) != 0) {
        fprintf(stderr, "numapin groups: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    if (html != NULL) {
        /* The agent's options are split at ',' and '=': the folder may have neither. */
        if (realpath(dir, real) == NULL || strlen(real) >= sizeof absdir ||
            strpbrk(real, ",= ") != NULL) {
            fprintf(stderr, "numapin groups: --html needs a --logs folder whose path has no ',', "
                            "'=' or space (the JVMs' report= option): %s\n", dir);
            return 2;
        }
        snprintf(absdir, sizeof absdir, "%s", real);
        if (asprintf(&with_report, "%s%sreport=%s/group-{group}-%%p.json", opts ? opts : "",
                     opts ? "," : "", absdir) < 0) {
            fprintf(stderr, "numapin groups: out of memory\n");
            return 1;
        }
        opts = with_report;
        dir = absdir;
        remove_old_reports(dir);
    }
    struct result *r = calloc((size_t)groups, sizeof *r);
    children = calloc((size_t)groups, sizeof *children);
    char (*logs)[PATH_MAX] = calloc((size_t)groups, sizeof *logs);
    if (r == NULL || children == NULL || logs == NULL) {
        fprintf(stderr, "numapin groups: out of memory\n");
        return 1;
    }
    char (*flags)[64] = calloc((size_t)groups, sizeof *flags);
    if (flags == NULL || (java_flags && group_flags(groups, opts, flags) != 0))
        java_flags = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int *reports = malloc((size_t)groups * sizeof *reports);
    if (reports == NULL) {
        fprintf(stderr, "numapin groups: out of memory\n");
        return 1;
    }
    fflush(NULL);
    for (int g = 0; g < groups; g++) {
        snprintf(logs[g], sizeof logs[g], "%s/group-%d.log", dir, g);
        int pipefd[2] = {-1, -1};
        if (pipe2(pipefd, O_CLOEXEC) != 0)
            pipefd[0] = pipefd[1] = -1; /* then only the exit status tells */
        reports[g] = pipefd[0];
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "numapin groups: fork: %s\n", strerror(errno));
            if (pipefd[0] >= 0) {
                close(pipefd[0]);
                close(pipefd[1]);
            }
            forward(SIGTERM);
            break;
        }
        if (pid == 0)
            run_child(g, groups, agent, opts, flags != NULL ? flags[g] : "", logs[g], argv + optind,
                      pipefd[1]);
        if (pipefd[1] >= 0)
            close(pipefd[1]);
        children[g] = pid;
        nchildren = g + 1;
    }
    reap(r);
    int ok = 1;
    for (int g = 0; g < nchildren; g++) {
        ok &= r[g].status == 0;
        read_log(logs[g], &r[g]);
        /* Every child has ended: what its pipe holds is all it said. */
        struct start_report rep = {START_OK, 0};
        if (reports[g] >= 0) {
            if (read(reports[g], &rep, sizeof rep) != (ssize_t)sizeof rep)
                rep = (struct start_report){START_OK, 0};
            close(reports[g]);
        }
        say_why_not_started(g, argv[optind], &rep, &r[g], logs[g]);
    }
    free(reports);
    /* The table, printed and kept for the page. */
    char *table = NULL;
    size_t table_len = 0;
    FILE *t = open_memstream(&table, &table_len);
    if (t != NULL)
        print_table(t, groups, r, dir);
    if (t == NULL || fclose(t) != 0) {
        free(table); /* out of memory: printed as it goes, and not on the page */
        table = NULL;
        print_table(stdout, groups, r, dir);
    } else {
        fputs(table, stdout);
    }
    if (html != NULL && write_page(html, dir, nchildren, r, logs, table) != 0)
        ok = 0;
    free(table);
    free(with_report);
    free(r);
    free(children);
    free(logs);
    free(flags);
    return ok && nchildren == groups && !forwarded ? 0 : 1;
}
