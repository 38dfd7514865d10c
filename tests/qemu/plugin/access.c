/*
 * A QEMU TCG plugin (system emulation, x86-64 guest) that counts the
 * guest's user-space memory accesses by the accessing vCPU's NUMA node and
 * the node of the memory accessed: an exact local/remote matrix of what a
 * NUMA machine's counters would only sample.
 *
 *   qemu-system-x86_64 -accel tcg,thread=single ... \
 *     -plugin access.so,cpus=0-1:2-3:4-5,mem=1024:1024:1024,out=FILE[,top=N]
 *
 * cpus=  each node's vCPUs, node 0 first, ':' between nodes (a node's list
 *        is ranges and numbers joined by '+': 0-1+4)
 * mem=   each node's memory in MiB, as its -numa memory backend has it
 * out=   the file written at each window's end (replaced whole, through a
 *        temporary file and a rename), holding every window so far
 * top=   how many of the most accessed remote pages each node's vCPUs
 *        touched are listed (default 100; 0: none, and remote pages are
 *        not tracked, which saves a hash table update per remote access)
 *
 * What is counted: every load and store whose virtual address is in the
 * lower half (user space, whoever executes it: a process, or the kernel
 * copying to or from a process), inside a measured window, to RAM; accesses
 * to devices are counted apart (io=). The guest opens and closes a window
 * by touching the agreed addresses of access.h (tests/qemu/plugin/accmark
 * start|end).
 *
 * Which node a page is on: QEMU 7.2's qemu_plugin_hwaddr_phys_addr() gives
 * the RAM block's offset plus its memory region's address, not the
 * guest-physical address (three 1 GiB backends show at [0,1G), [2G,3G),
 * [4G,5G)). So the plugin does not assume a layout: the guest binds
 * calibration pages to each node (accmark calibrate), the plugin records
 * the addresses it sees for them, and a node's memory is taken as the
 * size-aligned range of its size that holds them. A window opens only when
 * every node has its calibration pages, all of them inside their node's
 * range, and no two ranges overlap; otherwise the window's record says
 * calibration=failed and why, and nothing is counted.
 *
 * Cost: one callback per memory access (QEMU 7.2 has no conditional inline
 * operation); outside a window it returns after two comparisons. Counters
 * are per vCPU, with no lock: under single-threaded TCG (what the runner
 * uses) the counts are exact; under multi-threaded TCG a window's edges
 * are as exact as the vCPUs' interleaving, and a window's end reads the
 * other vCPUs' counters as they are at that moment.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <qemu-plugin.h>

#include "access.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_VCPUS 64
#define OUTSIDE ACC_MAX_NODES /* a RAM address in no node's range */

/* a remote page's accesses: key is the page's address + 1 (0: empty) */
struct rpage {
    uint64_t key;
    uint64_t count;
};

struct remote {
    struct rpage *slot;
    size_t cap, used;
};

struct vcpu {
    uint64_t mem[ACC_MAX_NODES + 1];
    uint64_t io;
    int last; /* the node of the previous access: most accesses repeat it */
    struct remote remote;
} __attribute__((aligned(64)));

static struct vcpu vcpus[MAX_VCPUS];
static int nvcpus;
static int cpu_node[MAX_VCPUS]; /* -1: in no node's list */
static int nnodes;
static uint64_t node_size[ACC_MAX_NODES];
static uint64_t node_base[ACC_MAX_NODES];
static uint64_t cal[ACC_MAX_NODES][ACC_CAL_PAGES]; /* address + 1, 0: unseen */
static const char *out_path;
static unsigned top = 100;

static volatile int active;
static int window;
static char calib_error[256];

/* everything written so far: the file is this, rewritten at each window end */
static char *record;
static size_t record_len, record_cap;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
    va_list ap;
    char buf[512];
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if ((size_t)n >= sizeof buf) {
        n = sizeof buf - 1;
    }
    if (record_len + n + 1 > record_cap) {
        size_t cap = record_cap ? record_cap * 2 : 65536;
        while (cap < record_len + n + 1) {
            cap *= 2;
        }
        char *r = realloc(record, cap);
        if (!r) {
            return;
        }
        record = r;
        record_cap = cap;
    }
    memcpy(record + record_len, buf, n);
    record_len += n;
    record[record_len] = '\0';
}

