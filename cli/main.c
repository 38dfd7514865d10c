/* numapin: the command-line tool.
 *
 *   numapin plan --groups N [...]          how N JVM groups are placed (plan.c)
 *   numapin topo [...]                     the machine as numapin sees it (topo.c)
 *   numapin check PID [...]                a running JVM's threads (check.c)
 *   numapin groups --groups N -- CMD ...   N JVM groups at once (groups.c)
 *   numapin report REPORT.json --html OUT  a page for a run (report.c)
 *
 * One file a command, each over the core and cli_util.c. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: numapin plan --groups N [--group G] [--cpus node|core|pu] [--domain node|package|l3]\n"
    "                    " CLI_MACHINE_USAGE " [--json] [--svg FILE]\n"
    "       numapin topo " CLI_MACHINE_USAGE " [--json]\n"
    "       numapin groups --groups N [--agent LIB] [--options OPTS] [--logs DIR] [--html OUT.html]\n"
    "                      -- CMD ARGS...\n"
    "       numapin check PID [--threads GLOB|GLOB...] [--json] [--jcmd PATH | --kernel-names]\n"
    "                         [--svg FILE] [--watch [SECONDS] [--count N]]\n"
    "       numapin report REPORT.json [REPORT.json...] --html OUT.html " CLI_MACHINE_USAGE "\n"
    "       numapin help | --version\n"
    "plan: how N JVM groups are placed on this machine (or on the given topology).\n"
    "topo: the machine as numapin sees it.\n"
    "groups: runs a command as N JVM groups at once and merges their results.\n"
    "check: where the threads of a running process (a JVM) may run and last ran, by name;\n"
    "       --svg draws it on the machine, --watch shows it live.\n"
    "report: one HTML page for the JSON reports of a run (report=FILE).\n"
    "--svg FILE: the machine drawn by lstopo-no-graphics (hwloc-nox), each group in its colour.\n"
    "--restrict CPUS: only these CPUs (cpulist, e.g. 0-7,16) may be used, as under a cgroup cpuset.\n"
    "`numapin COMMAND --help` tells more.\n";

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"plan", cli_plan},
    {"topo", cli_topo},
    {"groups", cli_groups},
    {"check", cli_check},
    {"report", cli_report},
};

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
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "numapin: unknown command '%s'\n%s", argv[1], usage);
    return 2;
}
