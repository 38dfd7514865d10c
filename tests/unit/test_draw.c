/* draw: `numapin plan --svg` on the golden topologies, drawn by the real
 * lstopo-no-graphics: one PU rectangle per PU of the machine, each in the
 * colour of the group the plan gives it, CPUs outside the cpuset and
 * CPU-less nodes set apart, a legend box per group; the picture in docs/
 * current; bad output paths refused whole.
 *
 * Needs lstopo-no-graphics (Debian's hwloc-nox, in the build set of
 * scripts/install-deps.sh). */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "draw.h"
#include "np_plan.h"
#include "tests.h"

static const char *cli(void)
{
    const char *c = getenv("NUMAPIN_CLI");
    ck_assert_msg(c != NULL && *c, "NUMAPIN_CLI is not set");
    return c;
}

static void topology(char *buf, size_t len, const char *name)
{
    const char *d = getenv("NUMAPIN_TOPOLOGIES");
    ck_assert_msg(d != NULL && *d, "NUMAPIN_TOPOLOGIES is not set");
    snprintf(buf, len, "%s/%s", d, name);
}

START_TEST(markup_text_is_safe_in_svg_and_html)
{
    char out[256];
    ck_assert_str_eq(cli_markup_text(out, sizeof out, "a<b>&c\"d'e", 100),
                     "a&lt;b&gt;&amp;c&quot;d&#39;e");
    ck_assert_str_eq(cli_markup_text(out, sizeof out, "x\033[2J\ty\x7f", 100), "x?[2J?y?");
    ck_assert_str_eq(cli_markup_text(out, sizeof out, "caf\xc3\xa9 \xff\xc3", 100), "caf\xc3\xa9 ??");
    ck_assert_str_eq(cli_markup_text(out, sizeof out, "abcdefgh", 5), "abcde...");
    ck_assert_str_eq(cli_markup_text(out, 4, "abcdefgh", 100), "abc");
}
END_TEST

/* "rgb(r,g,b)" of "#rrggbb". */
static void rgb(char *buf, size_t len, const char *hex)
{
    unsigned v = (unsigned)strtoul(hex + 1, NULL, 16);
    snprintf(buf, len, "rgb(%u,%u,%u)", v >> 16, (v >> 8) & 0xff, v & 0xff);
}

/* The fill of the rectangle with this id, or "" when there is none. */
static void fill_of(const char *svg, const char *id, char *buf, size_t len)
{
    char key[96];
    snprintf(key, sizeof key, "<rect id='%s' ", id);
    buf[0] = '\0';
    const char *r = strstr(svg, key);
    if (r == NULL)
        return;
    const char *f = strstr(r, " fill='"), *end = strchr(r, '>');
    if (f == NULL || f > end)
        return;
    f += 7;
    snprintf(buf, len, "%.*s", (int)strcspn(f, "'"), f);
}

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Draws `groups` groups of topology `xml` (restricted to `restrict` when
 * not NULL) and checks every PU of the SVG against the plan. */
