/* np_text: names from the JVM's modified UTF-8 into UTF-8 text, their
 * exact escaped form, and the form a person reads. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "np_text.h"
#include "tests.h"

/* The text and escaped form of `in`, checked against the expected ones
 * (escaped NULL: the text is the name exactly). */
static void converts(const char *in, const char *text, const char *escaped)
{
    char *esc = (char *)"unset";
    char *t = np_text_from_mutf8(in, &esc);
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(t, text);
    ck_assert_msg(np_text_is_utf8(t), "text of '%s' is not UTF-8", in);
    if (escaped == NULL)
        ck_assert_msg(esc == NULL, "'%s': escaped form '%s' where the text is exact", in, esc);
    else {
        ck_assert_ptr_nonnull(esc);
        ck_assert_str_eq(esc, escaped);
    }
    free(t);
    free(esc);
}

START_TEST(names_in_modified_utf8_become_utf8_text)
{
    /* ASCII and UTF-8 pass as they are. */
    converts("ForkJoinPool-1-worker-1", "ForkJoinPool-1-worker-1", NULL);
    converts("\xc3\xbcmlaut-\xe5\x90\x8d\xe5\x89\x8d-worker", "\xc3\xbcmlaut-\xe5\x90\x8d\xe5\x89\x8d-worker",
             NULL);
    converts("", "", NULL);
    /* U+1F600 as the JVM gives it (D83D DE00, 3 bytes each) is one
     * 4-byte character, and exact. */
    converts("worker-\xed\xa0\xbd\xed\xb8\x80", "worker-\xf0\x9f\x98\x80", NULL);
    /* A lone high or low surrogate, and U+0000 (C0 80), become U+FFFD in
     * the text; the escaped form keeps the unit. */
    converts("worker-\xed\xa0\x80x", "worker-\xef\xbf\xbdx", "worker-\\ud800x");
    converts("\xed\xb3\xbf-low", "\xef\xbf\xbd-low", "\\udcff-low");
    converts("nul\xc0\x80here", "nul\xef\xbf\xbdhere", "nul\\u0000here");
    /* A low surrogate before a high one is two lone ones. */
    converts("\xed\xb8\x80\xed\xa0\xbd", "\xef\xbf\xbd\xef\xbf\xbd", "\\ude00\\ud83d");
    /* Bytes that begin no character: \xNN; backslashes doubled only in
     * the escaped form. */
    converts("a\\b\xff", "a\\b\xef\xbf\xbd", "a\\\\b\\xff");
    converts("cut\xe5\x90", "cut\xef\xbf\xbd\xef\xbf\xbd", "cut\\xe5\\x90");
    converts("a\\b", "a\\b", NULL);
}
END_TEST

