/* np_nodemem: how much of a process's memory is resident on each NUMA
 * node.
 *
 * Read from /proc/PID/numa_maps, the kernel's count of each mapping's
 * pages on each node (what numastat -p reads): neither hwloc nor libnuma
 * tells it.  Reading it walks the process's page tables, so it costs in
 * proportion to the resident memory: call it seconds apart, not per
 * thread.  The agent's numapin.NodeMemory (its own process) and
 * `numapin check` (another one) read it here. */
#ifndef NP_NODEMEM_H
#define NP_NODEMEM_H

/* Nodes counted: OS indexes 0 to NP_NODEMEM_MAX_NODE. */
#define NP_NODEMEM_MAX_NODE 4095

/* Resident bytes by node: bytes[0..n), n one past the highest node with
 * memory seen (0 when none). */
struct np_nodemem {
    unsigned long long *bytes;
    int n;
};

/* Adds what one numa_maps line says is resident on each node.  A line not
 * in the kernel's form adds nothing.  Returns 0, or -1 when memory runs
 * out (nothing added). */
int np_nodemem_line(const char *line, struct np_nodemem *m);

/* Reads the numa_maps file at `path` (NULL: /proc/self/numa_maps) into
 * *m, which the caller releases with np_nodemem_free.  Returns 0, or -1
 * with errno set (*m empty). */
int np_nodemem_read(const char *path, struct np_nodemem *m);

void np_nodemem_free(struct np_nodemem *m);

#endif