static void write_record(void)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", out_path) >= (int)sizeof tmp) {
        qemu_plugin_outs("access: out= path too long\n");
        return;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        qemu_plugin_outs("access: cannot create the out= file\n");
        return;
    }
    size_t done = 0;
    while (done < record_len) {
        ssize_t w = write(fd, record + done, record_len - done);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            break;
        }
        done += (size_t)w;
    }
    if (close(fd) != 0 || done != record_len || rename(tmp, out_path) != 0) {
        unlink(tmp);
        qemu_plugin_outs("access: cannot write the out= file\n");
    }
}

/* ---- remote pages ---------------------------------------------------------- */

static int remote_grow(struct remote *r)
{
    size_t cap = r->cap ? r->cap * 2 : 1 << 14;
    struct rpage *s = calloc(cap, sizeof *s);
    if (!s) {
        return -1;
    }
    for (size_t i = 0; i < r->cap; i++) {
        if (r->slot[i].key) {
            size_t h = (r->slot[i].key * 0x9e3779b97f4a7c15ULL) >> 20 & (cap - 1);
            while (s[h].key) {
                h = (h + 1) & (cap - 1);
            }
            s[h] = r->slot[i];
        }
    }
    free(r->slot);
    r->slot = s;
    r->cap = cap;
    return 0;
}

static void remote_add(struct remote *r, uint64_t page, uint64_t n)
{
    if (r->used * 10 >= r->cap * 7 && remote_grow(r) != 0) {
        return;
    }
    uint64_t key = page + 1;
    size_t h = (key * 0x9e3779b97f4a7c15ULL) >> 20 & (r->cap - 1);
    while (r->slot[h].key && r->slot[h].key != key) {
        h = (h + 1) & (r->cap - 1);
    }
    if (!r->slot[h].key) {
        r->slot[h].key = key;
        r->used++;
    }
    r->slot[h].count += n;
}

static void remote_clear(struct remote *r)
{
    if (r->slot) {
        memset(r->slot, 0, r->cap * sizeof *r->slot);
    }
    r->used = 0;
}

static int by_count(const void *a, const void *b)
{
    const struct rpage *x = a, *y = b;
    if (x->count != y->count) {
        return x->count < y->count ? 1 : -1;
    }
    return x->key < y->key ? -1 : x->key > y->key;
}

/* ---- nodes --------------------------------------------------------------------- */

static int node_of(struct vcpu *v, uint64_t pa)
{
    int n = v->last;
    if (n < nnodes && pa - node_base[n] < node_size[n]) {
        return n;
    }
    for (n = 0; n < nnodes; n++) {
        if (pa - node_base[n] < node_size[n]) {
            v->last = n;
            return n;
        }
    }
    return OUTSIDE;
}

/* Each node's range from its calibration pages; 0 when they agree, else
 * -1 with calib_error saying why. */
static int calibrate(void)
{
    for (int n = 0; n < nnodes; n++) {
        int seen = 0;
        node_base[n] = 0;
        for (int i = 0; i < ACC_CAL_PAGES; i++) {
            if (!cal[n][i]) {
                continue;
            }
            uint64_t pa = cal[n][i] - 1;
            uint64_t base = pa - pa % node_size[n];
            if (seen && base != node_base[n]) {
                snprintf(calib_error, sizeof calib_error,
                         "node %d's calibration pages lie in two ranges (0x%" PRIx64 " and 0x%" PRIx64 ")",
                         n, node_base[n], base);
                return -1;
            }
            node_base[n] = base;
            seen++;
        }
        if (!seen) {
            snprintf(calib_error, sizeof calib_error, "no calibration page of node %d seen (run accmark calibrate)", n);
            return -1;
        }
    }
    for (int a = 0; a < nnodes; a++) {
        for (int b = a + 1; b < nnodes; b++) {
            if (node_base[a] < node_base[b] + node_size[b] && node_base[b] < node_base[a] + node_size[a]) {
                snprintf(calib_error, sizeof calib_error, "nodes %d and %d's ranges overlap", a, b);
                return -1;
            }
        }
    }
    calib_error[0] = '\0';
    return 0;
}

