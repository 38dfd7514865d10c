#define _GNU_SOURCE
#include "jvmview.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "np_cpulist.h"
#include "np_domains.h"

/* A /proc file whole (they have no size), NUL-terminated; NULL when
 * unreadable. */
static char *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *buf;
    int rc = cli_read_fd(fd, 0, 64u << 20, &buf, len);
    close(fd);
    return rc == 0 ? buf : NULL;
}

/* One argument: the options of numapin's agent when it is one. */
static int agent_arg(const char *a, size_t n, char *out, size_t outlen)
{
    const char *opts = NULL;
    if (n > 11 && strncmp(a, "-agentpath:", 11) == 0) {
        const char *lib = a + 11;
        const char *eq = memchr(lib, '=', n - 11);
        size_t lib_len = eq != NULL ? (size_t)(eq - lib) : n - 11;
        const char *base = lib;
        for (const char *p = lib; p < lib + lib_len; p++)
            if (*p == '/')
                base = p + 1;
        if (memmem(base, (size_t)(lib + lib_len - base), "numapin", 7) == NULL)
            return 0;
        opts = eq != NULL ? eq + 1 : a + n;
    } else if (n >= 17 && strncmp(a, "-agentlib:numapin", 17) == 0 && (n == 17 || a[17] == '=')) {
        opts = n > 17 ? a + 18 : a + n;
    } else {
        return 0;
    }
    snprintf(out, outlen, "%.*s", (int)(a + n - opts), opts);
    return 1;
}

int cli_jvm_find_agent(const char *args, size_t len, char sep, char *out, size_t outlen)
{
    out[0] = '\0';
    for (size_t i = 0; i < len;) {
        while (i < len && (args[i] == sep || (sep == ' ' && (args[i] == '\t' || args[i] == '\n'))))
            i++;
        size_t j = i;
        while (j < len && args[j] != sep && args[j] != '\0' &&
               !(sep == ' ' && (args[j] == '\t' || args[j] == '\n')))
            j++;
        if (j > i && agent_arg(args + i, j - i, out, outlen))
            return 1;
        i = j + 1;
    }
    return 0;
}

/* The agent's options from the process's arguments or environment. */
static void find_options(struct cli_jvm *j, pid_t pid, char *opts, size_t len)
{
    char path[64];
    size_t n;
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    char *text = slurp(path, &n);
    if (text != NULL && cli_jvm_find_agent(text, n, '\0', opts, len)) {
        j->have_agent = true;
        snprintf(j->agent_from, sizeof j->agent_from, "command line");
    }
    free(text);
    if (j->have_agent)
        return;
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    if ((text = slurp(path, &n)) == NULL)
        return;
    static const char *const vars[] = {"JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"};
    for (size_t v = 0; v < sizeof vars / sizeof *vars && !j->have_agent; v++) {
        size_t vl = strlen(vars[v]);
        for (size_t i = 0; i < n && !j->have_agent; i += strlen(text + i) + 1) {
            const char *e = text + i;
            if (strncmp(e, vars[v], vl) == 0 && e[vl] == '=' &&
                cli_jvm_find_agent(e + vl + 1, strlen(e + vl + 1), ' ', opts, len)) {
                j->have_agent = true;
                snprintf(j->agent_from, sizeof j->agent_from, "%s", vars[v]);
            }
        }
    }
    free(text);
}

/* The plan group holding the CPUs most tier threads are bound to, when
 * they are bound to fewer than all CPUs. */
static int infer_group(const struct cli_jvm *j, const struct np_topo *t, const struct np_inspect *s)
{
    int best = -1, best_votes = 0;
    int *votes = calloc((size_t)j->plan.ngroups, sizeof *votes);
    if (votes == NULL)
        return -1;
    for (int i = 0; i < s->nthreads; i++) {
        const struct np_seen *th = &s->threads[i];
        if (cli_jvm_kind(j, th->name) != CLI_TIER || hwloc_bitmap_isincluded(t->allowed, th->cpus))
            continue;
        for (int g = 0; g < j->plan.ngroups; g++)
            if (hwloc_bitmap_isincluded(th->cpus, j->plan.groups[g].cpus)) {
                votes[g]++;
                break;
            }
    }
    for (int g = 0; g < j->plan.ngroups; g++)
        if (votes[g] > best_votes) {
            best = g;
            best_votes = votes[g];
        }
    free(votes);
    return best;
}

