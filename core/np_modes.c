#include "np_modes.h"

#include <stdio.h>
#include <string.h>

#include "np_cpulist.h"

#define NAMES(...)                                                                  \
    {(const char *const[]){__VA_ARGS__},                                            \
     (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))}

const struct np_names np_scope_names = NAMES("threads", "jvm");
const struct np_names np_cpus_mode_names = NAMES("node", "core", "pu");
const struct np_names np_domain_names = NAMES("node", "package", "l3");
const struct np_names np_mem_mode_names = NAMES("preferred", "bind", "interleave", "local", "none", "balancing");
const struct np_names np_drift_mode_names = NAMES("restore", "log");
static const struct np_names cpukind_names = NAMES("performance", "efficiency", "any");

int np_names_findn(const struct np_names *t, const char *s, size_t len)
{
    for (int i = 0; i < t->n; i++)
        if (strlen(t->names[i]) == len && strncmp(s, t->names[i], len) == 0)
            return i;
    return -1;
}

int np_names_find(const struct np_names *t, const char *s)
{
    return np_names_findn(t, s, strlen(s));
}

const char *np_names_list(const struct np_names *t, int or, char *buf, size_t len)
{
    size_t o = 0;
    if (len == 0)
        return buf;
    buf[0] = '\0';
    for (int i = 0; i < t->n && o < len; i++) {
        const char *sep = i == 0 ? "" : or && i == t->n - 1 ? " or " : ", ";
        int w = snprintf(buf + o, len - o, "%s%s", sep, t->names[i]);
        if (w < 0)
            break;
        o += (size_t)w;
    }
    return buf;
}

static const char *name(const struct np_names *t, int i)
{
    return i >= 0 && i < t->n ? t->names[i] : "unknown";
}

const char *np_scope_name(enum np_scope s) { return name(&np_scope_names, (int)s); }
const char *np_cpus_mode_name(enum np_cpus_mode m) { return name(&np_cpus_mode_names, (int)m); }
const char *np_domain_name(enum np_domain d) { return name(&np_domain_names, (int)d); }
const char *np_mem_mode_name(enum np_mem_mode m) { return name(&np_mem_mode_names, (int)m); }
const char *np_drift_mode_name(enum np_drift_mode m) { return name(&np_drift_mode_names, (int)m); }

int np_cpukind_parse(const char *s, int *kind)
{
    int x = np_names_find(&cpukind_names, s);
    if (x >= 0) {
        *kind = -x - 1;
        return 0;
    }
    return np_parse_int(s, 0, 255, kind);
}

const char *np_cpukind_name(int kind, char *buf, size_t len)
{
    if (kind < 0)
        snprintf(buf, len, "%s", name(&cpukind_names, -kind - 1));
    else
        snprintf(buf, len, "%d", kind);
    return buf;
}