/* ---- windows ------------------------------------------------------------------- */

static void window_open(void)
{
    window++;
    for (int i = 0; i < nvcpus; i++) {
        memset(vcpus[i].mem, 0, sizeof vcpus[i].mem);
        vcpus[i].io = 0;
        remote_clear(&vcpus[i].remote);
    }
    if (calibrate() != 0) {
        say("window %d calibration=failed reason=\"%s\"\nend window %d\n", window, calib_error, window);
        active = 0;
        write_record();
        return;
    }
    active = 1;
}

static void cpus_text(int n, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int c = 0; c < nvcpus; c++) {
        if (cpu_node[c] != n || (c > 0 && cpu_node[c - 1] == n)) {
            continue;
        }
        int e = c;
        while (e + 1 < nvcpus && cpu_node[e + 1] == n) {
            e++;
        }
        int w = e > c ? snprintf(buf + at, len - at, "%s%d-%d", at ? "+" : "", c, e)
                      : snprintf(buf + at, len - at, "%s%d", at ? "+" : "", c);
        if (w < 0 || (size_t)w >= len - at) {
            return;
        }
        at += w;
    }
}

/* The window's record: the nodes as calibrated, the matrix by the vCPU's
 * node (rows) and the memory's node, and the top remote pages per row. */
static void window_close(const char *how)
{
    active = 0;
    say("window %d %s calibration=ok\n", window, how);
    for (int n = 0; n < nnodes; n++) {
        char cpus[128];
        int k = 0;
        for (int i = 0; i < ACC_CAL_PAGES; i++) {
            k += cal[n][i] != 0;
        }
        cpus_text(n, cpus, sizeof cpus);
        say("node %d cpus=%s base=0x%" PRIx64 " size=0x%" PRIx64 " calibration_pages=%d\n", n, cpus,
            node_base[n], node_size[n], k);
    }
    for (int n = 0; n < ACC_CAL_PAGES * nnodes; n++) {
        if (cal[n / ACC_CAL_PAGES][n % ACC_CAL_PAGES]) {
            say("calibration node=%d page=%d addr=0x%" PRIx64 "\n", n / ACC_CAL_PAGES, n % ACC_CAL_PAGES,
                cal[n / ACC_CAL_PAGES][n % ACC_CAL_PAGES] - 1);
        }
    }
    for (int row = -1; row < nnodes; row++) {
        uint64_t m[ACC_MAX_NODES + 1] = {0}, io = 0, all = 0;
        int any = 0;
        struct remote merged = {0};
        for (int c = 0; c < nvcpus; c++) {
            if (cpu_node[c] != row) {
                continue;
            }
            any = 1;
            for (int n = 0; n <= ACC_MAX_NODES; n++) {
                m[n] += vcpus[c].mem[n];
            }
            io += vcpus[c].io;
            struct remote *r = &vcpus[c].remote;
            for (size_t i = 0; i < r->cap; i++) {
                if (r->slot[i].key) {
                    remote_add(&merged, r->slot[i].key - 1, r->slot[i].count);
                }
            }
        }
        if (!any) {
            continue;
        }
        char line[512];
        int at = row < 0 ? snprintf(line, sizeof line, "matrix cpu_node=none")
                         : snprintf(line, sizeof line, "matrix cpu_node=%d", row);
        for (int n = 0; n < nnodes; n++) {
            at += snprintf(line + at, sizeof line - at, " mem_node%d=%" PRIu64, n, m[n]);
            all += m[n];
        }
        all += m[OUTSIDE];
        snprintf(line + at, sizeof line - at, " outside=%" PRIu64 " ram=%" PRIu64 " io=%" PRIu64 "\n",
                 m[OUTSIDE], all, io);
        say("%s", line);
        if (row < 0 || !merged.used) {
            free(merged.slot);
            continue;
        }
        struct rpage *list = malloc(merged.used * sizeof *list);
        size_t k = 0;
        uint64_t total = 0, shown = 0;
        for (size_t i = 0; list && i < merged.cap; i++) {
            if (merged.slot[i].key) {
                list[k++] = merged.slot[i];
                total += merged.slot[i].count;
            }
        }
        if (list) {
            qsort(list, k, sizeof *list, by_count);
            for (size_t i = 0; i < k && i < top; i++) {
                struct vcpu probe = {.last = 0};
                uint64_t page = list[i].key - 1;
                say("remote cpu_node=%d mem_node=%d page=0x%" PRIx64 " accesses=%" PRIu64 "\n", row,
                    node_of(&probe, page), page, list[i].count);
                shown += list[i].count;
            }
        }
        say("remote_pages cpu_node=%d pages=%zu accesses=%" PRIu64 " listed=%zu listed_accesses=%" PRIu64 "\n",
            row, k, total, k < top ? k : (size_t)top, shown);
        free(list);
        free(merged.slot);
    }
    say("end window %d\n", window);
    write_record();
    char msg[128];
    snprintf(msg, sizeof msg, "access: window %d written to the out= file\n", window);
    qemu_plugin_outs(msg);
}

