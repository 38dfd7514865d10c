/* bench_plan: how long numapin takes to read a machine and plan its groups,
 * as the agent does in Agent_OnLoad (np_topo_load, without I/O device
 * discovery, then np_plan_build).
 *
 *   bench_plan [--reps N] [TOPOLOGY_DIR]
 *
 * For each machine (the largest hwloc XML files of TOPOLOGY_DIR, default
 * $NUMAPIN_TOPOLOGIES, a 2048-PU synthetic machine, and this machine) it
 * runs N repetitions (default 51, after 3 not counted) and prints one
 * tab-separated line per measurement:
 *
 *   machine  pus  nodes  what  groups  reps  median_ms  p90_ms  min_ms  max_ms
 *
 * where `what` is load (np_topo_load), plan (np_plan_build, domain=node,
 * on the loaded topology) or load+plan (the two, in the same repetition,
 * with the default group count: one per node); and, for reference, hwloc
 * (hwloc's own part of load: hwloc_topology_init to hwloc_topology_load,
 * with the same settings).  Nothing is asserted: the numbers go to
 * docs/performance.md (tests/bench/plan.sh). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "np_plan.h"
#include "np_topo.h"

#define WARMUP 3

struct machine {
    const char *name;
    const char *xml;     /* file name in the topology folder, or NULL */
    const char *synth;   /* synthetic description, or NULL */
};

static const struct machine machines[] = {
    {"256ppc-8n8s4t", "256ppc-8n8s4t.xml", NULL},
    {"epyc-7742-2s-nps4", "epyc-7742-2s-nps4.xml", NULL},
    {"epyc-7742-2s-nps1", "epyc-7742-2s-nps1.xml", NULL},
    {"xeon-6972p-snc3", "xeon-6972p-snc3.xml", NULL},
    {"128arm-2pa2n8cluster4co", "128arm-2pa2n8cluster4co.xml", NULL},
    {"fakecpuid1f-64intel64-2p4d2n2c2t", "fakecpuid1f-64intel64-2p4d2n2c2t.xml", NULL},
    {"synthetic 2048 PUs", NULL, "pack:4 numa:4 l3:4 core:16 pu:2"},
    {"this machine", NULL, NULL},
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *name, int pus, int nodes, const char *what, int groups,
                   double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int p90 = (9 * n + 9) / 10 - 1; /* ceil(0.9 n) - 1 */
    printf("%s\t%d\t%d\t%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\n", name, pus, nodes, what, groups, n,
           v[n / 2], v[p90 < 0 ? 0 : p90], v[0], v[n - 1]);
}

static int load(const struct machine *m, const char *dir, struct np_topo *t)
{
    char path[4096], err[1024];
    const char *xml = NULL;
    if (m->xml != NULL) {
        snprintf(path, sizeof path, "%s/%s", dir, m->xml);
        xml = path;
    }
    if (np_topo_load(t, xml, m->synth, err, sizeof err) != 0) {
        fprintf(stderr, "bench_plan: %s: %s\n", m->name, err);
        return -1;
    }
    return 0;
}

/* hwloc alone, as np_topo_load sets it up. */
static int hwloc_only(const struct machine *m, const char *dir, double *ms)
{
    char path[4096];
    hwloc_topology_t topo;
    double t0 = now_ms();
    if (hwloc_topology_init(&topo) != 0)
        return -1;
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (m->xml != NULL) {
        snprintf(path, sizeof path, "%s/%s", dir, m->xml);
        if (hwloc_topology_set_xml(topo, path) != 0)
            goto fail;
    }
    if (m->synth != NULL && hwloc_topology_set_synthetic(topo, m->synth) != 0)
        goto fail;
    if (hwloc_topology_load(topo) != 0)
        goto fail;
    *ms = now_ms() - t0;
    hwloc_topology_destroy(topo);
    return 0;
fail:
    hwloc_topology_destroy(topo);
    return -1;
}

