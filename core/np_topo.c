#define _GNU_SOURCE
#include "np_topo.h"

#include "np_file.h"
#include "np_topocache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(struct np_topo *t, char *err, size_t errlen, const char *what)
{
    int e = errno;
    snprintf(err, errlen, "cannot load the topology (%s): %s: %s", t->source, what,
             strerror(e));
    np_topo_destroy(t);
    errno = e;
    return -1;
}

/* How a node ranks as the home of the CPUs it is attached to: ordinary
 * memory before high-bandwidth memory before slower tiers (NVM, CXL). */
static int tier_rank(hwloc_obj_t node)
{
    if (node->subtype == NULL || strcmp(node->subtype, "DRAM") == 0)
        return 0;
    if (strcmp(node->subtype, "HBM") == 0)
        return 1;
    return 2;
}

/* The best-ranked NUMA node among the memory children of `o`, looking
 * through memory-side caches; `best` so far, or NULL. */
static hwloc_obj_t best_attached(hwloc_obj_t o, hwloc_obj_t best)
{
    for (hwloc_obj_t m = o->memory_first_child; m != NULL; m = m->next_sibling) {
        if (m->type == HWLOC_OBJ_NUMANODE) {
            if (best == NULL || tier_rank(m) < tier_rank(best))
                best = m;
        } else {
            best = best_attached(m, best); /* a MemCache above nodes */
        }
    }
    return best;
}

/* A CPU's home node: of the nodes attached to its nearest ancestor that has
 * any, the best-ranked (lowest logical index on ties).  hwloc gives every
 * node the cpuset of what it is attached to, so a CPU-less memory tier
 * (HBM, NVM, CXL) attached beside a DRAM node seems to have the same CPUs;
 * the kernel lists those CPUs under the DRAM node only, and so do we. */
static hwloc_obj_t home_of(hwloc_obj_t pu)
{
    for (hwloc_obj_t a = pu->parent; a != NULL; a = a->parent) {
        hwloc_obj_t best = a->memory_arity > 0 ? best_attached(a, NULL) : NULL;
        if (best != NULL)
            return best;
    }
    return NULL;
}

hwloc_obj_t np_topo_home_obj(hwloc_obj_t pu)
{
    return pu != NULL ? home_of(pu) : NULL;
}

int np_topo_home(const struct np_topo *t, unsigned cpu)
{
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(t->topology, cpu);
    hwloc_obj_t home = pu != NULL ? home_of(pu) : NULL;
    return home != NULL ? (int)home->os_index : -1;
}

void np_topo_usable_nodes(const struct np_topo *t, hwloc_bitmap_t out)
{
    hwloc_bitmap_zero(out);
    for (int i = 0; i < t->nnodes; i++)
        hwloc_bitmap_set(out, t->nodes[i]->os_index);
}

void np_topo_home_nodes(const struct np_topo *t, hwloc_const_bitmap_t cpus, hwloc_bitmap_t nodes)
{
    int cpu;
    hwloc_bitmap_zero(nodes);
    NP_FOREACH(cpu, cpus) {
        int n = -1;
        for (int i = 0; i < t->nnodes && n < 0; i++)
            if (hwloc_bitmap_isset(t->node_cpus[i], (unsigned)cpu))
                n = (int)t->nodes[i]->os_index;
        if (n < 0)
            n = np_topo_home(t, (unsigned)cpu);
        if (n >= 0)
            hwloc_bitmap_set(nodes, (unsigned)n);
    }
}

/* Allowed CPUs with no usable node of their own (its memory is outside
 * the cgroup's cpuset.mems, or offline) join the nearest usable node in the
 * tree: the first ancestor whose CPUs reach one; among several, the one
 * with the fewest CPUs so far, to keep nodes balanced. */