static void check_plan_svg(const char *xml, int groups, const char *restrict_cpus)
{
    char dir[256], out[512], path[1024], g[16];
    t_tmpdir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/plan.svg", dir);
    topology(path, sizeof path, xml);
    snprintf(g, sizeof g, "%d", groups);
    char *argv[] = {(char *)cli(), "plan", "--groups", g, "--topology", path, "--svg", out,
                    restrict_cpus ? "--restrict" : NULL, (char *)restrict_cpus, NULL};
    char *o, *e;
    int rc = t_run(argv, &o, &e);
    ck_assert_msg(rc == 0, "%s groups=%d: exit %d: %s", xml, groups, rc, e);
    char *svg = t_read_file(out, NULL);
    ck_assert_msg(svg != NULL, "%s: no SVG written", xml);
    ck_assert_msg(strncmp(svg, "<?xml", 5) == 0 && strstr(svg, "</svg>") != NULL, "%s: not SVG", xml);

    /* The plan, as the tool computes it. */
    struct np_topo t;
    char err[1024];
    ck_assert_int_eq(np_topo_load(&t, path, NULL, err, sizeof err), 0);
    if (restrict_cpus != NULL) {
        hwloc_bitmap_t r = t_bitmap(restrict_cpus);
        ck_assert_int_eq(np_topo_restrict(&t, r, err, sizeof err), 0);
        hwloc_bitmap_free(r);
    }
    struct np_plan p;
    ck_assert_int_eq(np_plan_build(&t, groups, NP_DOMAIN_NODE, &p), 0);
    /* Every PU the file holds, the disallowed ones too. */
    hwloc_topology_t all;
    hwloc_topology_init(&all);
    hwloc_topology_set_flags(all, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    hwloc_topology_set_io_types_filter(all, HWLOC_TYPE_FILTER_KEEP_NONE);
    ck_assert_int_eq(hwloc_topology_set_xml(all, path), 0);
    ck_assert_int_eq(hwloc_topology_load(all), 0);
    int npu = hwloc_get_nbobjs_by_type(all, HWLOC_OBJ_PU);
    ck_assert_msg(count(svg, "<rect id='PU_") == npu, "%s: %d PU rectangles for %d PUs", xml,
                  count(svg, "<rect id='PU_"), npu);
    bool outside = false;
    for (int i = 0; i < npu; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(all, HWLOC_OBJ_PU, (unsigned)i);
        char id[64], fill[64], want[64] = "";
        snprintf(id, sizeof id, "PU_%d_rect", i);
        fill_of(svg, id, fill, sizeof fill);
        if (!hwloc_bitmap_isset(t.allowed, pu->os_index)) {
            snprintf(want, sizeof want, "rgb(77,77,77)");
            outside = true;
        }
        for (int k = 0; k < p.ngroups && want[0] == '\0'; k++)
            if (hwloc_bitmap_isset(p.groups[k].cpus, pu->os_index))
                rgb(want, sizeof want, cli_draw_colour(k));
        if (want[0] == '\0')
            snprintf(want, sizeof want, "rgb(255,255,255)"); /* in no group: lstopo's own */
        ck_assert_msg(strcmp(fill, want) == 0, "%s groups=%d: PU P#%u (%s) is %s, not %s", xml,
                      groups, pu->os_index, id, fill, want);
    }
    /* A legend box per group, in its colour; one for the outside CPUs. */
    for (int k = 0; k < p.ngroups; k++) {
        char label[64];
        snprintf(label, sizeof label, ">group %d: nodes ", k);
        ck_assert_msg(strstr(svg, label) != NULL, "%s: no legend for group %d", xml, k);
    }
    ck_assert_int_eq(strstr(svg, ">outside the cpuset (not used)<") != NULL, outside);
    hwloc_topology_destroy(all);
    np_plan_free(&p);
    np_topo_destroy(&t);
    free(svg);
    free(o);
    free(e);
    t_rmdir(dir);
}

START_TEST(plan_svg_colours_every_pu_by_its_group)
{
    const char *dir = getenv("NUMAPIN_TOPOLOGIES");
    ck_assert_ptr_nonnull(dir);
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".xml") != 0)
            continue;
        for (int g = 1; g <= 3; g++)
            check_plan_svg(e->d_name, g, NULL);
        n++;
    }
    closedir(d);
    ck_assert_int_gt(n, 10);
}
END_TEST

