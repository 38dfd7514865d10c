/* `numapin plan`: how N JVM groups are placed on this machine (or on the
 * given topology).  The same core code as the agent, so what it prints is
 * what a JVM with groups=N would do. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "draw.h"
#include "np_cpulist.h"
#include "np_domains.h"
#include "np_json.h"
#include "np_plan.h"

static const char usage[] =
    "usage: numapin plan --groups N [--group G] [--cpus node|core|pu] [--domain node|package|l3]\n"
    "                    " CLI_MACHINE_USAGE " [--json | --java-flags] [--svg FILE]\n"
    "How N JVM groups are placed on this machine (or on the given topology).\n"
    "--java-flags (with --group G): the HotSpot flags that size group G's JVM to its CPUs,\n"
    "  on one line, for harnesses that start their own JVMs.\n"
    "--restrict CPUS: only these CPUs (cpulist, e.g. 0-7,16) may be used, as under a cgroup cpuset.\n"
    "--svg FILE: the machine drawn by lstopo (hwloc-nox), each group's CPUs in its colour.\n";

/* The machine drawn with each group in its colour (draw.c). */
static int draw_plan(const struct cli_machine *m, const struct np_topo *t, const struct np_plan *p,
                     const char *path)
{
    char err[1024], line[512];
    struct cli_draw d;
    if (cli_draw_open(&d, m, t, err, sizeof err) != 0) {
        fprintf(stderr, "numapin plan: --svg %s: %s\n", path, err);
        return 1;
    }
    int rc = 0;
    for (int g = 0; g < p->ngroups && rc == 0; g++)
        rc = cli_draw_group(&d, g, p->groups[g].cpus, p->groups[g].nodes, NULL);
    const char *src = strrchr(t->source, '/');
    snprintf(line, sizeof line, "numapin plan: %d group%s by %s, %s", p->ngroups,
             p->ngroups == 1 ? "" : "s", np_domain_name(p->kind), src ? src + 1 : t->source);
    if (rc == 0)
        rc = cli_draw_legend(&d, line);
    for (int i = 0; i < p->nwarnings && rc == 0; i++) {
        snprintf(line, sizeof line, "warning: %s", p->warnings[i].text);
        rc = cli_draw_legend(&d, line);
    }
    if (rc != 0)
        snprintf(err, sizeof err, "out of memory");
    else
        rc = cli_draw_write(&d, path, err, sizeof err);
    cli_draw_close(&d);
    if (rc != 0) {
        fprintf(stderr, "numapin plan: %s\n", err);
        return 1;
    }
    return 0;
}

static void print_table(const struct np_topo *t, const struct np_plan *p, int only,
                        enum np_cpus_mode mode)
{
    char summary[2048];
    np_topo_summary(t, summary, sizeof summary);
    printf("topology %s\n", summary);
    printf("%-6s %-10s %-8s %-6s %s\n", "group", "nodes", "slice", "slots", "cpus");
    for (int g = 0; g < p->ngroups; g++) {
        if (only >= 0 && g != only)
            continue;
        const struct np_group_plan *gp = &p->groups[g];
        hwloc_bitmap_t *slots;
        int nslots = np_slots(t, gp->cpus, mode, &slots);
        char *cpus = np_cpulist_dup(gp->cpus), *nodes = np_cpulist_dup(gp->nodes), slice[32];
        snprintf(slice, sizeof slice, "%d/%d", gp->slice + 1, gp->nslices);
        printf("%-6d %-10s %-8s %-6d %s\n", g, nodes ? nodes : "?", slice, nslots,
               cpus ? cpus : "?");
        free(cpus);
        free(nodes);
        if (nslots > 0)
            np_slots_free(slots, nslots);
    }
    for (int i = 0; i < p->nwarnings; i++) {
        const struct np_warning *w = &p->warnings[i];
        if (only < 0 || (only >= w->first_group && only <= w->last_group))
            printf("warning: %s\n", w->text);
    }
}

/* The plan as JSON: {"groups": [{"group": 0, "nodes": [0], "cpus": "0-3"}, ...],
 * "warnings": [...]}, a line per group and per warning. */
static void print_json(const struct np_plan *p, FILE *out)
{
    struct np_json j;
    np_json_start(&j, out);
    np_json_open(&j, NULL, '{', true);
    np_json_open(&j, "groups", '[', true);
    for (int g = 0; g < p->ngroups; g++) {
        const struct np_group_plan *gp = &p->groups[g];
        char *cpus = np_cpulist_dup(gp->cpus);
        np_json_open(&j, NULL, '{', false);
        np_json_int(&j, "group", gp->group);
        np_json_open(&j, "nodes", '[', false);
        int n;
        NP_FOREACH(n, gp->nodes)
            np_json_int(&j, NULL, n);
        np_json_close(&j);
        np_json_str(&j, "cpus", cpus);
        np_json_close(&j);
        free(cpus);
    }
    np_json_close(&j);
    np_json_open(&j, "warnings", '[', true);
    for (int i = 0; i < p->nwarnings; i++)
        np_json_str(&j, NULL, p->warnings[i].text);
    np_json_close(&j);
    np_json_close(&j);
}

