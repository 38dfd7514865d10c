/* The whole JVM on its group (scope=jvm, the default for groups > 1).
 *
 * At load numapin binds the process to the group's CPUs and gives the
 * loading thread the group's memory policy: HotSpot reserves the heap and
 * starts its GC, JIT and other threads after Agent_OnLoad, from that
 * thread, so all of them inherit both.  What HotSpot decided before the
 * agent loaded is mended where it can be (UseNUMA); at a late attach the
 * memory the JVM already holds is moved; at exit the summary and the report
 * say where the process's memory ended up. */
#define _GNU_SOURCE
#include "np_agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int np_agent_place_jvm(struct np_agent *a, const struct np_targets *g, const struct np_target *t)
{
    char cpus[1024], mem[256], got_cpus[1024], got_mem[256];
    np_cpulist(cpus, sizeof cpus, g->mine->cpus);
    np_mem_target_str(mem, sizeof mem, t);
    int rc = 0;
    if (hwloc_set_cpubind(a->topo.topology, g->mine->cpus, HWLOC_CPUBIND_PROCESS) != 0) {
        /* The placed threads would meet the same refusal: this warning is
         * theirs too. */
        np_once_level(&a->warned_cpu, NP_LOG_WARNING);
        (a->opt.strict ? np_log_fatal : np_log_warning)(
            "scope=jvm: cannot bind the JVM to cpus=%s: %s (%s)%s", cpus, strerror(errno),
            np_errno_name(errno), a->opt.strict ? " (strict: the JVM does not start)" : "");
        return -1;
    }
    a->jvm_placed = true;
    struct np_target whole = {g->mine->cpus, t->nodes, t->mem};
    struct np_actual got;
    struct np_bind_result r;
    if (np_actual_init(&got) != 0)
        return -1;
    np_bind_self(a->topo.topology, &whole, &r, &got);
    np_cpulist(got_cpus, sizeof got_cpus, got.cpus);
    np_mem_actual_str(got_mem, sizeof got_mem, &got);
    np_actual_destroy(&got);
    if (r.cpu_errno != 0 || r.mem_errno != 0) {
        int e = r.cpu_errno ? r.cpu_errno : r.mem_errno;
        /* The placed threads would meet the same refusal: this warning is
         * theirs too. */
        np_once_level(&a->warned_mem, NP_LOG_WARNING);
        (a->opt.strict ? np_log_fatal : np_log_warning)(
            "scope=jvm: cannot set memory policy %s for the JVM: %s (%s)%s%s", mem, strerror(e),
            np_errno_name(e), r.mem_errno != 0 ? np_mem_refused_hint(e) : "",
            a->opt.strict ? " (strict: the JVM does not start)"
                          : "; it runs on the group's CPUs, its memory where the kernel puts it");
        rc = -1;
    } else if (!r.cpu_ok || !r.mem_ok) {
        np_log(NP_LOG_WARNING, "scope=jvm: the JVM reads back cpus=%s mem=%s, not cpus=%s mem=%s",
               got_cpus, got_mem, cpus, mem);
    }
    /* At a late attach the running threads keep the policies they had, and
     * so do the threads they create. */
    a->jvm_mem_set = !a->late && t->mem != NP_MEM_NONE && r.mem_errno == 0 && r.mem_ok;
    if (rc == 0 || !a->opt.strict) /* under strict a failure stops the JVM: nothing is placed */
        np_log(NP_LOG_INFO, "jvm group=%d node=%s cpus=%s mem=%s", a->opt.group, g->node_list,
               got_cpus, got_mem);
    return rc;
}

/* True when every node the kernel lets this process use is one of
 * `nodes`: its pages can be nowhere else. */
static bool only_nodes_allowed(hwloc_const_bitmap_t nodes)
{
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    bool only = allowed != NULL && np_bind_mems_allowed(allowed) == 0 &&
                !hwloc_bitmap_iszero(allowed) && hwloc_bitmap_isincluded(allowed, nodes);
    hwloc_bitmap_free(allowed);
    return only;
}

