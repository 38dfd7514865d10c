#define _GNU_SOURCE
#include "np_options.h"
#include "np_file.h"
#include "np_topo.h"

#include <errno.h>
#include <fnmatch.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cpus_names[] = {"node", "core", "pu"};
static const char *const mem_names[] = {"preferred", "bind", "interleave", "local", "none"};
static const char *const domain_names[] = {"node", "package", "l3"};
static const char *const scope_names[] = {"threads", "jvm"};
static const char *const cpukind_names[] = {"performance", "efficiency", "any"};

const char *np_cpus_mode_name(enum np_cpus_mode m) { return cpus_names[m]; }
const char *np_domain_name(enum np_domain d) { return domain_names[d]; }
const char *np_scope_name(enum np_scope s) { return scope_names[s]; }

const char *np_cpukind_name(int kind, char *buf, size_t len)
{
    if (kind < 0)
        snprintf(buf, len, "%s", cpukind_names[-kind - 1]);
    else
        snprintf(buf, len, "%d", kind);
    return buf;
}
const char *np_mem_mode_name(enum np_mem_mode m) { return mem_names[m]; }

#define VALID_KEYS                                                                            \
    "group, groups, threads, scope, rescan, domain, cpus, cpukind, mem, log, report, dryrun, " \
    "strict, help"

const char *np_options_help(void)
{
    return
"numapin: pins JVM threads to the CPUs and memory of this JVM's NUMA group\n"
"usage: -agentpath:/path/libnumapin.so[=key=value,key=value,...]\n"
"  group=N|auto     this JVM's group index, 0-based (default 0); auto claims the\n"
"                   lowest group no other JVM of this user holds\n"
"  groups=N         JVM groups sharing the host (default: NUMA nodes with CPUs)\n"
"  threads=GLOB|..  thread names to place, shell globs separated by |\n"
"                   (default " NP_DEFAULT_THREADS ")\n"
"  scope=threads|jvm  place the matching threads (default), or the whole JVM too\n"
"  rescan=MS        look for threads renamed to a matching name every MS ms\n"
"                   (default 1000; 0: never)\n"
"  domain=node|package|l3  what a group is placed on (default node)\n"
"  cpus=node|core|pu  a placed thread gets all CPUs of the group (node, default),\n"
"                   or the one core or hardware thread holding fewest placed threads\n"
"  cpukind=performance|efficiency|any|N  on hybrid CPUs, the kind placed threads\n"
"                   use (default performance: the most performant cores)\n"
"  mem=preferred|bind|interleave|local|none[:NODES]  memory policy of placed\n"
"                   threads, on the group's node(s) or on NODES, e.g. bind:0-1+4\n"
"                   (default preferred)\n"
"  log=LEVEL[:FILE] off, error, warning, info (default), debug, trace;\n"
"                   to stdout, or appended to FILE (%p: the process id)\n"
"  report=FILE      at exit, write the placements as JSON to FILE (%p: the\n"
"                   process id)\n"
"  dryrun           plan and log, bind nothing\n"
"  strict           a failure to apply the plan at start-up stops the JVM\n"
"  help             print this reference; the agent then does nothing\n"
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

static int lookup(const char *v, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0)
            return (int)i;
    return -1;
}

static void join_names(char *buf, size_t len, const char *const *names, size_t n)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", names[i]);
}

/* Strict decimal in [min, max]: no sign, no spaces, no trailing junk. */
static int parse_int(const char *v, long min, long max, int *out)
{
    if (*v < '0' || *v > '9')
        return -1;
    errno = 0;
    char *end;
    long n = strtol(v, &end, 10);
    if (errno != 0 || *end != '\0' || n < min || n > max)
        return -1;
    *out = (int)n;
    return 0;
}