static int adopt_orphans(struct np_topo *t)
{
    if ((t->adopted = hwloc_bitmap_dup(t->allowed)) == NULL)
        return -1;
    for (int i = 0; i < t->nnodes; i++)
        hwloc_bitmap_andnot(t->adopted, t->adopted, t->node_cpus[i]);
    int cpu;
    NP_FOREACH(cpu, t->adopted) {
        hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(t->topology, (unsigned)cpu);
        for (hwloc_obj_t a = pu ? pu->parent : NULL; a != NULL; a = a->parent) {
            int best = -1;
            for (int i = 0; i < t->nnodes; i++)
                if (hwloc_bitmap_intersects(a->cpuset, t->node_cpus[i]) &&
                    (best < 0 || hwloc_bitmap_weight(t->node_cpus[i]) <
                                     hwloc_bitmap_weight(t->node_cpus[best])))
                    best = i;
            if (best >= 0) {
                hwloc_bitmap_set(t->node_cpus[best], (unsigned)cpu);
                break;
            }
        }
    }
    return 0;
}

/* Fills nodes/node_cpus: every node that is the home of an allowed CPU,
 * with those CPUs, in logical order. */
static int find_homes(struct np_topo *t)
{
    int n = hwloc_get_nbobjs_by_type(t->topology, HWLOC_OBJ_NUMANODE);
    t->nodes = calloc(n > 0 ? (size_t)n : 1, sizeof *t->nodes);
    t->node_cpus = calloc(n > 0 ? (size_t)n : 1, sizeof *t->node_cpus);
    hwloc_bitmap_t *cpus = calloc(n > 0 ? (size_t)n : 1, sizeof *cpus);
    if (t->nodes == NULL || t->node_cpus == NULL || cpus == NULL) {
        free(cpus);
        return -1;
    }
    int rc = 0;
    hwloc_obj_t pu = NULL;
    while ((pu = hwloc_get_next_obj_by_type(t->topology, HWLOC_OBJ_PU, pu)) != NULL) {
        if (!hwloc_bitmap_isset(t->allowed, pu->os_index))
            continue;
        hwloc_obj_t home = home_of(pu);
        if (home == NULL)
            continue; /* no usable node near it: left out of the plan */
        hwloc_bitmap_t *c = &cpus[home->logical_index];
        if (*c == NULL && (*c = hwloc_bitmap_alloc()) == NULL) {
            rc = -1;
            break;
        }
        hwloc_bitmap_set(*c, pu->os_index);
    }
    for (int i = 0; i < n; i++) {
        if (cpus[i] == NULL)
            continue;
        if (rc == 0) {
            t->nodes[t->nnodes] = hwloc_get_obj_by_type(t->topology, HWLOC_OBJ_NUMANODE, (unsigned)i);
            t->node_cpus[t->nnodes++] = cpus[i];
        } else {
            hwloc_bitmap_free(cpus[i]);
        }
    }
    free(cpus);
    return rc == 0 ? adopt_orphans(t) : rc;
}

/* A file or description taken for this machine (HWLOC_THISSYSTEM=1) that
 * holds CPUs this machine does not have: binding narrows everything to the
 * CPUs both have, which the user should know. */
static void warn_foreign_cpus(struct np_topo *t)
{
    long have = sysconf(_SC_NPROCESSORS_CONF);
    hwloc_const_bitmap_t all = hwloc_topology_get_complete_cpuset(t->topology);
    hwloc_bitmap_t missing = hwloc_bitmap_dup(all);
    if (missing == NULL || have <= 0) {
        hwloc_bitmap_free(missing);
        return;
    }
    hwloc_bitmap_clr_range(missing, 0, (int)have - 1);
    if (!hwloc_bitmap_iszero(missing)) {
        char lack[256], usable[256];
        np_cpulist(lack, sizeof lack, missing);
        np_cpulist(usable, sizeof usable, t->allowed);
        snprintf(t->warning, sizeof t->warning,
                 "the topology (%.200s) has CPUs this machine does not (%.100s; it has %ld): "
                 "HWLOC_THISSYSTEM=1 takes it for this machine, so only the CPUs both have are "
                 "used (%.100s)", t->source, lack, have, usable[0] ? usable : "none");
    }
    hwloc_bitmap_free(missing);
}