int cli_plan(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"groups", required_argument, NULL, 'n'},
        {"group", required_argument, NULL, 'g'},
        {"cpus", required_argument, NULL, 'c'},
        {"domain", required_argument, NULL, 'd'},
        CLI_MACHINE_OPTIONS,
        {"json", no_argument, NULL, 'j'},
        {"svg", required_argument, NULL, 'v'},
        {"java-flags", no_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int groups = 0, group = -1, json = 0, flags = 0, mode = NP_CPUS_NODE, domain = NP_DOMAIN_NODE, c, rc;
    struct cli_machine m = {0};
    bool seen[256] = {false};
    const char *svg = NULL;
    argv[0] = "numapin plan"; /* for getopt's messages */
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if ((rc = cli_once("plan", usage, longopts, c, seen)) != 0)
            return rc;
        if (cli_machine_option(&m, c, optarg))
            continue;
        switch (c) {
        case 'n':
            if ((rc = cli_count("plan", usage, "groups", "a number", 1, NP_MAX_GROUPS, optarg,
                                &groups)) != 0)
                return rc;
            break;
        case 'g':
            if ((rc = cli_count("plan", usage, "group", "a group index", 0, NP_MAX_GROUPS - 1,
                                optarg, &group)) != 0)
                return rc;
            break;
        case 'c':
            if ((rc = cli_mode("plan", usage, "cpus", &np_cpus_mode_names, optarg, &mode)) != 0)
                return rc;
            break;
        case 'd':
            if ((rc = cli_mode("plan", usage, "domain", &np_domain_names, optarg, &domain)) != 0)
                return rc;
            break;
        case 'j': json = 1; break;
        case 'v': svg = optarg; break;
        case 'f': flags = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        default: return cli_usage_error("plan", usage, "invalid arguments");
        }
    }
    if (optind < argc)
        return cli_usage_error("plan", usage, "unexpected argument '%s'", argv[optind]);
    if (flags && json)
        return cli_usage_error("plan", usage, "--json and --java-flags exclude each other");
    if (flags && group < 0)
        return cli_usage_error("plan", usage, "--java-flags needs --group G: the flags are one group's");

    char err[1024];
    if (svg != NULL && m.xml != NULL && cli_not_input(svg, m.xml, err, sizeof err) != 0) {
        fprintf(stderr, "numapin plan: --svg: %s\n", err);
        return 1;
    }
    struct np_topo t;
    if ((rc = cli_machine_load("plan", usage, &m, &t)) != 0)
        return rc;
    if (groups == 0) {
        struct np_domains d;
        if (np_domains_get(&t, (enum np_domain)domain, &d) != 0) {
            fprintf(stderr, "numapin: this machine has no %s with usable CPUs\n",
                    np_domain_name((enum np_domain)domain));
            np_topo_destroy(&t);
            return 1;
        }
        groups = d.n;
        np_domains_free(&d);
    }
    if (group >= groups) {
        fprintf(stderr, "numapin: --group %d is out of range: valid values are 0 to %d\n", group,
                groups - 1);
        np_topo_destroy(&t);
        return 2;
    }
    struct np_plan p;
    if (np_plan_build(&t, groups, (enum np_domain)domain, &p) != 0) {
        if (errno == ENOENT)
            fprintf(stderr, "numapin: this machine has no %s with usable CPUs\n",
                    np_domain_name((enum np_domain)domain));
        else
            fprintf(stderr, "numapin: cannot plan %d groups: %s\n", groups, strerror(errno));
        np_topo_destroy(&t);
        return 1;
    }
    if (svg != NULL && draw_plan(&m, &t, &p, svg) != 0) {
        np_plan_free(&p);
        np_topo_destroy(&t);
        return 1;
    }
    if (flags) {
        char line[128];
        cli_java_flags(hwloc_bitmap_weight(p.groups[group].cpus), line, sizeof line);
        printf("%s\n", line);
    } else if (json) {
        print_json(&p, stdout);
    } else {
        print_table(&t, &p, group, (enum np_cpus_mode)mode);
    }
    np_plan_free(&p);
    np_topo_destroy(&t);
    return 0;
}
