/* np_cpuset: the CPUs the process's cgroup cpuset allows, read again
 * whenever asked, to notice when kubelet, an NRI plugin or an operator
 * rewrites it while the JVM runs.
 *
 * hwloc reads the cpuset (cgroup v2 cpuset.cpus.effective, cgroup v1
 * cpuset.effective_cpus, found through /proc/self/cgroup and the mount
 * table) when it loads a topology; hwloc_topology_allow with
 * HWLOC_ALLOW_FLAG_LOCAL_RESTRICTIONS reads it again on a topology loaded
 * with HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED, changing nothing but the
 * allowed set it returns, which is cheap (a few small files), unlike
 * loading a topology.  The watch keeps such a topology of its own, private
 * to its one caller (the agent's rescan thread), never the one ThreadStart
 * callbacks read.  With HWLOC_TOPOLOGY_FLAG_THISSYSTEM_ALLOWED_RESOURCES
 * the same holds for a fake topology taken as this machine's
 * (HWLOC_SYNTHETIC or HWLOC_XMLFILE with HWLOC_THISSYSTEM=1): its PUs are
 * restricted by the real cgroup, by OS index.
 *
 * What a cpuset write does to threads' CPUs depends on the kernel: before
 * Linux 6.2 it sets every task of the cgroup to the new cpuset, forgetting
 * a thread's own sched_setaffinity; later kernels keep the requested mask
 * (intersected with the cpuset, or the cpuset when that is empty).  Either
 * way the allowed set read here is the cpuset itself.
 *
 * hwloc finds the cpuset at the path /proc/self/cgroup names under the
 * cgroup file system's mount point.  A container on cgroup v1 without a
 * cgroup namespace of its own (containerd's and Docker's default there)
 * has its own cgroup's directory mounted at that point, and
 * /proc/self/cgroup names the host's path, which is not under it: hwloc
 * then sees no cpuset.  The watch reads the effective CPUs at the mount's
 * root instead in that case, as the JDK's container support does. */
#ifndef NP_CPUSET_H
#define NP_CPUSET_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>

struct np_cpuset;

/* Opens a watch of this process's cpuset.  Returns it, or NULL with a
 * message in err (hwloc cannot load a topology of this machine). */
struct np_cpuset *np_cpuset_open(char *err, size_t errlen);

/* The CPUs (OS indexes) the cpuset allows now, into out.  Returns 0, or
 * -1 with errno set when hwloc cannot read them. */
int np_cpuset_read(struct np_cpuset *w, hwloc_bitmap_t out);

void np_cpuset_close(struct np_cpuset *w);

/* True when w reads the cpuset at its mount's root (above), where hwloc's
 * topology saw no restriction. */
bool np_cpuset_from_root(const struct np_cpuset *w);

/* The file at the root of the cpuset's cgroup mount, from a mount table
 * (mounts, as /proc/self/mounts) and a cgroup list (cgroup, as
 * /proc/self/cgroup), when the process's cgroup path is not under the
 * mount: into out, returning 1.  Returns 0 when it is (hwloc reads it),
 * or when no cpuset is mounted, or the root has no such file. */
int np_cpuset_root_file(const char *mounts, const char *cgroup, char *out, size_t len);

#endif
