/* crc32c.c -- CRC-32C (crc32c.h): the SSE4.2 crc32 instruction, 8 bytes a
 * step, where the CPU has it (every x86-64 since 2008), else a 256-entry
 * table, one byte a step. Replay checks every record's CRC, so at 10^6
 * records the instruction matters (docs/DURABILITY.md). The choice and the
 * table are made once, on first use, under pthread_once; both paths give
 * the same value (tests/check_crc32c.c checks each against the vectors).
 */
#include <pthread.h>
#include <string.h>
#include "crc32c.h"

#define CRC32C_POLY 0x82F63B78u /* 0x1EDC6F41, bit-reversed */

static uint32_t table[256];
static int use_hw;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        table[i] = c;
    }
#if defined(__x86_64__)
    use_hw = __builtin_cpu_supports("sse4.2");
#endif
}

/* Both loops work on the inverted CRC. */
static uint32_t crc32c_sw(uint32_t crc, const unsigned char *p, size_t len)
{
    while (len--)
        crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

uint32_t crc32c_update_table(uint32_t crc, const void *data, size_t len)
{
    pthread_once(&init_once, crc_init);
    return ~crc32c_sw(~crc, data, len);
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const unsigned char *p, size_t len)
{
    uint64_t c = crc;

    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);               /* unaligned, little-endian */
        c = __builtin_ia32_crc32di(c, w);
    }
    crc = (uint32_t)c;
    while (len--)
        crc = __builtin_ia32_crc32qi(crc, *p++);
    return crc;
}
#endif

uint32_t crc32c_update(uint32_t crc, const void *data, size_t len)
{
    pthread_once(&init_once, crc_init);
#if defined(__x86_64__)
    if (use_hw)
        return ~crc32c_hw(~crc, data, len);
#endif
    return ~crc32c_sw(~crc, data, len);
}

uint32_t crc32c(const void *data, size_t len)
{
    return crc32c_update(0, data, len);
}
