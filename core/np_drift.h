/* np_drift: what the agent's rescan thread checks every period
 * (np_agent_check and np_agent_replan, declared in np_agent.h).
 *
 * - The process's cpuset (np_cpuset): when kubelet, an NRI plugin or an
 *   operator rewrites it, the group is planned again on the CPUs it now
 *   allows (it may move to another node), the new targets are published
 *   whole, and placed threads get their new CPUs from outside, one
 *   `placed ... how=replan` line for each whose CPUs the plan changed
 *   (also when the kernel had already moved it there) or that numapin
 *   put back on them.  Their
 *   memory policy stays what it was (Linux lets only a thread set its
 *   own), which one line says.  A JVM started bound to fewer CPUs than
 *   its cpuset (taskset) stays within them.  A cpuset that leaves the
 *   group no CPUs gets one warning, and threads are left to the kernel.
 * - Drift: a placed thread whose CPUs are no longer what numapin set (a
 *   cpuset rewrite on kernels before 6.2, an operator's taskset, a move to
 *   another cgroup) is put back, one `placed ... how=drift` line each
 *   (drift=restore), or noted once, one `drifted` line, and left
 *   (drift=log).  Under scope=jvm, the JVM's other threads whose CPUs
 *   left the group's are put back too, one `jvm ... how=drift` line a
 *   pass.
 * - The marker `numapin check` reads (np_marker): refreshed when the
 *   record or the plan changed.
 *
 * Everything here runs on the one thread that calls np_agent_check; it
 * reads what callbacks share only through their own synchronisation (the
 * record's lock, the targets' publication). */
#ifndef NP_DRIFT_H
#define NP_DRIFT_H

#include <hwloc.h>
#include <stdbool.h>
#include <sys/types.h>

#include "np_record.h"

struct np_agent;
struct np_targets;
struct np_drift;

/* At the end of start-up, before any callback: reads what the first check
 * cannot read later (the cpuset at start, on a fake topology). */
void np_drift_start(struct np_agent *a);

void np_drift_free(struct np_drift *d);

#endif