START_TEST(plan_svg_sets_apart_cpus_outside_the_cpuset_and_cpuless_nodes)
{
    check_plan_svg("xeon-6972p-snc3.xml", 3, "0-15,96-111");
    check_plan_svg("16amd64-8n2c-cpusets.xml", 2, NULL);
    /* NVM and HBM nodes have no CPU: light grey, with their legend box. */
    char dir[256], out[512], path[1024];
    t_tmpdir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/tiers.svg", dir);
    topology(path, sizeof path, "fakeheteromemtiers.xml");
    char *argv[] = {(char *)cli(), "plan", "--groups", "2", "--topology", path, "--svg", out, NULL};
    char *o, *e;
    ck_assert_int_eq(t_run(argv, &o, &e), 0);
    char *svg = t_read_file(out, NULL), fill[64];
    ck_assert_ptr_nonnull(svg);
    ck_assert_ptr_nonnull(strstr(svg, ">node without CPUs<"));
    fill_of(svg, "NUMANode_1_rect", fill, sizeof fill); /* NVM L#1 */
    ck_assert_str_eq(fill, "rgb(224,224,224)");
    char want[64];
    rgb(want, sizeof want, cli_draw_colour(0));
    fill_of(svg, "NUMANode_0_rect", fill, sizeof fill); /* DRAM L#0: group 0 */
    ck_assert_str_eq(fill, want);
    free(svg);
    free(o);
    free(e);
    t_rmdir(dir);
}
END_TEST

START_TEST(synthetic_machines_are_drawn_too)
{
    char dir[256], out[512];
    t_tmpdir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/s.svg", dir);
    char *argv[] = {(char *)cli(), "plan", "--groups", "4", "--synthetic", "pack:2 numa:2 core:3 pu:2",
                    "--svg", out, NULL};
    char *o, *e;
    ck_assert_int_eq(t_run(argv, &o, &e), 0);
    char *svg = t_read_file(out, NULL);
    ck_assert_ptr_nonnull(svg);
    ck_assert_int_eq(count(svg, "<rect id='PU_"), 24);
    ck_assert_ptr_nonnull(strstr(svg, ">group 3: nodes 3, CPUs 18-23<"));
    free(svg);
    free(o);
    free(e);
    t_rmdir(dir);
}
END_TEST

/* The picture of docs/placement-pictures.md, as the tool draws it now. */
START_TEST(docs_picture_is_current)
{
    const char *docs = getenv("NUMAPIN_DOCS");
    ck_assert_msg(docs != NULL && *docs, "NUMAPIN_DOCS (the docs folder) is not set");
    char dir[256], out[512], path[1024], doc[1024];
    t_tmpdir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/doc.svg", dir);
    snprintf(doc, sizeof doc, "%s/pictures/xeon-6972p-snc3-3groups.svg", docs);
    topology(path, sizeof path, "xeon-6972p-snc3.xml");
    char *argv[] = {(char *)cli(), "plan", "--groups", "3", "--topology", path, "--svg", out, NULL};
    char *o, *e;
    ck_assert_int_eq(t_run(argv, &o, &e), 0);
    size_t got_len, want_len;
    char *got = t_read_file(out, &got_len);
    ck_assert_ptr_nonnull(got);
    const char *regen = getenv("NUMAPIN_REGEN");
    if (regen != NULL && strcmp(regen, "1") == 0) {
        ck_assert_int_eq(t_write_file(doc, got, got_len), 0);
        fprintf(stderr, "regenerated %s\n", doc);
    } else {
        char *want = t_read_file(doc, &want_len);
        ck_assert_msg(want != NULL, "cannot read %s (`make test-unit REGEN=1` draws it)", doc);
        ck_assert_msg(got_len == want_len && memcmp(got, want, got_len) == 0,
                      "%s is not what `numapin plan --groups 3 --topology xeon-6972p-snc3.xml "
                      "--svg` draws now: `make test-unit REGEN=1` redraws it", doc);
        free(want);
    }
    free(got);
    free(o);
    free(e);
    t_rmdir(dir);
}
END_TEST

/* Runs plan --svg OUT; returns the exit status, stderr in *err. */
static int plan_to(const char *out, char **err)
{
    char *o;
    char *argv[] = {(char *)cli(), "plan", "--groups", "2", "--synthetic", "pack:1 numa:2 core:2 pu:1",
                    "--svg", (char *)out, NULL};
    int rc = t_run(argv, &o, err);
    free(o);
    return rc;
}

