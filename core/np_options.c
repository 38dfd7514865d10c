#define _GNU_SOURCE
#include "np_options.h"

#include "np_cpulist.h"
#include "np_file.h"

#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *np_options_help(void)
{
    return
"numapin: pins JVM threads to the CPUs and memory of this JVM's NUMA group\n"
"usage: -agentpath:/path/libnumapin.so[=key=value,key=value,...]\n"
"  group=N|auto     this JVM's group index, 0-based (default 0); auto claims the\n"
"                   lowest group no other JVM of this user holds\n"
"  groups=N         JVM groups sharing the host (default: NUMA nodes with CPUs)\n"
"  lockdir=DIR      group=auto's lock files, shared by the JVMs (default\n"
"                   $XDG_RUNTIME_DIR/numapin, else /tmp/numapin-UID)\n"
"  threads=GLOB|..  thread names to place, shell globs separated by |\n"
"                   (default " NP_DEFAULT_THREADS ")\n"
"  scope=jvm|threads  the whole JVM on the group, its heap and own threads too\n"
"                   (default when groups > 1), or only the matching threads\n"
"                   (default for one group)\n"
"  rescan=MS        every MS ms, place threads renamed to a matching name, put\n"
"                   back placed threads whose CPUs drifted, and re-plan when the\n"
"                   cpuset changed (default 1000; 0: never)\n"
"  drift=restore|log  placed threads whose CPUs are no longer what numapin set:\n"
"                   put back (default), or logged and left as they are\n"
"  domain=node|package|l3  what a group is placed on (default node)\n"
"  cpus=node|core|pu  a placed thread gets all CPUs of the group (node, default),\n"
"                   or the one core or hardware thread holding fewest placed threads\n"
"  cpukind=performance|efficiency|any|N  on hybrid CPUs, the kind placed threads\n"
"                   use (default performance: the most performant cores)\n"
"  mem=preferred|bind|interleave|local|none|balancing[:NODES]  memory policy of\n"
"                   placed threads, on the group's node(s) or on NODES, e.g.\n"
"                   bind:0-1+4 (default preferred); balancing: bound, and the\n"
"                   kernel's NUMA balancing samples the accesses (access_local=)\n"
"  log=LEVEL[:FILE] off, error, warning, info (default), debug, trace;\n"
"                   to stdout, or appended to FILE (%p: the process id)\n"
"  logsync          each placement line written by the placed thread itself,\n"
"                   before its run(); by default numapin's log thread writes\n"
"                   them, within 10 ms (alone, or =yes|no|true|false)\n"
"  report=FILE      at exit, write the placements as JSON to FILE (%p: the\n"
"                   process id)\n"
"  jfr=on|off       JFR events (numapin.Placement, Plan, Advice, NodeMemory)\n"
"                   while a JFR recording runs (default on)\n"
"  topocache=DIR|off  keep this machine's topology in DIR between JVM starts,\n"
"                   checked against the live machine before use (default the\n"
"                   lockdir default), or discover it every time (off)\n"
"  dryrun           plan and log, bind nothing (alone, or =yes|no|true|false)\n"
"  strict           a failure to apply the plan at start-up stops the JVM\n"
"                   (alone, or =yes|no|true|false)\n"
"  help             print this reference; the agent then does nothing\n"
"                   (alone, or =yes|no|true|false)\n"
"See numapin-agent(7), or docs/options.md in the source tree.\n";
}

/* s as it may appear in an error line: at most 64 bytes, control and
 * non-ASCII bytes as \xNN (like thread names in the log), "..." when cut. */
static const char *shown(char *buf, size_t len, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0, n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && o + 8 < len; p++, n++) {
        if (n == 64) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        if (*p < 0x20 || *p >= 0x7f) {
            buf[o++] = '\\';
            buf[o++] = 'x';
            buf[o++] = hex[*p >> 4];
            buf[o++] = hex[*p & 15];
        } else {
            buf[o++] = (char)*p;
        }
    }
    buf[o] = '\0';
    return buf;
}

