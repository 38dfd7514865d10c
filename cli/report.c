/* `numapin report REPORT.json... --html OUT.html`: a page for a run.
 *
 * Reads the JSON reports of report= (formats 1 and 2, docs/report.md) with
 * jansson, each whole and checked field by field (every field the page
 * reads has its type) before anything is drawn, and writes one
 * self-contained HTML file: no script, no style sheet, font or
 * image from elsewhere; the machine picture is lstopo's SVG (draw.c),
 * inline.  For each report: its plan, totals, advice, each thread's
 * placement, and every field this version does not know (later ones, such
 * as memory per node), shown as they are.  Text from a report is shown as
 * a person reads it (np_text_shown), then HTML-escaped. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "draw.h"
#include "np_cpulist.h"
#include "np_text.h"

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
    dev_t dev;        /* the file read, to tell a report given twice */
    ino_t ino;
};

/* ------------------------------------------------------------- reading */

/* The largest report read, in bytes.  The agent's record holds the live
 * threads and the latest 1,024 ended ones, about 200 bytes each in the
 * report: a JVM of 100,000 live threads writes some 20 MB.  256 MiB is
 * ten times that, and bounds what a file that is no report costs to
 * refuse (jansson holds a document in several times its size). */
#define REPORT_MAX (256u << 20)

/* The format versions read: 1; 2, which adds "advice" and each thread's
 * "name_escaped"; 3, which adds the hugetlb pages to "memory" and counts
 * each page of memory mapped more than once once; and 4, which adds
 * "access", the kernel's sampled accesses (docs/report.md). */
#define REPORT_FIRST 1
#define REPORT_LAST 4

/* The types a field may have. */
enum { T_OBJECT = 1, T_ARRAY = 2, T_STRING = 4, T_INTEGER = 8, T_BOOL = 16, T_NULL = 32 };

static unsigned type_of(json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return T_OBJECT;
    case JSON_ARRAY: return T_ARRAY;
    case JSON_STRING: return T_STRING;
    case JSON_INTEGER: return T_INTEGER;
    case JSON_TRUE:
    case JSON_FALSE: return T_BOOL;
    case JSON_NULL: return T_NULL;
    default: return 0; /* a number with a fraction or exponent */
    }
}

/* "an integer", "a string or null", ... */
static const char *type_names(unsigned types, char *buf, size_t len)
{
    static const char *const names[] = {"an object", "an array", "a string", "an integer",
                                        "true or false", "null"};
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned i = 0, k = 0; i < sizeof names / sizeof *names; i++)
        if (types & (1u << i)) {
            int w = snprintf(buf + o, len - o, "%s%s", k++ ? " or " : "", names[i]);
            if (w < 0 || (size_t)w >= len - o)
                break;
            o += (size_t)w;
        }
    return buf;
}

static const char *value_type(json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number with a fraction";
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    default: return "null";
    }
}

/* A field the page reads: its key and the types it may have. */
struct field {
    const char *key;
    unsigned types;
    bool required;
};

static const struct field top_fields[] = {
    {"pid", T_INTEGER, true},       {"plan", T_OBJECT, true},        {"totals", T_OBJECT, true},
    {"ended_kept", T_INTEGER, false}, {"threads", T_ARRAY, true},    {"advice", T_ARRAY, false},
    {"advice_dropped", T_INTEGER, false},
    {NULL, 0, false},
};
static const struct field plan_fields[] = {
    {"group", T_INTEGER, true},       {"node", T_STRING | T_NULL, false},
    {"cpus", T_STRING | T_NULL, false}, {"mem", T_STRING | T_NULL, false},
    {NULL, 0, false},
};
static const struct field totals_fields[] = {
    {"placed", T_INTEGER, false}, {"would_place", T_INTEGER, false}, {"skipped", T_INTEGER, false},
    {"failed", T_INTEGER, false}, {"mem_failed", T_INTEGER, false},  {"live", T_INTEGER, false},
    {NULL, 0, false},
};
static const struct field thread_fields[] = {
    {"name", T_STRING, true},
    {"name_escaped", T_STRING, false},
    {"tid", T_INTEGER, false},
    {"seq", T_INTEGER, false},
    {"outcome", T_STRING, false},
    {"how", T_STRING, false},
    {"live", T_BOOL, false},
    {"cpus", T_STRING | T_NULL, false},
    {"mem", T_STRING | T_NULL, false},
    {"verified", T_BOOL | T_NULL, false},
    {"mem_inherited", T_BOOL | T_NULL, false},
    {"cpu_error", T_STRING | T_NULL, false},
    {"mem_error", T_STRING | T_NULL, false},
    {"drift", T_INTEGER, false},
    {NULL, 0, false},
};
static const struct field advice_fields[] = {
    {"level", T_STRING, true},
    {"text", T_STRING, true},
    {NULL, 0, false},
};

