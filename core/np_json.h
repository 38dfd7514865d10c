/* np_json: the little JSON writing numapin needs. */
#ifndef NP_JSON_H
#define NP_JSON_H

#include <stdio.h>

/* Writes s as a JSON string literal, quotes included. */
void np_json_string(FILE *out, const char *s);

#endif