/* A flag: alone, or true/false, or yes/no as the plan line prints it. */
static int parse_flag(const char *v, bool *out)
{
    if (v == NULL || strcmp(v, "true") == 0 || strcmp(v, "yes") == 0) {
        *out = true;
        return 0;
    }
    if (strcmp(v, "false") == 0 || strcmp(v, "no") == 0) {
        *out = false;
        return 0;
    }
    return -1;
}

/* A file name numapin can expand (%p, %%) and open. */
static bool valid_path(const char *v)
{
    char path[4096];
    return *v != '\0' && np_file_path(v, path, sizeof path) == 0;
}

static int parse_log(const char *v, struct np_options *o)
{
    const char *colon = strchr(v, ':');
    size_t n = colon ? (size_t)(colon - v) : strlen(v);
    for (int l = NP_LOG_OFF; l <= NP_LOG_TRACE; l++) {
        const char *name = np_level_name(l);
        if (strlen(name) == n && strncmp(v, name, n) == 0) {
            if (colon != NULL && !valid_path(colon + 1))
                return -1;
            free(o->log_file);
            o->log_file = colon ? strdup(colon + 1) : NULL;
            o->log_level = l;
            o->log_given = true;
            return 0;
        }
    }
    return -1;
}

/* MODE or MODE:NODES.  NODES is a node number, a range, or several joined
 * by '+' ("0-1+4"): commas already separate options. */
static int parse_mem(const char *v, struct np_options *o)
{
    const char *colon = strchr(v, ':');
    size_t n = colon ? (size_t)(colon - v) : strlen(v);
    int m = np_names_findn(&np_mem_mode_names, v, n);
    if (m >= 0) {
        free(o->mem_nodes);
        o->mem_nodes = NULL;
        if (colon != NULL) {
            if (m == NP_MEM_LOCAL || m == NP_MEM_NONE)
                return -1; /* these name no node */
            const char *nodes = colon + 1;
            char *list = NULL;
            hwloc_bitmap_t set = hwloc_bitmap_alloc();
            /* Nodes 0 to 4095, read strictly and in decimal: a number too
             * large must not wrap around (4294967296 is not node 0) nor
             * make an infinite set (0-4294967295) or a huge bitmap, and
             * 010 is node 10, not hwloc's octal 8.  Kept in cpulist syntax
             * as hwloc writes it, which hwloc reads back the same. */
            int ok = set != NULL && np_parse_list(nodes, '+', 4095, set) == 0 &&
                     hwloc_bitmap_list_asprintf(&list, set) >= 0;
            hwloc_bitmap_free(set);
            if (!ok) {
                free(list);
                return -1;
            }
            o->mem_nodes = list; /* cpulist syntax, commas */
        }
        o->mem = (enum np_mem_mode)m;
        return 0;
    }
    return -1;
}

enum key {
    K_GROUP, K_GROUPS, K_LOCKDIR, K_THREADS, K_SCOPE, K_RESCAN, K_DRIFT, K_DOMAIN, K_CPUS,
    K_CPUKIND, K_MEM, K_LOG, K_LOGSYNC, K_REPORT, K_JFR, K_TOPOCACHE, K_DRYRUN, K_STRICT, K_HELP,
    K_COUNT
};
static const char *const key_names[K_COUNT] = {
    "group", "groups", "lockdir", "threads", "scope", "rescan", "drift", "domain", "cpus",
    "cpukind", "mem", "log", "logsync", "report", "jfr", "topocache", "dryrun", "strict", "help",
};
static const struct np_names keys = {key_names, K_COUNT};