/* Loads the topology; the usable CPUs are hwloc's allowed ones within
 * `within`, or with within NULL within the process's binding (when it
 * meets them at all). */
static int load(struct np_topo *t, const char *xml, const char *synthetic,
                hwloc_const_bitmap_t within, const char *xmlbuf, size_t xmllen, char *err,
                size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (xml != NULL)
        snprintf(t->source, sizeof t->source, "xml %s", xml);
    else if (synthetic != NULL)
        snprintf(t->source, sizeof t->source, "synthetic %s", synthetic);
    else if (getenv("HWLOC_SYNTHETIC") != NULL) /* hwloc reads it first */
        snprintf(t->source, sizeof t->source, "synthetic %s", getenv("HWLOC_SYNTHETIC"));
    else if (getenv("HWLOC_XMLFILE") != NULL)
        snprintf(t->source, sizeof t->source, "xml %s", getenv("HWLOC_XMLFILE"));
    else
        snprintf(t->source, sizeof t->source, "this system");

    /* The library must speak the API we were built against (2.x). */
    if ((hwloc_get_api_version() >> 16) != (HWLOC_API_VERSION >> 16)) {
        snprintf(err, errlen, "hwloc library API %#x does not match the %#x numapin was built for",
                 hwloc_get_api_version(), HWLOC_API_VERSION);
        return -1;
    }
    if (hwloc_topology_init(&t->topology) != 0)
        return fail(t, err, errlen, "hwloc_topology_init");
    /* No I/O devices: not needed for placement, and slow to discover. */
    hwloc_topology_set_io_types_filter(t->topology, HWLOC_TYPE_FILTER_KEEP_NONE);
    /* hwloc falls back to this machine, silently, when the file of
     * HWLOC_XMLFILE cannot be loaded: name it explicitly, so that failing
     * to load it is a failure (hwloc reads HWLOC_SYNTHETIC first). */
    if (xml == NULL && synthetic == NULL && getenv("HWLOC_SYNTHETIC") == NULL &&
        getenv("HWLOC_XMLFILE") != NULL)
        xml = getenv("HWLOC_XMLFILE");
    if (xml != NULL && hwloc_topology_set_xml(t->topology, xml) != 0)
        return fail(t, err, errlen, "hwloc_topology_set_xml");
    if (synthetic != NULL && hwloc_topology_set_synthetic(t->topology, synthetic) != 0)
        return fail(t, err, errlen, "invalid synthetic description");
    /* This machine's own export (np_topocache): its allowed CPUs and nodes
     * are read from the live cgroup, not from the file. */
    if (xmlbuf != NULL &&
        (hwloc_topology_set_xmlbuffer(t->topology, xmlbuf, (int)xmllen) != 0 ||
         hwloc_topology_set_flags(t->topology, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM |
                                                   HWLOC_TOPOLOGY_FLAG_THISSYSTEM_ALLOWED_RESOURCES) != 0))
        return fail(t, err, errlen, "hwloc_topology_set_xmlbuffer");
    if (hwloc_topology_load(t->topology) != 0)
        return fail(t, err, errlen, "hwloc_topology_load");

    t->thissystem = hwloc_topology_is_thissystem(t->topology);
    t->allowed = hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(t->topology));
    if (t->allowed == NULL)
        return fail(t, err, errlen, "out of memory");
    if (within != NULL) {
        hwloc_bitmap_and(t->allowed, t->allowed, within);
    } else if (t->thissystem) {
        hwloc_bitmap_t bound = hwloc_bitmap_alloc();
        if (bound != NULL &&
            hwloc_get_cpubind(t->topology, bound, HWLOC_CPUBIND_PROCESS) == 0 &&
            hwloc_bitmap_intersects(bound, t->allowed))
            hwloc_bitmap_and(t->allowed, t->allowed, bound);
        hwloc_bitmap_free(bound);
        if (strcmp(t->source, "this system") != 0)
            warn_foreign_cpus(t);
    }

    if (find_homes(t) != 0)
        return fail(t, err, errlen, "out of memory");
    if (t->nnodes == 0) {
        errno = ENODEV;
        return fail(t, err, errlen, "no NUMA node has a CPU this process may use");
    }
    return 0;
}

