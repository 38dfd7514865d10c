/* numapin unit tests: the suites main.c runs, and shared helpers.
 *
 * Environment (set by `make test-unit`):
 *   NUMAPIN_TOPOLOGIES  folder of hwloc XML files (tests/golden/topologies)
 *   NUMAPIN_CLI         absolute path of build/numapin
 *   NUMAPIN_DOCS        the docs folder (its pictures are checked to be current)
 *   NUMAPIN_EXPECTED    folder of the golden transcripts (tests/golden/expected)
 *   NUMAPIN_REGEN=1     rewrite the golden transcripts instead of comparing
 *                       (see test_expected.c) */
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
Suite *attach_suite(void);
Suite *claim_suite(void);
Suite *draw_suite(void);
Suite *report_suite(void);
Suite *watch_suite(void);
Suite *groups_suite(void);
Suite *cpulist_suite(void);
Suite *glob_suite(void);
Suite *modes_suite(void);
Suite *domains_suite(void);
Suite *describe_suite(void);
Suite *hotspot_suite(void);
Suite *file_suite(void);
Suite *marker_suite(void);
Suite *memory_suite(void);
Suite *hugepages_suite(void);
Suite *access_suite(void);
Suite *text_suite(void);
Suite *json_suite(void);
Suite *topocache_suite(void);
Suite *cpuset_suite(void);
Suite *thread_suite(void);

/* The whole file, NUL-terminated, or NULL (errno set). *len may be NULL. */
char *t_read_file(const char *path, size_t *len);

/* Writes `data` to `path` (created or truncated); 0 or -1. */
int t_write_file(const char *path, const char *data, size_t len);

/* A fresh private directory under $TMPDIR or /tmp, path written to buf. */
void t_tmpdir(char *buf, size_t len);

/* Makes the directory fs and mounts there, in a mount namespace of this
 * process's own, a tmpfs of one page, filled: writes to it fail with
 * ENOSPC.  Needs root; the caller unmounts it. */
void t_full_tmpfs(const char *fs);

/* Removes dir and everything under it (symlinks themselves, never their
 * targets). */
void t_rmdir(const char *dir);

/* Entries of dir whose names start with prefix ("" for all). */
int t_count_files(const char *dir, const char *prefix);

/* Runs argv[0] (a path) with argv, capturing stdout and stderr (each
 * malloc'd, NUL-terminated).  Returns the exit status, or -1 when the
 * program did not exit normally or could not run. */
int t_run(char *const argv[], char **out, char **err);

struct np_topo;

/* Loads a machine: synthetic (`synth`), or the hwloc XML file `xml` (a
 * name in $NUMAPIN_TOPOLOGIES, or an absolute path), then restricted to
 * `restrict_cpus` (a cpulist) unless NULL.  Fails the test on an error. */
void t_load(struct np_topo *t, const char *synth, const char *xml, const char *restrict_cpus);

/* Adds a NUMA latency matrix over the first n nodes (logical order; row i:
 * from node i) to a loaded topology. */
void t_add_matrix(hwloc_topology_t topo, unsigned n, const hwloc_uint64_t *values);

/* A bitmap from a cpulist ("0-3,8"); the caller frees it. */
hwloc_bitmap_t t_bitmap(const char *list);

/* Formats a bitmap as a cpulist into buf ("" when empty); returns buf. */
const char *t_list(hwloc_const_bitmap_t set, char *buf, size_t len);

/* Number of lines of `text` containing `needle`. */
int t_count_lines(const char *text, const char *needle);

#endif