/* Parses one key[=value]; returns -1 with err written on failure. */
static int parse_one(char *kv, struct np_options *o, bool *seen, char *err, size_t errlen)
{
    char *v = strchr(kv, '=');
    if (v != NULL)
        *v++ = '\0';
    int k = np_names_find(&keys, kv);
    if (k < 0) {
        char valid[256];
        np_names_list(&keys, 0, valid, sizeof valid);
        if (*kv == '\0')
            snprintf(err, errlen, "empty option in the option string: valid options are %s", valid);
        else
            snprintf(err, errlen, "unknown option '%s': valid options are %s",
                     shown((char[300]){0}, 300, kv), valid);
        return -1;
    }
    if (seen[k]) {
        snprintf(err, errlen, "option '%s' is given more than once: give each option once", kv);
        return -1;
    }
    seen[k] = true;
    bool is_flag = k == K_LOGSYNC || k == K_DRYRUN || k == K_STRICT || k == K_HELP;
    if (!is_flag && (v == NULL || *v == '\0')) {
        snprintf(err, errlen, "option '%s' needs a value", kv);
        goto valid_values;
    }
    char names[256];
    int x;
    switch ((enum key)k) {
    case K_GROUP:
        if (strcmp(v, "auto") == 0) {
            o->group = NP_GROUP_AUTO;
            return 0;
        }
        if (np_parse_int(v, 0, NP_MAX_GROUPS - 1, &o->group) == 0)
            return 0;
        break;
    case K_SCOPE:
        if ((x = np_names_find(&np_scope_names, v)) >= 0) {
            o->scope = (enum np_scope)x;
            o->scope_given = true;
            return 0;
        }
        break;
    case K_RESCAN:
        if (np_parse_int(v, 0, 3600000, &o->rescan_ms) == 0 && (o->rescan_ms == 0 || o->rescan_ms >= 10))
            return 0;
        break;
    case K_GROUPS:
        if (np_parse_int(v, 1, NP_MAX_GROUPS, &o->groups) == 0)
            return 0;
        break;
    case K_LOCKDIR:
        if (v[0] == '/' && strlen(v) < 4000) {
            o->lock_dir = strdup(v);
            return o->lock_dir != NULL ? 0 : -1;
        }
        break;
    case K_DRIFT:
        if ((x = np_names_find(&np_drift_mode_names, v)) >= 0) {
            o->drift = (enum np_drift_mode)x;
            return 0;
        }
        break;
    case K_THREADS:
        if (np_globs_parse(v, &o->threads) == 0)
            return 0;
        break;
    case K_CPUS:
        if ((x = np_names_find(&np_cpus_mode_names, v)) >= 0) {
            o->cpus = (enum np_cpus_mode)x;
            return 0;
        }
        break;
    case K_DOMAIN:
        if ((x = np_names_find(&np_domain_names, v)) >= 0) {
            o->domain = (enum np_domain)x;
            return 0;
        }
        break;
    case K_CPUKIND:
        if (np_cpukind_parse(v, &o->cpukind) == 0)
            return 0;
        break;
    case K_MEM:
        if (parse_mem(v, o) == 0)
            return 0;
        break;
    case K_LOG:
        if (parse_log(v, o) == 0)
            return 0;
        break;
    case K_LOGSYNC:
        if (parse_flag(v, &o->log_sync) == 0)
            return 0;
        break;
    case K_REPORT:
        if (valid_path(v)) {
            o->report_file = strdup(v);
            return o->report_file != NULL ? 0 : -1;
        }
        break;
    case K_JFR:
        if (strcmp(v, "on") == 0 || strcmp(v, "off") == 0) {
            o->jfr = strcmp(v, "on") == 0;
            return 0;
        }
        break;
    case K_TOPOCACHE:
        if (strcmp(v, "off") == 0) {
            o->topocache_off = true;
            return 0;
        }
        if (v[0] == '/' && strlen(v) < 4000) {
            o->topocache_dir = strdup(v);
            return o->topocache_dir != NULL ? 0 : -1;
        }
        break;
    case K_DRYRUN:
        if (parse_flag(v, &o->dryrun) == 0)
            return 0;
        break;
    case K_STRICT:
        if (parse_flag(v, &o->strict) == 0)
            return 0;
        break;
    case K_HELP:
        if (parse_flag(v, &o->help) == 0)
            return 0;
        break;
    case K_COUNT:
        break;
    }
    snprintf(err, errlen, "invalid value '%s' for option '%s'", shown((char[300]){0}, 300, v), kv);
valid_values:;
    size_t used = strlen(err);
    const char *valid = NULL;
    switch ((enum key)k) {
    case K_GROUP: valid = "auto, or a group index from 0 to 4095, below groups"; break;
    case K_SCOPE: valid = np_names_list(&np_scope_names, 0, names, sizeof names); break;
    case K_RESCAN: valid = "0 (never), or a period in milliseconds from 10 to 3600000"; break;
    case K_GROUPS: valid = "a group count from 1 to 4096"; break;
    case K_LOCKDIR: valid = "an absolute path (a directory, created if missing)"; break;
    case K_DRIFT: valid = np_names_list(&np_drift_mode_names, 0, names, sizeof names); break;
    case K_THREADS: valid = NP_GLOBS_VALID; break;
    case K_CPUS: valid = np_names_list(&np_cpus_mode_names, 0, names, sizeof names); break;
    case K_DOMAIN: valid = np_names_list(&np_domain_names, 0, names, sizeof names); break;
    case K_CPUKIND: valid = "performance, efficiency, any, or a kind number from 0"; break;
    case K_MEM:
        np_names_list(&np_mem_mode_names, 0, names, sizeof names);
        strncat(names, ", optionally followed by :NODES (e.g. bind:0-1+4) except for local and none",
                sizeof names - strlen(names) - 1);
        valid = names;
        break;
    case K_LOG:
        valid = "LEVEL or LEVEL:FILE with LEVEL one of off, error, warning, info, debug, trace, "
                "and FILE a path in which %p stands for the process id and %% for '%'";
        break;
    case K_REPORT: valid = "a path, in which %p stands for the process id and %% for '%'"; break;
    case K_JFR: valid = "on, off"; break;
    case K_TOPOCACHE: valid = "off, or an absolute path (a directory, created if missing)"; break;
    default: valid = "no value, true, false, yes or no"; break;
    }
    snprintf(err + used, errlen - used, ": valid values are %s", valid);
    return -1;
}

