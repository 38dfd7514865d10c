/* The topology cache (np_topocache, through np_topo_load_cached): a file
 * written by one load is read by the next and gives the same machine; a
 * file that is stale (another boot, other CPUs online, another CPU set,
 * another format), foreign (another machine's hwloc XML, a truncated or
 * empty file, junk), or not numapin's to trust (a symlink, a FIFO, a
 * directory, a file other users may write, another user's, a hard link)
 * is never used and never fails the load, and is replaced; a directory
 * that is not private is not used; JVMs starting at once all load, and
 * leave one whole file and no temporary ones.
 *
 * These run on this machine's real topology, so the HWLOC_ variables of
 * the environment are set aside while they run. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "np_topo.h"
#include "np_topocache.h"
#include "tests.h"

#define NOBODY 65534

static char root[256], dir[512], file[1024];
static char *saved_env[16];
static int nsaved;

static void set_aside_hwloc_env(void)
{
    extern char **environ;
    nsaved = 0;
    for (int again = 1; again;) {
        again = 0;
        for (char **e = environ; *e != NULL && nsaved < 16; e++)
            if (strncmp(*e, "HWLOC_", 6) == 0) {
                saved_env[nsaved] = strdup(*e);
                char *eq = strchr(saved_env[nsaved], '=');
                *eq = '\0';
                unsetenv(saved_env[nsaved]);
                *eq = '=';
                nsaved++;
                again = 1;
                break;
            }
    }
}

static void setup(void)
{
    set_aside_hwloc_env();
    t_tmpdir(root, sizeof root);
    snprintf(dir, sizeof dir, "%s/cache", root);
    struct np_topocache_key k;
    char err[256], name[64];
    ck_assert_msg(np_topocache_key_read(&k, err, sizeof err) == 0, "key: %s", err);
    np_topocache_name(&k, name, sizeof name);
    snprintf(file, sizeof file, "%s/%s", dir, name);
}

static void teardown(void)
{
    t_rmdir(root);
    for (int i = 0; i < nsaved; i++)
        putenv(saved_env[i]); /* kept for the life of the process */
}

/* Loads through the cache in `d`; the note into note.  Fails the test when
 * the load fails; returns the machine's summary line into summary. */
static void load(const char *d, char *note, size_t notelen, char *summary, size_t sumlen)
{
    struct np_topo t;
    char err[1024];
    int rc = np_topo_load_cached(&t, d, note, notelen, err, sizeof err);
    ck_assert_msg(rc == 0, "the load failed: %s (note: %s)", err, note);
    np_topo_summary(&t, summary, sumlen);
    np_topo_destroy(&t);
}

/* The summary of a plain discovery, without the cache. */
static void live_summary(char *summary, size_t len)
{
    struct np_topo t;
    char err[1024];
    ck_assert_msg(np_topo_load(&t, NULL, NULL, err, sizeof err) == 0, "live load: %s", err);
    np_topo_summary(&t, summary, len);
    np_topo_destroy(&t);
}

/* Loads twice: the first must not use the file and say `why`, replacing
 * it; the second must read the replacement. */
static void expect_ignored_then_replaced(const char *why, const char *what)
{
    char note[1400], sum[2048], live[2048];
    live_summary(live, sizeof live);
    load(dir, note, sizeof note, sum, sizeof sum);
    ck_assert_msg(strstr(note, "discovered") == note && strstr(note, why) != NULL,
                  "%s: the note is \"%s\", not a discovery saying \"%s\"", what, note, why);
    ck_assert_msg(strcmp(sum, live) == 0, "%s: the machine differs from discovery's:\n%s\n%s", what,
                  sum, live);
    load(dir, note, sizeof note, sum, sizeof sum);
    ck_assert_msg(strncmp(note, "read from ", 10) == 0,
                  "%s: after replacing it, the next load did not read the cache: %s", what, note);
    ck_assert_int_eq(t_count_files(dir, ".numapin-"), 0);
}

