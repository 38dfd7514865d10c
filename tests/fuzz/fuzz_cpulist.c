/* fuzz_cpulist: the CPU and node lists numapin reads, all through
 * np_parse_list (core/np_cpulist.c):
 *  - mem=MODE:NODES of the agent (np_options_parse; nodes joined by '+');
 *  - `numapin plan --restrict CPUS` of the command-line tool, its real
 *    main() (cli/main.c built with main renamed), which goes on to
 *    np_topo_restrict and the planner on a fake machine;
 *  - np_cpulist, which writes lists back, into buffers of every size.
 *
 * Input: the first byte picks the mode of mem= and the machine, the rest is
 * the list.  Beyond memory errors, it aborts when a list that is not a
 * plain decimal list of numbers and ranges is accepted (a number that wraps
 * around, an open range "N-", "1-1-1", an empty item), when what is
 * accepted is not what was written (010 is ten, never octal eight), when
 * accepted memory nodes are outside 0 to 4095, when the tool plans on CPUs
 * it was not given, or when np_cpulist writes past its buffer or does not
 * read back (through hwloc's own list reader, the oracle here). */
#define _GNU_SOURCE
#include "fuzz_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <hwloc.h>
#include <unistd.h>

#include "np_options.h"
#include "np_topo.h"

int numapin_cli_main(int argc, char **argv);
void __sanitizer_set_report_fd(void *fd);

static int devnull = -1, real_stderr = -1;

static const char *const modes[] = {"preferred", "bind", "interleave", "local", "none"};
static const char *const machines[] = {
    "pack:2 numa:2 core:2 pu:2",
    "pack:1 numa:1 core:4 pu:1",
    "pack:4 numa:1 l3:2 core:2 pu:2",
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    /* The tool's usage messages go to /dev/null while it runs, its stdout
     * to a memfd (run_cli); sanitizer reports always to the real stderr. */
    real_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 10);
    if (real_stderr >= 0)
        __sanitizer_set_report_fd((void *)(intptr_t)real_stderr);
    unsetenv("HWLOC_XMLFILE");
    unsetenv("HWLOC_SYNTHETIC");
    return 0;
}

static void mem_nodes(int mode, const char *list)
{
    /* A comma ends the option: what follows is another option, not part of
     * the list (mem=preferred:0,help is two valid options). */
    if (strchr(list, ',') != NULL)
        return;
    size_t len = strlen(list) + 32;
    char *opt = malloc(len);
    if (opt == NULL)
        abort();
    snprintf(opt, len, "mem=%s:%s", modes[mode], list);
    struct np_options o;
    char err[512];
    int rc = np_options_parse(opt, &o, err, sizeof err);
    if (rc == 0) {
        /* Accepted: the nodes given, which the agent reads back from
         * o.mem_nodes with hwloc. */
        uint64_t max;
        hwloc_bitmap_t want = hwloc_bitmap_alloc(), got = hwloc_bitmap_alloc();
        if (want == NULL || got == NULL)
            abort();
        FUZZ_CHECK(o.mem_nodes != NULL, "'%s' accepted without nodes", opt);
        FUZZ_CHECK(fuzz_strict_list(list, '+', &max, want) && max < NP_MAX_GROUPS,
                   "'%s' accepted: not a list of nodes 0 to 4095 joined by '+'", opt);
        FUZZ_CHECK(hwloc_bitmap_list_sscanf(got, o.mem_nodes) == 0 && hwloc_bitmap_isequal(got, want),
                   "'%s' kept as '%s', which reads back as other nodes", opt, o.mem_nodes);
        hwloc_bitmap_free(want);
        hwloc_bitmap_free(got);
    } else {
        FUZZ_CHECK(err[0] != '\0' && !fuzz_has_control(err), "bad message for '%s': %s", opt, err);
    }
    np_options_free(&o);
    free(opt);
}

