/* check_entry.c -- unit tests for common/entry.c: the validation of ages
 * and SSNs at their boundaries (names: check_entry_names.c), the tree
 * order, and the exact bytes of PRINT's line and the canonical dump line,
 * the same from the stored form and the plain form (the stored form's
 * constructor and accessors: check_entry_new.c). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "suites.h"
#include "entry.h"
#include "entrytest.h"

static int age_of(const char *s, int *age)
{
    return entry_age_parse(s, strlen(s), age);
}

/* PRINT's line (print) or the dump line of one person into buf, from the
 * stored form; the plain form must give exactly the same bytes. */
static size_t line_of(int print, const char *first, const char *last,
                      int age, const char *ssn, char *buf)
{
    struct entry *e = make_entry(first, last, age, ssn);
    struct person p;
    char again[ENTRY_LINE_MAX];

    make_person(&p, first, last, age, ssn);
    size_t n = print ? entry_format_print(e, buf) : entry_format_dump(e, buf);
    size_t m = print ? person_format_print(&p, again)
                     : person_format_dump(&p, again);
    ck_assert_uint_eq(m, n);
    ck_assert_str_eq(again, buf);
    entry_free(e);
    return n;
}

#define PRINT_LINE(f, l, age, ssn, buf) line_of(1, (f), (l), (age), (ssn), (buf))
#define DUMP_LINE(f, l, age, ssn, buf)  line_of(0, (f), (l), (age), (ssn), (buf))

/* ---- ages ------------------------------------------------------------- */

START_TEST(test_entry_age_boundaries)
{
    int age = -5;

    ck_assert_int_eq(age_of("0", &age), 1);
    ck_assert_int_eq(age, 0);
    ck_assert_int_eq(age_of("150", &age), 1);
    ck_assert_int_eq(age, 150);
    ck_assert_int_eq(age_of("149", &age), 1);
    ck_assert_int_eq(age, 149);
    ck_assert_int_eq(age_of("1", &age), 1);
    ck_assert_int_eq(age, 1);
}
END_TEST

START_TEST(test_entry_age_leading_zeros)
{
    int age = -5;

    ck_assert_int_eq(age_of("007", &age), 1);
    ck_assert_int_eq(age, 7);
    ck_assert_int_eq(age_of("000", &age), 1);
    ck_assert_int_eq(age, 0);
    ck_assert_int_eq(age_of("0150", &age), 0);      /* four digits */
}
END_TEST

START_TEST(test_entry_age_rejects)
{
    static const char *const bad[] = {
        "151", "999", "1000", "-1", "+1", "1e2", "1.5", "0x1", "", " 1",
        "1 ", "abc", "12a", "\xd9\xa3",
    };
    int age = 42;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(age_of(bad[i], &age) == 0, "age '%s' accepted", bad[i]);
}
END_TEST

START_TEST(test_entry_age_uses_len)
{
    int age = -1;

    ck_assert_int_eq(entry_age_parse("15099", 3, &age), 1);
    ck_assert_int_eq(age, 150);
    ck_assert_int_eq(entry_age_parse("1519", 3, &age), 0);
}
END_TEST

/* ---- SSNs ------------------------------------------------------------- */

START_TEST(test_entry_ssn_ok)
{
    ck_assert_int_eq(SSN_OK("123-45-6789"), 1);
    ck_assert_int_eq(SSN_OK("000-00-0000"), 1);
    ck_assert_int_eq(SSN_OK("999-99-9999"), 1);
}
END_TEST

