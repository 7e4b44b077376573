/* check_entry_new.c -- unit tests for the stored form of common/entry.c:
 * entry_new and entry_from_person, and the accessors, with names, SSN and
 * age round trips at their limits and the compact layout's size. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "suites.h"
#include "entry.h"
#include "entrytest.h"

/* Builds an entry from (name, length) pairs and checks every accessor
 * gives back exactly what went in. */
static void round_trip(const char *first, size_t first_len, const char *last,
                       size_t last_len, const char *ssn, int age)
{
    char text[ENTRY_SSN_LEN + 1];
    struct entry *e = entry_new(last, last_len, first, first_len,
                                entry_ssn_pack(ssn), age);

    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(strlen(entry_last(e)), last_len);
    ck_assert_int_eq(memcmp(entry_last(e), last, last_len), 0);
    ck_assert_uint_eq(strlen(entry_first(e)), first_len);
    ck_assert_int_eq(memcmp(entry_first(e), first, first_len), 0);
    ck_assert_str_eq(entry_ssn_text(e, text), ssn);
    ck_assert_int_eq(entry_age(e), age);
    /* Unlinked: the node is clear until the store links it. */
    ck_assert_ptr_null(e->node.parent);
    ck_assert_ptr_null(e->node.left);
    ck_assert_ptr_null(e->node.right);
    entry_free(e);
}

START_TEST(test_entry_new_fields)
{
    char text[ENTRY_SSN_LEN + 1];
    struct entry *e = entry_new("Doe", 3, "John", 4,
                                entry_ssn_pack("123-45-6789"), 42);

    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(entry_last(e), "Doe");
    ck_assert_str_eq(entry_first(e), "John");
    ck_assert_int_eq(entry_age(e), 42);
    ck_assert_uint_eq(e->ssn, 123456789u);
    ck_assert_str_eq(entry_ssn_text(e, text), "123-45-6789");
    entry_free(e);
    entry_free(NULL);                           /* allowed, does nothing */
}
END_TEST

START_TEST(test_entry_new_takes_len_not_nul)
{
    /* The request's tokens are not terminated: len bytes are taken. */
    struct entry *e = entry_new("Doe Jr", 3, "John Q", 4,
                                entry_ssn_pack("123-45-6789"), 1);

    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(entry_last(e), "Doe");
    ck_assert_str_eq(entry_first(e), "John");
    entry_free(e);
}
END_TEST

START_TEST(test_entry_new_one_byte_names)
{
    round_trip("a", 1, "b", 1, "123-45-6789", 0);
    round_trip("\x80", 1, "~", 1, "123-45-6789", 150);
}
END_TEST

START_TEST(test_entry_new_longest_names)
{
    char first[ENTRY_NAME_MAX + 1], last[ENTRY_NAME_MAX + 1];

    memset(first, 'f', sizeof(first));
    memset(last, 'L', sizeof(last));
    ck_assert(entry_name_ok(first, ENTRY_NAME_MAX));
    round_trip(first, ENTRY_NAME_MAX, last, ENTRY_NAME_MAX, "999-99-9999",
               150);
    round_trip(first, 1, last, ENTRY_NAME_MAX, "000-00-0000", 0);
    round_trip(first, ENTRY_NAME_MAX, last, 1, "000-00-0000", 0);
}
END_TEST

START_TEST(test_entry_new_utf8_names)
{
    static const char zoe[] = "Zo\xc3\xab";                     /* Zoë */
    static const char yamada[] = "\xe5\xb1\xb1\xe7\x94\xb0";    /* 山田 */
    static const char high[] = "\xfd\xc3\xa9\x80";

    ck_assert(NAME_OK(zoe) && NAME_OK(yamada) && NAME_OK(high));
    round_trip(zoe, strlen(zoe), yamada, strlen(yamada), "555-55-5555", 31);
    round_trip(high, strlen(high), high, strlen(high), "001-02-0003", 7);

    /* 21 three-byte characters: the longest UTF-8 name of its kind. */
    char longest[ENTRY_NAME_MAX + 1];
    for (int i = 0; i < ENTRY_NAME_MAX; i += 3)
        memcpy(longest + i, "\xe5\xb1\xb1", 3);
    longest[ENTRY_NAME_MAX] = '\0';
    ck_assert(NAME_OK(longest));
    round_trip(longest, ENTRY_NAME_MAX, longest, ENTRY_NAME_MAX,
               "987-65-4321", 99);
    /* High bytes sort after ASCII in the stored form too. */
    ck_assert_int_gt(cmp_names("x", yamada, "x", "zz"), 0);
}
END_TEST

