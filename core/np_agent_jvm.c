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
            "scope=jvm: cannot set memory policy %s for the JVM: %s (%s)%s", mem, strerror(e),
            np_errno_name(e),
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
    long long left = r.resident - r.after;
    np_log(NP_LOG_INFO,
           "attach: moved memory pages=%lld mib=%.1f node=%s ms=%.0f resident=%lld before=%lld "
           "after=%lld left=%lld mappings=%d", r.moved, (double)r.moved / 256, nodes, r.ms,
           r.resident, r.before, r.after, left > 0 ? left : 0, r.mappings);
    if (r.refused > 0)
        np_log(NP_LOG_WARNING,
               "attach: %d of this JVM's mappings refused the group's memory policy %s: %s (%s); "
               "their pages stay where they are", r.refused, g->mem_str, strerror(r.fail_errno),
               np_errno_name(r.fail_errno));
    else if (r.resident > 0 && left * 100 > r.resident)
        np_log(NP_LOG_WARNING,
               "attach: %lld of this JVM's %lld resident pages stay off node %s (no free memory "
               "there for them, or pages shared with another process, which stay)", left,
               r.resident, nodes);
}

/* The summary's mem_pages= and mem_local= fields: where the process's own
 * resident memory is (np_memory: not the files it maps), read once at
 * exit and kept for the report. */
void np_agent_exit_memory(struct np_agent *a, const struct np_targets *g, char *fields, size_t len)
{
    if (a->exit_memory.pages == NULL)
        np_memory_read(0, &a->exit_memory, NULL);
    char pages[1024], share[32];
    np_memory_pages_str(pages, sizeof pages, &a->exit_memory);
    np_memory_share_str(share, sizeof share, &a->exit_memory, g->mem_nodes);
    snprintf(fields, len, " mem_pages=%s mem_local=%s", pages, share);
}
