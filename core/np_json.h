/* np_json: one JSON writer for everything numapin prints as JSON (the
 * placement report, and the command-line tool's --json outputs).
 *
 * A writer tracks nesting and commas.  Each object or array is opened
 * either wrapped (each member on a line of its own, indented by two spaces
 * a level) or inline (on one line, ", " between members), so a document
 * reads as one line per thread or per group:
 *
 *   {
 *     "plan": {"group": 0, "cpus": "0-3"},
 *     "threads": [
 *       {"name": "ForkJoinPool-1-worker-1", "tid": 4369}
 *     ]
 *   }
 *
 * Strings are escaped as JSON requires (quotes, backslashes, control
 * bytes); other characters are written as they are, and a byte that
 * begins no UTF-8 character as \ufffd, so the output is UTF-8 whatever
 * it is given.  A key is given with each
 * value inside an object and NULL inside an array.  Nothing here
 * allocates. */
#ifndef NP_JSON_H
#define NP_JSON_H

#include <stdbool.h>
#include <stdio.h>

/* The deepest nesting a writer keeps track of; callers stay within it
 * (opens beyond it write nothing, and neither do their closes). */
#define NP_JSON_DEPTH 16

struct np_json {
    FILE *out;
    int depth;
    int ignored;      /* opens beyond NP_JSON_DEPTH */
    struct {
        char close;  /* '}' or ']' */
        bool wrap;
        bool empty;
    } level[NP_JSON_DEPTH];
};

void np_json_start(struct np_json *j, FILE *out);

/* Opens an object ('{') or an array ('['). */
void np_json_open(struct np_json *j, const char *key, char kind, bool wrap);
/* Closes the innermost object or array; after the outermost, a newline. */
void np_json_close(struct np_json *j);

/* A string; NULL writes null. */
void np_json_str(struct np_json *j, const char *key, const char *value);
void np_json_int(struct np_json *j, const char *key, long long value);
void np_json_bool(struct np_json *j, const char *key, bool value);
void np_json_null(struct np_json *j, const char *key);
/* A number with `decimals` digits after the point. */
void np_json_num(struct np_json *j, const char *key, double value, int decimals);

#endif
