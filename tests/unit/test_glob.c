/* np_glob: the thread-name globs of threads= and `numapin check
 * --threads`: which lists are accepted, and which names they match. */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_glob.h"
#include "tests.h"

static void parse(struct np_globs *g, const char *text)
{
    *g = (struct np_globs){0};
    ck_assert_msg(np_globs_parse(text, g) == 0, "'%s' refused: %s", text, strerror(errno));
}

START_TEST(default_globs_match_fork_join_workers_only)
{
    struct np_globs g;
    parse(&g, NP_DEFAULT_THREADS);
    static const char *const yes[] = {"ForkJoinPool-1-worker-3", "ForkJoinPool-12-worker-107",
                                      "ForkJoinPool.commonPool-worker-7",
                                      "ForkJoinPool.commonPool-worker-"};
    static const char *const no[] = {"main", "ForkJoinPool-1-worker", "ForkJoinPool.commonPool-worker",
                                     "forkjoinpool-1-worker-3", "xForkJoinPool-1-worker-3", "",
                                     "GC Thread#0", "ForkJoinPool.commonPool"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        ck_assert_msg(np_globs_match(&g, yes[i]), "'%s' should match", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        ck_assert_msg(!np_globs_match(&g, no[i]), "'%s' should not match", no[i]);
    np_globs_free(&g);
}
END_TEST

START_TEST(given_globs_match_their_names_only)
{
    struct np_globs g;
    parse(&g, "Tier1-*|Tier2-*");
    ck_assert(np_globs_match(&g, "Tier1-a"));
    ck_assert(np_globs_match(&g, "Tier2-"));
    ck_assert(np_globs_match(&g, "Tier2-worker-9"));
    ck_assert(!np_globs_match(&g, "Tier3-a"));
    ck_assert(!np_globs_match(&g, "Tier1"));
    ck_assert(!np_globs_match(&g, "ForkJoinPool-1-worker-3"));
    np_globs_free(&g);
    parse(&g, "worker-[0-3]|exact|a\\*|w?rk");
    ck_assert_int_eq(g.n, 4);
    ck_assert(np_globs_match(&g, "worker-2"));
    ck_assert(!np_globs_match(&g, "worker-4"));
    ck_assert(np_globs_match(&g, "exact"));
    ck_assert(!np_globs_match(&g, "exact2"));
    ck_assert(np_globs_match(&g, "a*")); /* an escaped '*' is a '*' */
    ck_assert(!np_globs_match(&g, "ab"));
    ck_assert(np_globs_match(&g, "work"));
    ck_assert(!np_globs_match(&g, "wrk"));
    np_globs_free(&g);
}
END_TEST

/* Globs whose only wildcard is '*' are matched without fnmatch: the
 * answers must be fnmatch's, in the C locale and in a UTF-8 one, for
 * random globs and names (ASCII, multi-byte characters, '*' in names). */
START_TEST(star_globs_match_as_fnmatch_does)
{
    static const char *const pieces[] = {"a", "b", "-", "*", "\xc3\xa9", "\xe2\x82\xac", "ab", "1"};
    static const char *const locales[] = {"C", "C.UTF-8"};
    unsigned seed = 12345;
    for (int l = 0; l < 2; l++) {
        if (setlocale(LC_ALL, locales[l]) == NULL)
            continue; /* no such locale here: C alone */
        for (int round = 0; round < 20000; round++) {
            char pat[64] = "", name[64] = "";
            int np = rand_r(&seed) % 6, nn = rand_r(&seed) % 7;
            for (int i = 0; i < np; i++)
                strcat(pat, pieces[rand_r(&seed) % 8]);
            for (int i = 0; i < nn; i++)
                strcat(name, pieces[rand_r(&seed) % 8]);
            if (pat[0] == '\0')
                strcpy(pat, "*");
            struct np_globs g;
            parse(&g, pat);
            bool got = np_globs_match(&g, name), want = fnmatch(pat, name, 0) == 0;
            ck_assert_msg(got == want, "locale %s: glob '%s', name '%s': %d, fnmatch says %d",
                          locales[l], pat, name, got, want);
            np_globs_free(&g);
        }
    }
    setlocale(LC_ALL, "C");
}
END_TEST

/* Refused with EINVAL, the globs held before kept: an empty list or glob,
 * an unclosed '[' (fnmatch would take it literally, which is never what
 * was meant), a trailing '\'. */
START_TEST(empty_and_unbalanced_globs_are_refused)
{
    static const char *const bad[] = {"", "|", "|a", "a|", "a||b", "[a", "worker-[0-3", "a\\",
                                      "[]", "[!]", "[[:digit:]", "ok|[x"};
    struct np_globs g;
    parse(&g, "kept-*");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        errno = 0;
        ck_assert_msg(np_globs_parse(bad[i], &g) == -1 && errno == EINVAL,
                      "'%s' accepted (or errno %d)", bad[i], errno);
        ck_assert_str_eq(g.text, "kept-*");
        ck_assert_int_eq(g.n, 1);
        ck_assert(np_globs_match(&g, "kept-1"));
    }
    np_globs_free(&g);
}
END_TEST

/* Bracket expressions as fnmatch reads them: a ']' first is a member, a
 * class is one item. */
START_TEST(closed_brackets_are_accepted)
{
    static const struct {
        const char *glob, *yes, *no;
    } c[] = {
        {"[]]x", "]x", "ax"},
        {"[!]]", "a", "]"},
        {"[^]]", "b", "]"},
        {"[[:digit:]]-*", "7-a", "x-a"},
        {"[a\\]]", "]", "b"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        struct np_globs g;
        parse(&g, c[i].glob);
        ck_assert_msg(np_globs_match(&g, c[i].yes), "'%s' does not match '%s'", c[i].glob, c[i].yes);
        ck_assert_msg(!np_globs_match(&g, c[i].no), "'%s' matches '%s'", c[i].glob, c[i].no);
        np_globs_free(&g);
    }
}
END_TEST

/* The text is kept as given (for the log), split at each '|'; parsing into
 * parsed globs replaces them; freeing twice, or what was never parsed, is
 * harmless. */
START_TEST(parse_keeps_the_text_and_replaces_what_was_held)
{
    struct np_globs g;
    parse(&g, "a*|b?|c");
    ck_assert_str_eq(g.text, "a*|b?|c");
    ck_assert_int_eq(g.n, 3);
    ck_assert_str_eq(g.patterns[0], "a*");
    ck_assert_str_eq(g.patterns[1], "b?");
    ck_assert_str_eq(g.patterns[2], "c");
    ck_assert_ptr_null(g.patterns[3]);
    ck_assert_int_eq(np_globs_parse("d*", &g), 0);
    ck_assert_str_eq(g.text, "d*");
    ck_assert_int_eq(g.n, 1);
    ck_assert(!np_globs_match(&g, "a"));
    ck_assert(np_globs_match(&g, "dd"));
    np_globs_free(&g);
    ck_assert_ptr_null(g.patterns);
    ck_assert_ptr_null(g.text);
    ck_assert_int_eq(g.n, 0);
    np_globs_free(&g);
    struct np_globs none = {0};
    ck_assert(!np_globs_match(&none, "anything"));
    np_globs_free(&none);
}
END_TEST

Suite *glob_suite(void)
{
    Suite *s = suite_create("glob");
    TCase *tc = tcase_create("glob");
    tcase_add_test(tc, default_globs_match_fork_join_workers_only);
    tcase_add_test(tc, given_globs_match_their_names_only);
    tcase_add_test(tc, star_globs_match_as_fnmatch_does);
    tcase_add_test(tc, empty_and_unbalanced_globs_are_refused);
    tcase_add_test(tc, closed_brackets_are_accepted);
    tcase_add_test(tc, parse_keeps_the_text_and_replaces_what_was_held);
    suite_add_tcase(s, tc);
    return s;
}