START_TEST(bad_output_paths_are_one_line_and_leave_nothing)
{
    char dir[256], out[1024], *err;
    t_tmpdir(dir, sizeof dir);
    /* A missing folder. */
    snprintf(out, sizeof out, "%s/missing/plan.svg", dir);
    ck_assert_int_eq(plan_to(out, &err), 1);
    ck_assert_int_eq(count(err, "\n"), 1);
    ck_assert_ptr_nonnull(strstr(err, "the folder"));
    ck_assert_ptr_nonnull(strstr(err, "does not exist"));
    free(err);
    /* A folder that cannot be written (root writes anywhere but sysfs). */
    char ro[512];
    snprintf(ro, sizeof ro, "%s/ro", dir);
    ck_assert_int_eq(mkdir(ro, 0500), 0);
    snprintf(out, sizeof out, "%s/plan.svg", geteuid() == 0 ? "/sys" : ro);
    ck_assert_int_eq(plan_to(out, &err), 1);
    ck_assert_int_eq(count(err, "\n"), 1);
    ck_assert_ptr_nonnull(strstr(err, "cannot write"));
    ck_assert_int_ne(access(out, F_OK), 0);
    free(err);
    rmdir(ro);
    /* A symbolic link at the final path: refused, its target untouched. */
    char target[512], link[512];
    snprintf(target, sizeof target, "%s/target", dir);
    snprintf(link, sizeof link, "%s/link.svg", dir);
    ck_assert_int_eq(t_write_file(target, "keep", 4), 0);
    ck_assert_int_eq(symlink(target, link), 0);
    ck_assert_int_eq(plan_to(link, &err), 1);
    ck_assert_ptr_nonnull(strstr(err, "symbolic link"));
    char *kept = t_read_file(target, NULL);
    ck_assert_str_eq(kept, "keep");
    free(kept);
    free(err);
    unlink(link);
    /* An existing file is replaced whole, owner-only. */
    snprintf(out, sizeof out, "%s/old.svg", dir);
    ck_assert_int_eq(t_write_file(out, "old", 3), 0);
    ck_assert_int_eq(chmod(out, 0644), 0);
    ck_assert_int_eq(plan_to(out, &err), 0);
    free(err);
    char *svg = t_read_file(out, NULL);
    ck_assert(strncmp(svg, "<?xml", 5) == 0);
    free(svg);
    struct stat st;
    ck_assert_int_eq(stat(out, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    /* No temporary file left anywhere. */
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        ck_assert_msg(e->d_name[0] != '.' || strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0,
                      "left behind: %s", e->d_name);
    closedir(d);
    t_rmdir(dir);
}
END_TEST

START_TEST(missing_lstopo_is_named_with_its_package)
{
    char dir[256], out[512], *err;
    t_tmpdir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/plan.svg", dir);
    setenv("PATH", dir, 1); /* no lstopo here (this test runs in its own process) */
    ck_assert_int_eq(plan_to(out, &err), 1);
    ck_assert_int_eq(count(err, "\n"), 1);
    ck_assert_ptr_nonnull(strstr(err, "lstopo-no-graphics"));
    ck_assert_ptr_nonnull(strstr(err, "hwloc-nox"));
    ck_assert_int_ne(access(out, F_OK), 0);
    free(err);
    t_rmdir(dir);
}
END_TEST

Suite *draw_suite(void)
{
    Suite *s = suite_create("draw");
    TCase *tc = tcase_create("draw");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, markup_text_is_safe_in_svg_and_html);
    tcase_add_test(tc, plan_svg_colours_every_pu_by_its_group);
    tcase_add_test(tc, plan_svg_sets_apart_cpus_outside_the_cpuset_and_cpuless_nodes);
    tcase_add_test(tc, synthetic_machines_are_drawn_too);
    tcase_add_test(tc, docs_picture_is_current);
    tcase_add_test(tc, bad_output_paths_are_one_line_and_leave_nothing);
    tcase_add_test(tc, missing_lstopo_is_named_with_its_package);
    suite_add_tcase(s, tc);
    return s;
}
