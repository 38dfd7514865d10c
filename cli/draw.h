/* draw: the machine drawn by hwloc's own renderer, lstopo.
 *
 * A copy of the topology is annotated, then exported as XML to
 * `lstopo-no-graphics --of svg` (Debian's hwloc-nox), run as a child with a
 * time limit; its SVG is the picture.  Nothing is drawn here: colours go
 * through the `lstopoStyle` info attribute of each object, labels are
 * Misc objects lstopo draws inside the object they belong to, and the
 * legend is Misc boxes at the machine's side plus --append-legend lines.
 *
 * Every text given here is UTF-8 text (a thread's name, a command, an
 * option string): the picture shows it as np_text_shown writes it (a
 * control, a bidirectional or zero-width character written out as \xNN
 * or \uXXXX), escaped for XML (cli_markup_text).  hwloc's XML export keeps
 * only printable ASCII of an object's name, so a Misc object is named by a
 * placeholder as wide as its text, and the text is put into the SVG in its
 * place after lstopo has drawn; the legend lines reach lstopo whole, as
 * arguments.
 *
 * What the picture shows:
 *  - each PU and NUMA node of a group in the group's colour
 *    (cli_draw_colour: the same group has the same colour everywhere);
 *  - PUs outside the CPUs numapin may use (cgroup cpuset, binding,
 *    --restrict) and nodes outside the cgroup's memory nodes in dark grey;
 *  - NUMA nodes with no CPU of their own (HBM, NVM, CXL memory) in light
 *    grey with grey text;
 *  - a legend box for each group and for each of those kinds present.
 * Every PU of the machine is drawn (lstopo --no-factorize), the ones
 * outside the cgroup's cpuset included.  hwloc's Group objects (a NUMA
 * node with its cores, a cluster) keep their boxes without lstopo's
 * "Group0" text (--no-text=group), which a reader would take for one of
 * numapin's groups. */
#ifndef NP_DRAW_H
#define NP_DRAW_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "np_topo.h"

/* The renderer: Debian's hwloc-nox package, looked up in PATH. */
#define CLI_LSTOPO "lstopo-no-graphics"

struct cli_draw_group {
    int group;
    hwloc_bitmap_t cpus, nodes;
    char *label;
};

struct cli_draw_slot; /* labels already hung on one object */

struct cli_draw {
    hwloc_topology_t topo;     /* the copy drawn and annotated */
    const struct np_topo *t;   /* the machine as numapin uses it */
    struct cli_draw_group *groups;
    int ngroups;
    char **legend;             /* lines under the picture */
    int nlegend;
    struct cli_draw_slot *slots;
    int nslots;
    char **texts;              /* what Misc object i shows, ready for the SVG */
    int ntexts;
    bool styled;
};

/* The colour of group g, "#rrggbb". */
const char *cli_draw_colour(int group);

/* Loads the machine to draw: the one `m` names (or this one, or hwloc's
 * HWLOC_* variables, as np_topo_load), every PU included, even those
 * outside the cgroup.  t is the same machine as numapin uses it (its
 * allowed CPUs).  Returns 0, or -1 with a message in err. */
int cli_draw_open(struct cli_draw *d, const struct cli_machine *m, const struct np_topo *t,
                  char *err, size_t errlen);
void cli_draw_close(struct cli_draw *d);

/* Colours the CPUs and nodes of group `group`; `label` (NULL: "group G:
 * nodes N, CPUs C") names it in the legend.  Returns 0, or -1 (memory). */
int cli_draw_group(struct cli_draw *d, int group, hwloc_const_bitmap_t cpus,
                   hwloc_const_bitmap_t nodes, const char *label);

/* Hangs `text` (a thread's name) on the smallest object holding all of
 * `cpus`: a PU, a core, a node's package, the machine; shown cut to 40
 * characters at a whole character of `text`, then "...".  After six
 * labels on one object the rest are counted in one "+N more" label.
 * Returns 0, or -1 (memory). */
int cli_draw_label(struct cli_draw *d, hwloc_const_bitmap_t cpus, const char *text);

/* Writes `text` inside NUMA node `node` (OS index), e.g. its memory.
 * Returns 0, 1 when the machine has no such node, -1 (memory). */
int cli_draw_node_text(struct cli_draw *d, unsigned node, const char *text);

/* Adds a line under the picture (cut to 300 characters as labels are).
 * Returns 0, or -1 (memory). */
int cli_draw_legend(struct cli_draw *d, const char *text);

/* Runs lstopo: the SVG document into *svg (malloc'd, NUL-terminated).
 * Returns 0, or -1 with a message in err (lstopo missing: names the
 * package to install). */
int cli_draw_svg(struct cli_draw *d, char **svg, size_t *len, char *err, size_t errlen);

/* cli_draw_svg, then the document written to path whole (cli_write_file). */
int cli_draw_write(struct cli_draw *d, const char *path, char *err, size_t errlen);

/* Copies `in` into out as text safe inside an SVG or HTML element or
 * attribute: '<', '>', '&', quotes as entities, control bytes and invalid
 * UTF-8 as '?', at most `maxchars` characters (then "...").  Returns out. */
char *cli_markup_text(char *out, size_t len, const char *in, size_t maxchars);

/* `text` as a picture or the page shows it: written out as np_text_shown
 * does, then escaped as cli_markup_text does; when that is longer than
 * maxchars characters, cut before the first character of `text` whose
 * form goes past them (never inside a "\u202e"), then "...".  Newly
 * allocated, NULL when memory runs out. */
char *cli_shown_markup(const char *text, size_t maxchars);

#endif