void np_agent_move_before_load(struct np_agent *a, const struct np_target *t)
{
    if (a->late || !a->jvm_mem_set)
        return;
    const struct np_targets *g = a->targets;
    if (t->mem != NP_MEM_INTERLEAVE && only_nodes_allowed(t->nodes)) {
        np_log(NP_LOG_INFO, "load: the memory touched before numapin loaded is on node %s "
                            "already, the only memory this process may use: nothing to move",
               g->node_list);
        return;
    }
    struct np_policy p;
    struct np_move r;
    int rc = np_policy_init(&p, t);
    if (rc == 0)
        rc = np_memory_bind_self(&p, &r);
    int e = errno;
    np_policy_destroy(&p);
    if (rc != 0) {
        np_log(NP_LOG_INFO, "load: the memory touched before numapin loaded stays where it is: "
                            "%s (%s)", strerror(e), np_errno_name(e));
        return;
    }
    np_log(NP_LOG_INFO,
           "load: the memory touched before numapin loaded moved to node %s (mappings=%d "
           "refused=%d ms=%.1f)", g->node_list, r.mappings, r.refused, r.ms);
}

void np_agent_use_numa_at_load(struct np_agent *a, const struct np_numa_flags *f,
                               int (*set_false)(const char *flag))
{
    if (!a->active || !a->jvm_placed || f->use_numa != 1)
        return;
    const struct np_targets *g = a->targets;
    char all[256];
    hwloc_bitmap_t usable = hwloc_bitmap_alloc();
    if (usable == NULL)
        return;
    np_topo_usable_nodes(&a->topo, usable);
    bool whole_machine = hwloc_bitmap_isincluded(usable, g->mine->nodes);
    np_cpulist(all, sizeof all, usable);
    hwloc_bitmap_free(usable);
    if (whole_machine)
        return; /* HotSpot's nodes are the group's: UseNUMA serves it */
    /* Where it cannot be set, the advice at VMInit warns that it is on. */
    if (set_false == NULL || set_false("UseNUMA") != 0)
        return;
    a->numa_turned_off = true;
    bool interleave_off = false;
    if (f->interleaving == 1 && f->interleaving_ergonomic == 1)
        interleave_off = set_false != NULL && set_false("UseNUMAInterleaving") == 0;
    np_log(NP_LOG_INFO,
           "UseNUMA turned off%s: HotSpot decided it for the whole machine (nodes %s) before "
           "numapin placed the JVM on node %s, and it would bind parts of the heap to every node; "
           "HotSpot turns it off itself under numactl --membind to one node",
           interleave_off ? ", and UseNUMAInterleaving with it" : "", all, g->node_list);
    if (f->interleaving == 1 && !interleave_off)
        np_log(NP_LOG_WARNING,
               "UseNUMAInterleaving is on: HotSpot interleaves the heap over every node (%s), not "
               "only node %s: run this JVM without -XX:+UseNUMAInterleaving", all, g->node_list);
}

/* What the pages a group's pools lack come to under the JVM's memory
 * policy (mode `mem`), into buf. */
static void short_pages_fate(char *buf, size_t len, enum np_mem_mode mem, const char *nodes,
                             bool pretouch, bool shm, const struct np_hugepages_need *n)
{
    const char *when = pretouch ? "at start-up (AlwaysPreTouch)" : "as the JVM touches them";
    /* HotSpot reserves the code cache, then the heap; what a reservation
     * cannot get in huge pages it maps with small ones.  A SysV heap
     * (UseSHM) is the only user: the code cache then takes small pages. */
    const char *fallback =
        shm ? "the heap gets small pages, and HotSpot warns \"Failed to reserve shared memory\""
            : "what does not fit of the code cache (reserved first) and the heap gets small "
              "pages, and HotSpot warns \"Failed to reserve and commit memory\"";
    long long lack = n->needed - n->free;
    if (mem == NP_MEM_BIND || mem == NP_MEM_BALANCING) {
        snprintf(buf, len, "under mem=%s the kernel lets HotSpot reserve huge pages only on "
                           "node %s: %s", np_mem_mode_name(mem), nodes, fallback);
        return;
    }
    if (n->free_all >= 0 && n->free_all < n->needed) {
        if (n->free_all == n->free)
            snprintf(buf, len, "%s", fallback);
        else
            snprintf(buf, len, "the pools of every node hold only %lld free: %s, and the huge "
                               "pages beyond node %s's come from other nodes", n->free_all,
                     fallback, nodes);
        return;
    }
    switch (mem) {
    case NP_MEM_INTERLEAVE:
        snprintf(buf, len, "under mem=interleave the kernel spreads the pages over node %s and "
                           "takes the %lld they lack from other nodes' pools %s: that part of the "
                           "heap is remote", nodes, lack, when);
        break;
    case NP_MEM_PREFERRED:
        snprintf(buf, len, "under mem=preferred the kernel takes the %lld pages node %s lacks "
                           "from other nodes' pools %s: that part of the heap is remote", lack,
                 nodes, when);
        break;
    default:
        snprintf(buf, len, "%s the kernel takes each page from the node of the thread that "
                           "first touches it (the group's CPUs are on node %s) and, that pool "
                           "empty, from another node's: up to %lld pages remote",
                 mem == NP_MEM_LOCAL ? "under mem=local" : "with no memory policy (mem=none)",
                 nodes, lack);
        break;
    }
}

