/* `numapin topo`: the machine as numapin sees it (describe.c). */
#include <stdio.h>

#include "cli.h"
#include "describe.h"

static const char usage[] =
    "usage: numapin topo " CLI_MACHINE_USAGE " [--json]\n"
    "The machine as numapin sees it: nodes, distances, packages, L3 domains, CPU kinds.\n"
    "--restrict CPUS: only these CPUs (cpulist, e.g. 0-7,16) may be used, as under a cgroup cpuset.\n";

int cli_topo(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_MACHINE_OPTIONS,
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int json = 0, c, rc;
    struct cli_machine m = {0};
    bool seen[256] = {false};
    argv[0] = "numapin topo"; /* for getopt's messages */
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if ((rc = cli_once("topo", usage, longopts, c, seen)) != 0)
            return rc;
        if (cli_machine_option(&m, c, optarg))
            continue;
        switch (c) {
        case 'j': json = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        default: return cli_usage_error("topo", usage, "takes only --topology, --synthetic, "
                                        "--restrict and --json");
        }
    }
    if (optind < argc)
        return cli_usage_error("topo", usage, "unexpected argument '%s'", argv[optind]);
    struct np_topo t;
    if ((rc = cli_machine_load("topo", usage, &m, &t)) != 0)
        return rc;
    if (json)
        np_describe_json(&t, stdout);
    else
        np_describe_text(&t, stdout);
    np_topo_destroy(&t);
    return 0;
}