int cli_jvm_open(struct cli_jvm *j, const struct np_topo *t, const struct np_inspect *seen,
                 const struct np_globs *tier)
{
    memset(j, 0, sizeof *j);
    j->group = -1;
    char opts[NP_MAX_OPTIONS_LEN], err[1024];
    opts[0] = '\0';
    find_options(j, seen->pid, opts, sizeof opts);
    j->options_ok = np_options_parse(j->have_agent ? opts : "", &j->opt, err, sizeof err) == 0;
    if (!j->options_ok) {
        np_options_free(&j->opt);
        memset(&j->opt, 0, sizeof j->opt);
        if (np_options_parse("", &j->opt, err, sizeof err) != 0)
            return -1;
    }
    if (np_globs_parse(tier != NULL ? tier->text : j->opt.threads.text, &j->tier) != 0 ||
        np_globs_parse(CLI_JVM_THREADS, &j->own) != 0)
        return -1;
    if (!j->have_agent || !j->options_ok)
        return 0;
    int groups = j->opt.groups;
    if (groups == 0) { /* as the agent: one group a domain */
        struct np_domains d;
        if (np_domains_get(t, j->opt.domain, &d) != 0)
            return 0;
        groups = d.n;
        np_domains_free(&d);
    }
    if (np_plan_build(t, groups, j->opt.domain, &j->plan) != 0)
        return errno == ENOMEM ? -1 : 0;
    j->have_plan = true;
    if (j->opt.group >= 0 && j->opt.group < j->plan.ngroups) {
        j->group = j->opt.group;
    } else {
        j->group = infer_group(j, t, seen);
        j->group_inferred = j->group >= 0;
    }
    return 0;
}

void cli_jvm_close(struct cli_jvm *j)
{
    np_options_free(&j->opt);
    if (j->have_plan)
        np_plan_free(&j->plan);
    np_globs_free(&j->tier);
    np_globs_free(&j->own);
    memset(j, 0, sizeof *j);
    j->group = -1;
}

enum cli_kind cli_jvm_kind(const struct cli_jvm *j, const char *name)
{
    if (np_globs_match(&j->tier, name))
        return CLI_TIER;
    return np_globs_match(&j->own, name) ? CLI_JVM_OWN : CLI_OTHER;
}

hwloc_const_bitmap_t cli_jvm_nodes(const struct cli_jvm *j)
{
    return j->have_plan && j->group >= 0 ? j->plan.groups[j->group].nodes : NULL;
}

void cli_jvm_describe(const struct cli_jvm *j, char *buf, size_t len)
{
    if (!j->have_agent) {
        snprintf(buf, len, "no numapin agent in its command line or JAVA_TOOL_OPTIONS");
        return;
    }
    if (!j->options_ok || !j->have_plan) {
        snprintf(buf, len, "numapin agent (%s), options not understood here", j->agent_from);
        return;
    }
    if (j->group < 0) {
        snprintf(buf, len, "group %s of %d (%s), not yet known: no tier thread placed",
                 j->opt.group == NP_GROUP_AUTO ? "auto" : "?", j->plan.ngroups, j->agent_from);
        return;
    }
    char cpus[512], nodes[128];
    const struct np_group_plan *g = &j->plan.groups[j->group];
    np_cpulist(cpus, sizeof cpus, g->cpus);
    np_cpulist(nodes, sizeof nodes, g->nodes);
    snprintf(buf, len, "group %d of %d%s: nodes %s, CPUs %s, domain %s", j->group, j->plan.ngroups,
             j->group_inferred ? " (auto)" : "", nodes[0] ? nodes : "none", cpus,
             np_domain_name(j->plan.kind));
}
