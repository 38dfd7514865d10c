/* fuzz_text: names into text (np_text), with fuzzed bytes taken as a name
 * the JVM gave (modified UTF-8, or anything).
 *
 * Beyond memory errors and hangs, it aborts when
 *  - the text, or the form a person reads, is not UTF-8, or the form a
 *    person reads still holds a control or format character;
 *  - a name that is UTF-8 already does not come back unchanged, without
 *    an escaped form;
 *  - the escaped form does not give the text back when each of its
 *    escapes is read as the U+FFFD the text holds there (and `\\` as a
 *    backslash);
 *  - the text, turned into modified UTF-8 for JNI and back, is not the
 *    same text, exact. */
#define _GNU_SOURCE
#include "fuzz_util.h"

#include "np_text.h"

/* The escaped form with its escapes read as the text has them. */
static char *unescaped(const char *e)
{
    char *out = malloc(3 * strlen(e) + 1);
    if (out == NULL)
        abort();
    size_t o = 0;
    while (*e != '\0') {
        if (e[0] == '\\' && e[1] == '\\') {
            out[o++] = '\\';
            e += 2;
        } else if (e[0] == '\\' && (e[1] == 'u' || e[1] == 'x')) {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
            e += e[1] == 'u' ? 6 : 4;
        } else {
            out[o++] = *e++;
        }
    }
    out[o] = '\0';
    return out;
}

static void shown_is_clean(const char *in)
{
    char *s = np_text_shown_dup(in);
    if (s == NULL)
        abort();
    FUZZ_CHECK(np_text_is_utf8(s), "shown form of '%s' is not UTF-8", in);
    for (const char *p = s; *p != '\0';) {
        unsigned cp;
        p += np_text_next(p, &cp);
        FUZZ_CHECK(!np_text_hidden(cp), "U+%04X left in the shown form", cp);
    }
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = fuzz_cstr(data, size), *esc;
    char *text = np_text_from_mutf8(in, &esc);
    if (text == NULL)
        abort();
    FUZZ_CHECK(np_text_is_utf8(text), "text of the name is not UTF-8");
    if (np_text_is_utf8(in))
        FUZZ_CHECK(strcmp(text, in) == 0 && esc == NULL, "UTF-8 name changed");
    if (esc != NULL) {
        char *back = unescaped(esc);
        FUZZ_CHECK(strcmp(back, text) == 0, "escaped form '%s' is not of the text", esc);
        free(back);
    }
    char *jni = np_text_to_mutf8(text), *again_esc;
    if (jni == NULL)
        abort();
    char *again = np_text_from_mutf8(jni, &again_esc);
    if (again == NULL)
        abort();
    FUZZ_CHECK(strcmp(again, text) == 0 && again_esc == NULL, "JNI round trip changed the text");
    shown_is_clean(in);
    shown_is_clean(text);
    free(again);
    free(again_esc);
    free(jni);
    free(esc);
    free(text);
    free(in);
    return 0;
}
