/* bench_plan: how long numapin takes to read a machine and plan its groups,
 * as the agent does in Agent_OnLoad (np_topo_load, without I/O device
 * discovery, then np_plan_build).
 *
 *   bench_plan [--reps N] [--fsroots DIR --cache-pairs FILE] [TOPOLOGY_DIR]
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
 * with the default group count: one per node); cached+plan, for the XML
 * and synthetic machines, the same from hwloc's XML export of the loaded
 * machine, which is what the topology cache holds; and, for reference,
 * hwloc (hwloc's own part of load: hwloc_topology_init to
 * hwloc_topology_load, with the same settings).
 *
 * With --fsroots (a folder of machines as /proc and /sys dumps, one
 * extracted dump per subfolder: tests/golden/fsroots) it then times, in
 * pairs, discovering each machine against loading the topology cache of
 * it, each followed by the default plan, and writes one line per
 * repetition to FILE:
 *
 *   machine  pus  nodes  discover_ms  cached_ms  control_ms
 *
 * discover: np_topo_load with HWLOC_FSROOT naming the dump (hwloc reads it
 * as it reads /sys); cached: np_topo_load of hwloc's XML export of that
 * topology, which is what the cache holds; control: the same as cached,
 * then 100 us busy-waited, a known cost the pairs must resolve.  For this
 * machine, discover is np_topo_load and cached np_topo_load_cached with a
 * current cache file (its checks included).  The two (three) run in an
 * order drawn for each repetition.  Nothing is asserted: the numbers go to
 * docs/performance.md (tests/bench/plan.sh). */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "np_plan.h"
#include "np_topo.h"
#include "np_topocache.h"

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

/* np_topo_load of an XML export, then the plan of `groups`: *ms. */
static int cached(const char *xml, int groups, double *ms)
{
    struct np_topo t;
    char err[1024];
    double p, t0 = now_ms();
    if (np_topo_load(&t, xml, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "bench_plan: %s: %s\n", xml, err);
        return -1;
    }
    int rc = plan(&t, groups, &p);
    *ms = now_ms() - t0;
    np_topo_destroy(&t);
    return rc;
}

#define CONTROL_MS 0.1

static void spin_ms(double ms)
{
    double end = now_ms() + ms;
    while (now_ms() < end)
        ;
}

/* One of the three ways of a pair, followed by the default plan (one group
 * a node); its time in ms, or a negative value on failure. */
enum way { DISCOVER, CACHED, CONTROL };
static double timed_way(enum way w, const char *fsroot, const char *xml, const char *cache_dir,
                        int *pus, int *nodes)
{
    struct np_topo t;
    char err[1024], note[1400];
    int rc;
    if (fsroot != NULL && w == DISCOVER)
        setenv("HWLOC_FSROOT", fsroot, 1);
    double t0 = now_ms();
    if (w == DISCOVER)
        rc = np_topo_load(&t, NULL, NULL, err, sizeof err);
    else if (fsroot != NULL)
        rc = np_topo_load(&t, xml, NULL, err, sizeof err);
    else
        rc = np_topo_load_cached(&t, cache_dir, note, sizeof note, err, sizeof err);
    double p = 0;
    if (rc == 0 && plan(&t, t.nnodes, &p) != 0)
        rc = -1;
    if (rc == 0 && w == CONTROL)
        spin_ms(CONTROL_MS);
    double ms = now_ms() - t0;
    unsetenv("HWLOC_FSROOT");
    if (rc != 0) {
        fprintf(stderr, "bench_plan: %s: %s\n", fsroot != NULL ? fsroot : "this machine", err);
        return -1;
    }
    if (fsroot == NULL && w != DISCOVER && strncmp(note, "read from ", 10) != 0) {
        fprintf(stderr, "bench_plan: the cache was not read: %s\n", note);
        np_topo_destroy(&t);
        return -1;
    }
    *pus = hwloc_bitmap_weight(t.allowed);
    *nodes = t.nnodes;
    np_topo_destroy(&t);
    return ms;
}

