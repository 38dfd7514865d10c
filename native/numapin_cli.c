/* numapin: the command-line tool.
 *
 *   numapin plan --groups N [--group G] [--cpus node|core|pu]
 *                [--topology FILE.xml | --synthetic DESC] [--json]
 *   numapin topo [--topology FILE.xml | --synthetic DESC] [--json]
 *   numapin groups --groups N [...] -- CMD ARGS...   (numapin_groups.c)
 *   numapin check PID [--threads GLOBS] [--json] [...] (numapin_check.c)
 *
 * `plan` prints the plan numapin's agent would follow on this machine (or
 * on the given topology): the same library code, so what it prints is what
 * a JVM with groups=N would do.  `topo` prints the machine as numapin sees
 * it. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_describe.h"
#include "np_plan.h"
#include "numapin_check.h"
#include "numapin_groups.h"
#include "np_topo.h"

static const char usage[] =
    "usage: numapin plan --groups N [--group G] [--cpus node|core|pu] [--domain node|package|l3]\n"
    "                    [--topology FILE.xml | --synthetic DESC] [--restrict CPUS] [--json]\n"
    "       numapin topo [--topology FILE.xml | --synthetic DESC] [--restrict CPUS] [--json]\n"
    "       numapin groups --groups N [--agent LIB] [--options OPTS] [--logs DIR] -- CMD ARGS...\n"
    "       numapin check PID [--threads GLOB|GLOB...] [--json] [--jcmd PATH | --kernel-names]\n"
    "       numapin help | --version\n"
    "plan: how N JVM groups are placed on this machine (or on the given topology).\n"
    "topo: the machine as numapin sees it.\n"
    "check: where the threads of a running process (a JVM) may run and last ran, by name.\n"
    "--restrict CPUS: only these CPUs (cpulist, e.g. 0-7,16) may be used, as under a cgroup cpuset.\n";

static int die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int die_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "numapin: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n%s", usage);
    return 2;
}

static int parse_count(const char *s, int min, int max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s < '0' || *s > '9' || errno != 0 || *end != '\0' || v < min || v > max)
        return -1;
    *out = (int)v;
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
        char *cpus = NULL, *nodes = NULL, slice[32];
        if (hwloc_bitmap_list_asprintf(&cpus, gp->cpus) < 0)
            cpus = NULL;
        if (hwloc_bitmap_list_asprintf(&nodes, gp->nodes) < 0)
            nodes = NULL;
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

/* `plan` and `topo` share their options; topo takes no group options. */
static int cmd(int argc, char **argv, int is_topo)
{
    static const struct option longopts[] = {
        {"groups", required_argument, NULL, 'n'},
        {"group", required_argument, NULL, 'g'},
        {"cpus", required_argument, NULL, 'c'},
        {"domain", required_argument, NULL, 'd'},
        {"topology", required_argument, NULL, 't'},
        {"synthetic", required_argument, NULL, 's'},
        {"restrict", required_argument, NULL, 'r'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int groups = 0, group = -1, json = 0;
    enum np_cpus_mode mode = NP_CPUS_NODE;
    enum np_domain domain = NP_DOMAIN_NODE;
    const char *xml = NULL, *synthetic = NULL, *restrict_to = NULL;
    int c;
    argv[0] = is_topo ? "numapin topo" : "numapin plan"; /* for getopt's messages */
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (is_topo && (c == 'n' || c == 'g' || c == 'c' || c == 'd'))
            return die_usage("topo takes only --topology, --synthetic, --restrict and --json");
        switch (c) {
        case 'n':
            if (parse_count(optarg, 1, NP_MAX_GROUPS, &groups) != 0)
                return die_usage("--groups takes a number from 1 to 4096, not '%s'", optarg);
            break;
        case 'g':
            if (parse_count(optarg, 0, NP_MAX_GROUPS - 1, &group) != 0)
                return die_usage("--group takes a group index from 0, not '%s'", optarg);
            break;
        case 'c':
            if (strcmp(optarg, "node") == 0)
                mode = NP_CPUS_NODE;
            else if (strcmp(optarg, "core") == 0)
                mode = NP_CPUS_CORE;
            else if (strcmp(optarg, "pu") == 0)
                mode = NP_CPUS_PU;
            else
                return die_usage("--cpus takes node, core or pu, not '%s'", optarg);
            break;
        case 'd':
            if (strcmp(optarg, "node") == 0)
                domain = NP_DOMAIN_NODE;
            else if (strcmp(optarg, "package") == 0)
                domain = NP_DOMAIN_PACKAGE;
            else if (strcmp(optarg, "l3") == 0)
                domain = NP_DOMAIN_L3;
            else
                return die_usage("--domain takes node, package or l3, not '%s'", optarg);
            break;
        case 'r': restrict_to = optarg; break;
        case 't': xml = optarg; break;
        case 's': synthetic = optarg; break;
        case 'j': json = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        default: return die_usage("invalid arguments");
        }
    }
    if (optind < argc)
        return die_usage("unexpected argument '%s'", argv[optind]);
    if (xml != NULL && synthetic != NULL)
        return die_usage("--topology and --synthetic exclude each other");

    struct np_topo t;
    char err[1024];
    if (np_topo_load(&t, xml, synthetic, err, sizeof err) != 0) {
        fprintf(stderr, "numapin: %s\n", err);
        return 1;
    }
    if (restrict_to != NULL) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        /* CPU numbers up to 2^20 - 1: far beyond any Linux NR_CPUS, and no
         * number that wraps around or range that never ends. */
        int bad = set == NULL || np_parse_list(restrict_to, ',', (1u << 20) - 1, set) != 0;
        if (!bad && np_topo_restrict(&t, set, err, sizeof err) != 0) {
            fprintf(stderr, "numapin: --restrict %s: %s\n", restrict_to, err);
            hwloc_bitmap_free(set);
            np_topo_destroy(&t);
            return 1;
        }
        hwloc_bitmap_free(set);
        if (bad) {
            np_topo_destroy(&t);
            return die_usage("--restrict takes a CPU list such as 0-7,16, not '%s'", restrict_to);
        }
    }
    if (is_topo) {
        if (json)
            np_describe_json(&t, stdout);
        else
            np_describe_text(&t, stdout);
        np_topo_destroy(&t);
        return 0;
    }
    if (groups == 0) {
        struct np_domains d;
        if (np_domains_get(&t, domain, &d) != 0) {
            fprintf(stderr, "numapin: this machine has no %s with usable CPUs\n",
                    np_domain_name(domain));
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
    if (np_plan_build(&t, groups, domain, &p) != 0) {
        if (errno == ENOENT)
            fprintf(stderr, "numapin: this machine has no %s with usable CPUs\n",
                    np_domain_name(domain));
        else
            fprintf(stderr, "numapin: cannot plan %d groups: %s\n", groups, strerror(errno));
        np_topo_destroy(&t);
        return 1;
    }
    if (json)
        np_plan_json(&p, stdout);
    else
        print_table(&t, &p, group, mode);
    np_plan_free(&p);
    np_topo_destroy(&t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("numapin %s\n", NP_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "plan") == 0)
        return cmd(argc - 1, argv + 1, 0);
    if (strcmp(argv[1], "topo") == 0)
        return cmd(argc - 1, argv + 1, 1);
    if (strcmp(argv[1], "groups") == 0)
        return numapin_groups(argc - 1, argv + 1);
    if (strcmp(argv[1], "check") == 0)
        return numapin_check(argc - 1, argv + 1);
    return die_usage("unknown command '%s'", argv[1]);
}
