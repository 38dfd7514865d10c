/* `numapin check PID --svg FILE`: a running JVM drawn on the machine. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "jvmview.h"
#include "np_cpulist.h"

/* How many names of other threads the legend lists before counting. */
#define OTHER_NAMES 6

int cli_jvm_svg(const struct np_topo *t, const struct np_inspect *seen, const struct cli_jvm *j,
                const char *path, char *err, size_t errlen)
{
    struct cli_draw d;
    if (cli_draw_open(&d, NULL, t, err, errlen) != 0)
        return -1;
    char line[2048], cpus[1024], nodes[256];
    int rc = 0;
    for (int g = 0; j->have_plan && g < j->plan.ngroups && rc == 0; g++) {
        const struct np_group_plan *gp = &j->plan.groups[g];
        np_cpulist(cpus, sizeof cpus, gp->cpus);
        np_cpulist(nodes, sizeof nodes, gp->nodes);
        snprintf(line, sizeof line, "group %d%s: nodes %s, CPUs %s", g,
                 g == j->group ? " (this JVM)" : "", nodes[0] ? nodes : "none", cpus);
        rc = cli_draw_group(&d, g, gp->cpus, gp->nodes, line);
    }
    /* Tier threads by name where they are bound; the rest counted. */
    int tier = 0, own = 0, other = 0, listed = 0;
    hwloc_bitmap_t own_cpus = hwloc_bitmap_alloc();
    char others[1024] = "";
    if (own_cpus == NULL)
        rc = -1;
    for (int i = 0; i < seen->nthreads && rc == 0; i++) {
        const struct np_seen *s = &seen->threads[i];
        switch (cli_jvm_kind(j, s->name)) {
        case CLI_TIER:
            tier++;
            rc = cli_draw_label(&d, s->cpus, s->name);
            break;
        case CLI_JVM_OWN:
            own++;
            hwloc_bitmap_or(own_cpus, own_cpus, s->cpus);
            break;
        case CLI_OTHER:
            other++;
            if (listed++ < OTHER_NAMES) {
                size_t n = strlen(others);
                snprintf(others + n, sizeof others - n, "%s%s", n ? ", " : "", s->name);
            }
            break;
        }
    }
    char desc[1024];
    cli_jvm_describe(j, desc, sizeof desc);
    /* The kernel's name of the process as it is: draw.c shows it. */
    snprintf(line, sizeof line, "numapin check %d (\"%s\"): %s", (int)seen->pid, seen->command, desc);
    if (rc == 0)
        rc = cli_draw_legend(&d, line);
    snprintf(line, sizeof line, "tier threads (%s): %d, named where they are bound", j->tier.text,
             tier);
    if (rc == 0)
        rc = cli_draw_legend(&d, line);
    np_cpulist(cpus, sizeof cpus, own_cpus);
    snprintf(line, sizeof line, "the JVM's own threads (GC, JIT, VM): %d, on CPUs %s", own,
             cpus[0] ? cpus : "none");
    if (rc == 0)
        rc = cli_draw_legend(&d, line);
    snprintf(line, sizeof line, "other threads: %d%s%s%s", other, other ? " (" : "", others,
             other > OTHER_NAMES ? ", ...)" : other ? ")" : "");
    if (rc == 0)
        rc = cli_draw_legend(&d, line);
    hwloc_bitmap_free(own_cpus);
    /* Memory: in each node's box, and one line for all. */
    size_t n = (size_t)snprintf(line, sizeof line, "resident memory:");
    for (int node = 0; node < seen->nnode_kb && rc == 0; node++) {
        if (seen->node_kb[node] <= 0)
            continue;
        char text[64];
        snprintf(text, sizeof text, "RSS %.1f MiB", (double)seen->node_kb[node] / 1024);
        rc = cli_draw_node_text(&d, (unsigned)node, text) < 0 ? -1 : 0;
        if (n < sizeof line)
            n += (size_t)snprintf(line + n, sizeof line - n, " node %d %.1f MiB", node,
                                  (double)seen->node_kb[node] / 1024);
    }
    if (seen->node_kb == NULL)
        snprintf(line, sizeof line, "resident memory: unknown (/proc/%d/numa_maps unreadable)",
                 (int)seen->pid);
    if (rc == 0)
        rc = cli_draw_legend(&d, line);
    /* The kernel's sampled accesses, as the live view gives them. */
    np_inspect_access_brief(seen, line, sizeof line);
    if (rc == 0 && line[0] != '\0')
        rc = cli_draw_legend(&d, line);
    if (rc != 0) {
        snprintf(err, errlen, "out of memory");
        cli_draw_close(&d);
        return -1;
    }
    rc = cli_draw_write(&d, path, err, errlen);
    cli_draw_close(&d);
    return rc;
}
