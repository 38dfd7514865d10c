#include "np_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define REPLACEMENT 0xfffdu

static bool cont(unsigned char c)
{
    return (c & 0xc0) == 0x80;
}

size_t np_text_next(const char *str, unsigned *cp)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned c = s[0];
    if (c == 0) {
        *cp = 0;
        return 0;
    }
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf && cont(s[1])) {
        *cp = (c & 0x1f) << 6 | (s[1] & 0x3f);
        return 2;
    }
    if (c >= 0xe0 && c <= 0xef && cont(s[1]) && cont(s[2])) {
        unsigned v = (c & 0x0f) << 12 | (unsigned)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
        if (v >= 0x800 && (v < 0xd800 || v > 0xdfff)) {
            *cp = v;
            return 3;
        }
    }
    if (c >= 0xf0 && c <= 0xf4 && cont(s[1]) && cont(s[2]) && cont(s[3])) {
        unsigned v = (c & 0x07) << 18 | (unsigned)(s[1] & 0x3f) << 12 |
                     (unsigned)(s[2] & 0x3f) << 6 | (s[3] & 0x3f);
        if (v >= 0x10000 && v <= 0x10ffff) {
            *cp = v;
            return 4;
        }
    }
    *cp = REPLACEMENT;
    return 1;
}

bool np_text_is_utf8(const char *s)
{
    for (;;) {
        unsigned cp;
        if ((unsigned char)*s < 0x80) { /* the common case, byte by byte */
            if (*s == '\0')
                return true;
            s++;
            continue;
        }
        size_t n = np_text_next(s, &cp);
        if (n == 1) /* a non-ASCII byte alone is never valid */
            return false;
        s += n;
    }
}

