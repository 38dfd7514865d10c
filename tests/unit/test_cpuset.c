/* np_cpuset: where the cpuset is read when hwloc cannot find it.  A
 * container on cgroup v1 without a cgroup namespace has its own cgroup's
 * directory mounted where the cpuset controller is, while
 * /proc/self/cgroup names the host's path: the root's effective CPUs are
 * the container's.  Where the path is there, or on cgroup v2 with a
 * namespace ("/"), hwloc reads it and the watch does not. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "np_cpuset.h"
#include "tests.h"

struct fake {
    char dir[64], mounts[128], cgroup[128];
};

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* A mount table with the cpuset controller (v1, at DIR/cpuset) and the
 * unified hierarchy (at DIR/unified), and the process's cgroup list. */
static void fake_init(struct fake *f, const char *cgroup_lines)
{
    snprintf(f->dir, sizeof f->dir, "/tmp/np-cpuset-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(f->dir));
    snprintf(f->mounts, sizeof f->mounts, "%s/mounts", f->dir);
    snprintf(f->cgroup, sizeof f->cgroup, "%s/cgroup", f->dir);
    char text[1024], path[256];
    snprintf(text, sizeof text,
             "proc /proc proc rw,nosuid 0 0\n"
             "cgroup2 %s/unified cgroup2 rw,nosuid,nodev,noexec 0 0\n"
             "cgroup %s/cpuset cgroup rw,nosuid,nodev,noexec,relatime,cpuset 0 0\n",
             f->dir, f->dir);
    put(f->mounts, text);
    put(f->cgroup, cgroup_lines);
    snprintf(path, sizeof path, "%s/cpuset", f->dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/cpuset/cpuset.effective_cpus", f->dir);
    put(path, "1\n");
}

static void fake_destroy(struct fake *f)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(a_cgroup_path_missing_under_the_mount_reads_its_root)
{
    struct fake f;
    fake_init(&f, "12:cpuset:/np-ct-1\n11:memory:/np-ct-1\n0::/np-ct-1\n");
    char out[256], want[256];
    ck_assert_int_eq(np_cpuset_root_file(f.mounts, f.cgroup, out, sizeof out), 1);
    snprintf(want, sizeof want, "%s/cpuset/cpuset.effective_cpus", f.dir);
    ck_assert_str_eq(out, want);
    fake_destroy(&f);
}
END_TEST

START_TEST(a_cgroup_path_under_the_mount_is_left_to_hwloc)
{
    struct fake f;
    fake_init(&f, "3:cpuset,cpu:/np-ct-1\n0::/\n");
    char out[256], path[256];
    snprintf(path, sizeof path, "%s/cpuset/np-ct-1", f.dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    ck_assert_int_eq(np_cpuset_root_file(f.mounts, f.cgroup, out, sizeof out), 0);
    fake_destroy(&f);
    /* The root cgroup, or a cgroup namespace's own: "/" is the mount. */
    fake_init(&f, "3:cpuset:/\n");
    ck_assert_int_eq(np_cpuset_root_file(f.mounts, f.cgroup, out, sizeof out), 0);
    fake_destroy(&f);
}
END_TEST

START_TEST(no_cpuset_mounted_or_no_file_at_the_root_is_nothing)
{
    struct fake f;
    char out[256], path[256];
    fake_init(&f, "12:memory:/np-ct-1\n0::/np-ct-1\n");
    /* Only v2 would be looked at then: its root has no cpuset file. */
    put(f.mounts, "cgroup2 /nonexistent cgroup2 rw 0 0\n");
    ck_assert_int_eq(np_cpuset_root_file(f.mounts, f.cgroup, out, sizeof out), 0);
    fake_destroy(&f);
    fake_init(&f, "12:cpuset:/np-ct-1\n");
    snprintf(path, sizeof path, "%s/cpuset/cpuset.effective_cpus", f.dir);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(np_cpuset_root_file(f.mounts, f.cgroup, out, sizeof out), 0);
    fake_destroy(&f);
    ck_assert_int_eq(np_cpuset_root_file("/nonexistent/mounts", "/nonexistent/cgroup", out, sizeof out), 0);
}
END_TEST

Suite *cpuset_suite(void)
{
    Suite *s = suite_create("cpuset");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, a_cgroup_path_missing_under_the_mount_reads_its_root);
    tcase_add_test(tc, a_cgroup_path_under_the_mount_is_left_to_hwloc);
    tcase_add_test(tc, no_cpuset_mounted_or_no_file_at_the_root_is_nothing);
    suite_add_tcase(s, tc);
    return s;
}
