/* `numapin groups` ($NUMAPIN_CLI): what each copy's arguments become.
 * "{group}" is the group index, "{group+K}" the index plus K (a port per
 * group); anything else is passed as it is, and an invalid "{group+...}"
 * is a usage error before anything runs. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests.h"

static const char *cli(void)
{
    const char *c = getenv("NUMAPIN_CLI");
    ck_assert_msg(c != NULL && *c, "NUMAPIN_CLI (path of build/numapin) is not set");
    return c;
}

/* Each of 3 copies prints its arguments, one a line, to its log. */
START_TEST(placeholders_become_the_group_and_the_group_plus_k)
{
    char dir[4096], logs[4200];
    t_tmpdir(dir, sizeof dir);
    snprintf(logs, sizeof logs, "%s/logs", dir);
    char *argv[] = {(char *)cli(), "groups", "--groups", "3", "--logs", logs, "--",
                    "/bin/sh", "-c", "printf '%s\\n' \"$@\"", "sh",
                    "{group+8080}", "a{group}b{group+1}c{group}", "{group+0}", "{group+1000000000}",
                    "{groups}", "{group-1}", "{group", "{Group}", "x{group+08}", NULL};
    char *out, *err;
    int rc = t_run(argv, &out, &err);
    ck_assert_msg(rc == 0, "exit %d, stderr: %s", rc, err);
    for (int g = 0; g < 3; g++) {
        char path[4300], want[512];
        snprintf(path, sizeof path, "%s/group-%d.log", logs, g);
        char *got = t_read_file(path, NULL);
        ck_assert_msg(got != NULL, "no %s", path);
        snprintf(want, sizeof want, "%d\na%db%dc%d\n%d\n%d\n{groups}\n{group-1}\n{group\n{Group}\nx%d\n",
                 8080 + g, g, g + 1, g, g, 1000000000 + g, 8 + g);
        ck_assert_msg(strcmp(got, want) == 0, "group %d printed\n%s\nwant\n%s", g, got, want);
        unlink(path);
        free(got);
    }
    free(out);
    free(err);
    rmdir(logs);
    t_rmdir(dir);
}
END_TEST

static const struct {
    const char *arg, *options, *shown;
} bad[] = {
    {"{group+x}", NULL, "'{group+x}'"},
    {"port={group+}", NULL, "'{group+}'"},
    {"{group+-1}", NULL, "'{group+-1}'"},
    {"{group+ 1}", NULL, "'{group+ 1}'"},
    {"{group+1000000001}", NULL, "'{group+1000000001}'"},
    {"{group+99999999999999999999}", NULL, "'{group+99999999999999999999}'"},
    {"{group+8080", NULL, "'{group+8080'"},
    {"ok", "log=info:/tmp/g{group+y}.log", "'{group+y}' in 'log=info:/tmp/g{group+y}.log'"},
};

/* Exit 2, the placeholder and its argument named, nothing run. */
START_TEST(an_invalid_placeholder_is_a_usage_error)
{
    char dir[4096], logs[4200], marker[4200], script[4400];
    t_tmpdir(dir, sizeof dir);
    snprintf(logs, sizeof logs, "%s/logs", dir);
    snprintf(marker, sizeof marker, "%s/ran", dir);
    snprintf(script, sizeof script, "touch %s", marker);
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)cli();
    argv[n++] = "groups";
    argv[n++] = "--groups";
    argv[n++] = "2";
    argv[n++] = "--logs";
    argv[n++] = logs;
    if (bad[_i].options != NULL) {
        argv[n++] = "--options";
        argv[n++] = (char *)bad[_i].options;
    }
    argv[n++] = "--";
    argv[n++] = "/bin/sh";
    argv[n++] = "-c";
    argv[n++] = script;
    argv[n++] = (char *)bad[_i].arg;
    argv[n] = NULL;
    char *out, *err;
    int rc = t_run(argv, &out, &err);
    ck_assert_msg(rc == 2, "%s: exit %d, stderr: %s", bad[_i].arg, rc, err);
    ck_assert_msg(strstr(err, "numapin groups: invalid placeholder ") == err && strstr(err, bad[_i].shown) &&
                      strstr(err, "use {group} or {group+K}, K from 0 to 1000000000") &&
                      strstr(err, "usage: numapin groups"),
                  "%s: stderr: %s", bad[_i].arg, err);
    ck_assert_msg(out[0] == '\0', "stdout: %s", out);
    struct stat st;
    ck_assert_msg(stat(marker, &st) != 0, "the command ran despite %s", bad[_i].arg);
    ck_assert_msg(stat(logs, &st) != 0, "%s was made despite %s", logs, bad[_i].arg);
    free(out);
    free(err);
    t_rmdir(dir);
}
END_TEST

