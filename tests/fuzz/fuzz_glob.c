/* fuzz_glob: the thread-name matcher, np_globs_match, with fuzzed
 * patterns and names.
 *
 * Input: PATTERNS \0 NAME (no NUL: the first half is the patterns, the
 * second the name).  PATTERNS is given as threads=PATTERNS (commas, which
 * end an option, become '_').  Runs in the C.UTF-8 locale, as in a JVM
 * (the java launcher sets the locale from the environment), so fnmatch
 * goes through its multibyte paths with any bytes, valid UTF-8 or not.
 * Beyond memory errors and hangs (-timeout), it aborts when
 *  - a name with no glob character is not matched by itself, or is matched
 *    by a different literal name;
 *  - '*' does not match a name, or PATTERN|* does not;
 *  - the match of PATTERNS is not the OR of the match of each pattern. */
#define _GNU_SOURCE
#include "fuzz_util.h"

#include <locale.h>

#include "np_options.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    if (setlocale(LC_ALL, "C.UTF-8") == NULL)
        setlocale(LC_ALL, "C");
    return 0;
}

static bool matches(const char *threads, const char *name, bool *ok)
{
    size_t len = strlen(threads) + 16;
    char *opt = malloc(len);
    if (opt == NULL)
        abort();
    snprintf(opt, len, "threads=%s", threads);
    struct np_options o;
    char err[512];
    *ok = np_options_parse(opt, &o, err, sizeof err) == 0;
    bool m = *ok && np_globs_match(&o.threads, name);
    np_options_free(&o);
    free(opt);
    return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size);
    size_t plen = nul != NULL ? (size_t)(nul - data) : size / 2;
    char *pats = fuzz_cstr(data, plen);
    const uint8_t *nstart = data + plen + (nul != NULL);
    char *name = fuzz_cstr(nstart, size - (size_t)(nstart - data));
    for (char *c = pats; *c; c++)
        if (*c == ',')
            *c = '_';

    bool ok;
    bool m = matches(pats, name, &ok);
    if (ok) {
        /* The OR of the single patterns. */
        bool any = false;
        char *copy = strdup(pats), *save = NULL;
        if (copy == NULL)
            abort();
        for (char *t = strtok_r(copy, "|", &save); t != NULL; t = strtok_r(NULL, "|", &save)) {
            bool ok1;
            bool m1 = matches(t, name, &ok1);
            FUZZ_CHECK(ok1, "pattern '%s' of the accepted '%s' is rejected alone", t, pats);
            any = any || m1;
        }
        free(copy);
        FUZZ_CHECK(m == any, "'%s' against '%s': %d, but its patterns one by one: %d", pats, name, m,
                   any);
        /* Adding |* matches everything. */
        size_t len = strlen(pats) + 3;
        char *star = malloc(len);
        if (star == NULL)
            abort();
        snprintf(star, len, "%s|*", pats);
        bool ok2;
        FUZZ_CHECK(matches(star, name, &ok2) && ok2, "'%s' does not match '%s'", star, name);
        free(star);
    }
    bool ok3;
    FUZZ_CHECK(matches("*", name, &ok3) && ok3, "'*' does not match '%s'", name);
    /* A literal name matches itself and no other literal name. */
    if (name[0] != '\0' && strcspn(name, "*?[\\|,") == strlen(name)) {
        bool ok4;
        FUZZ_CHECK(matches(name, name, &ok4) && ok4, "'%s' does not match itself", name);
        if (pats[0] != '\0' && strcspn(pats, "*?[\\|") == strlen(pats) && strcmp(pats, name) != 0)
            FUZZ_CHECK(!matches(pats, name, &ok4), "literal '%s' matches '%s'", pats, name);
    }
    free(pats);
    free(name);
    return 0;
}
