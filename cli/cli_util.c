#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "np_cpulist.h"
#include "np_options.h"
#include "np_plan.h"

int cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "numapin %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n%s", usage);
    return 2;
}

int cli_mode(const char *cmd, const char *usage, const char *opt, const struct np_names *names,
             const char *v, int *out)
{
    int x = np_names_find(names, v);
    if (x >= 0) {
        *out = x;
        return 0;
    }
    char valid[256];
    return cli_usage_error(cmd, usage, "--%s takes %s, not '%s'", opt,
                           np_names_list(names, 1, valid, sizeof valid), v);
}

int cli_count(const char *cmd, const char *usage, const char *opt, const char *what, long min,
              long max, const char *v, int *out)
{
    if (np_parse_int(v, min, max, out) == 0)
        return 0;
    return cli_usage_error(cmd, usage, "--%s takes %s from %ld to %ld, not '%s'", opt, what, min,
                           max, v);
}

int cli_machine_option(struct cli_machine *m, int c, const char *arg)
{
    switch (c) {
    case 't': m->xml = arg; return 1;
    case 's': m->synthetic = arg; return 1;
    case 'r': m->restrict_cpus = arg; return 1;
    default: return 0;
    }
}

int cli_machine_load(const char *cmd, const char *usage, const struct cli_machine *m,
                     struct np_topo *t)
{
    char err[1024];
    if (m->xml != NULL && m->synthetic != NULL)
        return cli_usage_error(cmd, usage, "--topology and --synthetic exclude each other");
    hwloc_bitmap_t set = NULL;
    if (m->restrict_cpus != NULL) {
        /* CPU numbers up to 2^20 - 1: far beyond any Linux NR_CPUS, and no
         * number that wraps around or range that never ends. */
        set = hwloc_bitmap_alloc();
        if (set == NULL || np_parse_list(m->restrict_cpus, ',', (1u << 20) - 1, set) != 0) {
            hwloc_bitmap_free(set);
            return cli_usage_error(cmd, usage, "--restrict takes a CPU list such as 0-7,16, not '%s'",
                                   m->restrict_cpus);
        }
    }
    if (np_topo_load(t, m->xml, m->synthetic, err, sizeof err) != 0) {
        fprintf(stderr, "numapin: %s\n", err);
        hwloc_bitmap_free(set);
        return 1;
    }
    if (set != NULL && np_topo_restrict(t, set, err, sizeof err) != 0) {
        fprintf(stderr, "numapin: --restrict %s: %s\n", m->restrict_cpus, err);
        hwloc_bitmap_free(set);
        np_topo_destroy(t);
        return 1;
    }
    hwloc_bitmap_free(set);
    return 0;
}

int cli_exe_dir(pid_t pid, char *buf, size_t len)
{
    char link[64], exe[PATH_MAX];
    if (pid == 0)
        snprintf(link, sizeof link, "/proc/self/exe");
    else
        snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(link, exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL || (size_t)(slash - exe) >= len)
        return -1;
    *slash = '\0';
    snprintf(buf, len, "%s", exe);
    return 0;
}

void cli_java_flags(int cpus, char *buf, size_t len)
{
    snprintf(buf, len, "-XX:ActiveProcessorCount=%d", cpus);
}

int cli_group_cpus(int groups, const char *options, int *cpus, char *err, size_t errlen)
{
    struct np_options o;
    if (np_options_parse(options, &o, err, errlen) != 0) {
        np_options_free(&o);
        return -1;
    }
    enum np_domain domain = o.domain;
    np_options_free(&o);
    struct np_topo t;
    if (np_topo_load(&t, NULL, NULL, err, errlen) != 0)
        return -1;
    struct np_plan p;
    int rc = np_plan_build(&t, groups, domain, &p);
    if (rc != 0) {
        snprintf(err, errlen, "cannot plan %d groups: %s", groups,
                 errno == ENOENT ? "this machine has no such domain with usable CPUs" : strerror(errno));
    } else {
        for (int g = 0; g < groups; g++)
            cpus[g] = hwloc_bitmap_weight(p.groups[g].cpus);
        np_plan_free(&p);
    }
    np_topo_destroy(&t);
    return rc;
}
