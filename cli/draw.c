#define _GNU_SOURCE
#include "draw.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_cpulist.h"
#include "np_text.h"

/* Labels one object may show before the rest are counted. */
#define LABELS_PER_OBJECT 6
/* How long lstopo may take: far more than any machine needs. */
#define LSTOPO_SECONDS 60

struct cli_draw_slot {
    hwloc_obj_t obj;
    int shown, more;
    hwloc_obj_t more_misc;
};

/* Distinct light colours, readable under lstopo's black text. */
static const char *const palette[] = {
    "#66c2a5", "#fc8d62", "#8da0cb", "#e78ac3", "#a6d854", "#ffd92f", "#e5c494", "#8dd3c7",
    "#fb8072", "#80b1d3", "#bebada", "#fdb462", "#b3de69", "#fccde5", "#ccebc5", "#ffed6f",
};
#define OUTSIDE_STYLE "Background=#4d4d4d;Text=#ffffff"
#define CPULESS_STYLE "Background=#e0e0e0;Text=#707070"

const char *cli_draw_colour(int group)
{
    int n = (int)(sizeof palette / sizeof *palette);
    return palette[(group % n + n) % n];
}

char *cli_markup_text(char *out, size_t len, const char *in, size_t maxchars)
{
    size_t o = 0, chars = 0;
    if (len == 0)
        return out;
    const unsigned char *s = (const unsigned char *)in;
    while (*s != '\0') {
        char tmp[8];
        const char *add = tmp;
        size_t n = 1, used = 1;
        if (chars == maxchars) {
            add = "...";
            n = 3;
            if (o + n < len) {
                memcpy(out + o, add, n);
                o += n;
            }
            break;
        }
        if (*s == '<') add = "&lt;", n = 4;
        else if (*s == '>') add = "&gt;", n = 4;
        else if (*s == '&') add = "&amp;", n = 5;
        else if (*s == '"') add = "&quot;", n = 6;
        else if (*s == '\'') add = "&#39;", n = 5;
        else if (*s < 0x20 || *s == 0x7f) tmp[0] = '?';
        else if (*s < 0x80) tmp[0] = (char)*s;
        else {
            /* One well-formed UTF-8 sequence, else '?'. */
            int k = *s >= 0xf0 && *s <= 0xf4 ? 4 : *s >= 0xe0 ? 3 : *s >= 0xc2 && *s < 0xe0 ? 2 : 0;
            bool ok = k > 0;
            for (int i = 1; ok && i < k; i++)
                ok = (s[i] & 0xc0) == 0x80;
            if (ok) {
                memcpy(tmp, s, (size_t)k);
                n = used = (size_t)k;
            } else {
                tmp[0] = '?';
            }
        }
        if (o + n >= len)
            break;
        memcpy(out + o, add, n);
        o += n;
        s += used;
        chars++;
    }
    out[o] = '\0';
    return out;
}