/* Writes a valid cache file, then returns its text (caller frees). */
static char *valid_file(void)
{
    char note[1400], sum[2048];
    unlink(file);
    load(dir, note, sizeof note, sum, sizeof sum);
    ck_assert_msg(strstr(note, "written to") != NULL, "no cache written: %s", note);
    char *text = t_read_file(file, NULL);
    ck_assert_ptr_nonnull(text);
    return text;
}

/* Rewrites the value of stamp `name` in the cache file to `value`. */
static void forge_stamp(const char *name, const char *value)
{
    char *text = valid_file();
    char attr[128];
    snprintf(attr, sizeof attr, "name=\"%s\" value=\"", name);
    char *at = strstr(text, attr);
    ck_assert_msg(at != NULL, "the cache file has no stamp %s", name);
    at += strlen(attr);
    char *end = strchr(at, '"');
    size_t len = strlen(text) + strlen(value) + 1;
    char *out = malloc(len);
    ck_assert_ptr_nonnull(out);
    snprintf(out, len, "%.*s%s%s", (int)(at - text), text, value, end);
    ck_assert_int_eq(t_write_file(file, out, strlen(out)), 0);
    ck_assert_int_eq(chmod(file, 0600), 0);
    free(out);
    free(text);
}

START_TEST(a_cache_written_by_one_load_gives_the_next_the_same_machine)
{
    char note[1400], sum[2048], cached[2048], live[2048];
    live_summary(live, sizeof live);
    load(dir, note, sizeof note, sum, sizeof sum);
    ck_assert_msg(strstr(note, "discovered; written to ") == note && strstr(note, file) != NULL,
                  "first load: %s", note);
    ck_assert_str_eq(sum, live);
    struct stat st, dst;
    ck_assert_int_eq(lstat(file, &st), 0);
    ck_assert_int_eq(lstat(dir, &dst), 0);
    ck_assert_msg(S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600, "the file has mode %o",
                  (unsigned)(st.st_mode & 07777));
    ck_assert_msg((dst.st_mode & 07777) == 0700, "the directory has mode %o",
                  (unsigned)(dst.st_mode & 07777));
    load(dir, note, sizeof note, cached, sizeof cached);
    ck_assert_msg(strncmp(note, "read from ", 10) == 0 && strstr(note, file) != NULL,
                  "second load: %s", note);
    ck_assert_str_eq(cached, live);
    /* Off, and while a HWLOC_ variable changes what hwloc would find. */
    load(NULL, note, sizeof note, sum, sizeof sum);
    ck_assert_str_eq(note, "discovered (topocache=off)");
    setenv("HWLOC_HIDE_ERRORS", "1", 1);
    load(dir, note, sizeof note, sum, sizeof sum);
    unsetenv("HWLOC_HIDE_ERRORS");
    ck_assert_msg(strstr(note, "not used while HWLOC_HIDE_ERRORS=1 is set") != NULL, "%s", note);
}
END_TEST

START_TEST(a_stale_cache_is_never_used)
{
    forge_stamp("numapin.cache.boot", "00000000-1111-2222-3333-444444444444");
    expect_ignored_then_replaced("was made on another boot", "another boot id");
    forge_stamp("numapin.cache.cpus_online", "0-127");
    expect_ignored_then_replaced("was made when other CPUs were online", "other CPUs online");
    forge_stamp("numapin.cache.nodes_online", "0-7");
    expect_ignored_then_replaced("other NUMA nodes were online", "other nodes online");
    forge_stamp("numapin.cache.cpus", "64-127");
    expect_ignored_then_replaced("another set of CPUs", "another CPU set");
    forge_stamp("numapin.cache.version", "format 0");
    expect_ignored_then_replaced("another numapin cache format", "another format");
}
END_TEST

