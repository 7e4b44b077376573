/* crc32c.h -- CRC-32C (Castagnoli, the polynomial iSCSI, ext4 and SQLite's
 * WAL-like formats use): the SSE4.2 instruction where the CPU has it, else a
 * table, one byte at a time. Knows nothing of files: the journal
 * (server/journal/journal.c) checks its records with it.
 *
 * crc32c("123456789", 9) == 0xE3069283 (the standard check value).
 */
#ifndef SSN_CRC32C_H
#define SSN_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The CRC-32C of len bytes at data. */
uint32_t crc32c(const void *data, size_t len);

/* Continues a CRC over more bytes: crc32c_update(crc32c(a), b) is the CRC
 * of a followed by b. Start from 0 for an empty prefix. */
uint32_t crc32c_update(uint32_t crc, const void *data, size_t len);

/* crc32c_update by the table alone, whatever the CPU (for the tests that
 * hold the two paths to the same answers). */
uint32_t crc32c_update_table(uint32_t crc, const void *data, size_t len);

#endif
