/* check_entry_names.c -- unit tests for the names of common/entry.c: what
 * a name may hold (1 to 63 bytes, no space or control, UTF-8), what a
 * terminal could act on and is shown as '?', and entry_name_check's word
 * on whether the UTF-8 test is needed. */
#include <string.h>
#include "suites.h"
#include "entry.h"
#include "entrytest.h"

/* ---- names ------------------------------------------------------------ */

/* What a terminal could act on: C1 controls in UTF-8 and bytes outside
 * well-formed UTF-8 (a lone 0x9B, Latin-1, a cut or overlong sequence, a
 * surrogate) are found and shown as '?', a byte each; other UTF-8 (U+00A0
 * on, up to U+10FFFF) is not, and the name is shown as it is. */
START_TEST(test_entry_name_unsafe)
{
    char buf[ENTRY_NAME_MAX + 1];
    const char *plain = "Zo\xc3\xab\xc2\xa0\xe2\x82\xac\xf0\x9f\x98\x80";

    ck_assert_int_eq(entry_name_unsafe("a\xc2\x9b" "2J", 5), 1);
    ck_assert_int_eq(entry_name_unsafe("\xc2\x80", 2), 1);
    ck_assert_int_eq(entry_name_unsafe(plain, strlen(plain)), 0);
    ck_assert_int_eq(entry_name_unsafe("a\xc2", 2), 1);      /* cut short */
    ck_assert_int_eq(entry_name_unsafe("a\x9b" "2J", 4), 1); /* 8-bit CSI */
    ck_assert_int_eq(entry_name_unsafe("Zo\xeb", 3), 1);     /* Latin-1 */
    ck_assert_int_eq(entry_name_unsafe("\xc0\xaf", 2), 1);   /* overlong */
    ck_assert_int_eq(entry_name_unsafe("\xed\xa0\x80", 3), 1); /* surrogate */
    ck_assert_int_eq(entry_name_unsafe("\xf4\x90\x80\x80", 4), 1);
    ck_assert_int_eq(entry_name_unsafe("a\x1b", 2), 1);
    ck_assert_ptr_eq(entry_name_shown(plain, buf), plain);
    ck_assert_str_eq(entry_name_shown("a\xc2\x9b" "b\xc2\x9f", buf), "a??b??");
    ck_assert_str_eq(entry_name_shown("x\x9b" "1m\xeb\xc3\xab", buf),
                     "x?1m?\xc3\xab");
}
END_TEST

START_TEST(test_entry_name_plain)
{
    ck_assert_int_eq(NAME_OK("a"), 1);
    ck_assert_int_eq(NAME_OK("O'Brien-Smith"), 1);
    ck_assert_int_eq(NAME_OK("Z!#$%&()*+,./:;<=>?@[]^_`{|}~"), 1);
}
END_TEST

START_TEST(test_entry_name_utf8_allowed)
{
    ck_assert_int_eq(NAME_OK("Zo\xc3\xab"), 1);             /* Zoë */
    ck_assert_int_eq(NAME_OK("\xe5\xb1\xb1\xe7\x94\xb0"), 1);  /* 山田 */
    ck_assert_int_eq(NAME_OK("\x80"), 1);
    ck_assert_int_eq(NAME_OK("\xfd"), 1);
    /* 0xFE and 0xFF never occur in UTF-8, and 0xFF is telnet's command
     * byte: a name never carries them into a reply. */
    ck_assert_int_eq(NAME_OK("\xfe"), 0);
    ck_assert_int_eq(NAME_OK("\xff"), 0);
    ck_assert_int_eq(NAME_OK("ab\xff"), 0);
}
END_TEST

START_TEST(test_entry_name_length_limits)
{
    char name[ENTRY_NAME_MAX + 2];

    memset(name, 'x', sizeof(name));
    ck_assert_int_eq(entry_name_ok(name, 0), 0);
    ck_assert_int_eq(entry_name_ok(name, 1), 1);
    ck_assert_int_eq(entry_name_ok(name, 63), 1);
    ck_assert_int_eq(entry_name_ok(name, 64), 0);
    ck_assert_int_eq(ENTRY_NAME_MAX, 63);
}
END_TEST

START_TEST(test_entry_name_uses_len_not_nul)
{
    /* Only len bytes count: the space after them is not looked at. */
    ck_assert_int_eq(entry_name_ok("ab cd", 2), 1);
    ck_assert_int_eq(entry_name_ok("ab cd", 3), 0);
}
END_TEST

