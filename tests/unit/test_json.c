/* np_json: the one JSON writer: its output is JSON in UTF-8, whatever
 * bytes its strings hold. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "np_json.h"
#include "tests.h"

START_TEST(strings_come_out_as_utf8_json)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct np_json j;
    np_json_start(&j, out);
    np_json_open(&j, NULL, '{', false);
    np_json_str(&j, "quote", "a\"b\\c\n\x01");
    np_json_str(&j, "letters", "\xc3\xbc\xe5\x90\x8d\xf0\x9f\x98\x80");
    /* Bytes that begin no character: a cut sequence, a lone surrogate in
     * modified UTF-8, a stray continuation byte. */
    np_json_str(&j, "bytes", "x\xe5\x90|\xed\xa0\x80|\x80|\xff");
    np_json_close(&j);
    fclose(out);
    ck_assert_str_eq(text, "{\"quote\": \"a\\\"b\\\\c\\u000a\\u0001\", "
                           "\"letters\": \"\xc3\xbc\xe5\x90\x8d\xf0\x9f\x98\x80\", "
                           "\"bytes\": \"x\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|\\ufffd|\\ufffd\"}\n");
    free(text);
}
END_TEST

Suite *json_suite(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("json");
    tcase_add_test(tc, strings_come_out_as_utf8_json);
    suite_add_tcase(s, tc);
    return s;
}
