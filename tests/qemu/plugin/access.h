/*
 * What the access-counting QEMU plugin (access.c) and the guest's helper
 * (accmark.c) agree on: the user-space virtual addresses the guest touches
 * to talk to the plugin. A write or read at one of them, by any process on
 * any vCPU, is seen by the plugin's memory callback.
 *
 *   ACC_START            a measured window begins
 *   ACC_END              the window ends: the plugin writes its file
 *   ACC_CAL + (n * ACC_CAL_PAGES + i) * 4096
 *                        calibration page i of node n: a page the guest
 *                        bound to node n (and checked it is there), so the
 *                        address the plugin sees for it is known to be
 *                        node n's memory
 *
 * All lie in one 2 MiB span at ACC_BASE, in the lower half (user space) and
 * far from where Linux puts mappings of its own accord.
 */
#ifndef NUMAPIN_QEMU_ACCESS_H
#define NUMAPIN_QEMU_ACCESS_H

#define ACC_BASE 0x3ace00000000ULL
#define ACC_SPAN 0x200000ULL
#define ACC_START (ACC_BASE + 0x0000)
#define ACC_END (ACC_BASE + 0x1000)
#define ACC_CAL (ACC_BASE + 0x100000)
#define ACC_CAL_PAGES 16
#define ACC_MAX_NODES 8
#define ACC_PAGE 4096ULL

#endif
