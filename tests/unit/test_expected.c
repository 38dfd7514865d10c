/* Expected output of `numapin topo` and `numapin plan` ($NUMAPIN_CLI) on
 * every hwloc XML file in $NUMAPIN_TOPOLOGIES and on a few synthetic
 * machines: the one scheme of golden files.
 *
 * For each machine there are six files under $NUMAPIN_EXPECTED/machines/
 * (tests/golden/expected/machines), each a transcript of one or more runs:
 *
 *   NAME.topo.txt          numapin topo
 *   NAME.topo.json         numapin topo --json
 *   NAME.plan-node.txt     numapin plan --domain node --groups G   (table)
 *   NAME.plan-node.json    the same with --json
 *   NAME.plan-package.txt  numapin plan --domain package --groups G
 *   NAME.plan-l3.txt       numapin plan --domain l3 --groups G
 *
 * where G runs over 1, 2, D/2, D-1, D, D+1 and 2D for the D
 * domains of that kind (plus a few extra counts on some synthetic
 * machines, and on some a few more runs at the end of NAME.plan-node.txt:
 * one group, --cpus core or pu).  A machine without packages or L3 caches
 * gets the one run that says so (exit status and stderr are part of the
 * transcript).  The topology folder's path is cut from the output, so that
 * the files do not depend on where the checkout is.
 *
 * The QEMU guests of tests/qemu (qemu-n2.xml, qemu-n3.xml, captured in
 * them) run every plan of their transcripts on the live machine and compare
 * (tests/qemu/scenarios.sh): the same files hold what the planner does on
 * an XML copy of a machine and on the machine itself.
 *
 * `make test-unit REGEN=1` (NUMAPIN_REGEN=1) rewrites the files instead of
 * comparing; review `git diff tests/golden/expected` before committing.  A
 * file under machines/ that no machine produces fails the
 * `no_file_without_a_machine` test. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "np_domains.h"
#include "np_topo.h"
#include "tests.h"

struct machine {
    char *name;           /* file name stem */
    char *xml;            /* full path, or NULL */
    const char *synth;    /* synthetic description, or NULL */
    const char *restrict_cpus;
    const int *extra;     /* more group counts for the node domain, 0-terminated */
    const char *const *runs; /* more node-domain runs, "ARGS" (split at spaces), NULL-terminated */
};

static const int l3_counts[] = {4, 6, 0};
static const int six[] = {6, 0};
static const int five_nine[] = {5, 9, 0};
/* One group's table with hardware-thread slots, and every group's with
 * core slots. */
static const char *const slot_runs[] = {"--groups 3 --group 0 --cpus pu", "--groups 3 --cpus core",
                                        NULL};