static int parse_flag(const char *v, bool *out)
{
    if (v == NULL || strcmp(v, "true") == 0) {
        *out = true;
        return 0;
    }
    if (strcmp(v, "false") == 0) {
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
    for (int m = 0; m < 5; m++) {
        if (strlen(mem_names[m]) != n || strncmp(v, mem_names[m], n) != 0)
            continue;
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

static int parse_cpukind(const char *v, struct np_options *o)
{
    int x = lookup(v, cpukind_names, 3);
    if (x >= 0) {
        o->cpukind = -x - 1;
        return 0;
    }
    return parse_int(v, 0, 255, &o->cpukind);
}

/* One glob: every '[' opens a bracket expression closed by a ']' (a ']'
 * right after "[" or "[!" or "[^" is a member, "[:class:]" is one item),
 * and no '\\' ends it.  fnmatch(3) would take such a pattern literally,
 * which is never what was meant. */
static bool balanced(const char *p, const char *end)
{
    while (p < end) {
        if (*p == '\\') {
            if (p + 1 >= end)
                return false;
            p += 2;
        } else if (*p == '[') {
            p++;
            if (p < end && (*p == '!' || *p == '^'))
                p++;
            if (p < end && *p == ']')
                p++;
            while (p < end && *p != ']') {
                if (*p == '[' && p + 1 < end && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
                    char kind = p[1];
                    const char *q = p + 2;
                    while (q + 1 < end && !(q[0] == kind && q[1] == ']'))
                        q++;
                    if (q + 1 >= end)
                        return false;
                    p = q + 2;
                } else if (*p == '\\' && p + 1 < end) {
                    p += 2;
                } else {
                    p++;
                }
            }
            if (p >= end)
                return false;
            p++;
        } else {
            p++;
        }
    }
    return true;
}

static int parse_threads(const char *v, struct np_options *o)
{
    size_t len = strlen(v);
    if (len == 0 || v[0] == '|' || v[len - 1] == '|' || strstr(v, "||") != NULL)
        return -1;
    for (const char *p = v; *p; ) {
        const char *bar = strchr(p, '|');
        const char *end = bar != NULL ? bar : p + strlen(p);
        if (!balanced(p, end))
            return -1;
        p = bar != NULL ? bar + 1 : end;
    }
    int n = 1;
    for (const char *p = v; *p; p++)
        n += *p == '|';
    char *copy = strdup(v);
    char **pats = calloc((size_t)n + 1, sizeof *pats);
    char *threads = strdup(v);
    if (copy == NULL || pats == NULL || threads == NULL) {
        free(copy);
        free(pats);
        free(threads);
        return -1;
    }
    /* pats[i] point into one buffer owned by pats[0]. */
    int i = 0;
    char *save = NULL;
    for (char *t = strtok_r(copy, "|", &save); t; t = strtok_r(NULL, "|", &save))
        pats[i++] = t;
    if (o->patterns != NULL)
        free(o->patterns[0]);
    free(o->patterns);
    free(o->threads);
    o->patterns = pats;
    o->npatterns = n;
    o->threads = threads;
    return 0;
}

enum key {
    K_GROUP, K_GROUPS, K_THREADS, K_SCOPE, K_RESCAN, K_DOMAIN, K_CPUS, K_CPUKIND, K_MEM, K_LOG,
    K_REPORT, K_DRYRUN, K_STRICT, K_HELP, K_COUNT
};
static const char *const key_names[K_COUNT] = {
    "group", "groups", "threads", "scope", "rescan", "domain", "cpus", "cpukind", "mem", "log",
    "report", "dryrun", "strict", "help",
};

/* Parses one key[=value]; returns -1 with err written on failure. */
static int parse_one(char *kv, struct np_options *o, bool *seen, char *err, size_t errlen)
{
    char *v = strchr(kv, '=');
    if (v != NULL)
        *v++ = '\0';
    int k = lookup(kv, key_names, K_COUNT);
    if (k < 0) {
        if (*kv == '\0')
            snprintf(err, errlen, "empty option in the option string: valid options are %s",
                     VALID_KEYS);
        else
            snprintf(err, errlen, "unknown option '%s': valid options are %s",
                     shown((char[300]){0}, 300, kv), VALID_KEYS);
        return -1;
    }
    if (seen[k]) {
        snprintf(err, errlen, "option '%s' is given more than once: give each option once", kv);
        return -1;
    }
    seen[k] = true;
    bool is_flag = k == K_DRYRUN || k == K_STRICT || k == K_HELP;
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
        if (parse_int(v, 0, NP_MAX_GROUPS - 1, &o->group) == 0)
            return 0;
        break;
    case K_SCOPE:
        if ((x = lookup(v, scope_names, 2)) >= 0) {
            o->scope = (enum np_scope)x;
            return 0;
        }
        break;
    case K_RESCAN:
        if (parse_int(v, 0, 3600000, &o->rescan_ms) == 0 && (o->rescan_ms == 0 || o->rescan_ms >= 10))
            return 0;
        break;
    case K_GROUPS:
        if (parse_int(v, 1, NP_MAX_GROUPS, &o->groups) == 0)
            return 0;
        break;
    case K_THREADS:
        if (parse_threads(v, o) == 0)
            return 0;
        break;
    case K_CPUS:
        if ((x = lookup(v, cpus_names, 3)) >= 0) {
            o->cpus = (enum np_cpus_mode)x;
            return 0;
        }
        break;
    case K_DOMAIN:
        if ((x = lookup(v, domain_names, 3)) >= 0) {
            o->domain = (enum np_domain)x;
            return 0;
        }
        break;
    case K_CPUKIND:
        if (parse_cpukind(v, o) == 0)
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
    case K_REPORT:
        if (valid_path(v)) {
            o->report_file = strdup(v);
            return o->report_file != NULL ? 0 : -1;
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
    case K_SCOPE: join_names(names, sizeof names, scope_names, 2); valid = names; break;
    case K_RESCAN: valid = "0 (never), or a period in milliseconds from 10 to 3600000"; break;
    case K_GROUPS: valid = "a group count from 1 to 4096"; break;
    case K_THREADS:
        valid = "shell globs separated by '|', none empty, each '[' closed by a ']' and none ending "
                "in '\\', e.g. 'Tier1-*|Tier2-*'";
        break;
    case K_CPUS: join_names(names, sizeof names, cpus_names, 3); valid = names; break;
    case K_DOMAIN: join_names(names, sizeof names, domain_names, 3); valid = names; break;
    case K_CPUKIND: valid = "performance, efficiency, any, or a kind number from 0"; break;
    case K_MEM:
        join_names(names, sizeof names, mem_names, 5);
        strncat(names, ", optionally followed by :NODES (e.g. bind:0-1+4) except for local and none",
                sizeof names - strlen(names) - 1);
        valid = names;
        break;
    case K_LOG:
        valid = "LEVEL or LEVEL:FILE with LEVEL one of off, error, warning, info, debug, trace, "
                "and FILE a path in which %p stands for the process id and %% for '%'";
        break;
    case K_REPORT: valid = "a path, in which %p stands for the process id and %% for '%'"; break;
    default: valid = "no value, true or false"; break;
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
    o->cpukind = NP_CPUKIND_PERFORMANCE;
    o->mem = NP_MEM_PREFERRED;
    err[0] = '\0';
    if (parse_threads(NP_DEFAULT_THREADS, o) != 0) {
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

void np_options_free(struct np_options *o)
{
    if (o->patterns != NULL)
        free(o->patterns[0]);
    free(o->patterns);
    free(o->threads);
    free(o->report_file);
    free(o->log_file);
    free(o->mem_nodes);
    memset(o, 0, sizeof *o);
}

/* fnmatch for a pattern whose only wildcard is '*', byte by byte: the
 * same answer (a literal UTF-8 sequence matches only at character
 * boundaries), without the conversion to wide characters that fnmatch
 * makes in a UTF-8 locale, on every thread start. */
static bool star_match(const char *p, const char *s)
{
    const char *star = NULL, *resume = NULL;
    while (*s != '\0') {
        if (*p == '*') {
            star = p++;
            resume = s;
        } else if (*p == *s) {
            p++;
            s++;
        } else if (star != NULL) {
            p = star + 1;
            s = ++resume;
        } else {
            return false;
        }
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}

bool np_options_match(const struct np_options *o, const char *name)
{
    for (int i = 0; i < o->npatterns; i++) {
        const char *p = o->patterns[i];
        if (strpbrk(p, "?[\\") == NULL ? star_match(p, name) : fnmatch(p, name, 0) == 0)
            return true;
    }
    return false;
}