START_TEST(test_entry_ssn_round_trips)
{
    static const struct { const char *text; uint32_t v; } cases[] = {
        { "000-00-0000", 0 }, { "999-99-9999", 999999999u },
        { "123-45-6789", 123456789u }, { "001-02-0003", 1020003u },
        { "000-00-0001", 1 }, { "100-00-0000", 100000000u },
    };
    char text[ENTRY_SSN_LEN + 1];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ck_assert(SSN_OK(cases[i].text));
        ck_assert_uint_eq(entry_ssn_pack(cases[i].text), cases[i].v);
        ck_assert_str_eq(entry_ssn_unpack(cases[i].v, text), cases[i].text);
        round_trip("a", 1, "b", 1, cases[i].text, 1);
    }
}
END_TEST

/* Written two digits at a time: each of 200,000 values spread over the
 * whole range, and the first 100,000, as printf writes them, and back. */
START_TEST(test_entry_ssn_unpack_every_digit)
{
    char text[ENTRY_SSN_LEN + 1], want[ENTRY_SSN_LEN + 8];

    for (uint32_t k = 0; k < 300000; k++) {
        uint32_t v = k < 100000 ? k : (k - 100000) * 4999u + k % 7;
        snprintf(want, sizeof(want), "%03u-%02u-%04u", v / 1000000,
                 v / 10000 % 100, v % 10000);
        ck_assert_str_eq(entry_ssn_unpack(v, text), want);
        ck_assert_uint_eq(entry_ssn_pack(text), v);
    }
}
END_TEST

START_TEST(test_entry_from_person_matches_entry_new)
{
    struct person p;
    char a[ENTRY_LINE_MAX], b[ENTRY_LINE_MAX];

    make_person(&p, "Zo\xc3\xab", "M\xc3\xbcller", 150, "000-00-0000");
    struct entry *e = entry_from_person(&p);
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(entry_first(e), p.first);
    ck_assert_str_eq(entry_last(e), p.last);
    ck_assert_int_eq(entry_age(e), 150);
    ck_assert_str_eq(entry_ssn_text(e, a), "000-00-0000");
    entry_format_dump(e, a);
    person_format_dump(&p, b);
    ck_assert_str_eq(a, b);
    entry_free(e);
}
END_TEST

/* The memory target (docs/PERFORMANCE.md): with malloc's 8-byte header,
 * ssn-bench's longest names (7 bytes each) fit a 64-byte chunk. */
START_TEST(test_entry_compact_layout)
{
    ck_assert_uint_le(offsetof(struct entry, names) + 2 * (7 + 1) + 8, 64);
    ck_assert_uint_le(sizeof(struct entry), 40);
}
END_TEST

static Suite *entry_new_suite(void)
{
    Suite *s = suite_create("entry_new");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");

    tcase_add_test(core, test_entry_new_fields);
    tcase_add_test(core, test_entry_ssn_unpack_every_digit);
    tcase_add_test(core, test_entry_new_takes_len_not_nul);
    tcase_add_test(limits, test_entry_new_one_byte_names);
    tcase_add_test(limits, test_entry_new_longest_names);
    tcase_add_test(limits, test_entry_new_utf8_names);
    tcase_add_test(limits, test_entry_ssn_round_trips);
    tcase_add_test(core, test_entry_from_person_matches_entry_new);
    tcase_add_test(core, test_entry_compact_layout);

    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

SUITE_REGISTER(entry_new_suite)
