/* Helpers shared by numapin's libFuzzer targets (mk/hardening.mk builds
 * them with clang -fsanitize=fuzzer,address,undefined).
 *
 * A target aborts, besides crashing on memory errors, when numapin accepts
 * or reports something it must not: FUZZ_CHECK prints what and why, then
 * aborts, so that libFuzzer keeps the input. */
#ifndef NP_FUZZ_UTIL_H
#define NP_FUZZ_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#define FUZZ_CHECK(cond, ...)                                                                    \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "fuzz: check failed at %s:%d: %s\n  ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                                        \
            fputc('\n', stderr);                                                                 \
            abort();                                                                             \
        }                                                                                        \
    } while (0)

/* The input as a NUL-terminated string (cut at the first NUL byte). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s == NULL)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* A strict reading of a list of numbers and ranges ("0-3,8"), `sep` between
 * items: decimal digits only (010 is ten), each range low-high with
 * low <= high, no empty item.  Returns 1 when s is such a list, with the
 * largest number in *max (saturated), and, when set is not NULL and every
 * number is below 2^20, the numbers in set; 0 otherwise.  The reference
 * numapin's parsers are held to. */
static inline int fuzz_strict_list(const char *s, char sep, uint64_t *max, hwloc_bitmap_t set)
{
    *max = 0;
    if (set != NULL)
        hwloc_bitmap_zero(set);
    for (;;) {
        uint64_t lo = 0, hi;
        if (*s < '0' || *s > '9')
            return 0;
        while (*s >= '0' && *s <= '9') {
            lo = lo > UINT64_MAX / 20 ? UINT64_MAX / 2 : lo * 10 + (uint64_t)(*s - '0');
            s++;
        }
        hi = lo;
        if (*s == '-') {
            s++;
            if (*s < '0' || *s > '9')
                return 0;
            hi = 0;
            while (*s >= '0' && *s <= '9') {
                hi = hi > UINT64_MAX / 20 ? UINT64_MAX / 2 : hi * 10 + (uint64_t)(*s - '0');
                s++;
            }
            if (hi < lo)
                return 0;
        }
        if (hi > *max)
            *max = hi;
        if (set != NULL && hi < (1u << 20))
            hwloc_bitmap_set_range(set, (unsigned)lo, (int)hi);
        if (*s == '\0')
            return 1;
        if (*s != sep)
            return 0;
        s++;
    }
}

/* True when s holds a control byte: a newline splits a log line in two,
 * an escape sequence rewrites the user's terminal.  numapin's lines write
 * such bytes as \xNN (docs/logging.md). */
static inline bool fuzz_has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return true;
    return false;
}

#endif
