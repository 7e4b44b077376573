/* check_cliutil.c -- the argument parsers the client tools share
 * (client/lib/cliutil.c): counts with k and m suffixes and a ceiling,
 * shards "k/n", request mixes by position or by name, seconds, and the
 * password check (one word of printable bytes, not too long). */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "suites.h"
#include "../client/lib/cliutil.h"
#include "../client/lib/gen.h"

START_TEST(test_cli_parsers)
{
    uint64_t v;
    unsigned k, n;
    double s;
    struct gen_mix m;

    ck_assert_int_eq(cli_parse_u64("123", 1000, &v), 0);
    ck_assert_uint_eq(v, 123);
    ck_assert_int_eq(cli_parse_u64("64k", 100000, &v), 0);
    ck_assert_uint_eq(v, 64000);
    ck_assert_int_eq(cli_parse_u64("2m", 10000000, &v), 0);
    ck_assert_uint_eq(v, 2000000);
    ck_assert_int_eq(cli_parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
    ck_assert_int_ne(cli_parse_u64("18446744073709551616", UINT64_MAX, &v), 0);
    ck_assert_int_ne(cli_parse_u64("-1", 1000, &v), 0);
    ck_assert_int_ne(cli_parse_u64("", 1000, &v), 0);
    ck_assert_int_ne(cli_parse_u64("12x", 1000, &v), 0);
    ck_assert_int_ne(cli_parse_u64("1001", 1000, &v), 0);
    ck_assert_int_ne(cli_parse_u64("2k", 1000, &v), 0);

    /* A STATS count: what a broken server may send is no count. */
    ck_assert_int_eq(cli_parse_count("18446744073709551615", &v), 0);
    ck_assert_uint_eq(v, UINT64_MAX);
    ck_assert_int_ne(cli_parse_count("18446744073709551616", &v), 0);
    ck_assert_int_ne(cli_parse_count("-1", &v), 0);
    ck_assert_int_ne(cli_parse_count("1e308", &v), 0);
    ck_assert_int_ne(cli_parse_count("12k", &v), 0);
    ck_assert_int_ne(cli_parse_count("", &v), 0);

    ck_assert_int_eq(cli_parse_shard("1/4", &k, &n), 0);
    ck_assert_uint_eq(k, 1);
    ck_assert_uint_eq(n, 4);
    ck_assert_int_ne(cli_parse_shard("4/4", &k, &n), 0);
    ck_assert_int_ne(cli_parse_shard("0/0", &k, &n), 0);
    ck_assert_int_ne(cli_parse_shard("1", &k, &n), 0);
    ck_assert_int_ne(cli_parse_shard("1/2/3", &k, &n), 0);
    ck_assert_int_ne(cli_parse_shard("1k/2k", &k, &n), 0);

    ck_assert_int_eq(cli_parse_mix("5:5:1", &m), 0);
    ck_assert_uint_eq(m.w[0] + m.w[1] + m.w[2] + m.w[3], 11);
    ck_assert_int_eq(cli_parse_mix("1:0:0:3", &m), 0);
    ck_assert_uint_eq(m.w[3], 3);
    ck_assert_int_ne(cli_parse_mix("0:0:0", &m), 0);
    ck_assert_int_ne(cli_parse_mix("5:5", &m), 0);
    ck_assert_int_ne(cli_parse_mix("5:5:1:1:1", &m), 0);
    ck_assert_int_ne(cli_parse_mix("5::1", &m), 0);
    ck_assert_int_ne(cli_parse_mix("5:5:1001", &m), 0);

    /* The named form: any order, either case, the parts left out 0. */
    struct gen_mix pos;
    ck_assert_int_eq(cli_parse_mix("5:5:1:2", &pos), 0);
    ck_assert_int_eq(cli_parse_mix("find=2,ADD=5,print=1,delete=5", &m), 0);
    ck_assert_int_eq(memcmp(&m, &pos, sizeof(m)), 0);
    ck_assert_int_eq(cli_parse_mix("add=1", &m), 0);
    ck_assert_uint_eq(m.w[0], 1);
    ck_assert_uint_eq(m.w[1] + m.w[2] + m.w[3], 0);
    ck_assert_int_ne(cli_parse_mix("add=0", &m), 0);          /* all 0 */
    ck_assert_int_ne(cli_parse_mix("add=1,add=2", &m), 0);    /* twice */
    ck_assert_int_ne(cli_parse_mix("add=1,", &m), 0);
    ck_assert_int_ne(cli_parse_mix("add=,find=1", &m), 0);
    ck_assert_int_ne(cli_parse_mix("add=1001", &m), 0);
    ck_assert_int_ne(cli_parse_mix("add=1k", &m), 0);
    ck_assert_int_ne(cli_parse_mix("count=1", &m), 0);
    static const char *const bench[] = { "add", "find", "delete" };
    unsigned w[3];
    ck_assert_int_eq(cli_parse_named_mix("delete=1,find=8,add=1", bench, 3,
                                         1000, w), 0);
    ck_assert_uint_eq(w[0], 1);
    ck_assert_uint_eq(w[1], 8);
    ck_assert_uint_eq(w[2], 1);
    ck_assert_int_eq(cli_parse_named_mix("print=1", bench, 3, 1000, w),
                     -ENOENT);

    ck_assert_int_eq(cli_parse_seconds("2.5", &s), 0);
    ck_assert(s == 2.5);
    ck_assert_int_ne(cli_parse_seconds("-1", &s), 0);
    ck_assert_int_ne(cli_parse_seconds("nan", &s), 0);
    ck_assert_int_ne(cli_parse_seconds("1e9", &s), 0);
}
END_TEST

START_TEST(test_cli_password_check)
{
    static char longest[CLI_PASSWORD_MAX + 2];

    ck_assert_ptr_null(cli_password_check("s3cret", 6));
    ck_assert_str_eq(cli_password_check("", 0), "is empty");
    ck_assert_ptr_nonnull(strstr(cli_password_check("two words", 9),
                                 "space or tab"));
    ck_assert_ptr_nonnull(strstr(cli_password_check("tab\tbed", 7),
                                 "space or tab"));
    ck_assert_str_eq(cli_password_check("new\nline", 8),
                     "has a control character");
    ck_assert_str_eq(cli_password_check("del\x7f", 4),
                     "has a control character");
    memset(longest, 'x', sizeof(longest) - 1);
    ck_assert_ptr_null(cli_password_check(longest, CLI_PASSWORD_MAX));
    ck_assert_ptr_nonnull(strstr(cli_password_check(longest,
                                                    CLI_PASSWORD_MAX + 1),
                                 "too long"));
    /* UTF-8 is one word like any other. */
    ck_assert_ptr_null(cli_password_check("p\xc3\xa4ss", 5));
}
END_TEST

static Suite *cliutil_suite(void)
{
    Suite *s = suite_create("cliutil");
    TCase *errors = tcase_create("errors");
    tcase_add_test(errors, test_cli_parsers);
    tcase_add_test(errors, test_cli_password_check);
    suite_add_tcase(s, errors);
    return s;
}

SUITE_REGISTER(cliutil_suite)