/* What the tool printed, captured from its stdout. */
static char *run_cli(char **argv, int argc, int *rc)
{
    int out = memfd_create("numapin-cli", MFD_CLOEXEC);
    if (out < 0)
        abort();
    fflush(stdout);
    int saved_out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 10);
    dup2(out, STDOUT_FILENO);
    if (devnull >= 0 && real_stderr >= 0)
        dup2(devnull, STDERR_FILENO);
    *rc = numapin_cli_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    if (devnull >= 0 && real_stderr >= 0)
        dup2(real_stderr, STDERR_FILENO);
    dup2(saved_out, STDOUT_FILENO);
    close(saved_out);
    off_t size = lseek(out, 0, SEEK_END);
    char *text = malloc((size_t)size + 1);
    if (text == NULL || pread(out, text, (size_t)size, 0) != size)
        abort();
    text[size] = '\0';
    close(out);
    return text;
}

static void restrict_cli(int machine, const char *list)
{
    char *argv[] = {"numapin", "plan", "--synthetic", (char *)machines[machine], "--restrict",
                    (char *)list, NULL};
    int rc;
    char *out = run_cli(argv, 6, &rc);
    if (rc == 0) {
        uint64_t max;
        hwloc_bitmap_t want = hwloc_bitmap_alloc(), allowed = hwloc_bitmap_alloc();
        if (want == NULL || allowed == NULL)
            abort();
        FUZZ_CHECK(fuzz_strict_list(list, ',', &max, want) && max <= INT32_MAX,
                   "numapin plan --restrict '%s' accepted: not a list of CPU numbers and ranges "
                   "(a number wraps around, or a range is open, reversed or empty)", list);
        /* The plan's CPUs are some of those asked for ("allowed=LIST" in
         * the topology line). */
        const char *a = strstr(out, " allowed=");
        FUZZ_CHECK(a != NULL, "no allowed= in the output of --restrict '%s'", list);
        char cpus[4096];
        size_t n = strcspn(a + 9, " \n");
        FUZZ_CHECK(n > 0 && n < sizeof cpus, "allowed= of --restrict '%s'", list);
        memcpy(cpus, a + 9, n);
        cpus[n] = '\0';
        FUZZ_CHECK(hwloc_bitmap_list_sscanf(allowed, cpus) == 0 && !hwloc_bitmap_iszero(allowed) &&
                       hwloc_bitmap_isincluded(allowed, want),
                   "numapin plan --restrict '%s' planned on allowed=%s, not among the CPUs asked for",
                   list, cpus);
        hwloc_bitmap_free(want);
        hwloc_bitmap_free(allowed);
    }
    free(out);
}

/* np_cpulist writes back the lists numapin holds, into buffers of every size. */
static void cpulist_roundtrip(const char *list)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc(), back = hwloc_bitmap_alloc();
    if (set == NULL || back == NULL)
        abort();
    uint64_t max;
    if (fuzz_strict_list(list, ',', &max, set) && max < 65536) {
        static char full[1 << 17];
        np_cpulist(full, sizeof full, set);
        FUZZ_CHECK(hwloc_bitmap_list_sscanf(back, full) == 0 && hwloc_bitmap_isequal(set, back),
                   "np_cpulist wrote '%s' for '%s', which does not read back", full, list);
        size_t flen = strlen(full);
        for (size_t len = 1; len <= flen + 1 && len < 64; len++) {
            char *buf = malloc(len); /* ASan sees a write past it */
            if (buf == NULL)
                abort();
            np_cpulist(buf, len, set);
            FUZZ_CHECK(memchr(buf, '\0', len) != NULL, "np_cpulist(len %zu) not terminated", len);
            FUZZ_CHECK(strncmp(buf, full, strlen(buf)) == 0, "np_cpulist(len %zu) wrote '%s', not a "
                       "prefix of '%s'", len, buf, full);
            free(buf);
        }
    }
    hwloc_bitmap_free(set);
    hwloc_bitmap_free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 256)
        return 0;
    int mode = data[0] % 5, machine = (data[0] / 5) % 3;
    char *list = fuzz_cstr(data + 1, size - 1);
    mem_nodes(mode, list);
    restrict_cli(machine, list);
    cpulist_roundtrip(list);
    free(list);
    return 0;
}