/* The commands that make the pools of `nodes` hold n->needed: each node
 * its share of what they lack, now and at boot. */
static void short_pages_fix(char *buf, size_t len, const char *root, hwloc_const_bitmap_t nodes,
                            const struct np_hugepages_need *n)
{
    char size[32], boot[512] = "";
    np_hugepages_size_str(size, sizeof size, n->page);
    int k = hwloc_bitmap_weight(nodes), node;
    long long lack = n->needed - n->free, share = k > 0 ? (lack + k - 1) / k : lack;
    size_t used = (size_t)snprintf(buf, len, "to reserve them: ");
    NP_FOREACH(node, nodes) {
        long long nr = np_hugepages_nr(root, (unsigned)node, n->page);
        long long want = (nr > 0 ? nr : 0) + share;
        if (used < len)
            used += (size_t)snprintf(buf + used, len - used,
                                     "%secho %lld > /sys/devices/system/node/node%d/hugepages/"
                                     "hugepages-%llukB/nr_hugepages",
                                     node == hwloc_bitmap_first(nodes) ? "" : "; ", want, node,
                                     (unsigned long long)(n->page / 1024));
        size_t b = strlen(boot);
        snprintf(boot + b, sizeof boot - b, "%s%d:%lld", b > 0 ? "," : "", node, want);
    }
    if (used < len)
        snprintf(buf + used, len - used, ", or at boot hugepagesz=%s hugepages=%s%s", size, boot,
                 n->page >= (1ULL << 30) ? " (1G pages are best reserved at boot, before memory "
                                           "fragments)" : "");
}

