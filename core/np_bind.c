#define _GNU_SOURCE
#include "np_bind.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Mode flags (MPOL_F_STATIC_NODES and friends) live in the high bits. */
#define MODE_MASK 0xff

static int numa_ok = -1;      /* numa_available() result, set once */
static int preferred_many;    /* kernel has MPOL_PREFERRED_MANY */
static unsigned long nbits;   /* bits in a kernel node mask */

int np_bind_init(void)
{
    if (numa_ok < 0) {
        numa_ok = numa_available() == 0;
        if (numa_ok) {
            nbits = (unsigned long)numa_max_possible_node() + 1;
            /* The probe briefly changes this thread's policy, then puts it
             * back: done once, at load time, never in a callback. */
            preferred_many = numa_has_preferred_many() > 0;
        }
    }
    if (!numa_ok) {
        errno = ENOSYS;
        return -1;
    }
    return 0;
}

/* A kernel node mask, allocated here rather than by libnuma, whose
 * allocators exit the process when memory runs out. */
struct mask {
    unsigned long *bits;
    unsigned long nbits;
};

#define WORD_BITS (8 * sizeof(unsigned long))

/* Words of a mask of n bits, with one to spare as the kernel may write a
 * word past them. */
static size_t mask_words(unsigned long n)
{
    return (n + WORD_BITS - 1) / WORD_BITS + 1;
}

static int mask_alloc(struct mask *m)
{
    m->nbits = nbits;
    m->bits = calloc(mask_words(nbits), sizeof *m->bits);
    return m->bits != NULL ? 0 : -1;
}

static int mask_from(struct mask *m, hwloc_const_bitmap_t nodes)
{
    int i = -1;
    while ((i = hwloc_bitmap_next(nodes, i)) >= 0) {
        if ((unsigned long)i >= m->nbits) {
            errno = EINVAL; /* a node this kernel cannot even name */
            return -1;
        }
        m->bits[i / WORD_BITS] |= 1UL << (i % WORD_BITS);
    }
    return 0;
}

static void mask_to(const struct mask *m, hwloc_bitmap_t nodes)
{
    hwloc_bitmap_zero(nodes);
    for (unsigned long i = 0; i < m->nbits; i++)
        if (m->bits[i / WORD_BITS] & (1UL << (i % WORD_BITS)))
            hwloc_bitmap_set(nodes, (unsigned)i);
}

/* The kernel policy (mode and nodes) that a target asks for. */
static void request(const struct np_target *t, int *mode, hwloc_bitmap_t nodes)
{
    hwloc_bitmap_copy(nodes, t->nodes);
    switch (t->mem) {
    case NP_MEM_PREFERRED:
        if (hwloc_bitmap_weight(t->nodes) > 1 && preferred_many) {
            *mode = MPOL_PREFERRED_MANY;
        } else {
            /* MPOL_PREFERRED names one node: the group's first. */
            *mode = MPOL_PREFERRED;
            hwloc_bitmap_only(nodes, (unsigned)hwloc_bitmap_first(t->nodes));
        }
        break;
    case NP_MEM_BIND: *mode = MPOL_BIND; break;
    case NP_MEM_BALANCING: *mode = MPOL_BIND | MPOL_F_NUMA_BALANCING; break;
    case NP_MEM_INTERLEAVE: *mode = MPOL_INTERLEAVE; break;
    case NP_MEM_LOCAL: *mode = MPOL_LOCAL; hwloc_bitmap_zero(nodes); break;
    case NP_MEM_NONE: *mode = -1; break;
    }
}