START_TEST(test_entry_ssn_rejects)
{
    static const char *const bad[] = {
        "", "123456789", "123-45-678", "123-45-67890", "12-345-6789",
        "1234-5-6789", "123_45_6789", "123 45 6789", "12a-45-6789",
        "123-4b-6789", "123-45-678x", "-123-45-678", "123--5-6789",
        "123-45-\xd9\xa3\xd9\xa3", "+23-45-6789",
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(SSN_OK(bad[i]) == 0, "SSN '%s' accepted", bad[i]);
}
END_TEST

START_TEST(test_entry_ssn_uses_len)
{
    ck_assert_int_eq(entry_ssn_ok("123-45-67890", 11), 1);
    ck_assert_int_eq(entry_ssn_ok("123-45-6789", 10), 0);
}
END_TEST

/* ---- order ------------------------------------------------------------ */

START_TEST(test_entry_cmp_last_name_first)
{
    /* Adams Zed before Baker Amy: the last name decides. */
    ck_assert_int_lt(cmp_names("Zed", "Adams", "Amy", "Baker"), 0);
    ck_assert_int_gt(cmp_names("Amy", "Baker", "Zed", "Adams"), 0);
}
END_TEST

START_TEST(test_entry_cmp_first_name_breaks_tie)
{
    ck_assert_int_lt(cmp_names("Ann", "Doe", "Bob", "Doe"), 0);
    ck_assert_int_gt(cmp_names("Bob", "Doe", "Ann", "Doe"), 0);
    ck_assert_int_eq(cmp_names("Ann", "Doe", "Ann", "Doe"), 0);
}
END_TEST

START_TEST(test_entry_cmp_bytewise)
{
    /* Uppercase sorts before lowercase ('Z' 0x5a < 'a' 0x61). */
    ck_assert_int_lt(cmp_names("x", "Zulu", "x", "alpha"), 0);
    ck_assert_int_lt(cmp_names("Zed", "Doe", "abe", "Doe"), 0);
    /* A prefix sorts first. */
    ck_assert_int_lt(cmp_names("x", "Doe", "x", "Doel"), 0);
    ck_assert_int_lt(cmp_names("Ann", "Doe", "Anna", "Doe"), 0);
    /* Bytes >= 0x80 compare as unsigned: after every ASCII byte. */
    ck_assert_int_gt(cmp_names("x", "\xc3\x89mile", "x", "zz"), 0);
    ck_assert_int_lt(cmp_names("x", "~", "x", "\x80"), 0);
}
END_TEST

START_TEST(test_entry_cmp_ignores_age_and_ssn)
{
    struct entry *a = make_entry("Ann", "Doe", 1, "111-11-1111");
    struct entry *b = make_entry("Ann", "Doe", 99, "999-99-9999");

    ck_assert_int_eq(entry_cmp(&a->node, &b->node), 0);
    entry_free(a);
    entry_free(b);
}
END_TEST

/* ---- text forms ------------------------------------------------------- */

START_TEST(test_entry_format_print_exact)
{
    char buf[ENTRY_LINE_MAX];

    size_t n = PRINT_LINE("John", "Doe", 42, "123-45-6789", buf);
    ck_assert_str_eq(buf, "Doe, John                      -- 123-45-6789   42\n");
    ck_assert_uint_eq(n, strlen(buf));
}
END_TEST

START_TEST(test_entry_format_print_matches_printf)
{
    static const struct { const char *first, *last; int age; } cases[] = {
        { "a", "b", 0 }, { "Ann", "Smith", 7 }, { "Bob", "Doe", 150 },
        { "Twentyeight-chars-long-name", "X", 99 },    /* name exactly 30 */
        { "Twentyseven-chars-long-nam", "X", 10 },     /* 29 */
        { "Twentynine-chars-long-name-x", "X", 100 },  /* 31 */
    };
    char buf[ENTRY_LINE_MAX], want[400], name[160];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t n = PRINT_LINE(cases[i].first, cases[i].last, cases[i].age,
                              "987-65-4321", buf);
        snprintf(name, sizeof(name), "%s, %s", cases[i].last, cases[i].first);
        snprintf(want, sizeof(want), "%-30s -- %11s %4d\n", name,
                 "987-65-4321", cases[i].age);
        ck_assert_str_eq(buf, want);
        ck_assert_uint_eq(n, strlen(want));
        n = DUMP_LINE(cases[i].first, cases[i].last, cases[i].age,
                      "987-65-4321", buf);
        snprintf(want, sizeof(want), "%s %s %d %s\n", cases[i].last,
                 cases[i].first, cases[i].age, "987-65-4321");
        ck_assert_str_eq(buf, want);
        ck_assert_uint_eq(n, strlen(want));
    }
}
END_TEST

/* The plain form takes any int, as printf's %4d and %d would: every one
 * from -1100 to 1100 (an age's 4 columns are written at once below 1000)
 * and the extremes. */