START_TEST(another_machines_xml_is_never_used)
{
    /* Plain hwloc XML of another machine, at the cache's path. */
    char src[1024];
    const char *dirs = getenv("NUMAPIN_TOPOLOGIES");
    ck_assert_ptr_nonnull(dirs);
    snprintf(src, sizeof src, "%s/epyc-7742-2s-nps4.xml", dirs);
    size_t len = 0;
    char *text = t_read_file(src, &len);
    ck_assert_ptr_nonnull(text);
    free(valid_file());
    ck_assert_int_eq(t_write_file(file, text, len), 0);
    ck_assert_int_eq(chmod(file, 0600), 0);
    expect_ignored_then_replaced("is not numapin's cache", "another machine's XML");
    /* The same with this machine's stamps copied in: its 256 CPUs are not
     * this machine's. */
    char *ours = valid_file(), *stamps = strstr(ours, "<info name=\"numapin.cache.version\"");
    ck_assert_ptr_nonnull(stamps);
    char *stamps_end = strstr(stamps, "numapin.cache.mems");
    stamps_end = strstr(stamps_end, "/>") + 2;
    char *obj = strstr(text, "<object type=\"Machine\"");
    ck_assert_ptr_nonnull(obj);
    char *after = strchr(obj, '>') + 1;
    size_t outlen = len + (size_t)(stamps_end - stamps) + 2;
    char *out = malloc(outlen);
    ck_assert_ptr_nonnull(out);
    snprintf(out, outlen, "%.*s%.*s%s", (int)(after - text), text, (int)(stamps_end - stamps), stamps,
             after);
    ck_assert_int_eq(t_write_file(file, out, strlen(out)), 0);
    ck_assert_int_eq(chmod(file, 0600), 0);
    expect_ignored_then_replaced("holds CPUs this machine does not have", "another machine's stamped XML");
    free(out);
    free(ours);
    free(text);
}
END_TEST

START_TEST(a_truncated_or_junk_file_is_never_used)
{
    char *text = valid_file();
    ck_assert_int_eq(truncate(file, (off_t)(strlen(text) / 2)), 0);
    expect_ignored_then_replaced("is not a whole hwloc XML export", "a truncated file");
    free(text);
    ck_assert_int_eq(t_write_file(file, "", 0), 0);
    ck_assert_int_eq(chmod(file, 0600), 0);
    expect_ignored_then_replaced("is empty", "an empty file");
    const char junk[] = "\x7f" "ELF\x02\x01\x01\0\0\0junk";
    ck_assert_int_eq(t_write_file(file, junk, sizeof junk), 0);
    ck_assert_int_eq(chmod(file, 0600), 0);
    expect_ignored_then_replaced("is not a whole hwloc XML export", "a junk file");
    /* Whole in form but not XML hwloc can read. */
    const char broken[] = "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n  <object\n</topology>\n";
    ck_assert_int_eq(t_write_file(file, broken, sizeof broken - 1), 0);
    ck_assert_int_eq(chmod(file, 0600), 0);
    expect_ignored_then_replaced("cannot be loaded by hwloc", "XML hwloc cannot read");
}
END_TEST

START_TEST(files_numapin_would_not_have_written_are_never_used)
{
    /* A symlink to a valid cache: not followed, replaced, its target kept. */
    char *text = valid_file(), target[600];
    snprintf(target, sizeof target, "%s/elsewhere.xml", root);
    ck_assert_int_eq(rename(file, target), 0);
    ck_assert_int_eq(symlink(target, file), 0);
    expect_ignored_then_replaced("is a symbolic link", "a symlink");
    char *kept = t_read_file(target, NULL);
    ck_assert_msg(kept != NULL && strcmp(kept, text) == 0, "the symlink's target was changed");
    free(kept);
    /* A file other users may write or read. */
    free(valid_file());
    ck_assert_int_eq(chmod(file, 0644), 0);
    expect_ignored_then_replaced("may be read or written by other users", "a 0644 file");
    /* A second hard link (someone else's file linked in). */
    free(valid_file());
    char link2[600];
    snprintf(link2, sizeof link2, "%s/hardlink.xml", root);
    ck_assert_int_eq(link(file, link2), 0);
    expect_ignored_then_replaced("has other hard links", "a hard-linked file");
    /* A FIFO: the load neither blocks nor uses it. */
    unlink(file);
    ck_assert_int_eq(mkfifo(file, 0600), 0);
    expect_ignored_then_replaced("is not a regular file", "a FIFO");
    /* A directory at the path: not used, cannot be replaced, the load goes on. */
    unlink(file);
    ck_assert_int_eq(mkdir(file, 0700), 0);
    char note[1400], sum[2048];
    load(dir, note, sizeof note, sum, sizeof sum);
    ck_assert_msg(strstr(note, "is not a regular file") != NULL && strstr(note, "cannot write") != NULL,
                  "a directory at the path: %s", note);
    ck_assert_int_eq(rmdir(file), 0);
    free(text);
    if (geteuid() != 0) {
        printf("test_topocache: not root: another user's cache file is not checked\n");
        return;
    }
    free(valid_file());
    ck_assert_int_eq(chown(file, NOBODY, NOBODY), 0);
    expect_ignored_then_replaced("belongs to another user", "another user's file");
}
END_TEST