int np_options_parse(const char *s, struct np_options *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->log_level = NP_LOG_INFO;
    o->cpus = NP_CPUS_NODE;
    o->domain = NP_DOMAIN_NODE;
    o->scope = NP_SCOPE_THREADS;
    o->rescan_ms = NP_DEFAULT_RESCAN_MS;
    o->drift = NP_DRIFT_RESTORE;
    o->cpukind = NP_CPUKIND_PERFORMANCE;
    o->mem = NP_MEM_PREFERRED;
    o->jfr = true;
    err[0] = '\0';
    if (np_globs_parse(NP_DEFAULT_THREADS, &o->threads) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (s == NULL || *s == '\0')
        return 0;
    if (strlen(s) > NP_MAX_OPTIONS_LEN) {
        snprintf(err, errlen, "the option string is %zu bytes long: at most %d are accepted",
                 strlen(s), NP_MAX_OPTIONS_LEN);
        return -1;
    }
    char *copy = strdup(s);
    if (copy == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* Read the whole string even after an error, so that a valid log= is
     * still applied and the error reaches the log the user chose; report
     * the first error. */
    bool seen[K_COUNT] = {false};
    int rc = 0;
    char tmp[512];
    char *p = copy;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (parse_one(p, o, seen, rc ? tmp : err, rc ? sizeof tmp : errlen) != 0)
            rc = -1;
        if (!comma)
            break;
        p = comma + 1;
    }
    free(copy);
    if (rc == 0 && o->groups > 0 && o->group >= o->groups) {
        snprintf(err, errlen, "option 'group=%d' is out of range for groups=%d: valid values are 0 to %d",
                 o->group, o->groups, o->groups - 1);
        rc = -1;
    }
    return rc;
}

void np_options_resolve(struct np_options *o, int groups)
{
    if (!o->scope_given)
        o->scope = groups > 1 ? NP_SCOPE_JVM : NP_SCOPE_THREADS;
}

const char *np_options_scope_why(const struct np_options *o)
{
    if (o->scope_given)
        return "given";
    return o->scope == NP_SCOPE_JVM ? "the default with more than one group"
                                    : "the default with one group";
}

void np_options_free(struct np_options *o)
{
    np_globs_free(&o->threads);
    free(o->report_file);
    free(o->lock_dir);
    free(o->topocache_dir);
    free(o->log_file);
    free(o->mem_nodes);
    memset(o, 0, sizeof *o);
}
