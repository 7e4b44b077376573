/* check_digest.c -- unit tests for common/digest.c: SHA-256 known answers
 * (FIPS 180-2 test vectors), incremental hashing equal to one-shot, and a
 * reused per-thread context giving the same answer every time. */
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "digest.h"

#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHA_ABC   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define MSG_448   "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
#define SHA_448   "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
#define SHA_MILLION_A \
                  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"

static struct digest *d;

static void setup(void)
{
    ck_assert_int_eq(digest_global_init(), 0);
    d = digest_new();
    ck_assert_ptr_nonnull(d);
}

static void teardown(void)
{
    digest_free(d);
    digest_global_cleanup();
}

/* One-shot hex of a NUL-terminated string. */
static const char *hex_of(const char *s)
{
    static char hex[DIGEST_HEX_LEN + 1];

    memset(hex, 'X', sizeof(hex));
    ck_assert_int_eq(digest_hex(d, s, strlen(s), hex), 0);
    return hex;
}

START_TEST(test_digest_empty)
{
    const char *hex = hex_of("");

    ck_assert_str_eq(hex, SHA_EMPTY);
    ck_assert_uint_eq(strlen(hex), DIGEST_HEX_LEN);
}
END_TEST

START_TEST(test_digest_abc)
{
    ck_assert_str_eq(hex_of("abc"), SHA_ABC);
}
END_TEST

START_TEST(test_digest_two_blocks)
{
    ck_assert_str_eq(hex_of(MSG_448), SHA_448);
}
END_TEST

START_TEST(test_digest_empty_begin_end)
{
    char hex[DIGEST_HEX_LEN + 1];

    ck_assert_int_eq(digest_begin(d), 0);
    ck_assert_int_eq(digest_end(d, hex), 0);
    ck_assert_str_eq(hex, SHA_EMPTY);
}
END_TEST

START_TEST(test_digest_incremental_equals_one_shot)
{
    const char *msg = MSG_448;
    size_t len = strlen(msg);
    char hex[DIGEST_HEX_LEN + 1];

    /* A byte at a time. */
    ck_assert_int_eq(digest_begin(d), 0);
    for (size_t i = 0; i < len; i++)
        ck_assert_int_eq(digest_update(d, msg + i, 1), 0);
    ck_assert_int_eq(digest_end(d, hex), 0);
    ck_assert_str_eq(hex, SHA_448);

    /* Uneven pieces, with empty updates between them. */
    ck_assert_int_eq(digest_begin(d), 0);
    ck_assert_int_eq(digest_update(d, msg, 0), 0);
    ck_assert_int_eq(digest_update(d, msg, 7), 0);
    ck_assert_int_eq(digest_update(d, msg + 7, 0), 0);
    ck_assert_int_eq(digest_update(d, msg + 7, 40), 0);
    ck_assert_int_eq(digest_update(d, msg + 47, len - 47), 0);
    ck_assert_int_eq(digest_end(d, hex), 0);
    ck_assert_str_eq(hex, SHA_448);
}
END_TEST

START_TEST(test_digest_million_a_in_chunks)
{
    enum { CHUNK = 1000 };
    char buf[CHUNK], hex[DIGEST_HEX_LEN + 1];

    memset(buf, 'a', sizeof(buf));
    ck_assert_int_eq(digest_begin(d), 0);
    for (int i = 0; i < 1000; i++)
        ck_assert_int_eq(digest_update(d, buf, CHUNK), 0);
    ck_assert_int_eq(digest_end(d, hex), 0);
    ck_assert_str_eq(hex, SHA_MILLION_A);
}
END_TEST

