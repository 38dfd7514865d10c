/* draw: `numapin plan --svg` on the golden topologies, drawn by the real
 * lstopo-no-graphics: one PU rectangle per PU of the machine, each in the
 * colour of the group the plan gives it, CPUs outside the cpuset and
 * CPU-less nodes set apart, a legend box per group; names in labels and
 * legend lines with every letter, their bidirectional and zero-width
 * characters written out, in well-formed XML; no lstopo "Group" text
 * beside numapin's groups; the picture in docs/ current; bad output paths
 * refused whole.
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
#include "np_text.h"
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

/* True when the document has a <text> element reading exactly `want`. */
static bool has_text(const char *svg, const char *want)
{
    for (const char *p = strstr(svg, "<text "); p != NULL; p = strstr(p + 1, "<text ")) {
        const char *c = strchr(p, '>'), *end = strstr(p, "</text>");
        if (c != NULL && end != NULL && c < end && (size_t)(end - c - 1) == strlen(want) &&
            memcmp(c + 1, want, strlen(want)) == 0)
            return true;
    }
    return false;
}

/* A reference after '&': a predefined entity or a character number; its
 * length up to and with ';', else 0. */
static size_t reference(const char *s)
{
    static const char *const named[] = {"lt;", "gt;", "amp;", "quot;", "apos;"};
    for (size_t i = 0; i < sizeof named / sizeof *named; i++)
        if (strncmp(s, named[i], strlen(named[i])) == 0)
            return strlen(named[i]);
    if (s[0] != '#')
        return 0;
    bool hex = s[1] == 'x';
    size_t n = strspn(s + 1 + hex, hex ? "0123456789abcdefABCDEF" : "0123456789");
    return n > 0 && s[1 + hex + n] == ';' ? 2 + hex + n : 0;
}

/* Checks that `xml` is well-formed as an XML reader takes it: UTF-8, no
 * control character, tags nested and closed, attributes quoted, every
 * '&' a reference, no '<' in text or values.  NULL, or what is wrong. */
static const char *xml_error(const char *xml)
{
    if (!np_text_is_utf8(xml))
        return "not UTF-8";
    for (const unsigned char *c = (const unsigned char *)xml; *c; c++)
        if (*c < 0x20 && *c != '\t' && *c != '\n' && *c != '\r')
            return "a control character";
    const char *p = xml;
    if (strncmp(p, "<?xml", 5) == 0 && (p = strstr(p, "?>")) != NULL)
        p += 2;
    if (p == NULL)
        return "an unclosed declaration";
    const char *open[64];
    size_t openlen[64];
    int depth = 0, roots = 0;
    while (*p != '\0') {
        if (*p == '&') {
            size_t n = reference(p + 1);
            if (n == 0)
                return "an '&' that is no reference";
            p += 1 + n;
        } else if (*p != '<') {
            if (depth == 0 && strchr(" \t\r\n", *p) == NULL)
                return "text outside the root element";
            p++;
        } else if (strncmp(p, "<!--", 4) == 0) {
            if ((p = strstr(p, "-->")) == NULL)
                return "an unclosed comment";
            p += 3;
        } else if (p[1] == '/') {
            size_t n = strcspn(p + 2, " \t\r\n>");
            if (depth == 0 || n != openlen[depth - 1] || memcmp(p + 2, open[depth - 1], n) != 0)
                return "a closing tag that closes nothing open";
            depth--;
            p += 2 + n + strspn(p + 2 + n, " \t\r\n");
            if (*p++ != '>')
                return "a closing tag without '>'";
        } else {
            size_t n = strcspn(p + 1, " \t\r\n/><");
            if (n == 0 || depth == 64)
                return "a tag without a name";
            const char *name = p + 1;
            p += 1 + n;
            for (;;) {
                p += strspn(p, " \t\r\n");
                if (*p == '>' || strncmp(p, "/>", 2) == 0)
                    break;
                size_t a = strcspn(p, " \t\r\n=/><\"'&");
                if (a == 0 || p[a] != '=' || (p[a + 1] != '\'' && p[a + 1] != '"'))
                    return "an attribute without a quoted value";
                char quote = p[a + 1];
                for (p += a + 2; *p != quote; p++) {
                    if (*p == '\0' || *p == '<')
                        return "an unclosed attribute value";
                    if (*p == '&' && reference(p + 1) == 0)
                        return "an '&' that is no reference in a value";
                }
                p++;
            }
            if (*p == '>') {
                if (depth == 0 && roots++ > 0)
                    return "a second root element";
                open[depth] = name;
                openlen[depth++] = n;
            } else if (depth == 0) {
                roots++;
            }
            p += *p == '>' ? 1 : 2;
        }
    }
    return depth != 0 ? "an element left open" : roots != 1 ? "no single root element" : NULL;
}