START_TEST(test_entry_format_any_int_as_printf)
{
    static const int ends[] = { 12345, 2147483647, -2147483647 - 1 };
    int ages[2201 + 3];
    for (int i = 0; i <= 2200; i++)
        ages[i] = i - 1100;
    for (int i = 0; i < 3; i++)
        ages[2201 + i] = ends[i];
    char buf[ENTRY_LINE_MAX], want[200];
    struct person p;

    for (size_t i = 0; i < sizeof(ages) / sizeof(ages[0]); i++) {
        make_person(&p, "Al", "Bo", 0, "123-45-6789");
        p.age = ages[i];
        size_t n = person_format_print(&p, buf);
        snprintf(want, sizeof(want), "%-30s -- %11s %4d\n", "Bo, Al",
                 "123-45-6789", ages[i]);
        ck_assert_str_eq(buf, want);
        ck_assert_uint_eq(n, strlen(want));
        n = person_format_dump(&p, buf);
        snprintf(want, sizeof(want), "Bo Al %d 123-45-6789\n", ages[i]);
        ck_assert_str_eq(buf, want);
        ck_assert_uint_eq(n, strlen(want));
    }
}
END_TEST

/* UTF-8 names are padded by characters: the columns stay where an ASCII
 * name puts them (printf's %-30s pads bytes, two short for "Zoë Müller"),
 * and a name of 4-byte characters fits ENTRY_LINE_MAX with its padding. */
START_TEST(test_entry_format_print_pads_utf8_characters)
{
    char buf[ENTRY_LINE_MAX], first[64];

    PRINT_LINE("Zo\xc3\xab", "M\xc3\xbcller", 31, "987-65-4321", buf);
    ck_assert_str_eq(buf, "M\xc3\xbcller, Zo\xc3\xab                    -- "
                     "987-65-4321   31\n");
    for (int i = 0; i < 15; i++)
        memcpy(first + 4 * i, "\xf0\x9f\x98\x80", 4);   /* 15 x U+1F600 */
    first[60] = '\0';
    size_t n = PRINT_LINE(first, "a", 150, "123-45-6789", buf);
    ck_assert_uint_eq(n, 3 + 60 + (30 - 18) + 4 + 11 + 1 + 4 + 1);
    ck_assert_uint_lt(n, ENTRY_LINE_MAX);
}
END_TEST

/* An entry whose name a terminal could act on (a journal from before ADD
 * took UTF-8 only may hold one): PRINT's line shows those bytes as '?',
 * padded by what it shows; a name of well-formed UTF-8 is not touched. */
START_TEST(test_entry_format_print_masks_unshown)
{
    char buf[ENTRY_LINE_MAX];
    struct entry *csi = entry_new("Lee\x9b" "31m", 7, "Ann\xc2\x9b", 5, 123456789, 40);
    struct entry *latin1 = entry_new("Caf\xe9", 4, "Eve", 3, 222334444, 51);
    struct entry *utf8 = entry_new("Caf\xc3\xa9", 5, "Eve", 3, 222334444, 51);

    ck_assert(csi && latin1 && utf8);
    ck_assert(entry_unshown(csi) && entry_unshown(latin1));
    ck_assert(!entry_unshown(utf8));
    entry_format_print(csi, buf);
    ck_assert_str_eq(buf, "Lee?31m, Ann??                 -- 123-45-6789   40\n");
    entry_format_print(latin1, buf);
    ck_assert_str_eq(buf, "Caf?, Eve                      -- 222-33-4444   51\n");
    entry_format_print(utf8, buf);
    ck_assert_str_eq(buf, "Caf\xc3\xa9, Eve                      -- 222-33-4444   51\n");
    /* the names themselves, the tree's order and the dump, as stored */
    ck_assert_str_eq(entry_last(csi), "Lee\x9b" "31m");
    entry_format_dump(latin1, buf);
    ck_assert_str_eq(buf, "Caf\xe9 Eve 51 222-33-4444\n");
    entry_free(csi);
    entry_free(latin1);
    entry_free(utf8);
}
END_TEST

START_TEST(test_entry_format_print_longest_names)
{
    char first[ENTRY_NAME_MAX + 1], last[ENTRY_NAME_MAX + 1];
    char buf[ENTRY_LINE_MAX], want[400], name[160];

    memset(first, 'f', ENTRY_NAME_MAX);
    first[ENTRY_NAME_MAX] = '\0';
    memset(last, 'L', ENTRY_NAME_MAX);
    last[ENTRY_NAME_MAX] = '\0';
    snprintf(name, sizeof(name), "%s, %s", last, first);
    snprintf(want, sizeof(want), "%-30s -- %11s %4d\n", name, "123-45-6789",
             150);
    size_t n = PRINT_LINE(first, last, 150, "123-45-6789", buf);
    ck_assert_uint_eq(n, 63 + 2 + 63 + 4 + 11 + 1 + 4 + 1);
    ck_assert_uint_eq(n, strlen(buf));
    ck_assert_str_eq(buf, want);               /* not truncated */
}
END_TEST