START_TEST(a_directory_that_is_not_private_is_not_used)
{
    char note[1400], sum[2048], live[2048];
    live_summary(live, sizeof live);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(chmod(dir, 0777), 0);
    load(dir, note, sizeof note, sum, sizeof sum);
    ck_assert_msg(strstr(note, "discovered; not cached: the topology cache directory") == note &&
                      strstr(note, "chmod 700") != NULL,
                  "a 0777 directory: %s", note);
    ck_assert_str_eq(sum, live);
    ck_assert_int_eq(t_count_files(dir, ""), 0);
    /* A symlink to a private directory. */
    char real[600];
    snprintf(real, sizeof real, "%s/real", root);
    ck_assert_int_eq(mkdir(real, 0700), 0);
    ck_assert_int_eq(rmdir(dir), 0);
    ck_assert_int_eq(symlink(real, dir), 0);
    load(dir, note, sizeof note, sum, sizeof sum);
    ck_assert_msg(strstr(note, "not a plain directory") != NULL, "a symlinked directory: %s", note);
    ck_assert_int_eq(t_count_files(real, ""), 0);
}
END_TEST

START_TEST(jvms_starting_at_once_write_it_safely)
{
    enum { CHILDREN = 8, ROUNDS = 5 };
    for (int round = 0; round < ROUNDS; round++) {
        unlink(file);
        int go[2];
        ck_assert_int_eq(pipe(go), 0);
        pid_t pids[CHILDREN];
        for (int i = 0; i < CHILDREN; i++) {
            pids[i] = fork();
            ck_assert_int_ge(pids[i], 0);
            if (pids[i] == 0) {
                char c;
                close(go[1]);
                if (read(go[0], &c, 1) != 0)
                    _exit(3);
                struct np_topo t;
                char note[1400], err[1024];
                int rc = np_topo_load_cached(&t, dir, note, sizeof note, err, sizeof err);
                _exit(rc != 0 ? 1 : strstr(note, "cannot write") != NULL ? 2 : 0);
            }
        }
        close(go[0]);
        close(go[1]); /* all start at once */
        for (int i = 0; i < CHILDREN; i++) {
            int status = 0;
            ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
            ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                          "round %d: child %d ended with status %#x (1: load failed, 2: write failed)",
                          round, i, status);
        }
        ck_assert_int_eq(t_count_files(dir, "topology-"), 1);
        ck_assert_int_eq(t_count_files(dir, ".numapin-"), 0);
        char note[1400], sum[2048];
        load(dir, note, sizeof note, sum, sizeof sum);
        ck_assert_msg(strncmp(note, "read from ", 10) == 0, "round %d: the file left is not whole: %s",
                      round, note);
    }
}
END_TEST

Suite *topocache_suite(void)
{
    Suite *s = suite_create("topocache");
    TCase *tc = tcase_create("topocache");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_cache_written_by_one_load_gives_the_next_the_same_machine);
    tcase_add_test(tc, a_stale_cache_is_never_used);
    tcase_add_test(tc, another_machines_xml_is_never_used);
    tcase_add_test(tc, a_truncated_or_junk_file_is_never_used);
    tcase_add_test(tc, files_numapin_would_not_have_written_are_never_used);
    tcase_add_test(tc, a_directory_that_is_not_private_is_not_used);
    tcase_add_test(tc, jvms_starting_at_once_write_it_safely);
    suite_add_tcase(s, tc);
    return s;
}
