/* seccomp-deny: runs a program under a seccomp filter that makes some system
 * calls fail with an errno, the way a container's seccomp profile does.
 *
 *   seccomp-deny SYSCALL[,SYSCALL...] [-e ERRNO] -- PROGRAM [ARG...]
 *
 * SYSCALL is a name from the table below or a number; "none" denies nothing
 * (the filter is installed all the same: a control run).  ERRNO is a number
 * or EPERM, EACCES, ENOSYS, EINVAL (default EPERM).  The filter
 * (seccomp_filter.h) is inherited by the program and by every thread it
 * creates.
 *
 * Built by mk/lifecycle.mk into build/tools/seccomp-deny; the JVM tests
 * compile it themselves when it is not there. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp_filter.h"

static const struct { const char *name; int nr; } calls[] = {
    {"sched_setaffinity", SYS_sched_setaffinity},
    {"sched_getaffinity", SYS_sched_getaffinity},
    {"set_mempolicy", SYS_set_mempolicy},
    {"get_mempolicy", SYS_get_mempolicy},
    {"mbind", SYS_mbind},
    {"migrate_pages", SYS_migrate_pages},
    {"move_pages", SYS_move_pages},
};

static const struct { const char *name; int e; } errnos[] = {
    {"EPERM", EPERM}, {"EACCES", EACCES}, {"ENOSYS", ENOSYS}, {"EINVAL", EINVAL},
};

static int usage(void)
{
    fprintf(stderr, "usage: seccomp-deny SYSCALL[,SYSCALL...]|none [-e ERRNO] -- PROGRAM [ARG...]\n");
    return 2;
}

static int syscall_nr(const char *s)
{
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
        if (strcmp(s, calls[i].name) == 0)
            return calls[i].nr;
    char *end;
    long n = strtol(s, &end, 10);
    return *s != '\0' && *end == '\0' && n >= 0 && n < 4096 ? (int)n : -1;
}

static int errno_value(const char *s)
{
    for (size_t i = 0; i < sizeof errnos / sizeof *errnos; i++)
        if (strcmp(s, errnos[i].name) == 0)
            return errnos[i].e;
    char *end;
    long n = strtol(s, &end, 10);
    return *s != '\0' && *end == '\0' && n > 0 && n < 4096 ? (int)n : -1;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return usage();
    int nrs[SECCOMP_DENY_MAX], n = 0, err = EPERM, i = 2;
    if (strcmp(argv[1], "none") != 0) {
        char *list = strdup(argv[1]);
        for (char *tok = strtok(list, ","); tok != NULL; tok = strtok(NULL, ",")) {
            int nr = syscall_nr(tok);
            if (nr < 0 || n == (int)(sizeof nrs / sizeof *nrs)) {
                fprintf(stderr, "seccomp-deny: unknown system call '%s'\n", tok);
                return 2;
            }
            nrs[n++] = nr;
        }
        free(list);
    }
    if (strcmp(argv[i], "-e") == 0) {
        if (i + 1 >= argc || (err = errno_value(argv[i + 1])) < 0) {
            fprintf(stderr, "seccomp-deny: bad errno '%s'\n", i + 1 < argc ? argv[i + 1] : "");
            return 2;
        }
        i += 2;
    }
    if (i >= argc || strcmp(argv[i], "--") != 0 || i + 1 >= argc)
        return usage();
    char **prog = &argv[i + 1];

    if (seccomp_deny(nrs, n, err) != 0) {
        perror("seccomp-deny: prctl");
        return 126;
    }
    execvp(prog[0], prog);
    fprintf(stderr, "seccomp-deny: cannot run %s: %s\n", prog[0], strerror(errno));
    return 127;
}