/* Checks the fields of object o (named `where`, "" at the top) against
 * `want`.  Returns 0, or -1 with why in err ("\"plan.group\" must be an
 * integer, not a string"). */
static int check_fields(json_t *o, const char *where, const struct field *want, char *err,
                        size_t errlen)
{
    for (; want->key != NULL; want++) {
        json_t *v = json_object_get(o, want->key);
        char types[128];
        if (v == NULL && !want->required)
            continue;
        if (v == NULL) {
            snprintf(err, errlen, "\"%s%s%s\" is missing (%s)", where, *where ? "." : "",
                     want->key, type_names(want->types, types, sizeof types));
            return -1;
        }
        if (!(type_of(v) & want->types)) {
            snprintf(err, errlen, "\"%s%s%s\" must be %s, not %s", where, *where ? "." : "",
                     want->key, type_names(want->types, types, sizeof types), value_type(v));
            return -1;
        }
    }
    return 0;
}

/* Every field of the report the page reads has the type it is read as
 * (docs/report.md).  Returns 0, or -1 with why in err. */
static int check_report(json_t *doc, long long version, char *err, size_t errlen)
{
    if (check_fields(doc, "", top_fields, err, errlen) != 0)
        return -1;
    json_t *pid = json_object_get(doc, "pid"), *plan = json_object_get(doc, "plan");
    if (json_integer_value(pid) < 1 || json_integer_value(pid) > INT_MAX) {
        snprintf(err, errlen, "\"pid\" must be a process id from 1 to %d, not %lld", INT_MAX,
                 (long long)json_integer_value(pid));
        return -1;
    }
    if (check_fields(plan, "plan", plan_fields, err, errlen) != 0 ||
        check_fields(json_object_get(doc, "totals"), "totals", totals_fields, err, errlen) != 0)
        return -1;
    json_int_t g = json_integer_value(json_object_get(plan, "group"));
    if (g < 0 || g >= NP_MAX_GROUPS) {
        snprintf(err, errlen, "\"plan.group\" must be a group from 0 to %d, not %lld",
                 NP_MAX_GROUPS - 1, (long long)g);
        return -1;
    }
    size_t i;
    json_t *x;
    char where[64];
    json_array_foreach(json_object_get(doc, "threads"), i, x) {
        snprintf(where, sizeof where, "threads[%zu]", i);
        if (!json_is_object(x)) {
            snprintf(err, errlen, "\"%s\" must be an object, not %s", where, value_type(x));
            return -1;
        }
        if (check_fields(x, where, thread_fields, err, errlen) != 0)
            return -1;
    }
    json_t *advice = json_object_get(doc, "advice");
    if (advice == NULL && version >= 2) {
        snprintf(err, errlen, "\"advice\" is missing (an array: report format %lld has it)",
                 version);
        return -1;
    }
    json_array_foreach(advice, i, x) {
        snprintf(where, sizeof where, "advice[%zu]", i);
        if (!json_is_object(x)) {
            snprintf(err, errlen, "\"%s\" must be an object, not %s", where, value_type(x));
            return -1;
        }
        if (check_fields(x, where, advice_fields, err, errlen) != 0)
            return -1;
        const char *level = json_string_value(json_object_get(x, "level"));
        if (strcmp(level, "info") != 0 && strcmp(level, "warning") != 0) {
            char shown[128];
            np_text_shown(shown, sizeof shown, level);
            snprintf(err, errlen, "\"%s.level\" must be \"info\" or \"warning\", not \"%s\"", where,
                     shown);
            return -1;
        }
    }
    return 0;
}

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
    r->dev = st.st_dev;
    r->ino = st.st_ino;
    if (st.st_size == 0) {
        snprintf(err, errlen, "%s is empty: the JVM wrote no report (numapin disabled itself at "
                              "start-up, or the JVM did not exit normally; its log says why)", path);
        close(fd);
        return -1;
    }
    char *text = NULL;
    size_t len = 0;
    if (st.st_size > (off_t)REPORT_MAX ||
        cli_read_fd(fd, (size_t)st.st_size, REPORT_MAX, &text, &len) != 0) {
        if (st.st_size > (off_t)REPORT_MAX || errno == EFBIG)
            snprintf(err, errlen, "%s is too big for a numapin report: %s%lld bytes, and a report "
                                  "has at most %u MiB (%u bytes; docs/view.md)", path,
                     st.st_size > (off_t)REPORT_MAX ? "" : "more than ",
                     (long long)(st.st_size > (off_t)REPORT_MAX ? st.st_size : (off_t)REPORT_MAX),
                     REPORT_MAX >> 20, REPORT_MAX);
        else
            snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    close(fd);
    json_error_t je;
    r->doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (r->doc == NULL) {
        snprintf(err, errlen, "%s is not a numapin report: not JSON (line %d: %s)", path, je.line,
                 je.text);
        return -1;
    }
    json_t *v = json_object_get(r->doc, "numapin");
    char why[512];
    int rc = 0;
    if (!json_is_object(r->doc) || v == NULL) {
        snprintf(err, errlen, "%s is not a numapin report: no \"numapin\" format version "
                              "(docs/report.md)", path);
        rc = -1;
    } else if (!json_is_integer(v)) {
        snprintf(err, errlen, "%s is not a numapin report: \"numapin\" (the format version) must "
                              "be an integer, not %s (docs/report.md)", path, value_type(v));
        rc = -1;
    } else if (json_integer_value(v) < REPORT_FIRST || json_integer_value(v) > REPORT_LAST) {
        snprintf(err, errlen, "%s is report format %lld, which this numapin does not read: it "
                              "reads formats %d to %d (docs/report.md)", path,
                 (long long)json_integer_value(v), REPORT_FIRST, REPORT_LAST);
        rc = -1;
    } else if (check_report(r->doc, json_integer_value(v), why, sizeof why) != 0) {
        snprintf(err, errlen, "%s is not a numapin report: %s (docs/report.md)", path, why);
        rc = -1;
    }
    if (rc != 0) {
        json_decref(r->doc);
        r->doc = NULL;
        return -1;
    }
    r->group = (int)json_integer_value(json_object_get(json_object_get(r->doc, "plan"), "group"));
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

/* Text from a report as a person reads it: the characters that change how
 * other text looks (controls, bidirectional overrides, zero-width ones)
 * written out as \uXXXX, then HTML-escaped, at most 1,000 characters (then
 * "...", never inside a written-out character): cli_shown_markup. */
static void esc(FILE *f, const char *s)
{
    char *m = cli_shown_markup(s != NULL ? s : "", 1000);
    if (m != NULL)
        fputs(m, f);
    free(m);
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
        /* A real as the writer gave it (99.9, not 99.900000000000006): 15
         * significant digits are what a double holds exactly. */
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
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
    fputs("<table class=\"kv\"><caption>", f);
    esc(f, caption);
    fputs("</caption>\n", f);
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

static const char *const thread_keys[] = {"name", "tid", "seq", "outcome", "how", "live",
                                          "cpus", "mem", "verified", "mem_inherited", "cpu_error",
                                          "mem_error", "drift", NULL};
static const char *const top_keys[] = {"numapin", "pid", "plan", "totals", "ended_kept", "threads",
                                       "advice", "advice_dropped", NULL};

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
            fputs("<td class=\"extra\">", f);
            value(f, json_object_get(t, extra[e]));
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* The advice the agent gave: the report's "advice" (format 2), each line
 * with its level; for a report without it (format 1), the advice lines of
 * the JVM's log when the caller read them (groups --html), else a line
 * saying the advice was not recorded. */
static void advice(FILE *f, const struct run *r)
{
    json_t *a = json_object_get(r->doc, "advice");
    size_t i;
    json_t *x;
    if (a == NULL && r->in->nadvice == 0) {
        fprintf(f, "<p class=\"advice none\">advice: not recorded (report format %lld)</p>\n",
                num(r->doc, "numapin", 1));
        return;
    }
    long long dropped = num(r->doc, "advice_dropped", 0);
    if (a != NULL && json_array_size(a) == 0 && dropped <= 0) {
        fputs("<p class=\"advice none\">advice: none given</p>\n", f);
        return;
    }
    fprintf(f, "<h3>advice%s</h3>\n<ul class=\"advice\">\n", a != NULL ? "" : " (from the log)");
    json_array_foreach(a, i, x) {
        const char *level = str(x, "level");
        fprintf(f, "<li class=\"%s\"><span class=\"level\">%s:</span> ", level, level);
        esc(f, str(x, "text"));
        fputs("</li>\n", f);
    }
    for (int k = 0; a == NULL && k < r->in->nadvice; k++) {
        fputs("<li>", f);
        esc(f, r->in->advice[k]);
        fputs("</li>\n", f);
    }
    if (a != NULL && dropped > 0)
        fprintf(f, "<li class=\"dropped\">and %lld more, not kept in the report (the JVM's log "
                   "has them)</li>\n", dropped);
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
            fields(f, v, k);
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
    ".advice .level{font-weight:bold}li.warning .level{color:#a60}"
    "tr.placed td.outcome{background:#d9f2d9}tr.failed td.outcome{background:#f8d0d0}"
    ".machine{overflow:auto;border:1px solid #ccc;padding:4px;max-width:100%}"
    /* The run's table keeps its columns and scrolls within the window. */
    "pre.results{overflow-x:auto;max-width:100%;font-size:.85em}"
    ".note{color:#a00}.source{color:#666;font-size:.85em;margin:0}"
    /* Long text wraps inside its cell, so every column stays in the window:
     * names, lists and fields of later versions may break anywhere, each
     * column keeping a width that its usual values fit. */
    "table{max-width:100%}"
    "td.name,td.cpus,td.mem,td.extra,td.cpulist,.kv td,.advice li,.source,p.cpus b,td.note"
    "{overflow-wrap:anywhere}"
    "td.name{min-width:14em}td.cpus,td.mem,td.extra,td.cpulist{min-width:7em}";

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
        if (nd == NULL || np_parse_list(nd, ',', (1u << 20) - 1, nodes) != 0) {
            hwloc_bitmap_zero(nodes);
            nd = "?"; /* a list is digits, commas and dashes: nothing else is drawn */
        }
        char label[1280];
        snprintf(label, sizeof label, "group %d (pid %lld): nodes %s, CPUs %s", runs[i].group,
                 num(runs[i].doc, "pid", -1), nd, c);
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

/* A share in percent ("99.9%"), or a dash. */
static void share(FILE *f, json_t *v)
{
    if (json_is_number(v))
        fprintf(f, "%.1f%%", json_number_value(v));
    else
        fputs("&mdash;", f);
}

static void summary(FILE *f, const struct run *runs, int n)
{
    static const char *const cols[] = {"placed", "would_place", "skipped", "failed", "mem_failed",
                                       "live"};
    fputs("<table class=\"summary\"><caption>groups</caption>\n<tr><th>group</th><th>pid</th>"
          "<th>nodes</th><th>CPUs</th><th>memory</th>", f);
    for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
        fprintf(f, "<th>%s</th>", cols[c]);
    fputs("<th>mem_local</th><th>access_local</th></tr>\n", f);
    for (int i = 0; i < n; i++) {
        const struct run *r = &runs[i];
        if (r->doc == NULL) {
            fputs("<tr><td colspan=\"13\" class=\"note\">", f);
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
        /* The shares on the group's nodes: of its pages (format 2 on), of
         * the accesses the kernel sampled (format 4 on). */
        json_t *mem = json_object_get(r->doc, "memory"), *acc = json_object_get(r->doc, "access");
        fputs("<td>", f);
        share(f, json_is_object(mem) ? json_object_get(mem, "mem_local") : NULL);
        fputs("</td><td>", f);
        if (json_is_object(acc) && json_is_false(json_object_get(acc, "sampled")))
            fputs("unsampled", f);
        else
            share(f, json_is_object(acc) ? json_object_get(acc, "access_local") : NULL);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

int cli_page(const char *out, const struct cli_page_input *in, int n, bool lenient,
             const struct cli_machine *m, const char *results, char *err, size_t errlen)
{
    struct run *runs = calloc((size_t)n + 1, sizeof *runs);
    if (runs == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0, loaded = 0;
    for (int i = 0; i < n && rc == 0; i++)
        rc = cli_not_input(out, in[i].report, err, errlen);
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
    /* One section a JVM: a file given twice, or two copies of one report,
     * would draw one JVM as two.  Two reports may give one pid: JVMs in
     * containers of their own (pid 1 in each PID namespace). */
    for (int i = 0; i < n && rc == 0; i++)
        for (int j = i + 1; j < n && rc == 0 && runs[i].doc != NULL; j++) {
            if (runs[j].doc == NULL)
                continue;
            if (runs[i].dev == runs[j].dev && runs[i].ino == runs[j].ino) {
                snprintf(err, errlen, "%s and %s are the same report (the same file): give each "
                                      "report once", in[i].report, in[j].report);
                rc = -1;
            } else if (json_equal(runs[i].doc, runs[j].doc)) {
                snprintf(err, errlen, "%s and %s are copies of one report (pid %lld): give each "
                                      "report once", in[i].report, in[j].report,
                         num(runs[i].doc, "pid", -1));
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
        if (results != NULL) {
            /* Line by line: a newline is kept, any other control
             * character shown as the rest of the page shows it. */
            fputs("<h2>The run's results</h2>\n<pre class=\"results\">", f);
            for (const char *l = results; *l != '\0';) {
                size_t k = strcspn(l, "\n");
                char *line = strndup(l, k);
                esc(f, line != NULL ? line : "");
                free(line);
                l += k;
                if (*l == '\n')
                    fputc(*l++, f);
            }
            fputs("</pre>\n", f);
        }
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
    bool seen[256] = {false};
    int c, rc;
    argv[0] = "numapin report";
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if ((rc = cli_once("report", usage, longopts, c, seen)) != 0)
            return rc;
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
    rc = cli_page(html, in, n, false, &m, NULL, err, sizeof err);
    free(in);
    if (rc != 0) {
        fprintf(stderr, "numapin report: %s\n", err);
        return 1;
    }
    return 0;
}
