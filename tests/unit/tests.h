/* numapin unit tests: the suites main.c runs, and shared helpers.
 *
 * Environment (set by `make test-unit`):
 *   NUMAPIN_TOPOLOGIES  folder of hwloc XML files (../shared/topologies)
 *   NUMAPIN_CLI         absolute path of build/numapin
 *   NUMAPIN_EXPECTED    optional: folder of expected CLI outputs
 *                       (default native/tests/expected, from the repo root)
 *   NUMAPIN_REGEN=1     rewrite the expected CLI outputs instead of
 *                       comparing (see test_cli.c) */
#ifndef NP_TESTS_H
#define NP_TESTS_H

#include <check.h>
#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>

Suite *options_suite(void);
Suite *topo_suite(void);
Suite *plan_suite(void);
Suite *property_suite(void);
Suite *record_suite(void);
Suite *log_suite(void);
Suite *agent_suite(void);
Suite *cli_suite(void);
Suite *expected_suite(void);
Suite *advise_suite(void);
Suite *bind_suite(void);
Suite *inspect_suite(void);
Suite *memory_suite(void);

/* The whole file, NUL-terminated, or NULL (errno set). *len may be NULL. */
char *t_read_file(const char *path, size_t *len);

/* Writes `data` to `path` (created or truncated); 0 or -1. */
int t_write_file(const char *path, const char *data, size_t len);

/* A fresh private directory under $TMPDIR or /tmp, path written to buf. */
void t_tmpdir(char *buf, size_t len);

/* Removes the files directly inside dir, then dir. */
void t_rmdir(const char *dir);

/* Runs argv[0] (a path) with argv, capturing stdout and stderr (each
 * malloc'd, NUL-terminated).  Returns the exit status, or -1 when the
 * program did not exit normally or could not run. */
int t_run(char *const argv[], char **out, char **err);

/* A bitmap from a cpulist ("0-3,8"); the caller frees it. */
hwloc_bitmap_t t_bitmap(const char *list);

/* Formats a bitmap as a cpulist into buf ("" when empty); returns buf. */
const char *t_list(hwloc_const_bitmap_t set, char *buf, size_t len);

/* Number of lines of `text` containing `needle`. */
int t_count_lines(const char *text, const char *needle);

#endif