/* Synthetic machines: each shows something the shared XML files do not. */
static const struct {
    const char *name, *synth, *restrict_cpus;
    const int *extra;
    const char *const *runs;
} synthetic[] = {
    /* The smallest machine. */
    {"synthetic_one-cpu", "pack:1 numa:1 core:1 pu:1", NULL, NULL, NULL},
    /* 4 nodes of 2 single-threaded cores: 5 groups split one node, 9 share
     * a CPU. */
    {"synthetic_2pack-2numa-2core-1pu", "pack:2 numa:2 core:2 pu:1", NULL, five_nine, NULL},
    /* 2 nodes of 2 SMT2 cores: the slots of --cpus pu and core. */
    {"synthetic_1pack-2numa-2core-2pu", "pack:1 numa:2 core:2 pu:2", NULL, NULL, slot_runs},
    /* 2 packages of 2 nodes of 2 L3s of 3 SMT2 cores. */
    {"synthetic_2pack-2numa-2l3-3core-2pu", "pack:2 numa:2 l3:2 core:3 pu:2", NULL, NULL, NULL},
    /* The same under a cgroup-like restriction: uneven nodes and L3s. */
    {"synthetic_2pack-2numa-2l3-3core-2pu_restricted", "pack:2 numa:2 l3:2 core:3 pu:2",
     "0-9,13,24-35,40-47", NULL, NULL},
    /* One L3 per package, spanning its two nodes (sub-NUMA clustering). */
    {"synthetic_2pack-l3-2numa-3core-2pu", "pack:2 l3:1 numa:2 core:3 pu:2", NULL, NULL, NULL},
    /* 2 nodes of 3 L3s: 6 groups get one L3 each. */
    {"synthetic_1pack-2numa-3l3-2core-2pu", "pack:1 numa:2 l3:3 core:2 pu:2", NULL, six, NULL},
    /* One node of 2 L3s of 3 cores: 4 and 6 groups slice each L3 alone. */
    {"synthetic_1numa-2l3-3core", "pack:1 numa:1 l3:2 core:3 pu:1", NULL, l3_counts, NULL},
    /* SMT siblings numbered far apart, as Linux numbers x86 threads. */
    {"synthetic_2pack-2numa-2core-2pu-far-siblings",
     "pack:2 numa:2 core:2 pu:2(indexes=0,8,1,9,2,10,3,11,4,12,5,13,6,14,7,15)", NULL, NULL, NULL},
    /* No packages, no L3: those domains do not exist. */
    {"synthetic_3numa-2core", "numa:3 core:2 pu:1", NULL, NULL, NULL},
    /* 2048 PUs: CPU numbers beyond a fixed 1024-bit cpu_set_t. */
    {"synthetic_4pack-4numa-4l3-16core-2pu", "pack:4 numa:4 l3:4 core:16 pu:2", NULL, NULL, NULL},
};
#define NSYNTH ((int)(sizeof synthetic / sizeof *synthetic))

/* XML files under a restriction. */
static const struct {
    const char *name, *file, *restrict_cpus;
} restricted_xml[] = {
    /* Socket 0's node 0 whole, half of node 1 (threads 0 only), and node 4. */
    {"epyc-7742-2s-nps4_restricted", "epyc-7742-2s-nps4.xml", "0-15,16-23,64-79,128-143,192-207"},
};
#define NRXML ((int)(sizeof restricted_xml / sizeof *restricted_xml))

static struct machine *machines;
static int nmachines;
static char *topo_dir;

static const char *const suffixes[] = {".topo.txt",         ".topo.json",
                                       ".plan-node.txt",    ".plan-node.json",
                                       ".plan-package.txt", ".plan-l3.txt"};
#define NSUFFIXES ((int)(sizeof suffixes / sizeof *suffixes))

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_machine(const char *name, char *xml, const char *synth, const char *restrict_cpus,
                        const int *extra, const char *const *runs)
{
    struct machine *m = realloc(machines, (size_t)(nmachines + 1) * sizeof *m);
    if (m == NULL)
        return;
    machines = m;
    machines[nmachines] = (struct machine){strdup(name), xml, synth, restrict_cpus, extra, runs};
    nmachines++;
}

static void find_machines(void)
{
    const char *dir = getenv("NUMAPIN_TOPOLOGIES");
    DIR *d = dir ? opendir(dir) : NULL;
    char **files = NULL;
    int nfiles = 0;
    if (d != NULL) {
        topo_dir = strdup(dir);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            size_t n = strlen(e->d_name);
            if (n < 5 || strcmp(e->d_name + n - 4, ".xml") != 0)
                continue;
            char **f = realloc(files, (size_t)(nfiles + 1) * sizeof *f);
            if (f == NULL)
                break;
            files = f;
            files[nfiles++] = strdup(e->d_name);
        }
        closedir(d);
        qsort(files, (size_t)nfiles, sizeof *files, cmp_str);
    }
    for (int i = 0; i < nfiles; i++) {
        char *path = NULL, stem[256];
        if (asprintf(&path, "%s/%s", dir, files[i]) < 0)
            continue;
        snprintf(stem, sizeof stem, "%.*s", (int)strlen(files[i]) - 4, files[i]);
        add_machine(stem, path, NULL, NULL, NULL, NULL);
        free(files[i]);
    }
    free(files);
    for (int i = 0; dir != NULL && i < NRXML; i++) {
        char *path = NULL;
        if (asprintf(&path, "%s/%s", dir, restricted_xml[i].file) >= 0)
            add_machine(restricted_xml[i].name, path, NULL, restricted_xml[i].restrict_cpus, NULL,
                        NULL);
    }
    for (int i = 0; i < NSYNTH; i++)
        add_machine(synthetic[i].name, NULL, synthetic[i].synth, synthetic[i].restrict_cpus,
                    synthetic[i].extra, synthetic[i].runs);
}