int cli_draw_open(struct cli_draw *d, const struct cli_machine *m, const struct np_topo *t,
                  char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->t = t;
    const char *xml = m != NULL ? m->xml : NULL, *synthetic = m != NULL ? m->synthetic : NULL;
    if (hwloc_topology_init(&d->topo) != 0) {
        snprintf(err, errlen, "cannot draw the machine: %s", strerror(errno));
        return -1;
    }
    hwloc_topology_set_io_types_filter(d->topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_flags(d->topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    /* Labels are Misc objects, which hwloc drops unless asked to keep. */
    hwloc_topology_set_type_filter(d->topo, HWLOC_OBJ_MISC, HWLOC_TYPE_FILTER_KEEP_ALL);
    if ((xml != NULL && hwloc_topology_set_xml(d->topo, xml) != 0) ||
        (synthetic != NULL && hwloc_topology_set_synthetic(d->topo, synthetic) != 0) ||
        hwloc_topology_load(d->topo) != 0) {
        snprintf(err, errlen, "cannot draw the machine (%s): %s", t->source, strerror(errno));
        hwloc_topology_destroy(d->topo);
        d->topo = NULL;
        return -1;
    }
    return 0;
}

void cli_draw_close(struct cli_draw *d)
{
    for (int i = 0; i < d->ngroups; i++) {
        hwloc_bitmap_free(d->groups[i].cpus);
        hwloc_bitmap_free(d->groups[i].nodes);
        free(d->groups[i].label);
    }
    free(d->groups);
    for (int i = 0; i < d->nlegend; i++)
        free(d->legend[i]);
    free(d->legend);
    free(d->slots);
    for (int i = 0; i < d->ntexts; i++)
        free(d->texts[i]);
    free(d->texts);
    if (d->topo != NULL)
        hwloc_topology_destroy(d->topo);
    memset(d, 0, sizeof *d);
}

int cli_draw_group(struct cli_draw *d, int group, hwloc_const_bitmap_t cpus,
                   hwloc_const_bitmap_t nodes, const char *label)
{
    struct cli_draw_group *m = realloc(d->groups, (size_t)(d->ngroups + 1) * sizeof *m);
    if (m == NULL)
        return -1;
    d->groups = m;
    struct cli_draw_group *g = &m[d->ngroups];
    memset(g, 0, sizeof *g);
    g->group = group;
    g->cpus = hwloc_bitmap_dup(cpus);
    g->nodes = hwloc_bitmap_dup(nodes);
    if (label != NULL) {
        g->label = strdup(label);
    } else {
        char c[1024], n[256];
        np_cpulist(c, sizeof c, cpus);
        np_cpulist(n, sizeof n, nodes);
        if (asprintf(&g->label, "group %d: nodes %s, CPUs %s", group, n[0] ? n : "none",
                     c[0] ? c : "none") < 0)
            g->label = NULL;
    }
    if (g->cpus == NULL || g->nodes == NULL || g->label == NULL) {
        hwloc_bitmap_free(g->cpus);
        hwloc_bitmap_free(g->nodes);
        free(g->label);
        return -1;
    }
    d->ngroups++;
    return 0;
}

char *cli_shown_markup(const char *text, size_t maxchars)
{
    size_t used = 0, chars = 0;
    while (text[used] != '\0') {
        unsigned cp;
        size_t n = np_text_next(text + used, &cp), k = 0;
        char one[8], piece[16];
        memcpy(one, text + used, n);
        one[n] = '\0';
        np_text_shown(piece, sizeof piece, one);
        for (const char *c = piece; *c != '\0'; c++)
            k += ((unsigned char)*c & 0xc0) != 0x80;
        if (chars + k > maxchars)
            break;
        chars += k;
        used += n;
    }
    char *head = strndup(text, used);
    char *shown = head != NULL ? np_text_shown_dup(head) : NULL;
    free(head);
    if (shown == NULL)
        return NULL;
    /* A byte becomes at most 6 ("&quot;"); then "...". */
    size_t len = strlen(shown) * 6 + 4;
    char *out = malloc(len);
    if (out != NULL) {
        cli_markup_text(out, len, shown, (size_t)-1);
        if (text[used] != '\0')
            strcat(out, "...");
    }
    free(shown);
    return out;
}

/* The columns character cp takes in lstopo's monospace font: two for East
 * Asian wide and fullwidth forms, none for a combining mark, else one. */
static size_t columns(unsigned cp)
{
    static const unsigned none[][2] = {
        {0x0300, 0x036f}, {0x1ab0, 0x1aff}, {0x1dc0, 0x1dff}, {0x20d0, 0x20ff}, {0xfe20, 0xfe2f},
    };
    static const unsigned wide[][2] = {
        {0x1100, 0x115f},   {0x2e80, 0x303e},   {0x3041, 0x33ff}, {0x3400, 0x4dbf},
        {0x4e00, 0x9fff},   {0xa000, 0xa4cf},   {0xac00, 0xd7a3}, {0xf900, 0xfaff},
        {0xfe30, 0xfe4f},   {0xff00, 0xff60},   {0xffe0, 0xffe6}, {0x1f300, 0x1f64f},
        {0x1f900, 0x1f9ff}, {0x20000, 0x3fffd},
    };
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        if (cp >= none[i][0] && cp <= none[i][1])
            return 0;
    for (size_t i = 0; i < sizeof wide / sizeof *wide; i++)
        if (cp >= wide[i][0] && cp <= wide[i][1])
            return 2;
    return 1;
}

/* The columns of cli_shown_markup's output as it is seen: an entity is one. */
static size_t width_of(const char *s)
{
    size_t w = 0;
    while (*s != '\0') {
        unsigned cp = '&';
        if (*s == '&') {
            s += strcspn(s, ";");
            s += *s == ';';
        } else {
            s += np_text_next(s, &cp);
        }
        w += columns(cp);
    }
    return w;
}

/* Misc object i's name until the SVG is drawn: "&I...;" ('&', i in
 * decimal, dots), `width` characters or the fewest that hold i.  No other
 * text of the SVG reads so: an '&' in numapin's escaped texts begins an
 * entity ("&amp;", "&#39;"), never a digit, and lstopo's own texts are
 * type names, indexes and sizes.  NULL when memory runs out. */
static char *placeholder(int i, size_t width)
{
    char head[16];
    size_t n = (size_t)snprintf(head, sizeof head, "&%d", i);
    size_t len = width > n + 1 ? width : n + 1;
    char *p = malloc(len + 1);
    if (p == NULL)
        return NULL;
    memcpy(p, head, n);
    memset(p + n, '.', len - n - 1);
    p[len - 1] = ';';
    p[len] = '\0';
    return p;
}

/* A Misc object under parent that shows `text` (at most maxchars
 * characters): named by its placeholder, its text kept for the SVG. */
static hwloc_obj_t misc(struct cli_draw *d, hwloc_obj_t parent, const char *text, size_t maxchars)
{
    char **m = realloc(d->texts, (size_t)(d->ntexts + 1) * sizeof *m);
    if (m == NULL)
        return NULL;
    d->texts = m;
    char *safe = cli_shown_markup(text, maxchars);
    char *name = safe != NULL ? placeholder(d->ntexts, width_of(safe)) : NULL;
    hwloc_obj_t o = name != NULL ? hwloc_topology_insert_misc_object(d->topo, parent, name) : NULL;
    free(name);
    if (o == NULL) {
        free(safe);
        return NULL;
    }
    m[d->ntexts++] = safe;
    return o;
}

/* lstopo's SVG with each placeholder, a whole <text> element's content,
 * replaced by its Misc object's text; newly allocated (its length in
 * *len), NULL when memory runs out. */
static char *put_texts(const struct cli_draw *d, const char *svg, size_t *len)
{
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    if (f == NULL)
        return NULL;
    const char *p = svg;
    for (const char *q; (q = strstr(p, ">&")) != NULL;) {
        const char *digits = q + 2, *e = digits;
        long i = 0;
        while (*e >= '0' && *e <= '9' && i <= d->ntexts)
            i = i * 10 + (*e++ - '0');
        const char *end = e + strspn(e, ".");
        bool ours = e > digits && i < d->ntexts && *end == ';' && strncmp(end + 1, "</text>", 7) == 0;
        fwrite(p, 1, (size_t)(q + 1 - p), f);
        if (ours)
            fputs(d->texts[i], f);
        p = ours ? end + 1 : q + 1;
    }
    fputs(p, f);
    if (ferror(f) != 0) {
        fclose(f);
        free(out);
        return NULL;
    }
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    *len = n;
    return out;
}

int cli_draw_label(struct cli_draw *d, hwloc_const_bitmap_t cpus, const char *text)
{
    hwloc_bitmap_t set = hwloc_bitmap_dup(cpus);
    if (set == NULL)
        return -1;
    hwloc_bitmap_and(set, set, hwloc_topology_get_topology_cpuset(d->topo));
    hwloc_obj_t obj = hwloc_bitmap_iszero(set) ? hwloc_get_root_obj(d->topo)
                                               : hwloc_get_obj_covering_cpuset(d->topo, set);
    hwloc_bitmap_free(set);
    if (obj == NULL)
        obj = hwloc_get_root_obj(d->topo);
    struct cli_draw_slot *s = NULL;
    for (int i = 0; i < d->nslots && s == NULL; i++)
        if (d->slots[i].obj == obj)
            s = &d->slots[i];
    if (s == NULL) {
        struct cli_draw_slot *m = realloc(d->slots, (size_t)(d->nslots + 1) * sizeof *m);
        if (m == NULL)
            return -1;
        d->slots = m;
        s = &m[d->nslots++];
        memset(s, 0, sizeof *s);
        s->obj = obj;
    }
    if (s->shown < LABELS_PER_OBJECT) {
        s->shown++;
        return misc(d, obj, text, 40) != NULL ? 0 : -1;
    }
    /* hwloc names a Misc object once: the count goes in at the end. */
    s->more++;
    return 0;
}

int cli_draw_node_text(struct cli_draw *d, unsigned node, const char *text)
{
    hwloc_obj_t n = hwloc_get_numanode_obj_by_os_index(d->topo, node);
    if (n == NULL)
        return 1;
    return misc(d, n, text, 200) != NULL ? 0 : -1;
}

int cli_draw_legend(struct cli_draw *d, const char *text)
{
    char **m = realloc(d->legend, (size_t)(d->nlegend + 1) * sizeof *m);
    if (m == NULL)
        return -1;
    d->legend = m;
    if ((m[d->nlegend] = cli_shown_markup(text, 300)) == NULL)
        return -1;
    d->nlegend++;
    return 0;
}

static const struct cli_draw_group *group_of_cpu(const struct cli_draw *d, unsigned cpu)
{
    for (int i = 0; i < d->ngroups; i++)
        if (hwloc_bitmap_isset(d->groups[i].cpus, cpu))
            return &d->groups[i];
    return NULL;
}

/* The one group on `node`; NULL when none, or several share it (slices
 * of a node: their CPUs tell them apart). */
static const struct cli_draw_group *group_of_node(const struct cli_draw *d, unsigned node)
{
    const struct cli_draw_group *g = NULL;
    for (int i = 0; i < d->ngroups; i++)
        if (hwloc_bitmap_isset(d->groups[i].nodes, node)) {
            if (g != NULL && g->group != d->groups[i].group)
                return NULL;
            g = &d->groups[i];
        }
    return g;
}

static int style(hwloc_obj_t o, const char *colour_or_style)
{
    char v[128];
    if (colour_or_style[0] == '#')
        snprintf(v, sizeof v, "Background=%s", colour_or_style);
    else
        snprintf(v, sizeof v, "%s", colour_or_style);
    return hwloc_obj_add_info(o, "lstopoStyle", v);
}

/* The style of PU or NUMA node o ("#rrggbb" or a full lstopoStyle), or
 * NULL for lstopo's own; *outside and *cpuless note the kinds drawn. */
static const char *style_for(const struct cli_draw *d, hwloc_obj_t o, hwloc_const_bitmap_t homes,
                             bool *outside, bool *cpuless)
{
    const struct cli_draw_group *g;
    if (o->type == HWLOC_OBJ_PU) {
        if (!hwloc_bitmap_isset(d->t->allowed, o->os_index))
            return *outside = true, OUTSIDE_STYLE;
        g = group_of_cpu(d, o->os_index);
    } else {
        if (!hwloc_bitmap_isset(hwloc_topology_get_allowed_nodeset(d->topo), o->os_index))
            return *outside = true, OUTSIDE_STYLE;
        if (!hwloc_bitmap_isset(homes, o->os_index))
            return *cpuless = true, CPULESS_STYLE;
        g = group_of_node(d, o->os_index);
    }
    return g != NULL ? cli_draw_colour(g->group) : NULL;
}

/* A legend box at the machine's side. */
static int box(struct cli_draw *d, const char *text, const char *colour_or_style)
{
    hwloc_obj_t b = misc(d, hwloc_get_root_obj(d->topo), text, 200);
    return b != NULL && style(b, colour_or_style) == 0 ? 0 : -1;
}

/* The colours, the "+N more" labels and the legend boxes, once. */
static int annotate(struct cli_draw *d)
{
    if (d->styled)
        return 0;
    d->styled = true;
    bool outside = false, cpuless = false;
    hwloc_bitmap_t homes = hwloc_bitmap_alloc();
    if (homes == NULL)
        return -1;
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(d->topo, HWLOC_OBJ_PU, o)) != NULL) {
        hwloc_obj_t home = np_topo_home_obj(o);
        if (home != NULL)
            hwloc_bitmap_set(homes, home->os_index);
    }
    int rc = 0;
    static const hwloc_obj_type_t types[] = {HWLOC_OBJ_PU, HWLOC_OBJ_NUMANODE};
    for (size_t k = 0; k < sizeof types / sizeof *types && rc == 0; k++) {
        o = NULL;
        while (rc == 0 && (o = hwloc_get_next_obj_by_type(d->topo, types[k], o)) != NULL) {
            const char *st = style_for(d, o, homes, &outside, &cpuless);
            rc = st != NULL ? style(o, st) : 0;
        }
    }
    hwloc_bitmap_free(homes);
    for (int i = 0; i < d->nslots && rc == 0; i++) {
        char more[64];
        snprintf(more, sizeof more, "+%d more", d->slots[i].more);
        if (d->slots[i].more > 0 && misc(d, d->slots[i].obj, more, 40) == NULL)
            rc = -1;
    }
    for (int i = 0; i < d->ngroups && rc == 0; i++)
        rc = box(d, d->groups[i].label, cli_draw_colour(d->groups[i].group));
    if (outside && rc == 0)
        rc = box(d, "outside the cpuset (not used)", OUTSIDE_STYLE);
    if (cpuless && rc == 0)
        rc = box(d, "node without CPUs", CPULESS_STYLE);
    return rc;
}