/* Asserts that the SVG at `path` (holding `svg`) is well-formed XML, by
 * xml_error and by xmllint when it is installed. */
static void assert_xml(const char *path, const char *svg)
{
    const char *why = xml_error(svg);
    ck_assert_msg(why == NULL, "%s is not well-formed XML: %s", path, why != NULL ? why : "");
    if (access("/usr/bin/xmllint", X_OK) == 0) {
        char *argv[] = {"/usr/bin/xmllint", "--noout", (char *)path, NULL}, *o, *e;
        ck_assert_msg(t_run(argv, &o, &e) == 0, "xmllint %s: %s", path, e);
        free(o);
        free(e);
    }
}

START_TEST(xml_check_finds_what_breaks_xml)
{
    ck_assert_ptr_null(xml_error("<?xml version='1.0'?>\n<a x='1'><b/>&lt;&#x202e;&#39;\xc3\xbc</a>\n"));
    ck_assert_ptr_nonnull(xml_error("<a><b></a>"));
    ck_assert_ptr_nonnull(xml_error("<a>&0;</a>"));
    ck_assert_ptr_nonnull(xml_error("<a>x<y</a>"));
    ck_assert_ptr_nonnull(xml_error("<a x='<'/>"));
    ck_assert_ptr_nonnull(xml_error("<a>\xff</a>"));
    ck_assert_ptr_nonnull(xml_error("<a>\x01</a>"));
    ck_assert_ptr_nonnull(xml_error("<a/><b/>"));
}
END_TEST

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

#define UMLAUT "\xc3\xbcmlaut-\xe5\x90\x8d\xe5\x89\x8d-worker" /* ümlaut-名前-worker */
#define RLO "\xe2\x80\xae"                                         /* U+202E */
#define ZWSP "\xe2\x80\x8b"                                        /* U+200B */

/* Names on a synthetic machine drawn as `numapin check --svg` draws
 * them: labels on PUs, a legend line, a node's text, a group's label. */
