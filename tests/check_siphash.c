/* check_siphash.c -- SipHash (common/siphash.c): SipHash-2-4 against the
 * paper's reference vectors (key 00 01 .. 0f, message 00 01 .. n-1);
 * SipHash-1-3 against CPython's bytes hash, which is SipHash-1-3 with an
 * all-zero key when PYTHONHASHSEED=0 (printed by
 * `PYTHONHASHSEED=0 python3 -c 'print(hex(hash(b"a") & (2**64-1)))'`,
 * Python 3.11); and random keys that differ. */
#include <string.h>
#include "suites.h"
#include "siphash.h"

/* The reference implementation's first 16 (vectors_sip64). */
static const uint64_t sip24[16] = {
    UINT64_C(0x726fdb47dd0e0e31), UINT64_C(0x74f839c593dc67fd),
    UINT64_C(0x0d6c8009d9a94f5a), UINT64_C(0x85676696d7fb7e2d),
    UINT64_C(0xcf2794e0277187b7), UINT64_C(0x18765564cd99a68d),
    UINT64_C(0xcbc9466e58fee3ce), UINT64_C(0xab0200f58b01d137),
    UINT64_C(0x93f5f5799a932462), UINT64_C(0x9e0082df0ba9e4b0),
    UINT64_C(0x7a5dbbc594ddb9f3), UINT64_C(0xf4b32f46226bada7),
    UINT64_C(0x751e8fbc860ee5fb), UINT64_C(0x14ea5627c0843d90),
    UINT64_C(0xf723ca908e7af2ee), UINT64_C(0xa129ca6149be45e5),
};

/* CPython's hash of bytes(range(n)), n = 1..20, PYTHONHASHSEED=0. */
static const uint64_t sip13[20] = {
    UINT64_C(0x68a914128e01e473), UINT64_C(0x010bac45c41e3669),
    UINT64_C(0x4d4c9a4a8ef6e0ad), UINT64_C(0x7cc43f98813e4dbd),
    UINT64_C(0x5abe2169dff36275), UINT64_C(0xe3c25f87624f1cdb),
    UINT64_C(0x2f098ab0c751325a), UINT64_C(0xead411e67ebe2eea),
    UINT64_C(0x75927f9d95124362), UINT64_C(0xaf9f77a65ab51a1d),
    UINT64_C(0xfe64ce8b6617fcff), UINT64_C(0xa6baf4fb0f9fe1c2),
    UINT64_C(0xa0cf3211850f8e0d), UINT64_C(0x7f86049379fbfe67),
    UINT64_C(0xf30eb725bb91c9ea), UINT64_C(0x8972188433a5c5b7),
    UINT64_C(0x4883c49a2c009c1d), UINT64_C(0xadc2c0b63044067d),
    UINT64_C(0x091f4a3329f87d19), UINT64_C(0x639e355ae68c0100),
};

/* siphash(k, m, n, c, d) is want[n - first] for each n from first to
 * last, m the message 00 01 .. n-1 at each of 8 alignments, so that the
 * word loads and the tail's are tried off every boundary; siphash13 too
 * when c, d is 1, 3. */
static void expect_vectors(const struct siphash_key *k, int c, int d,
                           const uint64_t *want, size_t first, size_t last)
{
    unsigned char buf[32];

    for (size_t off = 0; off < 8; off++) {
        for (size_t i = 0; i < last; i++)
            buf[off + i] = (unsigned char)i;
        for (size_t n = first; n <= last; n++) {
            ck_assert_uint_eq(siphash(k, buf + off, n, c, d),
                              want[n - first]);
            if (c == 1 && d == 3)
                ck_assert_uint_eq(siphash13(k, buf + off, n),
                                  want[n - first]);
        }
    }
}

START_TEST(test_siphash24_reference_vectors)
{
    struct siphash_key k = {
        .k0 = UINT64_C(0x0706050403020100),
        .k1 = UINT64_C(0x0f0e0d0c0b0a0908),
    };

    expect_vectors(&k, 2, 4, sip24, 0, 15);
}
END_TEST

START_TEST(test_siphash13_as_cpython)
{
    struct siphash_key zero = { 0, 0 };

    expect_vectors(&zero, 1, 3, sip13, 1, 20);
    ck_assert_uint_eq(siphash13(&zero, "a", 1), UINT64_C(0x407448d2b89b1813));
    ck_assert_uint_eq(siphash13(&zero, "Smith\0John", 10),
                      UINT64_C(0x46d64a3746211c5d));
}
END_TEST

/* Two keys drawn one after the other differ, and so do the hashes they
 * give one input: the key is used, not only drawn. */
START_TEST(test_siphash_random_keys_differ)
{
    struct siphash_key a, b;

    ck_assert_int_eq(siphash_key_random(&a), 0);
    ck_assert_int_eq(siphash_key_random(&b), 0);
    ck_assert(a.k0 != b.k0 || a.k1 != b.k1);
    ck_assert_uint_ne(siphash13(&a, "Smith\0John", 10),
                      siphash13(&b, "Smith\0John", 10));
}
END_TEST

static Suite *siphash_suite(void)
{
    Suite *s = suite_create("siphash");
    TCase *tc = tcase_create("siphash");

    tcase_add_test(tc, test_siphash24_reference_vectors);
    tcase_add_test(tc, test_siphash13_as_cpython);
    tcase_add_test(tc, test_siphash_random_keys_differ);
    suite_add_tcase(s, tc);
    return s;
}

SUITE_REGISTER(siphash_suite)
