/* `numapin groups`: runs one command as N JVM groups and merges the results.
 *
 *   numapin groups --groups N [--agent LIB] [--options OPTS] [--logs DIR] -- CMD ARGS...
 *
 * Starts N copies of CMD at once.  Copy i gets, in its environment,
 * JAVA_TOOL_OPTIONS with -agentpath:LIB=group=i,groups=N[,OPTS] appended
 * (so every JVM it starts loads numapin as group i), NUMAPIN_GROUP=i and
 * NUMAPIN_GROUPS=N; "{group}" in its arguments and in OPTS becomes i.  Its output goes
 * to DIR/group-i.log.  When all have exited, it prints one table: per group
 * the exit status, numapin's summary (placed threads, CPUs) and the fields
 * of the last "result key=value ..." line the program printed, then totals
 * (sums; for keys ending in _ms, the worst group).  Exit status: 0 when
 * every group exited 0. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

#define MAX_KEYS 32

struct result {
    int status;            /* exit status, or 128+signal */
    char summary[256];     /* placed=.. cpus=.. from numapin's summary line */
    int nkeys;
    char keys[MAX_KEYS][32];
    double values[MAX_KEYS];
};

static volatile sig_atomic_t forwarded;
static pid_t *children;
static int nchildren;

static void forward(int sig)
{
    forwarded = sig;
    for (int i = 0; i < nchildren; i++)
        if (children[i] > 0)
            kill(children[i], sig);
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

/* arg with every "{group}" replaced by the group number. */
static char *replace_group(const char *arg, int group)
{
    static const char key[] = "{group}";
    const size_t klen = sizeof key - 1;
    char num[16];
    size_t nlen = (size_t)snprintf(num, sizeof num, "%d", group);
    size_t len = 0;
    for (const char *p = arg; *p != '\0';) {
        if (strncmp(p, key, klen) == 0) {
            len += nlen;
            p += klen;
        } else {
            len++;
            p++;
        }
    }
    char *out = malloc(len + 1), *o = out;
    if (out == NULL)
        return NULL;
    for (const char *p = arg; *p != '\0';) {
        if (strncmp(p, key, klen) == 0) {
            memcpy(o, num, nlen);
            o += nlen;
            p += klen;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    return out;
}

/* In the child: environment, output, exec.  Never returns.  java_flags:
 * the HotSpot flags that fit the group ("" for none), before the agent. */
static void run_child(int group, int groups, const char *agent, const char *opts,
                      const char *java_flags, const char *log, char **cmd)
{
    const char *old = getenv("JAVA_TOOL_OPTIONS");
    char *jto = NULL, num[16];
    char *gopts = opts ? replace_group(opts, group) : NULL;
    if (asprintf(&jto, "%s%s%s%s-agentpath:%s=group=%d,groups=%d%s%s", old ? old : "",
                 old && *old ? " " : "", java_flags, *java_flags ? " " : "", agent, group, groups,
                 gopts ? "," : "", gopts ? gopts : "") < 0)
        _exit(127);
    setenv("JAVA_TOOL_OPTIONS", jto, 1);
    snprintf(num, sizeof num, "%d", group);
    setenv("NUMAPIN_GROUP", num, 1);
    snprintf(num, sizeof num, "%d", groups);
    setenv("NUMAPIN_GROUPS", num, 1);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(stderr, "numapin groups: cannot write %s: %s\n", log, strerror(errno));
        _exit(127);
    }
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    int n = 0;
    while (cmd[n] != NULL)
        n++;
    char **argv = calloc((size_t)n + 1, sizeof *argv);
    for (int i = 0; argv != NULL && i < n; i++)
        argv[i] = replace_group(cmd[i], group);
    if (argv == NULL)
        _exit(127);
    execvp(argv[0], argv);
    fprintf(stderr, "numapin groups: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
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
            const char *placed = strstr(s, " placed=");
            const char *cpus = strstr(s, " cpus=");
            snprintf(r->summary, sizeof r->summary, "%.*s%s",
                     placed ? (int)strcspn(placed + 1, " ") + 1 : 0, placed ? placed : "",
                     cpus ? cpus : "");
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

static void print_table(int groups, const struct result *r, const char *dir)
{
    /* Columns: the keys of the first group that printed a result. */
    const struct result *keys = NULL;
    for (int g = 0; g < groups && keys == NULL; g++)
        if (r[g].nkeys > 0)
            keys = &r[g];
    printf("%-6s %-6s", "group", "exit");
    for (int k = 0; keys && k < keys->nkeys; k++)
        printf(" %12s", keys->keys[k]);
    printf("  numapin\n");
    double total[MAX_KEYS] = {0};
    for (int g = 0; g < groups; g++) {
        printf("%-6d %-6d", g, r[g].status);
        for (int k = 0; keys && k < keys->nkeys; k++) {
            double v = 0;
            int found = 0;
            for (int j = 0; j < r[g].nkeys; j++)
                if (strcmp(r[g].keys[j], keys->keys[k]) == 0) {
                    v = r[g].values[j];
                    found = 1;
                }
            if (found)
                printf(" %12.2f", v);
            else
                printf(" %12s", "-");
            if (is_latency(keys->keys[k]))
                total[k] = v > total[k] ? v : total[k];
            else
                total[k] += v;
        }
        printf("  %s\n", r[g].summary[0] ? r[g].summary + (r[g].summary[0] == ' ') : "(no summary)");
    }
    if (keys != NULL) {
        printf("%-6s %-6s", "total", "");
        for (int k = 0; k < keys->nkeys; k++)
            printf(" %12.2f", total[k]);
        printf("  (sums; worst group for *_ms)\n");
    }
    printf("logs: %s/group-N.log\n", dir);
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
    "usage: numapin groups --groups N [--agent LIB] [--options OPTS] [--logs DIR] [--no-java-flags]\n"
    "                      -- CMD ARGS...\n"
    "Runs CMD as N JVM groups at once: copy i gets -agentpath:LIB=group=i,groups=N[,OPTS]\n"
    "in JAVA_TOOL_OPTIONS, NUMAPIN_GROUP=i and NUMAPIN_GROUPS=N in its environment, and {group}\n"
    "in its arguments replaced by i.  JAVA_TOOL_OPTIONS also gets -XX:ActiveProcessorCount=C,\n"
    "C the group's CPUs, which sizes the JVM's GC and JIT threads to its group;\n"
    "--no-java-flags leaves it out.\n";

int cli_groups(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"groups", required_argument, NULL, 'n'},
        {"agent", required_argument, NULL, 'a'},
        {"options", required_argument, NULL, 'o'},
        {"logs", required_argument, NULL, 'l'},
        {"no-java-flags", no_argument, NULL, 'J'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int groups = 0, c, java_flags = 1;
    char agent[PATH_MAX];
    argv[0] = "numapin groups"; /* how getopt names us in its messages */
    const char *opts = NULL, *dir = "numapin-groups-logs";
    default_agent(agent, sizeof agent);
    optind = 1;
    /* "+": stop at the first non-option, the command. */
    while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if ((c = cli_count("groups", usage, "groups", "a number", 1, NP_MAX_GROUPS, optarg,
                               &groups)) != 0)
                return c;
            break;
        case 'a': snprintf(agent, sizeof agent, "%s", optarg); break;
        case 'o': opts = optarg; break;
        case 'l': dir = optarg; break;
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
    if (make_dirs(dir) != 0) {
        fprintf(stderr, "numapin groups: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
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
    fflush(NULL);
    for (int g = 0; g < groups; g++) {
        snprintf(logs[g], sizeof logs[g], "%s/group-%d.log", dir, g);
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "numapin groups: fork: %s\n", strerror(errno));
            forward(SIGTERM);
            break;
        }
        if (pid == 0)
            run_child(g, groups, agent, opts, flags != NULL ? flags[g] : "", logs[g], argv + optind);
        children[g] = pid;
        nchildren = g + 1;
    }
    int ok = 1;
    for (int g = 0; g < nchildren; g++) {
        int st;
        while (waitpid(children[g], &st, 0) < 0 && errno == EINTR)
            ;
        r[g].status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        ok &= r[g].status == 0;
        read_log(logs[g], &r[g]);
    }
    print_table(groups, r, dir);
    free(r);
    free(children);
    free(logs);
    free(flags);
    return ok && nchildren == groups && !forwarded ? 0 : 1;
}