START_TEST(test_entry_format_dump_exact)
{
    char buf[ENTRY_LINE_MAX];

    size_t n = DUMP_LINE("John", "Doe", 42, "123-45-6789", buf);
    ck_assert_str_eq(buf, "Doe John 42 123-45-6789\n");
    ck_assert_uint_eq(n, strlen(buf));

    DUMP_LINE("a", "b", 0, "000-00-0000", buf);
    ck_assert_str_eq(buf, "b a 0 000-00-0000\n");
}
END_TEST

START_TEST(test_entry_format_dump_age_without_zeros)
{
    char buf[ENTRY_LINE_MAX];
    int age = -1;

    ck_assert_int_eq(age_of("007", &age), 1);
    DUMP_LINE("James", "Bond", age, "007-00-0007", buf);
    ck_assert_str_eq(buf, "Bond James 7 007-00-0007\n");
}
END_TEST

START_TEST(test_entry_format_dump_longest_names)
{
    char first[ENTRY_NAME_MAX + 1], last[ENTRY_NAME_MAX + 1];
    char buf[ENTRY_LINE_MAX], want[256];

    memset(first, 'f', ENTRY_NAME_MAX);
    first[ENTRY_NAME_MAX] = '\0';
    memset(last, 'L', ENTRY_NAME_MAX);
    last[ENTRY_NAME_MAX] = '\0';
    snprintf(want, sizeof(want), "%s %s 150 123-45-6789\n", last, first);
    size_t n = DUMP_LINE(first, last, 150, "123-45-6789", buf);
    ck_assert_str_eq(buf, want);
    ck_assert_uint_eq(n, strlen(want));
}
END_TEST

START_TEST(test_entry_print_frame)
{
    const char *head = ENTRY_PRINT_HEAD, *tail = ENTRY_PRINT_TAIL;

    ck_assert_uint_eq(strlen(head), 51);
    ck_assert_uint_eq(strlen(tail), 51);
    ck_assert_uint_eq(strspn(head, "_"), 50);
    ck_assert_uint_eq(strspn(tail, "-"), 50);
    ck_assert_int_eq(head[50], '\n');
    ck_assert_int_eq(tail[50], '\n');
}
END_TEST

static Suite *entry_suite(void)
{
    Suite *s = suite_create("entry");
    TCase *core = tcase_create("core");
    TCase *errors = tcase_create("errors");
    TCase *limits = tcase_create("limits");

    tcase_add_test(core, test_entry_ssn_ok);
    tcase_add_test(core, test_entry_cmp_last_name_first);
    tcase_add_test(core, test_entry_cmp_first_name_breaks_tie);
    tcase_add_test(core, test_entry_cmp_bytewise);
    tcase_add_test(core, test_entry_cmp_ignores_age_and_ssn);
    tcase_add_test(core, test_entry_format_print_exact);
    tcase_add_test(core, test_entry_format_print_pads_utf8_characters);
    tcase_add_test(core, test_entry_format_print_masks_unshown);
    tcase_add_test(core, test_entry_format_any_int_as_printf);
    tcase_add_test(core, test_entry_format_print_matches_printf);
    tcase_add_test(core, test_entry_format_dump_exact);
    tcase_add_test(core, test_entry_format_dump_age_without_zeros);
    tcase_add_test(core, test_entry_print_frame);

    tcase_add_test(errors, test_entry_age_rejects);
    tcase_add_test(errors, test_entry_ssn_rejects);

    tcase_add_test(limits, test_entry_age_boundaries);
    tcase_add_test(limits, test_entry_age_leading_zeros);
    tcase_add_test(limits, test_entry_age_uses_len);
    tcase_add_test(limits, test_entry_ssn_uses_len);
    tcase_add_test(limits, test_entry_format_print_longest_names);
    tcase_add_test(limits, test_entry_format_dump_longest_names);

    suite_add_tcase(s, core);
    suite_add_tcase(s, errors);
    suite_add_tcase(s, limits);
    return s;
}

SUITE_REGISTER(entry_suite)