int np_topo_load(struct np_topo *t, const char *xml, const char *synthetic,
                 char *err, size_t errlen)
{
    return load(t, xml, synthetic, NULL, NULL, 0, err, errlen);
}

int np_topo_load_within(struct np_topo *t, hwloc_const_bitmap_t within, char *err, size_t errlen)
{
    return load(t, NULL, NULL, within, NULL, 0, err, errlen);
}

/* The HWLOC_ variable that changes what hwloc discovers (a fake machine,
 * components, filters), or NULL: the cache stands for hwloc's plain
 * discovery of this machine only. */
static const char *hwloc_variable(void)
{
    extern char **environ;
    for (char **e = environ; e != NULL && *e != NULL; e++)
        if (strncmp(*e, "HWLOC_", 6) == 0)
            return *e;
    return NULL;
}

/* Loads the topology from the file of `dirfd` for key k.  Returns 0, or
 * -1 with *why saying why the file was not used, or with *why NULL when
 * there is none. */
static int load_file(struct np_topo *t, int dirfd, const char *name,
                     const struct np_topocache_key *k, const char **why)
{
    size_t len = 0;
    char *xml = np_topocache_read(dirfd, name, &len, why);
    if (xml == NULL)
        return -1;
    /* hwloc's export ends with its root element closed; a file cut short
     * (or not hwloc's) is not handed to hwloc's parser, whose error path
     * leaks what it had built. */
    static const char end[] = "</topology>\n";
    if (len < sizeof end || strcmp(xml + len - sizeof end, end) != 0) {
        free(xml);
        *why = "is not a whole hwloc XML export (cut short, or another kind of file)";
        return -1;
    }
    char err[256];
    int rc = load(t, NULL, NULL, NULL, xml, len, err, sizeof err);
    free(xml);
    if (rc != 0) {
        np_topo_destroy(t);
        *why = "cannot be loaded by hwloc (truncated, or not hwloc XML)";
        return -1;
    }
    if ((*why = np_topocache_stale(t->topology, k)) != NULL) {
        np_topo_destroy(t);
        return -1;
    }
    return 0;
}