static size_t put_utf8(char *out, unsigned cp)
{
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xc0 | cp >> 6);
        o[1] = (unsigned char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xe0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (unsigned char)(0xf0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
    o[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

static const char hex[] = "0123456789abcdef";

/* `\u` and four hex digits of v; 6 bytes. */
static size_t put_u16(char *out, unsigned v)
{
    out[0] = '\\';
    out[1] = 'u';
    for (int i = 0; i < 4; i++)
        out[2 + i] = hex[v >> (12 - 4 * i) & 15];
    return 6;
}

/* One unit of modified UTF-8 at s: a surrogate (3 bytes, ED A0-BF xx) in
 * *unit, returning 3; U+0000 as C0 80 in *unit, returning 2; else 0. */
static size_t mutf8_unit(const unsigned char *s, unsigned *unit)
{
    if (s[0] == 0xc0 && s[1] == 0x80) {
        *unit = 0;
        return 2;
    }
    if (s[0] == 0xed && s[1] >= 0xa0 && s[1] <= 0xbf && cont(s[2])) {
        *unit = 0xd000 | (unsigned)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
        return 3;
    }
    return 0;
}

char *np_text_from_mutf8(const char *in, char **escaped)
{
    size_t n = strlen(in);
    *escaped = NULL;
    /* Each byte gives at most 3 of text (a byte alone, U+FFFD) and 4 of
     * the escaped form (`\xNN`). */
    if (n > (SIZE_MAX - 1) / 4)
        return NULL;
    char *text = malloc(3 * n + 1), *esc = malloc(4 * n + 1);
    if (text == NULL || esc == NULL) {
        free(text);
        free(esc);
        return NULL;
    }
    size_t t = 0, e = 0;
    bool exact = true;
    const unsigned char *s = (const unsigned char *)in;
    while (*s != 0) {
        unsigned unit, low, cp;
        size_t k = mutf8_unit(s, &unit);
        if (k == 3 && unit >= 0xd800 && unit <= 0xdbff && mutf8_unit(s + 3, &low) == 3 &&
            low >= 0xdc00 && low <= 0xdfff) {
            cp = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
            size_t w = put_utf8(text + t, cp);
            memcpy(esc + e, text + t, w);
            t += w;
            e += w;
            s += 6;
            continue;
        }
        if (k != 0) { /* a lone surrogate, or U+0000 */
            t += put_utf8(text + t, REPLACEMENT);
            e += put_u16(esc + e, unit);
            exact = false;
            s += k;
            continue;
        }
        k = np_text_next((const char *)s, &cp);
        if (k == 1 && *s >= 0x80) { /* a byte that begins no character */
            t += put_utf8(text + t, REPLACEMENT);
            esc[e++] = '\\';
            esc[e++] = 'x';
            esc[e++] = hex[*s >> 4];
            esc[e++] = hex[*s & 15];
            exact = false;
            s++;
            continue;
        }
        if (*s == '\\')
            esc[e++] = '\\';
        memcpy(text + t, s, k);
        memcpy(esc + e, s, k);
        t += k;
        e += k;
        s += k;
    }
    text[t] = '\0';
    esc[e] = '\0';
    if (exact) {
        free(esc);
        esc = NULL;
    }
    *escaped = esc;
    return text;
}

char *np_text_to_mutf8(const char *in)
{
    size_t n = strlen(in);
    if (n > (SIZE_MAX - 1) / 3)
        return NULL;
    char *out = malloc(3 * n + 1);
    if (out == NULL)
        return NULL;
    size_t o = 0;
    for (const char *s = in; *s != '\0';) {
        unsigned cp;
        s += np_text_next(s, &cp);
        if (cp >= 0x10000) {
            /* Its two surrogates, 3 bytes each (put_utf8 writes any
             * value below 0x10000 so). */
            cp -= 0x10000;
            o += put_utf8(out + o, 0xd800 + (cp >> 10));
            o += put_utf8(out + o, 0xdc00 + (cp & 0x3ff));
        } else {
            o += put_utf8(out + o, cp);
        }
    }
    out[o] = '\0';
    return out;
}

bool np_text_hidden(unsigned cp)
{
    static const struct { unsigned lo, hi; } hidden[] = {
        {0x0000, 0x001f}, {0x007f, 0x009f}, {0x00ad, 0x00ad}, {0x0600, 0x0605},
        {0x061c, 0x061c}, {0x06dd, 0x06dd}, {0x070f, 0x070f}, {0x0890, 0x0891},
        {0x08e2, 0x08e2}, {0x180e, 0x180e}, {0x200b, 0x200f}, {0x2028, 0x202e},
        {0x2060, 0x206f}, {0xfeff, 0xfeff}, {0xfff9, 0xfffb}, {0x110bd, 0x110bd},
        {0x110cd, 0x110cd}, {0x13430, 0x1343f}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a},
        {0xe0001, 0xe0001}, {0xe0020, 0xe007f},
    };
    for (size_t i = 0; i < sizeof hidden / sizeof hidden[0] && cp >= hidden[i].lo; i++)
        if (cp <= hidden[i].hi)
            return true;
    return false;
}

/* What np_text_shown writes for one character at s into w (at most 11
 * bytes); its length. */
static size_t shown_char(const char *s, char *w, size_t *adv)
{
    unsigned cp;
    size_t k = np_text_next(s, &cp);
    *adv = k;
    if (cp == '\\') {
        w[0] = w[1] = '\\';
        return 2;
    }
    if (!np_text_hidden(cp)) {
        if (cp == REPLACEMENT && k == 1) /* an invalid byte */
            return put_utf8(w, cp);
        memcpy(w, s, k);
        return k;
    }
    if (cp < 0x80) {
        w[0] = '\\';
        w[1] = 'x';
        w[2] = hex[cp >> 4];
        w[3] = hex[cp & 15];
        return 4;
    }
    if (cp < 0x10000)
        return put_u16(w, cp);
    w[0] = '\\';
    w[1] = 'U';
    for (int i = 0; i < 8; i++)
        w[2 + i] = hex[cp >> (28 - 4 * i) & 15];
    return 10;
}

size_t np_text_shown(char *buf, size_t len, const char *in)
{
    size_t o = 0;
    if (len == 0)
        return 0;
    for (const char *s = in; *s != '\0';) {
        char w[12];
        size_t adv, k = shown_char(s, w, &adv);
        if (o + k >= len)
            break;
        memcpy(buf + o, w, k);
        o += k;
        s += adv;
    }
    buf[o] = '\0';
    return o;
}

char *np_text_shown_dup(const char *in)
{
    size_t n = strlen(in);
    /* A byte gives at most 4 (`\xNN`, or U+FFFD's 3); a character of 3
     * or 4 bytes at most 10. */
    if (n > (SIZE_MAX - 1) / 4)
        return NULL;
    char *out = malloc(4 * n + 1);
    if (out != NULL)
        np_text_shown(out, 4 * n + 1, in);
    return out;
}
