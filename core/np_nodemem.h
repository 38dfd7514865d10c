/* np_nodemem: how much of a process's memory is resident on each NUMA
 * node.
 *
 * Read from /proc/PID/numa_maps, the kernel's count of each mapping's
 * pages on each node (what numastat -p reads): neither hwloc nor libnuma
 * tells it.  Reading it walks the process's page tables, so it costs in
 * proportion to its resident memory: call it seconds apart, not per
 * thread. */
#ifndef NP_NODEMEM_H
#define NP_NODEMEM_H

/* Adds to bytes[n], for each node n below nnodes (OS indexes), the bytes
 * one numa_maps line says are resident there.  A line not in the kernel's
 * form adds nothing. */
void np_nodemem_line(const char *line, unsigned long long *bytes, int nnodes);

/* Sets bytes[0..nnodes) to the resident bytes on each node of the
 * numa_maps file at `path` (NULL: /proc/self/numa_maps).  Returns 0, or -1
 * with errno set when it cannot be read. */
int np_nodemem_read(const char *path, unsigned long long *bytes, int nnodes);

#endif