int np_actual_init(struct np_actual *a)
{
    a->mem_mode = -1;
    a->mem_flags = 0;
    a->cpus = hwloc_bitmap_alloc();
    a->mem_nodes = hwloc_bitmap_alloc();
    if (a->cpus == NULL || a->mem_nodes == NULL) {
        np_actual_destroy(a);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void np_actual_destroy(struct np_actual *a)
{
    hwloc_bitmap_free(a->cpus);
    hwloc_bitmap_free(a->mem_nodes);
    a->cpus = a->mem_nodes = NULL;
}

static int read_policy(struct np_actual *a)
{
    a->mem_mode = -1;
    a->mem_flags = 0;
    hwloc_bitmap_zero(a->mem_nodes);
    if (np_bind_init() != 0)
        return -1;
    struct mask m;
    if (mask_alloc(&m) != 0)
        return -1;
    int mode;
    int rc = (int)get_mempolicy(&mode, m.bits, m.nbits + 1, NULL, 0);
    if (rc == 0) {
        a->mem_mode = mode & MODE_MASK;
        a->mem_flags = mode & ~MODE_MASK;
        mask_to(&m, a->mem_nodes);
    }
    int e = errno;
    free(m.bits);
    errno = e;
    return rc;
}

int np_bind_cpus_allowed(hwloc_bitmap_t cpus)
{
    hwloc_bitmap_zero(cpus);
    int ncpus;
    if (np_bind_init() != 0 || (ncpus = numa_num_possible_cpus()) <= 0)
        return -1;
    size_t words = ((size_t)ncpus + WORD_BITS - 1) / WORD_BITS;
    unsigned long *bits = calloc(words, sizeof *bits);
    if (bits == NULL)
        return -1;
    int rc = sched_getaffinity(0, words * sizeof *bits, (cpu_set_t *)bits);
    for (size_t w = 0; rc == 0 && w < words; w++)
        if (hwloc_bitmap_set_ith_ulong(cpus, (unsigned)w, bits[w]) != 0)
            rc = -1;
    int e = errno;
    free(bits);
    errno = e;
    return rc;
}

int np_bind_mems_allowed(hwloc_bitmap_t nodes)
{
    hwloc_bitmap_zero(nodes);
    struct mask m;
    if (np_bind_init() != 0 || mask_alloc(&m) != 0)
        return -1;
    int rc = (int)get_mempolicy(NULL, m.bits, m.nbits + 1, NULL, MPOL_F_MEMS_ALLOWED);
    if (rc == 0)
        mask_to(&m, nodes);
    int e = errno;
    free(m.bits);
    errno = e;
    return rc;
}

int np_read_self(hwloc_topology_t topo, struct np_actual *a)
{
    int rc = hwloc_get_cpubind(topo, a->cpus, HWLOC_CPUBIND_THREAD);
    int e = errno;
    if (read_policy(a) != 0)
        return -1;
    errno = e;
    return rc;
}

/* p for a kernel mode and nodes: the mask built, or the error setting
 * it would meet (no NUMA support, a node the kernel cannot name).
 * Returns 0, or -1 with errno ENOMEM. */
static int policy_for(struct np_policy *p, int mode, hwloc_const_bitmap_t nodes)
{
    memset(p, 0, sizeof *p);
    p->mode = mode;
    p->empty = hwloc_bitmap_iszero(nodes);
    struct mask m = {NULL, 0};
    if (np_bind_init() != 0) {
        p->error = errno;
    } else if (mask_alloc(&m) != 0) {
        errno = ENOMEM;
        return -1;
    } else if (mask_from(&m, nodes) != 0) {
        p->error = errno;
    }
    p->mask = m.bits;
    p->nbits = m.nbits;
    return 0;
}

/* Sets the calling thread's policy to p.  Returns 0, or -1 with errno. */
static int apply(const struct np_policy *p)
{
    if (p->error != 0) {
        errno = p->error;
        return -1;
    }
    return (int)set_mempolicy(p->mode, p->empty ? NULL : p->mask, p->empty ? 0 : p->nbits + 1);
}

int np_policy_init(struct np_policy *p, const struct np_target *t)
{
    memset(p, 0, sizeof *p);
    p->mode = -1;
    if (t->mem == NP_MEM_NONE)
        return 0;
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    if (nodes == NULL) {
        errno = ENOMEM;
        return -1;
    }
    int mode;
    request(t, &mode, nodes);
    int rc = policy_for(p, mode, nodes);
    hwloc_bitmap_free(nodes);
    return rc;
}

/* Sets the calling thread's policy to a kernel mode and nodes. */
static int set_policy(int mode, hwloc_const_bitmap_t nodes)
{
    struct np_policy p;
    if (policy_for(&p, mode, nodes) != 0)
        return -1;
    int rc = apply(&p);
    int e = errno;
    np_policy_destroy(&p);
    errno = e;
    return rc;
}

void np_policy_destroy(struct np_policy *p)
{
    free(p->mask);
    p->mask = NULL;
}

bool np_policy_same(const struct np_policy *a, const struct np_policy *b)
{
    if (a->mode != b->mode || a->empty != b->empty || (a->mask == NULL) != (b->mask == NULL))
        return false;
    return a->mask == NULL ||
           (a->nbits == b->nbits && memcmp(a->mask, b->mask, mask_words(a->nbits) * sizeof *a->mask) == 0);
}

/* Node masks of the kernel's size fit here on the stack (4096 nodes). */
#define STACK_WORDS 65

/* Reads the calling thread's policy and compares it with p's: the mode
 * exactly (mode flags numapin never sets make it differ) and the nodes.
 * Returns 0 with *same set, or -1 with errno. */
static int policy_is(const struct np_policy *p, bool *same)
{
    if (p->mask == NULL) {
        errno = p->error != 0 ? p->error : ENOSYS;
        return -1;
    }
    size_t nwords = mask_words(p->nbits);
    unsigned long stack[STACK_WORDS], *bits = stack;
    if (nwords > STACK_WORDS && (bits = malloc(nwords * sizeof *bits)) == NULL)
        return -1;
    memset(bits, 0, nwords * sizeof *bits);
    int mode;
    int rc = (int)get_mempolicy(&mode, bits, p->nbits + 1, NULL, 0);
    if (rc == 0) {
        bool empty = true;
        for (size_t i = 0; i < nwords; i++)
            empty = empty && bits[i] == 0;
        if (p->mode == MPOL_LOCAL)
            /* Kernels before 5.x report local allocation as an empty
             * preferred policy. */
            *same = mode == MPOL_LOCAL || (mode == MPOL_PREFERRED && empty);
        else
            *same = mode == p->mode && memcmp(bits, p->mask, nwords * sizeof *bits) == 0;
    }
    int e = errno;
    if (bits != stack)
        free(bits);
    errno = e;
    return rc;
}

int np_cpumask_init(struct np_cpumask *m, hwloc_const_bitmap_t cpus)
{
    m->bits = NULL;
    m->bytes = 0;
    int nbits_cpu;
    if (np_bind_init() != 0 || (nbits_cpu = numa_num_possible_cpus()) <= 0 ||
        nbits_cpu % (int)WORD_BITS != 0 || hwloc_bitmap_last(cpus) >= nbits_cpu)
        return 0;
    size_t words = (size_t)nbits_cpu / WORD_BITS;
    if ((m->bits = calloc(words, sizeof *m->bits)) == NULL) {
        errno = ENOMEM;
        return -1;
    }
    m->bytes = words * sizeof *m->bits;
    int i = -1;
    while ((i = hwloc_bitmap_next(cpus, i)) >= 0)
        m->bits[(unsigned)i / WORD_BITS] |= 1UL << ((unsigned)i % WORD_BITS);
    return 0;
}

void np_cpumask_destroy(struct np_cpumask *m)
{
    free(m->bits);
    m->bits = NULL;
}

/* Reads the calling thread's CPUs and compares them with m (whose bits
 * are known).  Returns 0 with *same set, or -1 with errno. */
static int cpus_are(const struct np_cpumask *m, bool *same)
{
    unsigned long stack[STACK_WORDS], *bits = stack;
    if (m->bytes > sizeof stack && (bits = malloc(m->bytes)) == NULL)
        return -1;
    int rc = sched_getaffinity(0, m->bytes, (cpu_set_t *)bits);
    if (rc == 0)
        *same = memcmp(bits, m->bits, m->bytes) == 0;
    int e = errno;
    if (bits != stack)
        free(bits);
    errno = e;
    return rc;
}

/* Binds the calling thread to `cpus`: through `mask` when it has bits and
 * the topology is this machine's (no conversion or allocation on a
 * thread's way to its run()), else through hwloc, which refuses to bind to
 * the CPUs of another machine's topology.  Returns 0, or -1 with errno. */
static int cpus_set(hwloc_topology_t topo, hwloc_const_bitmap_t cpus,
                    const struct np_cpumask *mask)
{
    if (mask != NULL && mask->bits != NULL && hwloc_topology_is_thissystem(topo))
        return sched_setaffinity(0, mask->bytes, (const cpu_set_t *)mask->bits);
    return hwloc_set_cpubind(topo, cpus, HWLOC_CPUBIND_THREAD);
}

/* Reads the calling thread's CPUs and compares them with `cpus`, through
 * `mask` when it has bits, else through hwloc. */
static bool cpus_read(hwloc_topology_t topo, hwloc_const_bitmap_t cpus,
                      const struct np_cpumask *mask, bool *same)
{
    *same = false;
    if (mask != NULL && mask->bits != NULL)
        return cpus_are(mask, same) == 0;
    hwloc_bitmap_t now = hwloc_bitmap_alloc();
    if (now == NULL)
        return false;
    bool read = hwloc_get_cpubind(topo, now, HWLOC_CPUBIND_THREAD) == 0;
    *same = read && hwloc_bitmap_isequal(now, cpus);
    hwloc_bitmap_free(now);
    return read;
}

int np_place_self(hwloc_topology_t topo, hwloc_const_bitmap_t cpus,
                  const struct np_cpumask *mask, const struct np_policy *p,
                  enum np_place_how how, struct np_bind_result *r)
{
    memset(r, 0, sizeof *r);
    bool same = false;
    bool read = how == NP_PLACE_CHECK && cpus_read(topo, cpus, mask, &same);
    if (!read || !same) {
        if (cpus_set(topo, cpus, mask) == 0) {
            read = cpus_read(topo, cpus, mask, &same);
        } else {
            r->cpu_errno = errno ? errno : EINVAL;
            if (how == NP_PLACE_SET_CPUS && (read = cpus_read(topo, cpus, mask, &same)) && same)
                r->cpu_errno = 0; /* not set, but there already */
        }
    }
    r->cpu_ok = r->cpu_errno == 0 && read && same;
    if (p->mode < 0) {
        r->mem_ok = true;
    } else if (p->inherited) {
        r->mem_ok = r->mem_inherited = r->cpu_errno == 0;
    } else if (r->cpu_errno == 0) {
        /* A thread whose CPUs cannot be set is left exactly as it was. */
        same = false;
        read = policy_is(p, &same) == 0;
        if (how == NP_PLACE_FORCE || !read || !same) {
            if (apply(p) != 0)
                r->mem_errno = errno ? errno : EINVAL;
            else
                read = policy_is(p, &same) == 0;
        }
        r->mem_ok = r->mem_errno == 0 && read && same;
    }
    return r->cpu_ok && r->mem_ok ? 0 : -1;
}

int np_bind_self(hwloc_topology_t topo, const struct np_target *t,
                 struct np_bind_result *r, struct np_actual *actual)
{
    struct np_policy p;
    int rc;
    if (np_policy_init(&p, t) != 0) {
        memset(r, 0, sizeof *r);
        r->cpu_errno = ENOMEM;
        rc = -1;
    } else {
        rc = np_place_self(topo, t->cpus, NULL, &p, NP_PLACE_FORCE, r);
        np_policy_destroy(&p);
    }
    int e = errno;
    np_read_self(topo, actual);
    errno = e;
    return rc;
}

int np_restore_self(hwloc_topology_t topo, const struct np_actual *a)
{
    int rc = hwloc_set_cpubind(topo, a->cpus, HWLOC_CPUBIND_THREAD);
    int e = errno;
    if (a->mem_mode >= 0 && set_policy(a->mem_mode | a->mem_flags, a->mem_nodes) != 0)
        return -1;
    errno = e;
    return rc;
}

/* The policy as the mem= option writes it: nodes joined by '+' ("bind:0-1+4"),
 * since a comma would start another option. */
static void policy_str(char *buf, size_t len, int mode, hwloc_const_bitmap_t nodes)
{
    char list[256];
    if (hwloc_bitmap_iszero(nodes))
        list[0] = '\0';
    else
        hwloc_bitmap_list_snprintf(list, sizeof list, nodes);
    for (char *c = list; (c = strchr(c, ',')) != NULL;)
        *c = '+';
    if (mode >= 0 && (mode & MPOL_F_NUMA_BALANCING) && (mode & MODE_MASK) == MPOL_BIND) {
        snprintf(buf, len, "balancing:%s", list);
        return;
    }
    switch (mode) {
    case MPOL_DEFAULT: snprintf(buf, len, "default"); break;
    case MPOL_PREFERRED:
        if (list[0] == '\0')
            snprintf(buf, len, "local");
        else
            snprintf(buf, len, "preferred:%s", list);
        break;
    case MPOL_PREFERRED_MANY: snprintf(buf, len, "preferred:%s", list); break;
    case MPOL_BIND: snprintf(buf, len, "bind:%s", list); break;
    case MPOL_INTERLEAVE: snprintf(buf, len, "interleave:%s", list); break;
    case MPOL_LOCAL: snprintf(buf, len, "local"); break;
    case -1: snprintf(buf, len, "unknown"); break;
    default: snprintf(buf, len, "mode%d:%s", mode, list); break;
    }
}

void np_mem_target_str(char *buf, size_t len, const struct np_target *t)
{
    if (t->mem == NP_MEM_NONE) {
        snprintf(buf, len, "none");
        return;
    }
    int mode;
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    if (nodes == NULL) {
        snprintf(buf, len, "%s", np_mem_mode_name(t->mem));
        return;
    }
    request(t, &mode, nodes);
    policy_str(buf, len, mode, nodes);
    hwloc_bitmap_free(nodes);
}

void np_mem_actual_str(char *buf, size_t len, const struct np_actual *a)
{
    policy_str(buf, len, a->mem_mode < 0 ? -1 : a->mem_mode | a->mem_flags, a->mem_nodes);
}

const char *np_mem_refused_hint(int e)
{
    return e == EPERM ? "; a seccomp filter refuses set_mempolicy: Docker's default profile allows "
                        "it only with CAP_SYS_NICE (docker run --cap-add SYS_NICE, or in Kubernetes "
                        "securityContext.capabilities.add: [\"SYS_NICE\"])"
                      : "";
}
