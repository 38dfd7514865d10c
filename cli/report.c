/* `numapin report REPORT.json... --html OUT.html`: a page for a run.
 *
 * Reads the JSON reports of report= (docs/report.md) with jansson and
 * writes one self-contained HTML file: no script, no style sheet, font or
 * image from elsewhere; the machine picture is lstopo's SVG (draw.c),
 * inline.  For each report: its plan, totals, advice, each thread's
 * placement, and every field this version does not know (later ones, such
 * as memory per node), shown as they are. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "draw.h"
#include "np_cpulist.h"

static const char usage[] =
    "usage: numapin report REPORT.json [REPORT.json...] --html OUT.html\n"
    "                      " CLI_MACHINE_USAGE "\n"
    "One self-contained HTML page for the JSON reports of report=FILE (one JVM each, e.g.\n"
    "the groups of one run): the machine drawn by lstopo (hwloc-nox) with each group's\n"
    "CPUs in its colour, a table per group, each thread's placement, the advice given.\n"
    "The machine is this one unless --topology or --synthetic names the one the run had.\n";

/* One report, loaded. */
struct run {
    const struct cli_page_input *in;
    json_t *doc;      /* NULL: not loaded (note says why) */
    char note[1024];
    int group;
};

/* ------------------------------------------------------------- reading */

static int load(struct run *r, char *err, size_t errlen)
{
    const char *path = r->in->report;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s is not a numapin report: not a regular file", path);
        close(fd);
        return -1;
    }
    if (st.st_size == 0) {
        snprintf(err, errlen, "%s is empty: the JVM wrote no report (numapin disabled itself at "
                              "start-up, or the JVM did not exit normally; its log says why)", path);
        close(fd);
        return -1;
    }
    json_error_t je;
    r->doc = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
    close(fd);
    if (r->doc == NULL) {
        snprintf(err, errlen, "%s is not a numapin report: not JSON (line %d: %s)", path, je.line,
                 je.text);
        return -1;
    }
    json_t *v = json_object_get(r->doc, "numapin"), *plan = json_object_get(r->doc, "plan");
    if (!json_is_object(r->doc) || !json_is_integer(v) || json_integer_value(v) < 1 ||
        !json_is_object(plan)) {
        snprintf(err, errlen, "%s is not a numapin report: no \"numapin\" format version and "
                              "\"plan\" (docs/report.md)", path);
        json_decref(r->doc);
        r->doc = NULL;
        return -1;
    }
    json_t *g = json_object_get(plan, "group");
    r->group = json_is_integer(g) ? (int)json_integer_value(g) : -1;
    return 0;
}

static const char *str(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static long long num(json_t *o, const char *key, long long dflt)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? json_integer_value(v) : dflt;
}

/* --------------------------------------------------------------- writing */

/* A report's group colour; grey when it names none. */
static const char *colour(int group)
{
    return group >= 0 ? cli_draw_colour(group) : "#999999";
}

static void esc(FILE *f, const char *s)
{
    char buf[8192];
    fputs(cli_markup_text(buf, sizeof buf, s != NULL ? s : "", 1000), f);
}

/* Any JSON value as text: strings as they are, null as a dash, an object
 * of plain values as "key: value, ...", anything else as compact JSON. */
static void value(FILE *f, json_t *v)
{
    if (v == NULL || json_is_null(v)) {
        fputs("&mdash;", f);
    } else if (json_is_string(v)) {
        esc(f, json_string_value(v));
    } else if (json_is_object(v)) {
        const char *k;
        json_t *x;
        int n = 0;
        json_object_foreach(v, k, x) {
            fputs(n++ ? ", " : "", f);
            esc(f, k);
            fputs(": ", f);
            value(f, x);
        }
    } else {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        esc(f, s);
        free(s);
    }
}

static bool known(const char *key, const char *const *keys)
{
    for (; *keys != NULL; keys++)
        if (strcmp(key, *keys) == 0)
            return true;
    return false;
}

