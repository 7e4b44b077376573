/* check_crc32c.c -- CRC-32C (common/crc32c.c) against published vectors:
 * the standard check value, and the iSCSI test patterns of RFC 3720,
 * appendix B.4. */
#include <string.h>
#include "suites.h"
#include "crc32c.h"

START_TEST(test_crc32c_check_value)
{
    ck_assert_uint_eq(crc32c("123456789", 9), 0xE3069283u);
    ck_assert_uint_eq(crc32c("", 0), 0);
    ck_assert_uint_eq(crc32c("a", 1), 0xC1D04330u);
}
END_TEST

START_TEST(test_crc32c_rfc3720)
{
    unsigned char buf[32];

    memset(buf, 0, sizeof(buf));
    ck_assert_uint_eq(crc32c(buf, 32), 0x8A9136AAu);
    memset(buf, 0xff, sizeof(buf));
    ck_assert_uint_eq(crc32c(buf, 32), 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        buf[i] = (unsigned char)i;
    ck_assert_uint_eq(crc32c(buf, 32), 0x46DD794Eu);
    for (int i = 0; i < 32; i++)
        buf[i] = (unsigned char)(31 - i);
    ck_assert_uint_eq(crc32c(buf, 32), 0x113FDB5Cu);
}
END_TEST

START_TEST(test_crc32c_update_splits)
{
    const char *s = "123456789";
    for (size_t cut = 0; cut <= 9; cut++)
        ck_assert_uint_eq(crc32c_update(crc32c(s, cut), s + cut, 9 - cut),
                          0xE3069283u);
}
END_TEST

/* The instruction's path (when the CPU has it) and the table's agree on
 * every length 0..300 and every starting offset 0..7, over bytes that
 * are not a pattern either path could get right by accident. */
START_TEST(test_crc32c_paths_agree)
{
    unsigned char buf[320];
    uint32_t x = 0x12345678u;

    for (size_t i = 0; i < sizeof(buf); i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (unsigned char)(x >> 16);
    }
    ck_assert_uint_eq(crc32c_update_table(0, "123456789", 9), 0xE3069283u);
    for (size_t off = 0; off < 8; off++)
        for (size_t len = 0; len <= 300; len++)
            ck_assert_uint_eq(crc32c_update(7, buf + off, len),
                              crc32c_update_table(7, buf + off, len));
}
END_TEST

static Suite *crc32c_suite(void)
{
    Suite *s = suite_create("crc32c");
    TCase *core = tcase_create("core");

    tcase_add_test(core, test_crc32c_check_value);
    tcase_add_test(core, test_crc32c_rfc3720);
    tcase_add_test(core, test_crc32c_update_splits);
    tcase_add_test(core, test_crc32c_paths_agree);
    suite_add_tcase(s, core);
    return s;
}
SUITE_REGISTER(crc32c_suite)