static const char *cli(void)
{
    const char *c = getenv("NUMAPIN_CLI");
    ck_assert_msg(c != NULL && *c, "NUMAPIN_CLI (path of build/numapin) is not set");
    return c;
}

static void expected_dir(char *buf, size_t len)
{
    const char *dir = getenv("NUMAPIN_EXPECTED");
    ck_assert_msg(dir != NULL && *dir, "NUMAPIN_EXPECTED (the folder tests/golden/expected) is not set");
    snprintf(buf, len, "%s/machines", dir);
}

static bool regen(void)
{
    const char *r = getenv("NUMAPIN_REGEN");
    return r != NULL && strcmp(r, "1") == 0;
}

/* A growing string. */
struct text {
    char *s;
    size_t len, cap;
};

static void append(struct text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->s = realloc(t->s, t->cap);
        ck_assert_ptr_nonnull(t->s);
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

static void appends(struct text *t, const char *s)
{
    append(t, s, strlen(s));
}

/* Appends s with every "DIR/" removed. */
static void append_cut(struct text *t, const char *s)
{
    char prefix[4096];
    snprintf(prefix, sizeof prefix, "%s/", topo_dir ? topo_dir : "\x01");
    size_t pl = strlen(prefix);
    const char *p;
    while ((p = strstr(s, prefix)) != NULL) {
        append(t, s, (size_t)(p - s));
        s = p + pl;
    }
    appends(t, s);
}

/* Runs the CLI with the machine's source and restriction plus args
 * (NULL-terminated), and appends "$ numapin ARGS", the output, and the exit
 * status and stderr when they are not 0 and empty. */
static void run(struct text *t, const struct machine *m, const char *const *args)
{
    char *argv[24];
    int n = 0;
    argv[n++] = (char *)cli();
    argv[n++] = (char *)args[0];
    if (m->xml != NULL) {
        argv[n++] = "--topology";
        argv[n++] = m->xml;
    } else {
        argv[n++] = "--synthetic";
        argv[n++] = (char *)m->synth;
    }
    if (m->restrict_cpus != NULL) {
        argv[n++] = "--restrict";
        argv[n++] = (char *)m->restrict_cpus;
    }
    for (int i = 1; args[i] != NULL && n < 23; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;

    appends(t, "$ numapin");
    for (int i = 1; i < n; i++) {
        bool quote = strchr(argv[i], ' ') != NULL;
        appends(t, quote ? " \"" : " ");
        append_cut(t, argv[i]);
        if (quote)
            appends(t, "\"");
    }
    appends(t, "\n");
    char *out, *err;
    int rc = t_run(argv, &out, &err);
    append_cut(t, out);
    if (rc != 0 || err[0] != '\0') {
        char line[64];
        snprintf(line, sizeof line, "[exit %d]\n", rc);
        appends(t, line);
        if (err[0] != '\0') {
            appends(t, "[stderr]\n");
            append_cut(t, err);
        }
    }
    free(out);
    free(err);
}

/* Compares `got` with the expected file (or writes it under REGEN): the
 * first differing line is reported. */
static void compare(const char *name, const char *got)
{
    char dir[4096], path[4400];
    expected_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (regen()) {
        mkdir(dir, 0755);
        ck_assert_msg(t_write_file(path, got, strlen(got)) == 0, "cannot write %s: %s", path,
                      strerror(errno));
        return;
    }
    char *want = t_read_file(path, NULL);
    ck_assert_msg(want != NULL,
                  "cannot read %s (`make test-unit REGEN=1` creates it)", path);
    if (strcmp(got, want) != 0) {
        const char *a = got, *b = want;
        int line = 1;
        while (*a && *a == *b) {
            if (*a == '\n')
                line++;
            a++;
            b++;
        }
        /* Back to the start of the line. */
        while (a > got && a[-1] != '\n') {
            a--;
            b--;
        }
        ck_abort_msg("%s differs from %s at line %d\n got: %.*s\nwant: %.*s\n"
                     "(a deliberate change: `make test-unit REGEN=1`, then review the diff)",
                     name, path, line, (int)strcspn(a, "\n"), a, (int)strcspn(b, "\n"), b);
    }
    free(want);
}

/* The domain counts of the machine, by kind; 0 when it has none. */
static void domain_counts(const struct machine *m, int counts[3])
{
    struct np_topo t;
    char err[1024];
    ck_assert_msg(np_topo_load(&t, m->xml, m->synth, err, sizeof err) == 0, "%s: %s", m->name,
                  err);
    if (m->restrict_cpus != NULL) {
        hwloc_bitmap_t set = t_bitmap(m->restrict_cpus);
        ck_assert_msg(np_topo_restrict(&t, set, err, sizeof err) == 0, "%s: %s", m->name, err);
        hwloc_bitmap_free(set);
    }
    for (int k = 0; k < 3; k++) {
        struct np_domains d;
        counts[k] = 0;
        if (np_domains_get(&t, (enum np_domain)k, &d) == 0) {
            counts[k] = d.n;
            np_domains_free(&d);
        } else {
            ck_assert_msg(errno == ENOENT, "%s: np_domains_get(%d): %s", m->name, k,
                          strerror(errno));
        }
    }
    ck_assert_msg(counts[NP_DOMAIN_NODE] >= 1, "%s: no node domain", m->name);
    np_topo_destroy(&t);
}

/* 1, 2, D/2, D-1, D, D+1, 2D and the extra counts, ascending, without
 * repeats. */
static int group_counts(int D, const int *extra, int *out)
{
    int c[16], n = 0;
    c[n++] = 1;
    c[n++] = D > 2 ? 2 : 1;
    c[n++] = D / 2;
    c[n++] = D - 1;
    c[n++] = D;
    c[n++] = D + 1;
    c[n++] = 2 * D;
    for (int i = 0; extra != NULL && extra[i] != 0 && n < 16; i++)
        c[n++] = extra[i];
    int k = 0;
    for (int v = 1; v <= 4096; v++)
        for (int i = 0; i < n; i++)
            if (c[i] == v) {
                out[k++] = v;
                break;
            }
    return k;
}

static void plan_file(const struct machine *m, int kind, int D, bool json, const char *suffix)
{
    static const char *const kinds[] = {"node", "package", "l3"};
    struct text t = {0};
    char g[16], name[512];
    if (D == 0) {
        /* The machine has no such domain: the CLI says so. */
        const char *args[] = {"plan", "--domain", kinds[kind], "--groups", "2", NULL};
        run(&t, m, args);
    } else {
        int counts[16];
        int n = group_counts(D, kind == NP_DOMAIN_NODE ? m->extra : NULL, counts);
        for (int i = 0; i < n; i++) {
            snprintf(g, sizeof g, "%d", counts[i]);
            const char *args[] = {"plan", "--domain", kinds[kind], "--groups", g,
                                  json ? "--json" : NULL, NULL};
            run(&t, m, args);
        }
    }
    for (int r = 0; kind == NP_DOMAIN_NODE && !json && m->runs != NULL && m->runs[r] != NULL; r++) {
        char words[256], *save = NULL;
        const char *args[16] = {"plan", "--domain", "node"};
        int n = 3;
        snprintf(words, sizeof words, "%s", m->runs[r]);
        for (char *w = strtok_r(words, " ", &save); w != NULL && n < 15; w = strtok_r(NULL, " ", &save))
            args[n++] = w;
        args[n] = NULL;
        run(&t, m, args);
    }
    snprintf(name, sizeof name, "%s%s", m->name, suffix);
    compare(name, t.s);
    free(t.s);
}

START_TEST(outputs_match_transcripts)
{
    ck_assert_msg(_i < nmachines, "no machine %d", _i);
    const struct machine *m = &machines[_i];
    /* The output must not depend on the caller's hwloc settings (this test
     * runs in a process of its own). */
    static const char *const hwloc_env[] = {"HWLOC_THISSYSTEM", "HWLOC_XMLFILE", "HWLOC_SYNTHETIC",
                                            "HWLOC_ALLOW", "HWLOC_CPUKINDS_RANKING",
                                            "HWLOC_COMPONENTS"};
    for (size_t k = 0; k < sizeof hwloc_env / sizeof *hwloc_env; k++)
        unsetenv(hwloc_env[k]);
    char name[512];
    for (int json = 0; json <= 1; json++) {
        struct text t = {0};
        const char *args[] = {"topo", json ? "--json" : NULL, NULL};
        run(&t, m, args);
        snprintf(name, sizeof name, "%s%s", m->name, json ? ".topo.json" : ".topo.txt");
        compare(name, t.s);
        free(t.s);
    }
    int counts[3];
    domain_counts(m, counts);
    plan_file(m, NP_DOMAIN_NODE, counts[NP_DOMAIN_NODE], false, ".plan-node.txt");
    plan_file(m, NP_DOMAIN_NODE, counts[NP_DOMAIN_NODE], true, ".plan-node.json");
    plan_file(m, NP_DOMAIN_PACKAGE, counts[NP_DOMAIN_PACKAGE], false, ".plan-package.txt");
    plan_file(m, NP_DOMAIN_L3, counts[NP_DOMAIN_L3], false, ".plan-l3.txt");
}
END_TEST

START_TEST(every_topology_is_covered)
{
    ck_assert_msg(topo_dir != NULL, "NUMAPIN_TOPOLOGIES is not set or not a folder");
    int nxml = 0;
    for (int i = 0; i < nmachines; i++)
        nxml += machines[i].xml != NULL && machines[i].restrict_cpus == NULL;
    ck_assert_msg(nxml > 0, "no .xml file in %s", topo_dir);
}
END_TEST

/* Every file under machines/ belongs to a machine of this suite: a
 * transcript left behind by a removed machine is not kept as if tested. */
START_TEST(no_file_without_a_machine)
{
    if (regen())
        return;
    char dir[4096];
    expected_dir(dir, sizeof dir);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s: %s", dir, strerror(errno));
    struct dirent *e;
    int seen = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        bool known = false;
        for (int i = 0; i < nmachines && !known; i++)
            for (int s = 0; s < NSUFFIXES && !known; s++) {
                size_t n = strlen(machines[i].name);
                known = strncmp(e->d_name, machines[i].name, n) == 0 &&
                        strcmp(e->d_name + n, suffixes[s]) == 0;
            }
        ck_assert_msg(known, "%s/%s belongs to no machine of test_expected.c: remove it", dir,
                      e->d_name);
        seen++;
    }
    closedir(d);
    ck_assert_int_eq(seen, nmachines * NSUFFIXES);
}
END_TEST

Suite *expected_suite(void)
{
    find_machines();
    Suite *s = suite_create("expected-output");
    TCase *tc = tcase_create("machines");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, every_topology_is_covered);
    tcase_add_loop_test(tc, outputs_match_transcripts, 0, nmachines > 0 ? nmachines : 1);
    tcase_add_test(tc, no_file_without_a_machine);
    suite_add_tcase(s, tc);
    return s;
}