START_TEST(test_entry_name_rejects_space_and_controls)
{
    char name[4] = "a?b";

    ck_assert_int_eq(NAME_OK("a b"), 0);
    ck_assert_int_eq(NAME_OK("a\tb"), 0);
    ck_assert_int_eq(NAME_OK("a\rb"), 0);
    ck_assert_int_eq(NAME_OK("a\nb"), 0);
    ck_assert_int_eq(NAME_OK("\x1f"), 0);
    ck_assert_int_eq(NAME_OK("a\x7f"), 0);                  /* DEL */
    ck_assert_int_eq(entry_name_ok("a\0b", 3), 0);          /* NUL */
    for (int c = 1; c <= 0x20; c++) {
        name[1] = (char)c;
        ck_assert_msg(entry_name_ok(name, 3) == 0, "byte 0x%02x accepted", c);
    }
    name[1] = '!';                                          /* 0x21 */
    ck_assert_int_eq(entry_name_ok(name, 3), 1);
}
END_TEST

/* entry_name_check's 1 lets the parser skip the UTF-8 test: it must
 * mean printable ASCII only, and any byte >= 0x80 must say 2. */
START_TEST(test_entry_name_check_ascii_or_not)
{
    char name[4] = "a?b";

    for (int c = 0x21; c < 0x7f; c++) {
        name[1] = (char)c;
        ck_assert_msg(entry_name_check(name, 3) == 1, "byte 0x%02x", c);
        ck_assert_int_eq(entry_name_unsafe(name, 3), 0);
    }
    for (int c = 0x80; c < 0xfe; c++) {
        name[1] = (char)c;
        ck_assert_msg(entry_name_check(name, 3) == 2, "byte 0x%02x", c);
        name[0] = (char)c;                  /* first and last too */
        ck_assert_msg(entry_name_check(name, 3) == 2, "byte 0x%02x", c);
        name[0] = 'a';
    }
    ck_assert_int_eq(entry_name_check("\xc2\x9b", 2), 2);    /* a C1 control */
    ck_assert_int_eq(entry_name_unsafe("\xc2\x9b", 2), 1);
    ck_assert_int_eq(entry_name_check("a b", 3), 0);
}
END_TEST

/* What entry_name_check says of one byte, a byte at a time. */
static int byte_says(unsigned char c)
{
    if (c <= ' ' || c == 0x7f || c >= 0xfe)
        return 0;
    return c & 0x80 ? 2 : 1;
}

/* entry_name_check reads eight bytes at a time, then the tail: every byte
 * value at every place of every length says what it says alone. */
START_TEST(test_entry_name_check_every_byte_everywhere)
{
    char name[ENTRY_NAME_MAX + 8];

    for (size_t len = 1; len <= ENTRY_NAME_MAX; len++) {
        for (size_t at = 0; at < len; at++) {
            memset(name, 'a', sizeof(name));
            name[len] = ' ';                /* past the end: not read */
            for (int c = 0; c < 256; c++) {
                name[at] = (char)c;
                ck_assert_msg(entry_name_check(name, len) == byte_says(c),
                              "len %zu, byte 0x%02x at %zu", len, c, at);
            }
        }
    }
}
END_TEST

/* An entry's chars: the characters of its names (UTF-8 continuation
 * bytes not counted), whatever the length and wherever a multi-byte
 * character falls among the words counted whole. */
START_TEST(test_entry_chars_counts_characters)
{
    char last[ENTRY_NAME_MAX + 1];

    for (size_t len = 2; len <= ENTRY_NAME_MAX; len++) {
        for (size_t at = 0; at + 2 <= len; at++) {
            memset(last, 'a', len);
            last[at] = (char)0xc3;          /* U+00E9, two bytes */
            last[at + 1] = (char)0xa9;
            struct entry *e = entry_new(last, len, "b", 1, 123456789, 30);
            ck_assert_ptr_nonnull(e);
            ck_assert_msg((e->chars & ~ENTRY_UNSHOWN) == len - 1 + 1,
                          "len %zu, at %zu: %u", len, at, e->chars);
            ck_assert(!entry_unshown(e));
            entry_free(e);
        }
        memset(last, 'a', len);
        struct entry *e = entry_new(last, len, "bc", 2, 123456789, 30);
        ck_assert_int_eq(e->chars, len + 2);
        entry_free(e);
    }
}
END_TEST

static Suite *entry_names_suite(void)
{
    Suite *s = suite_create("entry_names");
    TCase *core = tcase_create("core");
    TCase *errors = tcase_create("errors");
    TCase *limits = tcase_create("limits");

    tcase_add_test(core, test_entry_name_unsafe);
    tcase_add_test(core, test_entry_name_plain);
    tcase_add_test(core, test_entry_name_utf8_allowed);
    tcase_add_test(limits, test_entry_name_length_limits);
    tcase_add_test(limits, test_entry_name_uses_len_not_nul);
    tcase_add_test(errors, test_entry_name_rejects_space_and_controls);
    tcase_add_test(errors, test_entry_name_check_ascii_or_not);
    tcase_add_test(errors, test_entry_name_check_every_byte_everywhere);
    tcase_add_test(core, test_entry_chars_counts_characters);
    suite_add_tcase(s, core);
    suite_add_tcase(s, errors);
    suite_add_tcase(s, limits);
    return s;
}

SUITE_REGISTER(entry_names_suite)
