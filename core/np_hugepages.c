/* np_hugepages: hugetlb pools by node, read from sysfs (np_hugepages.h). */
#define _GNU_SOURCE
#include "np_hugepages.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "np_cpulist.h"

/* HotSpot gives the code cache large pages only when it holds at least
 * this many (CodeCache::page_size). */
#define CODE_CACHE_MIN_PAGES 8

/* Reads the whole of a small file into buf (NUL-terminated); 0 or -1. */
static int read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got + 1 < len) {
        ssize_t n = read(fd, buf + got, len - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    return 0;
}

/* A decimal count, digits only, then at most a newline; -1 otherwise. */
static long long parse_count(const char *s)
{
    long long v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (9223372036854775807LL - 9) / 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
    if (p == s || (*p != '\0' && strcmp(p, "\n") != 0))
        return -1;
    return v;
}

uint64_t np_hugepages_default_size(const char *root)
{
    char path[4096], text[8192];
    snprintf(path, sizeof path, "%s/proc/meminfo", root);
    if (read_small(path, text, sizeof text) != 0)
        return 0;
    for (const char *line = text; line != NULL && *line != '\0';) {
        unsigned long long kib;
        char unit[8];
        if (strncmp(line, "Hugepagesize:", 13) == 0 &&
            sscanf(line + 13, " %llu %7s", &kib, unit) == 2 && strcmp(unit, "kB") == 0 &&
            kib > 0 && kib < (1ULL << 44))
            return (uint64_t)kib * 1024;
        line = strchr(line, '\n');
        if (line != NULL)
            line++;
    }
    return 0;
}

static long long pool_file(const char *root, unsigned node, uint64_t page, const char *name)
{
    if (page < 1024 || page % 1024 != 0)
        return -1;
    char path[4096], text[64];
    snprintf(path, sizeof path, "%s/sys/devices/system/node/node%u/hugepages/hugepages-%llukB/%s",
             root, node, (unsigned long long)(page / 1024), name);
    if (read_small(path, text, sizeof text) != 0)
        return -1;
    return parse_count(text);
}

long long np_hugepages_free(const char *root, unsigned node, uint64_t page)
{
    return pool_file(root, node, page, "free_hugepages");
}

long long np_hugepages_nr(const char *root, unsigned node, uint64_t page)
{
    return pool_file(root, node, page, "nr_hugepages");
}

long long np_hugepages_free_on(const char *root, hwloc_const_bitmap_t nodes, uint64_t page)
{
    long long sum = 0;
    int n, seen = 0;
    NP_FOREACH(n, nodes) {
        long long f = np_hugepages_free(root, (unsigned)n, page);
        if (f < 0)
            return -1;
        sum += f;
        seen++;
    }
    return seen > 0 ? sum : -1;
}

long long np_hugepages_count(uint64_t bytes, uint64_t page)
{
    if (page == 0)
        return 0;
    return (long long)(bytes / page + (bytes % page != 0));
}

void np_hugepages_size_str(char *buf, size_t len, uint64_t page)
{
    const uint64_t g = 1ULL << 30, m = 1ULL << 20, k = 1ULL << 10;
    if (page >= g && page % g == 0)
        snprintf(buf, len, "%lluG", (unsigned long long)(page / g));
    else if (page >= m && page % m == 0)
        snprintf(buf, len, "%lluM", (unsigned long long)(page / m));
    else
        snprintf(buf, len, "%lluK", (unsigned long long)(page / k));
}

void np_hugepages_check(const char *root, const struct np_hugepages_jvm *jvm,
                        hwloc_const_bitmap_t nodes, hwloc_const_bitmap_t all,
                        struct np_hugepages_need *out)
{
    memset(out, 0, sizeof *out);
    out->page = jvm->page != 0 ? jvm->page : np_hugepages_default_size(root);
    out->free = out->free_all = -1;
    if (out->page == 0)
        return;
    out->heap_pages = np_hugepages_count(jvm->max_heap, out->page);
    if (jvm->code_cache >= CODE_CACHE_MIN_PAGES * out->page)
        out->code_pages = np_hugepages_count(jvm->code_cache, out->page) + jvm->segmented;
    out->needed = out->heap_pages + out->code_pages;
    out->free = np_hugepages_free_on(root, nodes, out->page);
    out->free_all = np_hugepages_free_on(root, all, out->page);
    out->known = out->free >= 0;
    out->enough = out->known && out->free >= out->needed;
}