/* A two-column table of every field of an object. */
static void fields(FILE *f, json_t *o, const char *caption)
{
    if (!json_is_object(o))
        return;
    fprintf(f, "<table class=\"kv\"><caption>%s</caption>\n", caption);
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        fputs("<tr><th>", f);
        esc(f, k);
        fputs("</th><td>", f);
        value(f, v);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static const char *const thread_keys[] = {"name", "tid", "seq", "outcome", "how", "live", "cpus",
                                          "mem", "verified", "cpu_error", "mem_error", NULL};
static const char *const top_keys[] = {"numapin", "pid", "plan", "totals", "ended_kept", "threads",
                                       "advice", NULL};

static void threads_table(FILE *f, json_t *threads)
{
    size_t i;
    json_t *t;
    /* Columns: the known fields, then any other field a thread has. */
    const char *extra[64];
    int nextra = 0;
    json_array_foreach(threads, i, t) {
        const char *k;
        json_t *v;
        json_object_foreach(t, k, v) {
            bool have = known(k, thread_keys);
            for (int e = 0; e < nextra && !have; e++)
                have = strcmp(extra[e], k) == 0;
            if (!have && nextra < 64)
                extra[nextra++] = k;
        }
    }
    fputs("<table class=\"threads\"><caption>threads</caption>\n<tr>", f);
    for (int c = 0; thread_keys[c] != NULL; c++)
        fprintf(f, "<th>%s</th>", thread_keys[c]);
    for (int e = 0; e < nextra; e++) {
        fputs("<th>", f);
        esc(f, extra[e]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    json_array_foreach(threads, i, t) {
        const char *outcome = str(t, "outcome");
        fprintf(f, "<tr class=\"%s\">", outcome != NULL && strcmp(outcome, "placed") == 0 ? "placed"
                                        : outcome != NULL && strcmp(outcome, "failed") == 0 ? "failed"
                                        : "other");
        for (int c = 0; thread_keys[c] != NULL; c++) {
            fprintf(f, "<td class=\"%s\">", thread_keys[c]);
            value(f, json_object_get(t, thread_keys[c]));
            fputs("</td>", f);
        }
        for (int e = 0; e < nextra; e++) {
            fputs("<td>", f);
            value(f, json_object_get(t, extra[e]));
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

static void advice(FILE *f, const struct run *r)
{
    json_t *a = json_object_get(r->doc, "advice");
    int n = 0;
    fputs("<h3>advice</h3>\n<ul class=\"advice\">\n", f);
    size_t i;
    json_t *x;
    if (json_is_array(a))
        json_array_foreach(a, i, x) {
            fputs("<li>", f);
            value(f, json_is_object(x) && json_object_get(x, "text") ? json_object_get(x, "text") : x);
            fputs("</li>\n", f);
            n++;
        }
    for (int k = 0; k < r->in->nadvice; k++, n++) {
        fputs("<li>", f);
        esc(f, r->in->advice[k]);
        fputs("</li>\n", f);
    }
    if (n == 0)
        fputs("<li class=\"none\">none given</li>\n", f);
    fputs("</ul>\n", f);
}

/* A plan's nodes, CPUs and memory policy, each after its markup in
 * around[0..2], around[3] last. */
static void where(FILE *f, json_t *plan, const char *const around[4])
{
    static const char *const keys[] = {"node", "cpus", "mem"};
    for (int i = 0; i < 3; i++) {
        fputs(around[i], f);
        value(f, json_object_get(plan, keys[i]));
    }
    fputs(around[3], f);
}

static void section(FILE *f, const struct run *r)
{
    fprintf(f, "<section class=\"group\" id=\"run-%d\" style=\"border-left-color:%s\">\n",
            r->group, colour(r->group));
    json_t *plan = json_object_get(r->doc, "plan");
    fprintf(f, "<h2><span class=\"swatch\" style=\"background:%s\"></span>group %d, pid %lld</h2>\n",
            colour(r->group), r->group, num(r->doc, "pid", -1));
    fputs("<p class=\"source\">", f);
    esc(f, r->in->report);
    if (r->in->label != NULL) {
        fputs(" &middot; ", f);
        esc(f, r->in->label);
    }
    fputs("</p>\n<p class=\"cpus\">", f);
    where(f, plan, (const char *const[]){"nodes <b class=\"nodes\">", "</b>, CPUs <b class=\"cpulist\">",
                                          "</b>, memory <b>", "</b>"});
    fputs("</p>\n<div class=\"tables\">\n", f);
    fields(f, plan, "plan");
    fields(f, json_object_get(r->doc, "totals"), "totals");
    /* Fields of later versions (memory per node and the like), as they are. */
    const char *k;
    json_t *v;
    json_object_foreach(r->doc, k, v) {
        if (known(k, top_keys))
            continue;
        if (json_is_object(v)) {
            char cap[256];
            fields(f, v, cli_markup_text(cap, sizeof cap, k, 100));
        } else {
            fputs("<table class=\"kv\"><tr><th>", f);
            esc(f, k);
            fputs("</th><td>", f);
            value(f, v);
            fputs("</td></tr></table>\n", f);
        }
    }
    fputs("</div>\n", f);
    advice(f, r);
    json_t *threads = json_object_get(r->doc, "threads");
    if (json_is_array(threads))
        threads_table(f, threads);
    fputs("</section>\n", f);
}

static const char css[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222;background:#fff}"
    "h1{font-size:1.4em}h2{font-size:1.15em;margin:.2em 0}h3{font-size:1em;margin:.6em 0 .2em}"
    "table{border-collapse:collapse;margin:.4em 1em .4em 0;font-size:.85em}"
    "th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}"
    "th{background:#f0f0f0}caption{text-align:left;font-weight:bold;padding:2px 0}"
    ".tables{display:flex;flex-wrap:wrap;align-items:flex-start}"
    "section.group{border-left:8px solid #999;padding:.3em 1em;margin:1.2em 0}"
    ".swatch{display:inline-block;width:1em;height:1em;margin-right:.4em;vertical-align:-2px;"
    "border:1px solid #333}"
    "tr.placed td.outcome{background:#d9f2d9}tr.failed td.outcome{background:#f8d0d0}"
    ".machine{overflow:auto;border:1px solid #ccc;padding:4px;max-width:100%}"
    ".note{color:#a00}.source{color:#666;font-size:.85em;margin:0}";

/* The machine with each report's group in its colour. */
static int picture(FILE *f, const struct run *runs, int n, const struct cli_machine *m, char *err,
                   size_t errlen)
{
    struct np_topo t;
    char why[1024];
    if (np_topo_load(&t, m->xml, m->synthetic, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    struct cli_draw d;
    if (cli_draw_open(&d, m, &t, err, errlen) != 0) {
        np_topo_destroy(&t);
        return -1;
    }
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
    int rc = cpus != NULL && nodes != NULL ? 0 : -1;
    for (int i = 0; i < n && rc == 0; i++) {
        if (runs[i].doc == NULL)
            continue;
        json_t *plan = json_object_get(runs[i].doc, "plan");
        const char *c = str(plan, "cpus"), *nd = str(plan, "node");
        if (c == NULL || np_parse_list(c, ',', (1u << 20) - 1, cpus) != 0)
            continue;
        if (nd == NULL || np_parse_list(nd, ',', (1u << 20) - 1, nodes) != 0)
            hwloc_bitmap_zero(nodes);
        char label[1280];
        snprintf(label, sizeof label, "group %d (pid %lld): nodes %s, CPUs %s", runs[i].group,
                 num(runs[i].doc, "pid", -1), nd != NULL ? nd : "?", c);
        rc = cli_draw_group(&d, runs[i].group, cpus, nodes, label);
    }
    hwloc_bitmap_free(cpus);
    hwloc_bitmap_free(nodes);
    const char *src = strrchr(t.source, '/');
    snprintf(why, sizeof why, "numapin report: %s", src != NULL ? src + 1 : t.source);
    if (rc == 0)
        rc = cli_draw_legend(&d, why);
    char *svg = NULL;
    size_t len = 0;
    if (rc != 0)
        snprintf(err, errlen, "out of memory");
    else
        rc = cli_draw_svg(&d, &svg, &len, err, errlen);
    cli_draw_close(&d);
    np_topo_destroy(&t);
    if (rc != 0)
        return -1;
    const char *body = strstr(svg, "<svg");
    fputs("<div class=\"machine\">\n", f);
    fputs(body != NULL ? body : "", f);
    fputs("</div>\n", f);
    free(svg);
    return 0;
}

static void summary(FILE *f, const struct run *runs, int n)
{
    static const char *const cols[] = {"placed", "would_place", "skipped", "failed", "mem_failed",
                                       "live"};
    fputs("<table class=\"summary\"><caption>groups</caption>\n<tr><th>group</th><th>pid</th>"
          "<th>nodes</th><th>CPUs</th><th>memory</th>", f);
    for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
        fprintf(f, "<th>%s</th>", cols[c]);
    fputs("</tr>\n", f);
    for (int i = 0; i < n; i++) {
        const struct run *r = &runs[i];
        if (r->doc == NULL) {
            fputs("<tr><td colspan=\"11\" class=\"note\">", f);
            esc(f, r->in->label != NULL ? r->in->label : r->in->report);
            fputs(": ", f);
            esc(f, r->note);
            fputs("</td></tr>\n", f);
            continue;
        }
        json_t *plan = json_object_get(r->doc, "plan"), *tot = json_object_get(r->doc, "totals");
        fprintf(f, "<tr><td><a href=\"#run-%d\"><span class=\"swatch\" style=\"background:%s\">"
                   "</span>%d</a></td><td>%lld</td><td>", r->group,
                colour(r->group), r->group, num(r->doc, "pid", -1));
        where(f, plan, (const char *const[]){"", "</td><td class=\"cpulist\">", "</td><td>", "</td>"});
        for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) {
            fputs("<td>", f);
            value(f, json_object_get(tot, cols[c]));
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

int cli_page(const char *out, const struct cli_page_input *in, int n, bool lenient,
             const struct cli_machine *m, char *err, size_t errlen)
{
    struct run *runs = calloc((size_t)n + 1, sizeof *runs);
    if (runs == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0, loaded = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        runs[i].in = &in[i];
        runs[i].group = -1;
        if (load(&runs[i], runs[i].note, sizeof runs[i].note) == 0)
            loaded++;
        else if (!lenient) {
            snprintf(err, errlen, "%s", runs[i].note);
            rc = -1;
        }
    }
    char *page = NULL;
    size_t len = 0;
    FILE *f = rc == 0 ? open_memstream(&page, &len) : NULL;
    if (rc == 0 && f == NULL) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc == 0) {
        fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                   "<title>numapin: %d JVM%s</title>\n<style>%s</style></head>\n<body>\n"
                   "<h1>numapin: %d JVM%s placed</h1>\n",
                n, n == 1 ? "" : "s", css, loaded, loaded == 1 ? "" : "s");
        summary(f, runs, n);
        if (picture(f, runs, n, m, err, errlen) != 0)
            rc = -1;
        for (int i = 0; i < n && rc == 0; i++)
            if (runs[i].doc != NULL)
                section(f, &runs[i]);
        fprintf(f, "<p class=\"source\">numapin %s; report format: docs/report.md</p>\n"
                   "</body></html>\n", NP_VERSION);
        if (fclose(f) != 0 && rc == 0) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
    }
    if (rc == 0)
        rc = cli_write_file(out, page, len, err, errlen);
    free(page);
    for (int i = 0; i < n; i++)
        json_decref(runs[i].doc);
    free(runs);
    return rc;
}

int cli_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"html", required_argument, NULL, 'o'},
        CLI_MACHINE_OPTIONS,
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *html = NULL;
    struct cli_machine m = {0};
    int c;
    argv[0] = "numapin report";
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (cli_machine_option(&m, c, optarg))
            continue;
        switch (c) {
        case 'o': html = optarg; break;
        case 'h': fputs(usage, stdout); return 0;
        default: return cli_usage_error("report", usage, "invalid arguments");
        }
    }
    if (optind >= argc)
        return cli_usage_error("report", usage, "give at least one REPORT.json");
    if (html == NULL)
        return cli_usage_error("report", usage, "--html OUT.html is required");
    if (m.xml != NULL && m.synthetic != NULL)
        return cli_usage_error("report", usage, "--topology and --synthetic exclude each other");
    if (m.restrict_cpus != NULL)
        return cli_usage_error("report", usage, "--restrict does not apply: a report has its CPUs");
    int n = argc - optind;
    struct cli_page_input *in = calloc((size_t)n, sizeof *in);
    if (in == NULL) {
        fprintf(stderr, "numapin report: out of memory\n");
        return 1;
    }
    for (int i = 0; i < n; i++)
        in[i].report = argv[optind + i];
    char err[2048];
    int rc = cli_page(html, in, n, false, &m, err, sizeof err);
    free(in);
    if (rc != 0) {
        fprintf(stderr, "numapin report: %s\n", err);
        return 1;
    }
    return 0;
}
