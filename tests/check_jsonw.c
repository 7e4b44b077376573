/* check_jsonw.c -- the JSON string writer (common/jsonw.c): string in,
 * literal out, through an in-memory FILE. */
#include <stdio.h>
#include <stdlib.h>
#include "suites.h"
#include "jsonw.h"

/* json_write_str(s) as a NUL-terminated heap string; the caller frees. */
static char *written(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    json_write_str(f, s);
    ck_assert_int_eq(fclose(f), 0);
    return buf;
}

static void expect_json(const char *in, const char *want)
{
    char *got = written(in);
    ck_assert_str_eq(got, want);
    free(got);
}

START_TEST(test_json_plain)
{
    expect_json("", "\"\"");
    expect_json("verified", "\"verified\"");
    expect_json("a b/c'd", "\"a b/c'd\"");     /* '/' and '\'' stay as is */
}
END_TEST

START_TEST(test_json_quote_and_backslash)
{
    expect_json("say \"hi\"", "\"say \\\"hi\\\"\"");
    expect_json("C:\\dir\\", "\"C:\\\\dir\\\\\"");
    expect_json("\\\"", "\"\\\\\\\"\"");
}
END_TEST

START_TEST(test_json_control_bytes)
{
    expect_json("a\nb", "\"a\\u000ab\"");
    expect_json("\t\r", "\"\\u0009\\u000d\"");
    expect_json("\x01\x1f", "\"\\u0001\\u001f\"");
    expect_json(" ", "\" \"");                  /* 0x20 is not a control */
    expect_json("\x7f", "\"\x7f\"");            /* DEL needs no escape */
}
END_TEST

START_TEST(test_json_high_bytes_pass_through)
{
    expect_json("M\xc3\xbcller", "\"M\xc3\xbcller\"");    /* UTF-8 as is */
    expect_json("\xff\x80", "\"\xff\x80\"");               /* any byte >= 0x80 */
}
END_TEST

static Suite *jsonw_suite(void)
{
    Suite *s = suite_create("jsonw");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_json_plain);
    tcase_add_test(core, test_json_quote_and_backslash);
    tcase_add_test(core, test_json_control_bytes);
    tcase_add_test(core, test_json_high_bytes_pass_through);
    suite_add_tcase(s, core);
    return s;
}

SUITE_REGISTER(jsonw_suite)
