/* np_cpulist: numbers and CPU lists as users write them, read strictly.
 *
 * One reader of decimal numbers serves the agent's options, the lists of
 * CPUs and nodes, and the command-line tool's arguments: digits only (no
 * sign, space, hex or octal), no trailing junk, and a number too large is
 * an error rather than a wrapped value. */
#ifndef NP_CPULIST_H
#define NP_CPULIST_H

#include <hwloc.h>
#include <stddef.h>

/* Reads the whole of `s` as a decimal number in [min, max] (min >= 0).
 * Returns 0 with *out set, or -1 (*out unchanged). */
int np_parse_int(const char *s, long min, long max, int *out);

/* Reads a list of numbers and ranges, items separated by `sep` ("0-3,8", or
 * "0-1+4" with '+'): every number at most `max`, each range low-high with
 * low <= high, no empty item.  Fills out (which it zeroes first).  Returns
 * 0, or -1 when s is not such a list (out is then unspecified).  Unlike
 * hwloc_bitmap_list_sscanf, a number too large is an error, not a wrapped
 * or an infinite range. */
int np_parse_list(const char *s, char sep, unsigned max, hwloc_bitmap_t out);

/* Formats a bitmap in Linux cpulist syntax ("0-3,8"); "" when empty.
 * Truncated to fit buf. */
void np_cpulist(char *buf, size_t len, hwloc_const_bitmap_t set);

/* The same, whole, in a string the caller frees; NULL when memory runs
 * out. */
char *np_cpulist_dup(hwloc_const_bitmap_t set);

/* Visits the set bits of `set` in order, like hwloc_bitmap_foreach_begin
 * and _end but without their assert(), which aborts the process (the JVM)
 * on an infinite set: an infinite set is visited not at all. */
#define NP_FOREACH(i, set)                                                      \
    for ((i) = hwloc_bitmap_weight(set) < 0 ? -1 : hwloc_bitmap_first(set); (i) >= 0; \
         (i) = hwloc_bitmap_next((set), (i)))

#endif