enum np_status np_agent_large_pages_at_load(struct np_agent *a, const struct np_heap_flags *f,
                                            const char *root)
{
    if (!a->active || a->late || a->opt.scope != NP_SCOPE_JVM ||
        !(a->jvm_placed || a->opt.dryrun))
        return NP_OK;
    const struct np_targets *g = a->targets;
    /* The nodes the JVM's memory goes to: the policy's, or with none set
     * the group's own, where its CPUs are. */
    hwloc_const_bitmap_t nodes = a->opt.mem == NP_MEM_NONE ? g->mine->nodes : g->mem_nodes;
    char list[256];
    np_cpulist(list, sizeof list, nodes);
    if (f->heap_at_set == 1)
        np_log(NP_LOG_WARNING,
               "AllocateHeapAt=%s: HotSpot keeps the heap in a file there, whose pages are where "
               "that file system keeps them (a DAX device's own memory, or page cache placed by "
               "the memory policy of the thread that first touches it); numapin checks no huge "
               "pages for it, and its summary and report do not count it as this JVM's memory",
               f->heap_at != NULL ? f->heap_at : "(a directory)");
    if (f->large_pages != 1 || f->thp == 1)
        return NP_OK; /* no large pages, or transparent ones: no pool to count */
    hwloc_bitmap_t all = hwloc_bitmap_alloc();
    if (all == NULL)
        return NP_OK;
    np_topo_usable_nodes(&a->topo, all);
    struct np_hugepages_jvm jvm = {
        f->page_size > 0 ? (uint64_t)f->page_size : 0,
        f->heap_at_set == 1 || f->max_heap < 0 ? 0 : (uint64_t)f->max_heap,
        f->code_cache > 0 && f->shm != 1 ? (uint64_t)f->code_cache : 0,
        f->segmented == 1,
    };
    struct np_hugepages_need n;
    np_hugepages_check(root, &jvm, nodes, all, &n);
    hwloc_bitmap_free(all);
    char size[32], numbers[512];
    np_hugepages_size_str(size, sizeof size, n.page);
    const char *shm = f->shm == 1 ? " (a SysV shared-memory heap, UseSHM: the same pools; the "
                                    "code cache takes small pages)" : "";
    if (n.page == 0 || f->max_heap < 0) {
        np_log(NP_LOG_INFO, "large pages: %s is unknown: the huge pages node %s has for this JVM "
                            "are not checked", n.page == 0 ? "the page size" : "the heap's size",
               list);
        return NP_OK;
    }
    if (!n.known) {
        np_log(NP_LOG_INFO, "large pages: the free %s huge pages of node %s cannot be read (no "
                            "pool of that size there?): not checked", size, list);
        return NP_OK;
    }
    snprintf(numbers, sizeof numbers,
             "free=%lld needed=%lld size=%s nodes=%s heap_pages=%lld code_pages=%lld", n.free,
             n.needed, size, list, n.heap_pages, n.code_pages);
    if (n.enough) {
        np_log(NP_LOG_INFO, "large pages: node %s has the free %s huge pages this JVM reserves "
                            "(%s)%s: %s", list, size,
               f->shm == 1 ? "its maximum heap" : "its maximum heap and code cache", shm, numbers);
        return NP_OK;
    }
    /* The fields last, each followed by a space or the line's end, for
     * scripts. */
    /* Without NUMA support numapin sets no policy (np_agent_start then
     * turns mem= into none). */
    enum np_mem_mode mem = a->opt.dryrun || a->jvm_mem_set ? a->opt.mem : NP_MEM_NONE;
    char fate[1024], fix[2048];
    short_pages_fate(fate, sizeof fate, mem, list, f->pretouch == 1, f->shm == 1, &n);
    short_pages_fix(fix, sizeof fix, root, nodes, &n);
    bool fail = a->opt.strict && !a->opt.dryrun;
    (fail ? np_log_fatal : np_log_warning)(
        "large pages: node %s has fewer free %s huge pages than this JVM reserves (%s)%s; %s%s; "
        "%s; %s%s", list, size, f->shm == 1 ? "its maximum heap" : "its maximum heap and code cache",
        shm, fate,
        a->opt.dryrun ? " (dryrun: numapin placed nothing; this is what the placed JVM meets)" : "",
        fix, numbers, fail ? " (strict: the JVM does not start)" : "");
    return fail ? NP_ERR_RUNTIME : NP_OK;
}

void np_agent_attached(struct np_agent *a)
{
    if (!a->active || !a->jvm_placed || a->opt.dryrun)
        return;
    if (a->opt.mem == NP_MEM_NONE) {
        np_log(NP_LOG_INFO, "attach: mem=none, so the JVM's memory stays where it is");
        return;
    }
    const struct np_targets *g = np_agent_targets(a);
    if (g->none)
        return; /* the cpuset leaves the group no CPUs: nothing was placed */
    char nodes[256];
    np_cpulist(nodes, sizeof nodes, g->mem_nodes);
    struct np_move r;
    if (np_memory_move_self(&g->policy, g->mem_nodes, &r) != 0) {
        int e = errno;
        np_log(NP_LOG_WARNING,
               "attach: cannot move this JVM's memory to node %s: %s (%s); its threads run on the "
               "group's CPUs and what they allocate from now on lands there, what it holds "
               "already stays where it is", nodes, strerror(e), np_errno_name(e));
        return;
    }
    long long left = r.resident - r.after > 0 ? r.resident - r.after : 0;
    long long aliased = r.aliased_left < left ? r.aliased_left : left;
    np_log(NP_LOG_INFO,
           "attach: moved memory pages=%lld mib=%.1f node=%s ms=%.0f resident=%lld before=%lld "
           "after=%lld left=%lld left_aliased=%lld mappings=%d", r.moved, (double)r.moved / 256,
           nodes, r.ms, r.resident, r.before, r.after, left, aliased > 0 ? aliased : 0,
           r.mappings);
    if (r.refused > 0) {
        np_log(NP_LOG_WARNING,
               "attach: %d of this JVM's mappings refused the group's memory policy %s: %s (%s); "
               "their pages stay where they are", r.refused, g->mem_str, strerror(r.fail_errno),
               np_errno_name(r.fail_errno));
    } else if (r.resident > 0 && left * 100 > r.resident) {
        char why[256] = "";
        if (aliased > 0)
            snprintf(why, sizeof why,
                     "; %lld of them are mapped at more than one address (JDK 17's ZGC maps its "
                     "heap three times), which MPOL_MF_MOVE leaves where they are, and "
                     "MPOL_MF_MOVE_ALL %s", aliased,
                     r.aliased_errno == EPERM
                         ? "moves only with CAP_SYS_NICE, which this JVM lacks"
                     : r.aliased_errno == EBUSY
                         ? "is not used on a file another process maps (or whose mappers "
                           "numapin cannot see)"
                         : "did not move either");
        np_log(NP_LOG_WARNING,
               "attach: %lld of this JVM's %lld resident pages stay off node %s (no free memory "
               "there for them, or pages mapped more than once, which stay)%s", left, r.resident,
               nodes, why);
    }
}