static int plan(const struct np_topo *t, int groups, double *ms)
{
    struct np_plan p;
    double t0 = now_ms();
    int rc = np_plan_build(t, groups, NP_DOMAIN_NODE, &p);
    *ms = now_ms() - t0;
    if (rc != 0) {
        fprintf(stderr, "bench_plan: cannot plan %d groups: %s\n", groups, strerror(errno));
        return -1;
    }
    np_plan_free(&p);
    return 0;
}

int main(int argc, char **argv)
{
    int reps = 51;
    const char *dir = getenv("NUMAPIN_TOPOLOGIES");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (argv[i][0] != '-')
            dir = argv[i];
        else {
            fprintf(stderr, "usage: bench_plan [--reps N] [TOPOLOGY_DIR]\n");
            return 2;
        }
    }
    if (reps < 1 || dir == NULL) {
        fprintf(stderr, "bench_plan: need --reps >= 1 and a topology folder (or NUMAPIN_TOPOLOGIES)\n");
        return 2;
    }
    /* "this machine" must be this machine. */
    unsetenv("HWLOC_XMLFILE");
    unsetenv("HWLOC_SYNTHETIC");
    unsetenv("HWLOC_THISSYSTEM");

    double *load_ms = calloc((size_t)reps, sizeof *load_ms);
    double *both_ms = calloc((size_t)reps, sizeof *both_ms);
    double *hwloc_ms = calloc((size_t)reps, sizeof *hwloc_ms);
    double *plan_ms[3];
    for (int k = 0; k < 3; k++)
        plan_ms[k] = calloc((size_t)reps, sizeof *plan_ms[k]);
    if (load_ms == NULL || both_ms == NULL || hwloc_ms == NULL || !plan_ms[0] || !plan_ms[1] || !plan_ms[2])
        return 1;

    printf("machine\tpus\tnodes\twhat\tgroups\treps\tmedian_ms\tp90_ms\tmin_ms\tmax_ms\n");
    int status = 0;
    for (size_t m = 0; m < sizeof machines / sizeof *machines; m++) {
        const struct machine *mc = &machines[m];
        struct np_topo t;
        int pus = 0, nodes = 0, counts[3] = {0, 0, 0};
        int ok = 1;
        for (int r = -WARMUP; r < reps && ok; r++) {
            double t0 = now_ms();
            if (load(mc, dir, &t) != 0) {
                ok = 0;
                break;
            }
            double l = now_ms() - t0;
            pus = hwloc_bitmap_weight(t.allowed);
            nodes = t.nnodes;
            /* The default (one group a node), more groups than nodes (slices
             * of cores), and two groups (runs of nodes by distance). */
            counts[0] = nodes;
            counts[1] = 2 * nodes;
            counts[2] = 2;
            double p[3];
            for (int k = 0; k < 3 && ok; k++)
                ok = plan(&t, counts[k], &p[k]) == 0;
            np_topo_destroy(&t);
            double h = 0;
            if (ok && hwloc_only(mc, dir, &h) != 0) {
                fprintf(stderr, "bench_plan: %s: hwloc alone failed\n", mc->name);
                ok = 0;
            }
            if (r < 0)
                continue;
            hwloc_ms[r] = h;
            load_ms[r] = l;
            both_ms[r] = l + p[0];
            for (int k = 0; k < 3; k++)
                plan_ms[k][r] = p[k];
        }
        if (!ok) {
            status = 1;
            continue;
        }
        report(mc->name, pus, nodes, "hwloc", 0, hwloc_ms, reps);
        report(mc->name, pus, nodes, "load", 0, load_ms, reps);
        report(mc->name, pus, nodes, "plan", counts[0], plan_ms[0], reps);
        report(mc->name, pus, nodes, "plan", counts[1], plan_ms[1], reps);
        if (counts[2] != counts[0] && counts[2] != counts[1])
            report(mc->name, pus, nodes, "plan", counts[2], plan_ms[2], reps);
        report(mc->name, pus, nodes, "load+plan", counts[0], both_ms, reps);
        fflush(stdout);
    }
    free(load_ms);
    free(both_ms);
    free(hwloc_ms);
    for (int k = 0; k < 3; k++)
        free(plan_ms[k]);
    return status;
}
