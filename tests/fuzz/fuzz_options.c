/* fuzz_options: the agent's option string (np_options_parse) and the
 * thread-name match of what it accepts (np_globs_match).
 *
 * Input: the option string (cut at the first NUL byte; what follows the NUL,
 * if anything, is a thread name to match).  Beyond memory errors, it aborts
 * when numapin
 *  - accepts values outside the documented ranges (group, groups, rescan,
 *    cpukind, the enums), an empty thread pattern, an empty log file, or
 *    memory nodes that are not a finite list of nodes 0 to 4095;
 *  - rejects without a message, or with a message that is not one line of
 *    printable text (it ends up on the user's terminal and in the log). */
#define _GNU_SOURCE
#include "fuzz_util.h"

#include <hwloc.h>

#include "np_options.h"

static void check_accepted(const struct np_options *o, const char *s)
{
    FUZZ_CHECK(o->group == NP_GROUP_AUTO || (o->group >= 0 && o->group < NP_MAX_GROUPS),
               "group=%d accepted from '%s'", o->group, s);
    FUZZ_CHECK(o->groups >= 0 && o->groups <= NP_MAX_GROUPS, "groups=%d accepted from '%s'",
               o->groups, s);
    FUZZ_CHECK(o->groups == 0 || o->group < o->groups, "group=%d with groups=%d accepted from '%s'",
               o->group, o->groups, s);
    FUZZ_CHECK(o->rescan_ms == 0 || (o->rescan_ms >= 10 && o->rescan_ms <= 3600000),
               "rescan=%d accepted from '%s'", o->rescan_ms, s);
    FUZZ_CHECK(o->cpukind >= NP_CPUKIND_ANY && o->cpukind <= 255, "cpukind=%d accepted from '%s'",
               o->cpukind, s);
    /* Each mode is one of the values its name table lists. */
    FUZZ_CHECK((int)o->cpus >= 0 && (int)o->cpus < np_cpus_mode_names.n, "cpus=%d", (int)o->cpus);
    FUZZ_CHECK((int)o->domain >= 0 && (int)o->domain < np_domain_names.n, "domain=%d",
               (int)o->domain);
    FUZZ_CHECK((int)o->scope >= 0 && (int)o->scope < np_scope_names.n, "scope=%d", (int)o->scope);
    FUZZ_CHECK((int)o->mem >= 0 && (int)o->mem < np_mem_mode_names.n, "mem=%d", (int)o->mem);
    FUZZ_CHECK(o->log_level >= NP_LOG_OFF && o->log_level <= NP_LOG_TRACE, "log level %d",
               (int)o->log_level);
    FUZZ_CHECK(o->log_file == NULL || o->log_file[0] != '\0', "an empty log file accepted from '%s'",
               s);
    FUZZ_CHECK(o->threads.text != NULL && o->threads.n >= 1 && o->threads.patterns != NULL,
               "no thread pattern after '%s'", s);
    for (int i = 0; i < o->threads.n; i++)
        FUZZ_CHECK(o->threads.patterns[i] != NULL && o->threads.patterns[i][0] != '\0',
                   "empty thread pattern %d accepted from '%s'", i, s);
    FUZZ_CHECK(o->threads.patterns[o->threads.n] == NULL, "patterns not NULL-terminated");
    if (o->mem_nodes != NULL) {
        /* Kept in cpulist syntax for the agent, which reads them with
         * hwloc: that must read the nodes the option named. */
        uint64_t max;
        hwloc_bitmap_t want = hwloc_bitmap_alloc(), got = hwloc_bitmap_alloc();
        FUZZ_CHECK(want != NULL && got != NULL, "out of memory");
        FUZZ_CHECK(fuzz_strict_list(o->mem_nodes, ',', &max, want) && max < NP_MAX_GROUPS,
                   "mem nodes '%s' accepted from '%s': not a list of nodes 0 to 4095", o->mem_nodes,
                   s);
        FUZZ_CHECK(o->mem != NP_MEM_LOCAL && o->mem != NP_MEM_NONE,
                   "mem=%s with nodes accepted from '%s'", np_mem_mode_name(o->mem), s);
        FUZZ_CHECK(hwloc_bitmap_list_sscanf(got, o->mem_nodes) == 0 && hwloc_bitmap_isequal(got, want),
                   "mem nodes '%s' (from '%s') read by hwloc as another set (octal? infinite?)",
                   o->mem_nodes, s);
        hwloc_bitmap_free(want);
        hwloc_bitmap_free(got);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    size_t slen = strlen(s);
    const char *name = slen < size ? s + slen + 1 : "ForkJoinPool-1-worker-1";
    char *name_copy = fuzz_cstr((const uint8_t *)name, strlen(name));

    struct np_options o;
    char err[512];
    memset(err, 'X', sizeof err);
    int rc = np_options_parse(s, &o, err, sizeof err);
    if (rc == 0) {
        FUZZ_CHECK(err[0] == '\0', "accepted '%s' with a message: %s", s, err);
        check_accepted(&o, s);
        bool m = np_globs_match(&o.threads, name_copy);
        /* "*" matches every name; a name is matched by itself when it has
         * no glob character. */
        if (strcspn(name_copy, "*?[\\|,") == strlen(name_copy) && name_copy[0] != '\0') {
            struct np_options lit;
            char err2[512], opt[600];
            snprintf(opt, sizeof opt, "threads=%s", name_copy);
            if (strlen(name_copy) < 500) {
                if (np_options_parse(opt, &lit, err2, sizeof err2) == 0)
                    FUZZ_CHECK(np_globs_match(&lit.threads, name_copy), "'%s' does not match itself",
                               name_copy);
                np_options_free(&lit);
            }
        }
        (void)m;
    } else {
        FUZZ_CHECK(rc == -1, "np_options_parse returned %d", rc);
        FUZZ_CHECK(memchr(err, '\0', sizeof err) != NULL, "message not terminated");
        FUZZ_CHECK(err[0] != '\0', "'%s' rejected without a message", s);
        FUZZ_CHECK(!fuzz_has_control(err),
                   "the message for a bad option string holds a control byte (a line break splits "
                   "the one error line; an escape sequence reaches the terminal): %s", err);
    }
    /* A valid log= is kept even when another option is bad. */
    FUZZ_CHECK(o.log_file == NULL || o.log_file[0] != '\0', "empty log file from '%s'", s);
    np_options_free(&o);
    free(name_copy);
    free(s);
    return 0;
}