/* ---- the callbacks -------------------------------------------------------------- */

static void marker(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr)
{
    uint64_t page = vaddr & ~(ACC_PAGE - 1);
    if (page == ACC_START) {
        if (active) {
            window_close("closed_by_start");
        }
        window_open();
    } else if (page == ACC_END) {
        if (active) {
            window_close("complete");
        }
    } else if (page >= ACC_CAL && page < ACC_CAL + ACC_PAGE * ACC_CAL_PAGES * nnodes) {
        struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
        if (hw && !qemu_plugin_hwaddr_is_io(hw)) {
            uint64_t i = (page - ACC_CAL) / ACC_PAGE;
            cal[i / ACC_CAL_PAGES][i % ACC_CAL_PAGES] = (qemu_plugin_hwaddr_phys_addr(hw) & ~(ACC_PAGE - 1)) + 1;
        }
    }
    (void)vcpu;
}

static void mem_cb(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
    (void)udata;
    if (vaddr >> 47) {
        return; /* the kernel's half */
    }
    if (__builtin_expect(vaddr - ACC_BASE < ACC_SPAN, 0)) {
        marker(vcpu, info, vaddr);
        return;
    }
    if (!active || vcpu >= (unsigned)nvcpus) {
        return;
    }
    struct vcpu *v = &vcpus[vcpu];
    struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
    if (!hw || qemu_plugin_hwaddr_is_io(hw)) {
        v->io++;
        return;
    }
    uint64_t pa = qemu_plugin_hwaddr_phys_addr(hw);
    int n = node_of(v, pa);
    v->mem[n]++;
    if (top > 0 && n != cpu_node[vcpu] && n != OUTSIDE && cpu_node[vcpu] >= 0) {
        remote_add(&v->remote, pa & ~(ACC_PAGE - 1), 1);
    }
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        qemu_plugin_register_vcpu_mem_cb(qemu_plugin_tb_get_insn(tb, i), mem_cb, QEMU_PLUGIN_CB_NO_REGS,
                                         QEMU_PLUGIN_MEM_RW, NULL);
    }
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
    (void)id;
    (void)p;
    if (active) {
        window_close("cut_by_exit");
    } else if (window == 0) {
        say("no window was opened\n");
        write_record();
    }
}

/* ---- arguments ----------------------------------------------------------------- */

static int fail_arg(const char *arg, const char *why)
{
    char msg[512];
    snprintf(msg, sizeof msg, "access: bad argument \"%s\": %s\n", arg, why);
    qemu_plugin_outs(msg);
    return -1;
}

