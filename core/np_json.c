#include "np_json.h"
#include "np_text.h"

/* s as a JSON string literal, quotes included: UTF-8 whatever s holds. */
static void np_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c;) {
        unsigned cp;
        size_t n = *c < 0x80 ? 1 : np_text_next((const char *)c, &cp);
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else if (n == 1 && *c >= 0x80)
            fputs("\\ufffd", out); /* a byte that begins no character */
        else
            fwrite(c, 1, n, out);
        c += n;
    }
    fputc('"', out);
}

void np_json_start(struct np_json *j, FILE *out)
{
    j->out = out;
    j->depth = 0;
    j->ignored = 0;
}

static void indent(struct np_json *j, int depth)
{
    fputc('\n', j->out);
    for (int i = 0; i < depth; i++)
        fputs("  ", j->out);
}

/* What comes before a value: the separator, the line break, the key. */
static void member(struct np_json *j, const char *key)
{
    if (j->depth > 0) {
        int d = j->depth - 1;
        if (!j->level[d].empty)
            fputc(',', j->out);
        if (j->level[d].wrap)
            indent(j, j->depth);
        else if (!j->level[d].empty)
            fputc(' ', j->out);
        j->level[d].empty = false;
    }
    if (key != NULL) {
        np_json_string(j->out, key);
        fputs(": ", j->out);
    }
}

void np_json_open(struct np_json *j, const char *key, char kind, bool wrap)
{
    if (j->depth == NP_JSON_DEPTH) {
        j->ignored++;
        return;
    }
    member(j, key);
    fputc(kind, j->out);
    j->level[j->depth].close = kind == '{' ? '}' : ']';
    j->level[j->depth].wrap = wrap;
    j->level[j->depth].empty = true;
    j->depth++;
}

void np_json_close(struct np_json *j)
{
    if (j->ignored > 0) {
        j->ignored--;
        return;
    }
    if (j->depth == 0)
        return;
    int d = --j->depth;
    if (j->level[d].wrap && !j->level[d].empty)
        indent(j, j->depth);
    fputc(j->level[d].close, j->out);
    if (j->depth == 0)
        fputc('\n', j->out);
}

void np_json_str(struct np_json *j, const char *key, const char *value)
{
    member(j, key);
    if (value != NULL)
        np_json_string(j->out, value);
    else
        fputs("null", j->out);
}

void np_json_int(struct np_json *j, const char *key, long long value)
{
    member(j, key);
    fprintf(j->out, "%lld", value);
}

void np_json_bool(struct np_json *j, const char *key, bool value)
{
    member(j, key);
    fputs(value ? "true" : "false", j->out);
}

void np_json_null(struct np_json *j, const char *key)
{
    member(j, key);
    fputs("null", j->out);
}

void np_json_num(struct np_json *j, const char *key, double value, int decimals)
{
    member(j, key);
    fprintf(j->out, "%.*f", decimals, value);
}
