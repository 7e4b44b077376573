/* check_termsafe.c -- unit tests for client/lib/termsafe.c: what a
 * terminal would act on (C0, DEL, C1 in UTF-8, a lone 8-bit CSI, bytes
 * that are not well-formed UTF-8) becomes '?', one for each byte, and
 * well-formed UTF-8 passes; term_fwrite writes what term_safe makes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "../client/lib/termsafe.h"

/* in (len bytes) made safe, compared with want; also through a FILE. */
static void expect_safe(const char *in, size_t len, const char *want)
{
    char out[128], *mem = NULL;
    size_t memlen = 0;

    ck_assert_uint_lt(len, sizeof(out));
    size_t n = term_safe(in, len, out);
    ck_assert_uint_eq(n, len);          /* one byte out for each byte in */
    ck_assert_uint_eq(n, strlen(want));
    ck_assert_int_eq(memcmp(out, want, n), 0);

    FILE *f = open_memstream(&mem, &memlen);
    ck_assert_ptr_nonnull(f);
    term_fwrite(f, in, len);
    fclose(f);
    ck_assert_uint_eq(memlen, n);
    ck_assert_int_eq(memcmp(mem, want, n), 0);
    free(mem);
}

START_TEST(test_termsafe_plain_and_c0)
{
    expect_safe("Smith, John -- 1", 16, "Smith, John -- 1");
    expect_safe("\x1b]0;pwned\x07\x1b[2J", 14, "?]0;pwned??[2J");
    expect_safe("a\0b\r\bc\x7f", 7, "a?b??c?");
}
END_TEST

START_TEST(test_termsafe_utf8_passes)
{
    expect_safe("Zo\xc3\xab M\xc3\xbcller", 12, "Zo\xc3\xab M\xc3\xbcller");
    expect_safe("\xe2\x82\xac \xf0\x9f\x98\x80", 8,
                "\xe2\x82\xac \xf0\x9f\x98\x80");           /* euro, emoji */
    expect_safe("\xc2\xa0\xc2\xbf", 4, "\xc2\xa0\xc2\xbf");  /* past C1 */
}
END_TEST

START_TEST(test_termsafe_c1_and_bad_bytes)
{
    expect_safe("\xc2\x9b" "2J", 4, "??2J");        /* CSI, in UTF-8 */
    expect_safe("\xc2\x9d" "0;x\xc2\x9c", 7, "??0;x??");     /* OSC ... ST */
    expect_safe("\x9b" "2J", 3, "?2J");             /* a lone 8-bit CSI */
    expect_safe("\xc0\xaf", 2, "??");               /* overlong '/' */
    expect_safe("\xed\xa0\x80", 3, "???");          /* a surrogate */
    expect_safe("\xf4\x90\x80\x80", 4, "????");     /* past U+10FFFF */
    expect_safe("ab\xe2\x82", 4, "ab??");           /* cut short */
    expect_safe("\xfe\xff", 2, "??");
    expect_safe("a\xe2\x80\xae" "b", 5, "a???b");  /* RLO: "b" reversed */
    expect_safe("\xe2\x81\xa7\xe2\x81\xa9", 6, "??????");   /* RLI, PDI */
    expect_safe("\xe2\x80\xa8", 3, "???");       /* line separator */
    expect_safe("\xe2\x80\xa7\xe2\x80\xaf", 6,
                "\xe2\x80\xa7\xe2\x80\xaf");  /* U+2027, U+202F: text */
    expect_safe("\xe2\x80\x8c\xe2\x80\x8f", 6,
                "\xe2\x80\x8c\xe2\x80\x8f");  /* ZWNJ, RLM: kept */
}
END_TEST

START_TEST(test_termsafe_in_place)
{
    char buf[] = "x\x1b[31m\xc3\xa9\xc2\x85";

    size_t n = term_safe(buf, sizeof(buf) - 1, buf);
    ck_assert_uint_eq(n, sizeof(buf) - 1);
    ck_assert_int_eq(memcmp(buf, "x?[31m\xc3\xa9??", n), 0);
}
END_TEST

static Suite *termsafe_suite(void)
{
    Suite *s = suite_create("termsafe");
    TCase *core = tcase_create("core");

    tcase_add_test(core, test_termsafe_plain_and_c0);
    tcase_add_test(core, test_termsafe_utf8_passes);
    tcase_add_test(core, test_termsafe_c1_and_bad_bytes);
    tcase_add_test(core, test_termsafe_in_place);
    suite_add_tcase(s, core);
    return s;
}

SUITE_REGISTER(termsafe_suite)