/* a non-negative decimal, all of s..end */
static int number(const char *s, const char *end, long *out)
{
    if (s == end) {
        return -1;
    }
    long v = 0;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9' || v > 100000000) {
            return -1;
        }
        v = v * 10 + (*s - '0');
    }
    *out = v;
    return 0;
}

/* One node's field of a ':'-separated list: [p, e). */
typedef int (*node_field)(const char *arg, int node, const char *p, const char *e);

/* Calls f on each node's field of v; the number of nodes, or -1. */
static int each_node(const char *arg, const char *v, node_field f)
{
    int node = 0;
    while (*v) {
        if (node >= ACC_MAX_NODES) {
            return fail_arg(arg, "more nodes than the plugin counts (8)");
        }
        const char *e = strchr(v, ':');
        if (!e) {
            e = v + strlen(v);
        }
        if (f(arg, node, v, e) != 0) {
            return -1;
        }
        node++;
        v = *e ? e + 1 : e;
    }
    return node;
}

/* A node's CPUs: numbers and ranges joined by '+'. */
static int node_cpus(const char *arg, int node, const char *p, const char *e)
{
    while (p < e) {
        const char *q = p;
        while (q < e && *q != '+') {
            q++;
        }
        const char *dash = memchr(p, '-', q - p);
        long a, b;
        if (dash ? number(p, dash, &a) || number(dash + 1, q, &b) : number(p, q, &a)) {
            return fail_arg(arg, "a node's CPUs are numbers and ranges joined by '+', nodes by ':'");
        }
        if (!dash) {
            b = a;
        }
        if (a > b || b >= nvcpus) {
            return fail_arg(arg, "a CPU the machine does not have");
        }
        for (long c = a; c <= b; c++) {
            if (cpu_node[c] >= 0) {
                return fail_arg(arg, "a CPU in two nodes");
            }
            cpu_node[c] = node;
        }
        p = q < e ? q + 1 : q;
    }
    return 0;
}

/* A node's memory in MiB. */
static int node_mem(const char *arg, int node, const char *p, const char *e)
{
    long mib;
    if (number(p, e, &mib) || mib == 0) {
        return fail_arg(arg, "each node's memory in MiB, ':' between nodes");
    }
    node_size[node] = (uint64_t)mib << 20;
    return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    if (!info->system_emulation || strcmp(info->target_name, "x86_64") != 0) {
        qemu_plugin_outs("access: needs qemu-system-x86_64\n");
        return -1;
    }
    nvcpus = info->system.max_vcpus;
    if (nvcpus > MAX_VCPUS) {
        qemu_plugin_outs("access: more than 64 vCPUs\n");
        return -1;
    }
    for (int c = 0; c < MAX_VCPUS; c++) {
        cpu_node[c] = -1;
        vcpus[c].last = 0;
    }
    int ncpus = -1, nmem = -1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "cpus=", 5) == 0) {
            ncpus = each_node(a, a + 5, node_cpus);
            if (ncpus < 0) {
                return -1;
            }
        } else if (strncmp(a, "mem=", 4) == 0) {
            nmem = each_node(a, a + 4, node_mem);
            if (nmem < 0) {
                return -1;
            }
        } else if (strncmp(a, "out=", 4) == 0 && a[4]) {
            out_path = a + 4;
        } else if (strncmp(a, "top=", 4) == 0) {
            long t;
            if (number(a + 4, a + strlen(a), &t) || t > 100000) {
                return fail_arg(a, "top= is a number up to 100000");
            }
            top = (unsigned)t;
        } else {
            return fail_arg(a, "the arguments are cpus=, mem=, out= and top=");
        }
    }
    if (ncpus <= 0 || ncpus != nmem) {
        return fail_arg(ncpus <= 0 ? "cpus=" : "mem=", "cpus= and mem= name the same nodes, at least one");
    }
    if (!out_path) {
        return fail_arg("out=", "missing");
    }
    nnodes = ncpus;
    say("access plugin nodes=%d vcpus=%d\n", nnodes, nvcpus);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
