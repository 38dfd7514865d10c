/*
 * The guest's side of the access-counting plugin (access.c), run as root
 * inside the QEMU guest:
 *
 *   accmark start          opens a measured window (touches ACC_START)
 *   accmark end            closes it: the plugin writes its file
 *   accmark calibrate N    binds ACC_CAL_PAGES pages to each of nodes 0..N-1,
 *                          writes them (the plugin records where they are),
 *                          checks each is on its node, and prints for each
 *                          "accmark cal node=N page=I pfn=0x..."
 *   accmark pages PID      the process's resident pages by frame, as runs
 *                          of frames consecutive in both the virtual and the
 *                          physical address: "accmark run pfn=0x... pages=N
 *                          vaddr=0x... perm=rw-p offset=0x... excl=0|1 path",
 *                          path being the mapping's name, "[stack of
 *                          thread TID NAME]" for an anonymous mapping that
 *                          holds a thread's stack pointer (read from
 *                          /proc/PID/task/TID/syscall: threads blocked in
 *                          the kernel), "[bss of PATH]" for one that begins
 *                          where a mapping of PATH ends, empty for other
 *                          anonymous ones;
 *                          excl: mapped by this process only
 *
 * Exits 0 when done, 1 with one line on stderr otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "access.h"

static int die(const char *what)
{
    fprintf(stderr, "accmark: %s: %s\n", what, errno ? strerror(errno) : "failed");
    return 1;
}

static int touch(uint64_t addr)
{
    void *p = mmap((void *)addr, ACC_PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED || (uint64_t)p != addr) {
        return die("mmap of the marker page");
    }
    *(volatile char *)p = 1;
    munmap(p, ACC_PAGE);
    return 0;
}

/* the frame of a present page of this process, from pagemap (root: frames
 * are shown) */
static int frame_of(int pm, uint64_t vaddr, uint64_t *pfn)
{
    uint64_t e;
    if (pread(pm, &e, sizeof e, (off_t)(vaddr / ACC_PAGE * 8)) != sizeof e || !(e >> 63 & 1)) {
        return -1;
    }
    *pfn = e & ((1ULL << 55) - 1);
    return *pfn ? 0 : -1;
}

static int calibrate(int nodes)
{
    if (nodes < 1 || nodes > ACC_MAX_NODES) {
        fprintf(stderr, "accmark: calibrate takes the node count, 1 to %d\n", ACC_MAX_NODES);
        return 1;
    }
    int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (pm < 0) {
        return die("/proc/self/pagemap");
    }
    for (int n = 0; n < nodes; n++) {
        uint64_t at = ACC_CAL + (uint64_t)n * ACC_CAL_PAGES * ACC_PAGE;
        size_t len = ACC_CAL_PAGES * ACC_PAGE;
        char *p = mmap((void *)at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                       -1, 0);
        if (p == MAP_FAILED || (uint64_t)p != at) {
            return die("mmap of the calibration pages");
        }
        unsigned long mask = 1UL << n;
        if (mbind(p, len, MPOL_BIND, &mask, sizeof mask * 8, MPOL_MF_STRICT) != 0) {
            return die("mbind of the calibration pages");
        }
        for (int i = 0; i < ACC_CAL_PAGES; i++) {
            ((volatile char *)p)[i * ACC_PAGE] = 1;
        }
        for (int i = 0; i < ACC_CAL_PAGES; i++) {
            void *page = p + i * ACC_PAGE;
            int status = -1;
            uint64_t pfn;
            if (move_pages(0, 1, &page, NULL, &status, 0) != 0) {
                return die("move_pages");
            }
            if (status != n) {
                fprintf(stderr, "accmark: calibration page %d of node %d is on node %d\n", i, n, status);
                return 1;
            }
            if (frame_of(pm, (uint64_t)page, &pfn) != 0) {
                fprintf(stderr, "accmark: no frame for calibration page %d of node %d (not root?)\n", i, n);
                return 1;
            }
            /* touched again after the checks: the plugin keeps the last address */
            ((volatile char *)p)[i * ACC_PAGE] = 2;
            printf("accmark cal node=%d page=%d pfn=0x%llx\n", n, i, (unsigned long long)pfn);
        }
    }
    close(pm);
    return 0;
}

#include <dirent.h>

struct sp {
    unsigned long long sp;
    char name[400];
};

