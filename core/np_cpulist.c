#include "np_cpulist.h"

#include <stdlib.h>
#include <string.h>

/* Reads the decimal number at *s, at most max, and moves *s past it. */
static int scan_number(const char **s, unsigned long max, unsigned long *out)
{
    const char *p = *s;
    unsigned long v = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (unsigned long)(*p - '0');
        if (v > max)
            return -1;
    }
    *s = p;
    *out = v;
    return 0;
}

int np_parse_int(const char *s, long min, long max, int *out)
{
    unsigned long v;
    if (min < 0 || max < min || scan_number(&s, (unsigned long)max, &v) != 0 || *s != '\0' ||
        v < (unsigned long)min)
        return -1;
    *out = (int)v;
    return 0;
}

int np_parse_list(const char *s, char sep, unsigned max, hwloc_bitmap_t out)
{
    hwloc_bitmap_zero(out);
    for (;;) {
        unsigned long lo, hi;
        if (scan_number(&s, max, &lo) != 0)
            return -1;
        hi = lo;
        if (*s == '-') {
            s++;
            if (scan_number(&s, max, &hi) != 0 || hi < lo)
                return -1;
        }
        if (hwloc_bitmap_set_range(out, (unsigned)lo, (int)hi) != 0)
            return -1;
        if (*s == '\0')
            return 0;
        if (*s++ != sep)
            return -1;
    }
}

void np_cpulist(char *buf, size_t len, hwloc_const_bitmap_t set)
{
    if (len == 0)
        return;
    if (hwloc_bitmap_iszero(set)) {
        buf[0] = '\0';
        return;
    }
    hwloc_bitmap_list_snprintf(buf, len, set);
}

char *np_cpulist_dup(hwloc_const_bitmap_t set)
{
    char *s = NULL;
    if (hwloc_bitmap_iszero(set))
        return strdup("");
    return hwloc_bitmap_list_asprintf(&s, set) < 0 ? NULL : s;
}