int cli_draw_svg(struct cli_draw *d, char **svg, size_t *len, char *err, size_t errlen)
{
    *svg = NULL;
    *len = 0;
    char *xml = NULL;
    int xmllen = 0;
    if (annotate(d) != 0 || hwloc_topology_export_xmlbuffer(d->topo, &xml, &xmllen, 0) != 0) {
        snprintf(err, errlen, "cannot draw the machine: %s", strerror(errno ? errno : ENOMEM));
        return -1;
    }
    int n = 0;
    char **argv = calloc((size_t)(12 + 2 * d->nlegend), sizeof *argv);
    if (argv == NULL) {
        hwloc_free_xmlbuffer(d->topo, xml);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* XML on stdin, SVG on stdout; every object drawn, none folded into
     * "N x total"; hwloc's Group boxes without their "Group0" text; no
     * date or host name in the legend, so that the same input draws the
     * same picture. */
    static const char *const fixed[] = {
        CLI_LSTOPO,       "--input", "-", "--if", "xml", "--of", "svg", "--no-factorize",
        "--no-text=group", "--no-default-legend"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        argv[n++] = (char *)fixed[i];
    for (int i = 0; i < d->nlegend; i++) {
        argv[n++] = "--append-legend";
        argv[n++] = d->legend[i];
    }
    argv[n] = NULL;
    struct cli_filtered f;
    char why[512];
    int rc = cli_filter(argv, xml, xmllen > 0 ? (size_t)xmllen - 1 : 0, LSTOPO_SECONDS, &f, why,
                        sizeof why);
    free(argv);
    hwloc_free_xmlbuffer(d->topo, xml);
    if (rc == -2) {
        snprintf(err, errlen, "drawing needs %s, which is not in PATH: install Debian's hwloc-nox",
                 CLI_LSTOPO);
        return -1;
    }
    if (rc != 0) {
        snprintf(err, errlen, "cannot draw the machine: %s", why);
        return -1;
    }
    if (f.status != 0 || strncmp(f.out, "<?xml", 5) != 0 || strstr(f.out, "</svg>") == NULL) {
        f.err[strcspn(f.err, "\n")] = '\0';
        snprintf(err, errlen, "%s failed (exit %d)%s%s", CLI_LSTOPO, f.status, f.err[0] ? ": " : "",
                 f.err[0] ? f.err : f.status == 0 ? ": its output is no SVG document" : "");
        cli_filtered_free(&f);
        return -1;
    }
    *svg = put_texts(d, f.out, len);
    cli_filtered_free(&f);
    if (*svg == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

int cli_draw_write(struct cli_draw *d, const char *path, char *err, size_t errlen)
{
    char *svg;
    size_t len;
    if (cli_draw_svg(d, &svg, &len, err, errlen) != 0)
        return -1;
    int rc = cli_write_file(path, svg, len, err, errlen);
    free(svg);
    return rc;
}