/* the stack pointers of the process's threads that are in the kernel */
static int stack_pointers(const char *pid, struct sp *out, int max)
{
    char path[600], buf[512];
    snprintf(path, sizeof path, "/proc/%s/task", pid);
    DIR *d = opendir(path);
    int n = 0;
    struct dirent *e;
    while (d && n < max && (e = readdir(d))) {
        if (e->d_name[0] == '.') {
            continue;
        }
        snprintf(path, sizeof path, "/proc/%s/task/%s/syscall", pid, e->d_name);
        FILE *f = fopen(path, "re");
        if (!f) {
            continue;
        }
        if (!fgets(buf, sizeof buf, f)) {
            buf[0] = '\0';
        }
        fclose(f);
        /* "NR ARGS... SP PC": the stack pointer is the last but one */
        char *tok[10];
        int k = 0;
        for (char *t = strtok(buf, " \n"); t && k < 10; t = strtok(NULL, " \n")) {
            tok[k++] = t;
        }
        if (k < 3 || strcmp(tok[0], "running") == 0) {
            continue;
        }
        out[n].sp = strtoull(tok[k - 2], NULL, 16);
        char comm[64] = "";
        snprintf(path, sizeof path, "/proc/%s/task/%s/comm", pid, e->d_name);
        f = fopen(path, "re");
        if (f) {
            if (fgets(comm, sizeof comm, f)) {
                comm[strcspn(comm, "\n")] = '\0';
            }
            fclose(f);
        }
        for (char *c = comm; *c; c++) {
            if (*c == ' ') {
                *c = '_';
            }
        }
        snprintf(out[n].name, sizeof out[n].name, "[stack of thread %s %s]", e->d_name, comm);
        n++;
    }
    if (d) {
        closedir(d);
    }
    return n;
}

static int pages(const char *pid)
{
    static struct sp sps[4096];
    int nsp = stack_pointers(pid, sps, 4096);
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/maps", pid);
    FILE *maps = fopen(path, "re");
    snprintf(path, sizeof path, "/proc/%s/pagemap", pid);
    int pm = open(path, O_RDONLY | O_CLOEXEC);
    if (!maps || pm < 0) {
        return die(path);
    }
    char line[4096];
    static uint64_t buf[4096];
    unsigned long long prev_hi = 0;
    char prev[4096] = "", bss[4200];
    while (fgets(line, sizeof line, maps)) {
        unsigned long long lo, hi, off;
        char perm[8];
        int name = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi, perm, &off, &name) < 4) {
            continue;
        }
        char *nm = line + name;
        nm[strcspn(nm, "\n")] = '\0';
        if (strcmp(nm, "[vsyscall]") == 0) {
            continue;
        }
        if (!*nm && lo == prev_hi && prev[0] == '/') {
            snprintf(bss, sizeof bss, "[bss of %s]", prev);
            nm = bss;
        }
        if (nm != bss) {
            snprintf(prev, sizeof prev, "%s", nm);
        }
        prev_hi = hi;
        for (int i = 0; !*nm && i < nsp; i++) {
            if (sps[i].sp >= lo && sps[i].sp < hi) {
                nm = sps[i].name;
            }
        }
        uint64_t run_pfn = 0, run_va = 0, run_n = 0;
        int run_excl = 0;
        for (uint64_t va = lo; va < hi;) {
            size_t want = (hi - va) / ACC_PAGE;
            if (want > 4096) {
                want = 4096;
            }
            ssize_t got = pread(pm, buf, want * 8, (off_t)(va / ACC_PAGE * 8));
            if (got <= 0) {
                break;
            }
            for (size_t i = 0; i < (size_t)got / 8; i++, va += ACC_PAGE) {
                uint64_t e = buf[i], pfn = e & ((1ULL << 55) - 1);
                int present = (e >> 63 & 1) && pfn, excl = e >> 56 & 1;
                if (run_n && present && pfn == run_pfn + run_n && va == run_va + run_n * ACC_PAGE &&
                    excl == run_excl) {
                    run_n++;
                    continue;
                }
                if (run_n) {
                    printf("accmark run pfn=0x%llx pages=%llu vaddr=0x%llx perm=%s offset=0x%llx excl=%d %s\n",
                           (unsigned long long)run_pfn, (unsigned long long)run_n, (unsigned long long)run_va,
                           perm, (unsigned long long)(off + (run_va - lo)), run_excl, nm);
                    run_n = 0;
                }
                if (present) {
                    run_pfn = pfn, run_va = va, run_n = 1, run_excl = excl;
                }
            }
        }
        if (run_n) {
            printf("accmark run pfn=0x%llx pages=%llu vaddr=0x%llx perm=%s offset=0x%llx excl=%d %s\n",
                   (unsigned long long)run_pfn, (unsigned long long)run_n, (unsigned long long)run_va, perm,
                   (unsigned long long)(off + (run_va - lo)), run_excl, nm);
        }
    }
    fclose(maps);
    close(pm);
    return 0;
}

int main(int argc, char **argv)
{
    errno = 0;
    if (argc == 2 && strcmp(argv[1], "start") == 0) {
        return touch(ACC_START);
    }
    if (argc == 2 && strcmp(argv[1], "end") == 0) {
        return touch(ACC_END);
    }
    if (argc == 3 && strcmp(argv[1], "calibrate") == 0) {
        return calibrate(atoi(argv[2]));
    }
    if (argc == 3 && strcmp(argv[1], "pages") == 0) {
        return pages(argv[2]);
    }
    fprintf(stderr, "usage: accmark start | end | calibrate NODES | pages PID\n");
    return 2;
}