START_TEST(names_keep_their_letters_and_show_hidden_characters)
{
    const char *desc = "pack:1 numa:1 core:4 pu:1";
    struct np_topo t;
    char err[1024], dir[256], out[512];
    ck_assert_int_eq(np_topo_load(&t, NULL, desc, err, sizeof err), 0);
    struct cli_machine m = {.synthetic = desc};
    struct cli_draw d;
    ck_assert_int_eq(cli_draw_open(&d, &m, &t, err, sizeof err), 0);
    hwloc_bitmap_t all = t_bitmap("0-3"), node = t_bitmap("0");
    ck_assert_int_eq(cli_draw_group(&d, 0, all, node, "group 0 (java " UMLAUT ")"), 0);
    static const char *const names[] = {
        UMLAUT, "ForkJoinPool-7-worker-" RLO "evil", "tab\there" ZWSP "\x01", "<b>x</b>&amp;'\"",
    };
    for (int i = 0; i < 4; i++) {
        char cpu[8];
        snprintf(cpu, sizeof cpu, "%d", i);
        hwloc_bitmap_t c = t_bitmap(cpu);
        ck_assert_int_eq(cli_draw_label(&d, c, names[i]), 0);
        hwloc_bitmap_free(c);
    }
    /* A label is cut at 40 characters, before a character whose written
     * out form would go past them, never inside it. */
    char cut[64], drawn[64];
    snprintf(cut, sizeof cut, "%.36s" RLO "bcdef", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    snprintf(drawn, sizeof drawn, "%.36s...", cut);
    hwloc_bitmap_t cpu0 = t_bitmap("0");
    ck_assert_int_eq(cli_draw_label(&d, cpu0, cut), 0);
    hwloc_bitmap_free(cpu0);
    ck_assert_int_eq(cli_draw_node_text(&d, 0, "RSS " UMLAUT), 0);
    ck_assert_int_eq(cli_draw_legend(&d, "other threads: 1 (ForkJoinPool-7-worker-" RLO "evil)"), 0);
    ck_assert_int_eq(cli_draw_legend(&d, "numapin check 1 (\"" UMLAUT "\")"), 0);
    t_tmpdir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/names.svg", dir);
    ck_assert_msg(cli_draw_write(&d, out, err, sizeof err) == 0, "%s", err);
    char *svg = t_read_file(out, NULL);
    ck_assert_ptr_nonnull(svg);
    assert_xml(out, svg);
    /* Every letter, CJK included, in labels, node texts, group boxes and
     * legend lines alike. */
    ck_assert_msg(has_text(svg, UMLAUT), "no label " UMLAUT " in %s", out);
    ck_assert(has_text(svg, "RSS " UMLAUT));
    ck_assert(has_text(svg, "group 0 (java " UMLAUT ")"));
    ck_assert(has_text(svg, "numapin check 1 (&quot;" UMLAUT "&quot;)"));
    /* Bidirectional, zero-width and control characters written out. */
    ck_assert_ptr_null(strstr(svg, RLO));
    ck_assert_ptr_null(strstr(svg, ZWSP));
    ck_assert(has_text(svg, "ForkJoinPool-7-worker-\\u202eevil"));
    ck_assert(has_text(svg, "other threads: 1 (ForkJoinPool-7-worker-\\u202eevil)"));
    ck_assert(has_text(svg, "tab\\x09here\\u200b\\x01"));
    ck_assert_msg(has_text(svg, drawn), "no label %s", drawn);
    /* Markup stays text. */
    ck_assert(has_text(svg, "&lt;b&gt;x&lt;/b&gt;&amp;amp;&#39;&quot;"));
    ck_assert_ptr_null(strstr(svg, "<b>"));
    free(svg);
    cli_draw_close(&d);
    hwloc_bitmap_free(all);
    hwloc_bitmap_free(node);
    np_topo_destroy(&t);
    t_rmdir(dir);
}
END_TEST

/* hwloc's Group objects keep their boxes without lstopo's "Group0", which
 * a reader would take for numapin's groups. */
START_TEST(hwloc_groups_have_no_text_beside_numapins_groups)
{
    char dir[256], out[512];
    t_tmpdir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/g.svg", dir);
    char *argv[] = {(char *)cli(), "plan", "--groups", "4", "--synthetic", "pack:2 numa:2 core:4 pu:2",
                    "--svg", out, NULL};
    char *o, *e;
    ck_assert_msg(t_run(argv, &o, &e) == 0, "%s", e);
    char *svg = t_read_file(out, NULL);
    ck_assert_ptr_nonnull(svg);
    assert_xml(out, svg);
    /* The machine's four Groups (a node with its cores) are drawn... */
    ck_assert_int_eq(count(svg, "<rect id='Group0_"), 4);
    /* ...and no text of the picture reads "Group". */
    for (const char *p = strstr(svg, "<text "); p != NULL; p = strstr(p + 1, "<text ")) {
        const char *c = strchr(p, '>'), *end = strstr(p, "</text>");
        ck_assert(c != NULL && end != NULL);
        ck_assert_msg(memmem(c, (size_t)(end - c), "Group", 5) == NULL, "lstopo's text: %.*s",
                      (int)(end - c - 1), c + 1);
    }
    for (int g = 0; g < 4; g++) {
        char want[64];
        snprintf(want, sizeof want, "group %d: nodes %d, CPUs %d-%d", g, g, 8 * g, 8 * g + 7);
        ck_assert_msg(has_text(svg, want), "no legend box %s", want);
    }
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
    tcase_add_test(tc, xml_check_finds_what_breaks_xml);
    tcase_add_test(tc, names_keep_their_letters_and_show_hidden_characters);
    tcase_add_test(tc, hwloc_groups_have_no_text_beside_numapins_groups);
    tcase_add_test(tc, plan_svg_colours_every_pu_by_its_group);
    tcase_add_test(tc, plan_svg_sets_apart_cpus_outside_the_cpuset_and_cpuless_nodes);
    tcase_add_test(tc, synthetic_machines_are_drawn_too);
    tcase_add_test(tc, docs_picture_is_current);
    tcase_add_test(tc, bad_output_paths_are_one_line_and_leave_nothing);
    tcase_add_test(tc, missing_lstopo_is_named_with_its_package);
    suite_add_tcase(s, tc);
    return s;
}
