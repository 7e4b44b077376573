/* journal_rec.h -- the journal's on-disk format (docs/DURABILITY.md): a
 * file header, then self-checking records, all little-endian. Pure code:
 * bytes in, bytes out, no file and no lock, so every case of recovery is
 * testable on a buffer (tests/check_journal.c).
 *
 *   header   "SSNJOURN" (8) | version u32 (4) | crc32c of the 12 before (4)
 *   record   length u32 | crc32c(payload) u32 | payload (length bytes)
 *   payload  op u8 (1 ADD, 2 DELETE) | first-name length u8 | first |
 *            last-name length u8 | last | ADD only: age u8 | SSN (11)
 */
#ifndef SSN_JOURNAL_REC_H
#define SSN_JOURNAL_REC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "entry.h"
#include "store.h"

#define JREC_MAGIC          "SSNJOURN"  /* the file's first 8 bytes */
#define JREC_VERSION        1           /* this format */
#define JREC_HEADER_LEN     16          /* magic, version, CRC */
#define JREC_FRAME_LEN      8           /* a record's length and CRC */
#define JREC_PAYLOAD_MAX    (3 + 2 * ENTRY_NAME_MAX + 1 + ENTRY_SSN_LEN)
#define JREC_MAX            (JREC_FRAME_LEN + JREC_PAYLOAD_MAX)
#define JREC_ADD_TYPICAL    40          /* bytes: an ADD record with names
                                           of everyday length (36.8 on
                                           average for ssn-bench's); an
                                           estimate of the people in a
                                           journal is its size over this */
                                        /* the longest record: 149 bytes */
#define JREC_OP_ADD         1
#define JREC_OP_DELETE      2

/* Writes the file header into buf (JREC_HEADER_LEN bytes). */
void jrec_header_write(void *buf);

/* 0 when buf holds a header of this version; -EPROTO when it is not a
 * journal at all (short, or the magic or CRC is wrong); -ENOTSUP for a
 * journal of another version. */
int jrec_header_check(const void *buf, size_t len);

/* Encodes one mutation (for DELETE, age and ssn are ignored) into buf,
 * which has room for JREC_MAX bytes. Returns the record's length. */
size_t jrec_encode(void *buf, enum store_op op, const char *first,
                   const char *last, int age, const char *ssn);

/* The length of the ADD record of names this long. */
size_t jrec_add_len(size_t first_len, size_t last_len);

/* Decodes the record at the start of buf (avail bytes there) into *op and
 * the plain form out: its names, and for an ADD its age and SSN, each
 * checked as a request's are (so entry_from_person may build the entry).
 * Returns its whole length; 0 when avail is too short to hold it (its
 * frame or its payload is cut); -EBADMSG when the frame is whole but the
 * CRC or the contents are wrong, with *claimed the length its frame claims
 * (0 if the length field itself is impossible). */
ssize_t jrec_decode(const void *buf, size_t avail, enum store_op *op,
                    struct person *out, size_t *claimed);

/* What a scan of a whole journal image found. */
enum jscan_status {
    JSCAN_CLEAN,        /* every byte is a whole, good record */
    JSCAN_TORN,         /* a partial or bad LAST record (followed by
                           nothing or by zeros only), or zeros to the
                           end: cut at good_end */
    JSCAN_DAMAGED,      /* a bad record with more after it, or one the
                           callback refused: the journal cannot be
                           trusted past bad_offset */
    JSCAN_FOREIGN,      /* not a journal: refuse, never overwrite */
    JSCAN_VERSION,      /* a journal of another version */
};

struct jscan {
    enum jscan_status status;
    size_t good_end;    /* the offset after the last good record */
    size_t bad_offset;  /* TORN, DAMAGED: where the bad record starts */
    size_t records;     /* good records passed to the callback */
    size_t adds, deletes;
    int cb_error;       /* the callback's -errno when it refused one */
    int zero_tail;      /* TORN only by zeros from good_end to the end:
                           space reserved ahead, nothing lost */
};

/* Scans a journal image of len bytes: checks the header, then calls
 * cb(op, p, arg) for each good record (p is the scan's own, on its
 * stack: copy what outlives the call) in order until the first bad one. A
 * callback returning non-zero stops the scan as DAMAGED at that record.
 * Returns res->status. */
enum jscan_status jrec_scan(const void *buf, size_t len,
                            int (*cb)(enum store_op op, const struct person *p,
                                      void *arg),
                            void *arg, struct jscan *res);

#endif
