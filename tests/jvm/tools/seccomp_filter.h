/* seccomp_filter.h: makes chosen system calls fail with an errno, the way a
 * container's seccomp profile does, in the calling thread and every thread
 * and program it starts from then on.  Raw BPF through prctl(2), no
 * libseccomp; x86-64 only (the filter kills a process of another
 * architecture, whose system call numbers differ).  Used by the
 * seccomp-deny launcher (the JVM tests) and by the unit tests of binding
 * (tests/unit/test_bind.c). */
#ifndef NP_SECCOMP_FILTER_H
#define NP_SECCOMP_FILTER_H

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>

#ifndef __x86_64__
#error "seccomp_filter.h knows x86-64 system call numbers only"
#endif

#define SECCOMP_DENY_MAX 64

/* Denies the n (at most SECCOMP_DENY_MAX) system calls nrs with errno err.
 * Returns 0, or -1 with errno from prctl. */
static inline int seccomp_deny(const int *nrs, int n, int err)
{
    /* arch check, load nr, one compare-and-return per denied call, allow */
    struct sock_filter f[4 + 2 * SECCOMP_DENY_MAX + 1];
    int k = 0;
    if (n > SECCOMP_DENY_MAX)
        n = SECCOMP_DENY_MAX;
    f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (int j = 0; j < n; j++) {
        f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[j], 0, 1);
        f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                              SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA));
    }
    f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog fp = {.len = (unsigned short)k, .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0);
}

#endif