START_TEST(test_digest_context_reuse)
{
    char hex[DIGEST_HEX_LEN + 1];

    /* The same context, again and again, interleaving messages: nothing of
     * one hash may leak into the next. */
    for (int i = 0; i < 3; i++) {
        ck_assert_str_eq(hex_of("abc"), SHA_ABC);
        ck_assert_str_eq(hex_of(""), SHA_EMPTY);
        ck_assert_int_eq(digest_begin(d), 0);
        ck_assert_int_eq(digest_update(d, "ab", 2), 0);
        ck_assert_int_eq(digest_update(d, "c", 1), 0);
        ck_assert_int_eq(digest_end(d, hex), 0);
        ck_assert_str_eq(hex, SHA_ABC);
    }
}
END_TEST

START_TEST(test_digest_begin_restarts)
{
    char hex[DIGEST_HEX_LEN + 1];

    /* A hash abandoned half-way is forgotten by the next begin. */
    ck_assert_int_eq(digest_begin(d), 0);
    ck_assert_int_eq(digest_update(d, "garbage", 7), 0);
    ck_assert_int_eq(digest_begin(d), 0);
    ck_assert_int_eq(digest_update(d, "abc", 3), 0);
    ck_assert_int_eq(digest_end(d, hex), 0);
    ck_assert_str_eq(hex, SHA_ABC);
}
END_TEST

START_TEST(test_digest_two_contexts_independent)
{
    struct digest *d2 = digest_new();
    char h1[DIGEST_HEX_LEN + 1], h2[DIGEST_HEX_LEN + 1];

    ck_assert_ptr_nonnull(d2);
    ck_assert_int_eq(digest_begin(d), 0);
    ck_assert_int_eq(digest_begin(d2), 0);
    ck_assert_int_eq(digest_update(d, "a", 1), 0);
    ck_assert_int_eq(digest_update(d2, MSG_448, strlen(MSG_448)), 0);
    ck_assert_int_eq(digest_update(d, "bc", 2), 0);
    ck_assert_int_eq(digest_end(d2, h2), 0);
    ck_assert_int_eq(digest_end(d, h1), 0);
    ck_assert_str_eq(h1, SHA_ABC);
    ck_assert_str_eq(h2, SHA_448);
    digest_free(d2);
}
END_TEST

START_TEST(test_digest_hex_lowercase_terminated)
{
    char hex[DIGEST_HEX_LEN + 2];

    memset(hex, 'X', sizeof(hex));
    ck_assert_int_eq(digest_hex(d, "abc", 3, hex), 0);
    ck_assert_int_eq(hex[DIGEST_HEX_LEN], '\0');
    ck_assert_int_eq(hex[DIGEST_HEX_LEN + 1], 'X');    /* no overrun */
    ck_assert_uint_eq(strspn(hex, "0123456789abcdef"), DIGEST_HEX_LEN);
}
END_TEST

START_TEST(test_digest_global_init_twice)
{
    ck_assert_int_eq(digest_global_init(), 0);      /* already done: no-op */
    ck_assert_str_eq(hex_of("abc"), SHA_ABC);
}
END_TEST

START_TEST(test_digest_free_null)
{
    digest_free(NULL);                              /* must not crash */
}
END_TEST

static Suite *digest_suite(void)
{
    Suite *s = suite_create("digest");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");

    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_checked_fixture(limits, setup, teardown);

    tcase_add_test(core, test_digest_empty);
    tcase_add_test(core, test_digest_abc);
    tcase_add_test(core, test_digest_two_blocks);
    tcase_add_test(core, test_digest_empty_begin_end);
    tcase_add_test(core, test_digest_incremental_equals_one_shot);
    tcase_add_test(core, test_digest_context_reuse);
    tcase_add_test(core, test_digest_begin_restarts);
    tcase_add_test(core, test_digest_two_contexts_independent);
    tcase_add_test(core, test_digest_hex_lowercase_terminated);
    tcase_add_test(core, test_digest_global_init_twice);
    tcase_add_test(core, test_digest_free_null);

    tcase_add_test(limits, test_digest_million_a_in_chunks);

    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

SUITE_REGISTER(digest_suite)
