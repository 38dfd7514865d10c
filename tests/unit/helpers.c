/* Helpers shared by the test suites. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "np_topo.h"
#include "tests.h"

extern char **environ;

char *t_read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf == NULL)
            break;
        if (n + 1 >= cap) {
            char *b = realloc(buf, cap *= 2);
            if (b == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r < 0) {
                free(buf);
                buf = NULL;
            }
            break;
        }
        n += (size_t)r;
    }
    close(fd);
    if (buf != NULL) {
        buf[n] = '\0';
        if (len != NULL)
            *len = n;
    }
    return buf;
}

int t_write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    size_t w = fwrite(data, 1, len, f);
    return (fclose(f) == 0 && w == len) ? 0 : -1;
}

void t_tmpdir(char *buf, size_t len)
{
    const char *base = getenv("TMPDIR");
    snprintf(buf, len, "%s/numapin-test-XXXXXX", base && *base ? base : "/tmp");
    ck_assert_msg(mkdtemp(buf) != NULL, "mkdtemp %s: %s", buf, strerror(errno));
}

void t_full_tmpfs(const char *fs)
{
    ck_assert_int_eq(mkdir(fs, 0700), 0);
    ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
    ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
    ck_assert_int_eq(mount("tmpfs", fs, "tmpfs", 0, "size=4k"), 0);
    char filler[4200];
    snprintf(filler, sizeof filler, "%s/filler", fs);
    int fd = open(filler, O_WRONLY | O_CREAT, 0600);
    ck_assert_int_ge(fd, 0);
    char block[512] = {0};
    while (write(fd, block, sizeof block) > 0)
        ;
    close(fd);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    remove(path);
    return 0;
}

void t_rmdir(const char *dir)
{
    /* Depth first, symlinks removed themselves, never followed. */
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int t_count_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "opendir %s: %s", dir, strerror(errno));
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
             strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* Appends what is readable on fd to *buf; returns 0 at EOF, 1 otherwise. */
static int drain(int fd, char **buf, size_t *n, size_t *cap)
{
    if (*n + 4097 > *cap) {
        *cap = (*n + 4097) * 2;
        char *b = realloc(*buf, *cap);
        ck_assert_ptr_nonnull(b);
        *buf = b;
    }
    ssize_t r = read(fd, *buf + *n, 4096);
    if (r < 0 && errno == EINTR)
        return 1;
    if (r <= 0)
        return 0;
    *n += (size_t)r;
    (*buf)[*n] = '\0';
    return 1;
}

int t_run(char *const argv[], char **out, char **err)
{
    int po[2], pe[2];
    ck_assert_int_eq(pipe2(po, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(pe, O_CLOEXEC), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, po[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, pe[1], STDERR_FILENO);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(po[1]);
    close(pe[1]);
    ck_assert_msg(rc == 0, "cannot run %s: %s", argv[0], strerror(rc));
    size_t no = 0, ne = 0, co = 0, ce = 0;
    *out = NULL;
    *err = NULL;
    drain(-1, out, &no, &co); /* allocates; read(-1) fails harmlessly */
    drain(-1, err, &ne, &ce);
    (*out)[0] = (*err)[0] = '\0';
    struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || fds[i].revents == 0)
                continue;
            if (!drain(fds[i].fd, i == 0 ? out : err, i == 0 ? &no : &ne,
                       i == 0 ? &co : &ce)) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        ck_assert_int_eq(errno, EINTR);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void t_load(struct np_topo *t, const char *synth, const char *xml, const char *restrict_cpus)
{
    char err[1024], path[4096];
    if (xml != NULL && xml[0] != '/') {
        const char *dir = getenv("NUMAPIN_TOPOLOGIES");
        ck_assert_msg(dir != NULL && *dir, "NUMAPIN_TOPOLOGIES is not set");
        snprintf(path, sizeof path, "%s/%s", dir, xml);
        xml = path;
    }
    ck_assert_msg(np_topo_load(t, xml, synth, err, sizeof err) == 0, "%s", err);
    if (restrict_cpus != NULL) {
        hwloc_bitmap_t set = t_bitmap(restrict_cpus);
        ck_assert_msg(np_topo_restrict(t, set, err, sizeof err) == 0, "--restrict %s: %s",
                      restrict_cpus, err);
        hwloc_bitmap_free(set);
    }
}

void t_add_matrix(hwloc_topology_t topo, unsigned n, const hwloc_uint64_t *values)
{
    hwloc_obj_t objs[64];
    ck_assert_uint_le(n, 64);
    for (unsigned i = 0; i < n; i++)
        ck_assert_ptr_nonnull(objs[i] = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, i));
    hwloc_distances_add_handle_t h = hwloc_distances_add_create(
        topo, "test", HWLOC_DISTANCES_KIND_FROM_USER | HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0);
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(hwloc_distances_add_values(topo, h, n, objs, (hwloc_uint64_t *)values, 0), 0);
    ck_assert_int_eq(hwloc_distances_add_commit(topo, h, 0), 0);
}

hwloc_bitmap_t t_bitmap(const char *list)
{
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    ck_assert_ptr_nonnull(b);
    if (*list != '\0')
        ck_assert_int_eq(hwloc_bitmap_list_sscanf(b, list), 0);
    return b;
}

const char *t_list(hwloc_const_bitmap_t set, char *buf, size_t len)
{
    if (hwloc_bitmap_iszero(set))
        buf[0] = '\0';
    else
        hwloc_bitmap_list_snprintf(buf, len, set);
    return buf;
}

int t_count_lines(const char *text, const char *needle)
{
    int n = 0;
    const char *line = text;
    while (line != NULL && *line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *hit = memmem(line, len, needle, strlen(needle));
        n += hit != NULL;
        line = end ? end + 1 : NULL;
    }
    return n;
}