START_TEST(only_utf8_is_utf8)
{
    ck_assert(np_text_is_utf8("plain"));
    ck_assert(np_text_is_utf8("\xe5\x90\x8d \xf0\x9f\x98\x80 \xc3\xbc"));
    static const char *const bad[] = {
        "\xc0\x80", "\xed\xa0\x80", "\xed\xb0\x80", "\xe5\x90", "\xff", "\x80", "\xc1\xbf",
        "\xe0\x80\xaf", "\xf0\x80\x80\xaf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(!np_text_is_utf8(bad[i]), "bad[%zu] taken as UTF-8", i);
}
END_TEST

START_TEST(utf8_goes_back_to_modified_utf8_for_jni)
{
    char *m = np_text_to_mutf8("w-\xf0\x9f\x98\x80-\xe5\x90\x8d");
    ck_assert_str_eq(m, "w-\xed\xa0\xbd\xed\xb8\x80-\xe5\x90\x8d");
    free(m);
    m = np_text_to_mutf8("bad\xff");
    ck_assert_str_eq(m, "bad\xef\xbf\xbd");
    free(m);
}
END_TEST

static void shown(const char *in, const char *out)
{
    char buf[256];
    np_text_shown(buf, sizeof buf, in);
    ck_assert_str_eq(buf, out);
    char *d = np_text_shown_dup(in);
    ck_assert_str_eq(d, out);
    free(d);
}

START_TEST(what_a_person_reads_shows_format_characters_written_out)
{
    shown("ForkJoinPool-7-worker-\xe2\x80\xae" "evil", "ForkJoinPool-7-worker-\\u202eevil");
    shown("a\nb\tc\x7f", "a\\x0ab\\x09c\\x7f");
    shown("zero\xe2\x80\x8bwidth\xef\xbb\xbf", "zero\\u200bwidth\\ufeff");
    shown("iso\xe2\x81\xa6x\xe2\x81\xa9", "iso\\u2066x\\u2069");
    shown("line\xe2\x80\xa8" "end", "line\\u2028end");
    shown("tag\xf3\xa0\x81\x81", "tag\\U000e0041");
    shown("c1\xc2\x85", "c1\\u0085");
    shown("back\\slash", "back\\\\slash");
    /* Letters, CJK, combining marks and emoji stay; invalid bytes are
     * U+FFFD. */
    shown("\xc3\xbc\xe5\x90\x8d e\xcc\x81 \xf0\x9f\x98\x80", "\xc3\xbc\xe5\x90\x8d e\xcc\x81 \xf0\x9f\x98\x80");
    shown("x\xff", "x\xef\xbf\xbd");
}
END_TEST

START_TEST(shown_text_is_cut_at_a_whole_character)
{
    char buf[6];
    np_text_shown(buf, sizeof buf, "ab\xe5\x90\x8d\xe5\x90\x8d");
    ck_assert_str_eq(buf, "ab\xe5\x90\x8d");
    np_text_shown(buf, sizeof buf, "a\xe2\x80\xae");
    ck_assert_str_eq(buf, "a");
    ck_assert_uint_eq(np_text_shown(buf, 0, "x"), 0);
}
END_TEST

/* Every character there is: shown as UTF-8 with nothing hidden left. */
START_TEST(no_character_survives_hidden)
{
    for (unsigned cp = 1; cp < 0x110000; cp++) {
        if (cp >= 0xd800 && cp <= 0xdfff)
            continue;
        char in[5] = {0}, out[16];
        if (cp < 0x80)
            in[0] = (char)cp;
        else if (cp < 0x800)
            in[0] = (char)(0xc0 | cp >> 6), in[1] = (char)(0x80 | (cp & 0x3f));
        else if (cp < 0x10000)
            in[0] = (char)(0xe0 | cp >> 12), in[1] = (char)(0x80 | (cp >> 6 & 0x3f)),
            in[2] = (char)(0x80 | (cp & 0x3f));
        else
            in[0] = (char)(0xf0 | cp >> 18), in[1] = (char)(0x80 | (cp >> 12 & 0x3f)),
            in[2] = (char)(0x80 | (cp >> 6 & 0x3f)), in[3] = (char)(0x80 | (cp & 0x3f));
        /* Plain tests, and one check at the first failure: a check per
         * character would take Check's time for a million. */
        unsigned got;
        bool good = np_text_next(in, &got) == strlen(in) && got == cp;
        np_text_shown(out, sizeof out, in);
        good = good && np_text_is_utf8(out);
        for (const char *s = out; good && *s;) {
            unsigned c;
            s += np_text_next(s, &c);
            good = !np_text_hidden(c);
        }
        good = good && np_text_hidden(cp) == (strcmp(in, out) != 0 && cp != '\\');
        if (!good)
            ck_abort_msg("U+%04X: shown as '%s'", cp, out);
    }
}
END_TEST

Suite *text_suite(void)
{
    Suite *s = suite_create("text");
    TCase *tc = tcase_create("text");
    tcase_add_test(tc, names_in_modified_utf8_become_utf8_text);
    tcase_add_test(tc, only_utf8_is_utf8);
    tcase_add_test(tc, utf8_goes_back_to_modified_utf8_for_jni);
    tcase_add_test(tc, what_a_person_reads_shows_format_characters_written_out);
    tcase_add_test(tc, shown_text_is_cut_at_a_whole_character);
    tcase_add_test(tc, no_character_survives_hidden);
    suite_add_tcase(s, tc);
    return s;
}