/* The summary's mem_pages=, mem_local= and mem_huge= fields: where the
 * process's own resident memory is (np_memory: not the files it maps, each
 * page once), and its hugetlb pages, read once at exit and kept for the
 * report. */
void np_agent_exit_memory(struct np_agent *a, const struct np_targets *g, char *fields, size_t len)
{
    if (a->exit_memory.pages == NULL)
        np_memory_read(0, &a->exit_memory, NULL);
    char pages[1024], share[32], huge[1024];
    np_memory_pages_str(pages, sizeof pages, &a->exit_memory);
    np_memory_share_str(share, sizeof share, &a->exit_memory, g->mem_nodes);
    np_memory_huge_str(huge, sizeof huge, &a->exit_memory);
    snprintf(fields, len, " mem_pages=%s mem_local=%s mem_huge=%s", pages, share, huge);
}

enum np_mem_mode np_agent_jvm_mem(const struct np_agent *a)
{
    return a->jvm_placed && !a->late && !a->opt.dryrun ? a->opt.mem : NP_MEM_NONE;
}

bool np_agent_access_now(const struct np_agent *a, struct np_thread_access **threads, int *n,
                         struct np_access *acc, char *why, size_t len)
{
    /* With kernel.numa_balancing=0 the threads' counts are not read: the
     * kernel keeps none.  Unreadable (out of memory): no thread listed,
     * which reads as a kernel keeping no counts. */
    int balancing = np_read_numa_balancing(NULL);
    if (balancing != 0) {
        np_access_read_threads(0, threads, n, acc);
    } else {
        *threads = NULL;
        *n = 0;
        memset(acc, 0, sizeof *acc);
    }
    /* A thread without numapin's policy has the default one, under which
     * the kernel samples the memory it touches. */
    return np_access_sampled(why, len, balancing, acc->listed, np_agent_jvm_mem(a));
}

void np_agent_exit_access_read(struct np_agent *a, struct np_report_access *acc)
{
    if (!a->exit_access_read) {
        a->exit_access_read = true;
        a->exit_access_sampled =
            np_agent_access_now(a, &a->exit_threads, &a->exit_nthreads, &a->exit_access,
                                a->exit_access_why, sizeof a->exit_access_why);
        if (!a->exit_access_sampled)
            np_log(NP_LOG_INFO, "access: no access locality for this JVM: %s",
                   a->exit_access_why);
    }
    *acc = (struct np_report_access){
        a->exit_access_sampled ? &a->exit_access : NULL,
        a->exit_access_sampled ? NULL : a->exit_access_why,
        a->exit_threads,
        a->exit_nthreads,
    };
}

void np_agent_exit_access(struct np_agent *a, const struct np_targets *g, char *fields, size_t len)
{
    struct np_report_access acc;
    np_agent_exit_access_read(a, &acc);
    if (acc.process != NULL)
        np_access_fields(fields, len, acc.process, g->mem_nodes);
    else
        snprintf(fields, len, " access_local=unsampled");
}
