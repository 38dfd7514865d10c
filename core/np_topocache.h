/* np_topocache: this machine's topology kept between JVM starts.
 *
 * hwloc discovers a machine by reading hundreds of files under /sys, which
 * takes milliseconds on small machines and more on large ones; loading its
 * own XML export of the same topology takes a tenth of that.  numapin keeps
 * that export in a private directory (np_file_private_dir) and loads it
 * instead when every fact the topology depends on is as it was when the
 * file was written (struct np_topocache_key): anything else is a stale or
 * foreign file, ignored and replaced.  The cgroup's allowed CPUs and nodes
 * are read live even from the file (hwloc's THISSYSTEM_ALLOWED_RESOURCES),
 * and what the file holds must contain them.
 *
 * The file is one per CPU set: topology-HASH.xml, HASH of the process's
 * CPUs and memory nodes, so JVMs of different cpusets sharing the
 * directory do not replace each other's file. */
#ifndef NP_TOPOCACHE_H
#define NP_TOPOCACHE_H

#include <hwloc.h>
#include <stddef.h>

/* The format of the file's stamps and of numapin's load settings (the
 * types hwloc keeps): a file of another format is not used. */
#define NP_TOPOCACHE_FORMAT 1

/* The facts a cached topology must match, each as text, each stored in
 * the file as an info attribute of the root object (numapin.cache.NAME). */
struct np_topocache_key {
    char boot[64];         /* boot: /proc/sys/kernel/random/boot_id */
    char cpus_possible[512]; /* cpus_possible: /sys/devices/system/cpu/possible, as the kernel words it */
    char cpus_online[512]; /* cpus_online: /sys/devices/system/cpu/online, likewise */
    char nodes_online[512];/* nodes_online: /sys/devices/system/node/online, or "" */
    char cpus[2048];       /* cpus: the CPUs this process may run on (sched_getaffinity) */
    char mems[512];        /* mems: the nodes it may take memory from (MPOL_F_MEMS_ALLOWED) */
    char version[64];      /* version: the format and hwloc's API version */
};

/* Reads the live facts.  Returns 0, or -1 with a clause in err ("cannot
 * read /proc/sys/kernel/random/boot_id: ..."). */
int np_topocache_key_read(struct np_topocache_key *k, char *err, size_t errlen);

/* The file's name for k, into buf: topology-HASH.xml. */
void np_topocache_name(const struct np_topocache_key *k, char *buf, size_t len);

/* Stamps `topology` (loaded live) with k before it is exported.  Returns
 * 0, or -1 with errno. */
int np_topocache_stamp(hwloc_topology_t topology, const struct np_topocache_key *k);

/* Why `topology` (loaded from a file) may not stand for this machine now:
 * NULL when its stamps are k's, its CPUs are among the possible ones and
 * its present CPUs among the online ones, and it holds every CPU and node
 * hwloc finds allowed; else a clause ("was made on another boot"). */
const char *np_topocache_stale(hwloc_topology_t topology, const struct np_topocache_key *k);

/* Reads file `name` of the directory open as dirfd into a new buffer (NUL
 * terminated, *len counting the NUL, as hwloc_topology_set_xmlbuffer
 * wants), refusing what numapin would not have written: a symbolic link,
 * anything but a regular file, a file of another owner, one any other user
 * may read or write, one with other hard links, an empty or oversized one.
 * Returns the buffer (free() it), or NULL with errno: ENOENT when there is
 * no file, else with a clause in *why. */
char *np_topocache_read(int dirfd, const char *name, size_t *len, const char **why);

#endif