int np_topo_load_cached(struct np_topo *t, const char *dir, char *note, size_t notelen, char *err,
                        size_t errlen)
{
    const char *var = hwloc_variable();
    struct np_topocache_key k;
    char why[1024] = "", path[4200] = "", name[64];
    snprintf(note, notelen, "discovered (topocache=off)");
    if (dir == NULL)
        return np_topo_load(t, NULL, NULL, err, errlen);
    if (var != NULL) {
        snprintf(note, notelen, "discovered; the topology cache is not used while %.200s is set",
                 var);
        return np_topo_load(t, NULL, NULL, err, errlen);
    }
    if (np_topocache_key_read(&k, why, sizeof why) != 0) {
        snprintf(note, notelen, "discovered; the topology cache is not used: %s", why);
        return np_topo_load(t, NULL, NULL, err, errlen);
    }
    int dirfd = np_file_private_dir(dir, "topology cache directory", "topocache=", why, sizeof why);
    if (dirfd < 0) {
        snprintf(note, notelen, "discovered; not cached: %s", why);
        return np_topo_load(t, NULL, NULL, err, errlen);
    }
    np_topocache_name(&k, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    const char *ignored = NULL;
    if (load_file(t, dirfd, name, &k, &ignored) == 0) {
        close(dirfd);
        snprintf(note, notelen, "read from %s", path);
        return 0;
    }
    if (load(t, NULL, NULL, NULL, NULL, 0, err, errlen) != 0) {
        close(dirfd);
        return -1;
    }
    char *xml = NULL;
    int xmllen = 0, e = 0;
    if (np_topocache_stamp(t->topology, &k) != 0 ||
        hwloc_topology_export_xmlbuffer(t->topology, &xml, &xmllen, 0) != 0 || xmllen < 1)
        e = errno != 0 ? errno : EINVAL;
    else
        e = np_file_replace(dirfd, name, xml, (size_t)xmllen - 1, false);
    if (xml != NULL)
        hwloc_free_xmlbuffer(t->topology, xml);
    close(dirfd);
    char done[300];
    if (e == 0)
        snprintf(done, sizeof done, "written to %.250s", path);
    else
        snprintf(done, sizeof done, "not cached: cannot write %.200s: %s", path, strerror(e));
    if (ignored != NULL)
        snprintf(note, notelen, "discovered; the cache %s %s, so it was not used; %s", path, ignored,
                 e == 0 ? "replaced" : done);
    else
        snprintf(note, notelen, "discovered; %s", done);
    return 0;
}

static void free_homes(struct np_topo *t)
{
    for (int i = 0; i < t->nnodes; i++)
        hwloc_bitmap_free(t->node_cpus[i]);
    free(t->node_cpus);
    free(t->nodes);
    hwloc_bitmap_free(t->adopted);
    t->node_cpus = NULL;
    t->nodes = NULL;
    t->adopted = NULL;
    t->nnodes = 0;
}

int np_topo_restrict(struct np_topo *t, hwloc_const_bitmap_t cpus, char *err, size_t errlen)
{
    hwloc_bitmap_t allowed = hwloc_bitmap_dup(t->allowed);
    if (allowed == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    hwloc_bitmap_and(allowed, allowed, cpus);
    if (hwloc_bitmap_iszero(allowed)) {
        snprintf(err, errlen, "none of the CPUs to restrict to is usable here");
        hwloc_bitmap_free(allowed);
        return -1;
    }
    free_homes(t);
    hwloc_bitmap_free(t->allowed);
    t->allowed = allowed;
    if (find_homes(t) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (t->nnodes == 0) {
        snprintf(err, errlen, "no NUMA node has one of those CPUs");
        return -1;
    }
    return 0;
}

void np_topo_destroy(struct np_topo *t)
{
    free_homes(t);
    hwloc_bitmap_free(t->allowed);
    if (t->topology != NULL)
        hwloc_topology_destroy(t->topology);
    char source[sizeof t->source];
    memcpy(source, t->source, sizeof source);
    memset(t, 0, sizeof *t);
    memcpy(t->source, source, sizeof source); /* kept for error messages */
}

static int count_allowed(const struct np_topo *t, hwloc_obj_type_t type)
{
    int n = 0;
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(t->topology, type, o)) != NULL)
        n += o->cpuset != NULL && hwloc_bitmap_intersects(o->cpuset, t->allowed);
    return n;
}

void np_topo_summary(const struct np_topo *t, char *buf, size_t len)
{
    char allowed[1024];
    np_cpulist(allowed, sizeof allowed, t->allowed);
    int l3 = 0;
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(t->topology, HWLOC_OBJ_L3CACHE, o)) != NULL)
        l3 += hwloc_bitmap_intersects(o->cpuset, t->allowed);
    int cores = count_allowed(t, HWLOC_OBJ_CORE);
    int pus = hwloc_bitmap_weight(t->allowed);
    snprintf(buf, len,
             "nodes=%d packages=%d l3=%d cores=%d pus=%d smt=%d allowed=%s source=\"%s\"",
             t->nnodes, count_allowed(t, HWLOC_OBJ_PACKAGE), l3, cores, pus,
             cores > 0 ? (pus + cores - 1) / cores : 1, allowed, t->source);
}