/* The pairs of one machine (fsroot NULL: this one) into out. */
static int cache_pairs_of(const char *name, const char *fsroot, const char *scratch, int reps,
                          FILE *out)
{
    char xml[4200], cache_dir[4200], err[1024];
    snprintf(xml, sizeof xml, "%s/%s.xml", scratch, name);
    snprintf(cache_dir, sizeof cache_dir, "%s/cache", scratch);
    if (fsroot != NULL) {
        /* What the cache would hold: hwloc's export of the discovery. */
        struct np_topo t;
        setenv("HWLOC_FSROOT", fsroot, 1);
        int rc = np_topo_load(&t, NULL, NULL, err, sizeof err);
        unsetenv("HWLOC_FSROOT");
        if (rc != 0) {
            fprintf(stderr, "bench_plan: %s: %s\n", fsroot, err);
            return -1;
        }
        rc = hwloc_topology_export_xml(t.topology, xml, 0);
        np_topo_destroy(&t);
        if (rc != 0) {
            fprintf(stderr, "bench_plan: cannot write %s: %s\n", xml, strerror(errno));
            return -1;
        }
    }
    if (fsroot == NULL) { /* the first load through the cache writes it */
        struct np_topo t;
        char note[1400];
        if (np_topo_load_cached(&t, cache_dir, note, sizeof note, err, sizeof err) != 0) {
            fprintf(stderr, "bench_plan: this machine: %s\n", err);
            return -1;
        }
        np_topo_destroy(&t);
    }
    for (int r = -WARMUP; r < reps; r++) {
        enum way order[3] = {DISCOVER, CACHED, CONTROL};
        for (int i = 2; i > 0; i--) { /* a random order for each repetition */
            int j = rand() % (i + 1);
            enum way x = order[i];
            order[i] = order[j];
            order[j] = x;
        }
        double ms[3];
        int pus = 0, nodes = 0;
        for (int i = 0; i < 3; i++)
            if ((ms[order[i]] = timed_way(order[i], fsroot, xml, cache_dir, &pus, &nodes)) < 0)
                return -1;
        if (r >= 0)
            fprintf(out, "%s\t%d\t%d\t%.4f\t%.4f\t%.4f\n", name, pus, nodes, ms[DISCOVER],
                    ms[CACHED], ms[CONTROL]);
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Discovery against the cache on each dump of `fsroots`, then this machine. */
static int cache_pairs(const char *fsroots, int reps, const char *path)
{
    FILE *out = fopen(path, "w");
    char scratch[] = "/tmp/numapin-bench-plan.XXXXXX";
    if (out == NULL || mkdtemp(scratch) == NULL) {
        fprintf(stderr, "bench_plan: %s: %s\n", out == NULL ? path : "mkdtemp", strerror(errno));
        return 1;
    }
    DIR *d = opendir(fsroots);
    if (d == NULL) {
        fprintf(stderr, "bench_plan: %s: %s\n", fsroots, strerror(errno));
        return 1;
    }
    char *names[64];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 64)
        if (e->d_name[0] != '.' && e->d_type == DT_DIR)
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    srand(1);
    int status = 0;
    for (int i = 0; i < n && status == 0; i++) {
        char fsroot[4200];
        snprintf(fsroot, sizeof fsroot, "%s/%s", fsroots, names[i]);
        status = cache_pairs_of(names[i], fsroot, scratch, reps, out) != 0;
    }
    if (status == 0)
        status = cache_pairs_of("this machine", NULL, scratch, reps, out) != 0;
    for (int i = 0; i < n; i++)
        free(names[i]);
    fclose(out);
    char rm[200];
    snprintf(rm, sizeof rm, "rm -rf '%s'", scratch);
    if (system(rm) != 0)
        fprintf(stderr, "bench_plan: cannot remove %s\n", scratch);
    return status;
}

int main(int argc, char **argv)
{
    int reps = 51;
    const char *dir = getenv("NUMAPIN_TOPOLOGIES"), *fsroots = NULL, *pairs = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--fsroots") == 0 && i + 1 < argc)
            fsroots = argv[++i];
        else if (strcmp(argv[i], "--cache-pairs") == 0 && i + 1 < argc)
            pairs = argv[++i];
        else if (argv[i][0] != '-')
            dir = argv[i];
        else {
            fprintf(stderr, "usage: bench_plan [--reps N] [--fsroots DIR --cache-pairs FILE] "
                            "[TOPOLOGY_DIR]\n");
            return 2;
        }
    }
    if (reps < 1 || dir == NULL) {
        fprintf(stderr, "bench_plan: need --reps >= 1 and a topology folder (or NUMAPIN_TOPOLOGIES)\n");
        return 2;
    }
    if ((fsroots == NULL) != (pairs == NULL)) {
        fprintf(stderr, "bench_plan: --fsroots and --cache-pairs go together\n");
        return 2;
    }
    /* "this machine" must be this machine, and the cache usable. */
    unsetenv("HWLOC_XMLFILE");
    unsetenv("HWLOC_SYNTHETIC");
    unsetenv("HWLOC_THISSYSTEM");
    unsetenv("HWLOC_FSROOT");

    double *load_ms = calloc((size_t)reps, sizeof *load_ms);
    double *both_ms = calloc((size_t)reps, sizeof *both_ms);
    double *hwloc_ms = calloc((size_t)reps, sizeof *hwloc_ms);
    double *cached_ms = calloc((size_t)reps, sizeof *cached_ms);
    double *plan_ms[3];
    for (int k = 0; k < 3; k++)
        plan_ms[k] = calloc((size_t)reps, sizeof *plan_ms[k]);
    char scratch[] = "/tmp/numapin-bench-plan.XXXXXX", exported[sizeof scratch + 16];
    if (load_ms == NULL || both_ms == NULL || hwloc_ms == NULL || cached_ms == NULL ||
        !plan_ms[0] || !plan_ms[1] || !plan_ms[2] || mkdtemp(scratch) == NULL)
        return 1;
    snprintf(exported, sizeof exported, "%s/export.xml", scratch);

    printf("machine\tpus\tnodes\twhat\tgroups\treps\tmedian_ms\tp90_ms\tmin_ms\tmax_ms\n");
    int status = 0;
    for (size_t m = 0; m < sizeof machines / sizeof *machines; m++) {
        const struct machine *mc = &machines[m];
        struct np_topo t;
        int pus = 0, nodes = 0, counts[3] = {0, 0, 0};
        int ok = 1;
        /* What the cache would hold for an XML or synthetic machine. */
        const bool has_export = mc->xml != NULL || mc->synth != NULL;
        if (has_export) {
            ok = load(mc, dir, &t) == 0;
            if (ok) {
                if (hwloc_topology_export_xml(t.topology, exported, 0) != 0) {
                    fprintf(stderr, "bench_plan: cannot write %s: %s\n", exported, strerror(errno));
                    ok = 0;
                }
                np_topo_destroy(&t);
            }
        }
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
            double c = 0;
            if (ok && has_export && cached(exported, counts[0], &c) != 0) {
                fprintf(stderr, "bench_plan: %s: its export did not load\n", mc->name);
                ok = 0;
            }
            if (r < 0)
                continue;
            hwloc_ms[r] = h;
            cached_ms[r] = c;
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
        if (has_export)
            report(mc->name, pus, nodes, "cached+plan", counts[0], cached_ms, reps);
        fflush(stdout);
    }
    if (status == 0 && fsroots != NULL)
        status = cache_pairs(fsroots, reps, pairs);
    free(load_ms);
    free(both_ms);
    free(hwloc_ms);
    free(cached_ms);
    for (int k = 0; k < 3; k++)
        free(plan_ms[k]);
    unlink(exported);
    rmdir(scratch);
    return status;
}