/* A command that does not start, in each group: one line on stderr per
 * group naming the command, the reason and the group's log; the table
 * still follows.  A shell that cannot find the program it runs (exit 127
 * before numapin's summary) is said so with the last line of its log; a
 * command that ran well adds nothing to stderr. */
START_TEST(a_command_that_does_not_start_is_said_on_stderr)
{
    char dir[4096], logs[4200], line[9000], want[20000] = "";
    t_tmpdir(dir, sizeof dir);
    snprintf(logs, sizeof logs, "%s/logs", dir);
    char *missing[] = {(char *)cli(), "groups", "--groups", "2", "--logs", logs, "--", "/nonexistent/java",
                       "-version", NULL};
    char *out, *err;
    int rc = t_run(missing, &out, &err);
    ck_assert_msg(rc == 1, "exit %d, stderr: %s", rc, err);
    for (int g = 0; g < 2; g++) {
        snprintf(line, sizeof line, "numapin groups: group %d: cannot run /nonexistent/java: %s (its log: "
                 "%s/group-%d.log)\n", g, strerror(ENOENT), logs, g);
        strcat(want, line);
    }
    ck_assert_msg(strcmp(err, want) == 0, "stderr:\n%s\nwant:\n%s", err, want);
    ck_assert_msg(strstr(out, "\n0      127     (no summary)\n1      127     (no summary)\n") != NULL,
                  "stdout: %s", out);
    free(out);
    free(err);

    char *shell[] = {(char *)cli(), "groups", "--groups", "1", "--logs", logs, "--", "/bin/sh", "-c",
                     "echo started; exec /nonexistent/java{group}", NULL};
    rc = t_run(shell, &out, &err);
    ck_assert_msg(rc == 1, "exit %d, stderr: %s", rc, err);
    char path[4300];
    snprintf(path, sizeof path, "%s/group-0.log", logs);
    char *log = t_read_file(path, NULL);
    ck_assert_msg(log != NULL && strstr(log, "started\n") == log && strstr(log, "/nonexistent/java0"),
                  "the log: %s", log);
    char *last = strstr(log, "\n") + 1;
    last[strcspn(last, "\n")] = '\0';
    snprintf(want, sizeof want, "numapin groups: group 0: /bin/sh exited 127 (a program it runs was not "
             "found) before numapin's summary; its log ends: \"%s\" (its log: %s)\n", last, path);
    ck_assert_msg(strcmp(err, want) == 0, "stderr:\n%s\nwant:\n%s", err, want);
    free(log);
    free(out);
    free(err);

    char *fine[] = {(char *)cli(), "groups", "--groups", "2", "--logs", logs, "--", "/bin/true", NULL};
    rc = t_run(fine, &out, &err);
    ck_assert_msg(rc == 0, "exit %d, stderr: %s", rc, err);
    ck_assert_msg(err[0] == '\0', "stderr: %s", err);
    free(out);
    free(err);
    for (int g = 0; g < 2; g++) {
        snprintf(path, sizeof path, "%s/group-%d.log", logs, g);
        unlink(path);
    }
    rmdir(logs);
    t_rmdir(dir);
}
END_TEST

Suite *groups_suite(void)
{
    Suite *s = suite_create("groups");
    TCase *tc = tcase_create("placeholders");
    tcase_add_test(tc, placeholders_become_the_group_and_the_group_plus_k);
    tcase_add_loop_test(tc, an_invalid_placeholder_is_a_usage_error, 0, (int)(sizeof bad / sizeof *bad));
    suite_add_tcase(s, tc);
    tc = tcase_create("children");
    tcase_add_test(tc, a_command_that_does_not_start_is_said_on_stderr);
    suite_add_tcase(s, tc);
    return s;
}
