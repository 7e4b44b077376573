/* journal_rec.h -- the journal's on-disk format (docs/DURABILITY.md): a
 * file header, then self-checking records, all little-endian. Pure code:
 * bytes in, bytes out, no file and no lock, so every case of recovery is
 * testable on a buffer (tests/check_journal.c, check_journal_recovery.c).
 *
 *   header     "SSNJOURN" (8) | version u32 (4) | crc32c of the 12 before (4)
 *   record v2  word u32: payload length (bits 0-7), back (bits 8-31) |
 *              crc32c of the payload, started from word (not 0) u32 |
 *              payload
 *   record v1  length u32 | crc32c(payload) u32 | payload
 *   payload    op u8 (1 ADD, 2 DELETE, 3 MARK) | first-name length u8 |
 *              first | last-name length u8 | last | ADD only: age u8 |
 *              SSN (11). A MARK (version 2 only) is its op alone.
 *
 * "back" is the record's claim: a record written at file offset p says
 * that the file's bytes before p - back were durable (synced) when it was
 * appended. It costs no byte: v1 left the length word's upper 24 bits
 * zero, since no payload is longer than 141 bytes. It lets replay tell a
 * torn last round (damage no later record says was durable: cut it) from
 * damage to what was durable (refuse): jrec_scan, jrec_witness.
 */
#ifndef SSN_JOURNAL_REC_H
#define SSN_JOURNAL_REC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "entry.h"
#include "store.h"

#define JREC_MAGIC          "SSNJOURN"  /* the file's first 8 bytes */
#define JREC_VERSION        2           /* what this server writes */
#define JREC_VERSION_V1     1           /* still read, and appended to until
                                           a compaction rewrites it as 2 */
#define JREC_HEADER_LEN     16          /* magic, version, CRC */
#define JREC_FRAME_LEN      8           /* a record's length word and CRC */
#define JREC_PAYLOAD_MAX    (3 + 2 * ENTRY_NAME_MAX + 1 + ENTRY_SSN_LEN)
#define JREC_MAX            (JREC_FRAME_LEN + JREC_PAYLOAD_MAX)
#define JREC_MARK_LEN       (JREC_FRAME_LEN + 1)    /* a MARK record */
#define JREC_BACK_NONE      0xffffffu   /* back: the record claims nothing */
#define JREC_BACK_MAX       (JREC_BACK_NONE - 1)    /* the farthest claim */
#define JREC_ADD_TYPICAL    40          /* bytes: an ADD record with names
                                           of everyday length (36.8 on
                                           average for ssn-bench's); an
                                           estimate of the people in a
                                           journal is its size over this */
                                        /* the longest record: 149 bytes */
#define JREC_OP_ADD         1
#define JREC_OP_DELETE      2
#define JREC_OP_MARK        3           /* no mutation: a claim alone */

/* Writes the file header of this format (JREC_VERSION) into buf
 * (JREC_HEADER_LEN bytes); jrec_header_write_version for another one
 * (tests build version 1 files with it). */
void jrec_header_write(void *buf);
void jrec_header_write_version(void *buf, uint32_t version);

/* The version (1 or 2) of the header at buf; -EPROTO when it is not a
 * journal at all (the magic or CRC is wrong); -ENOTSUP for a journal of
 * another version; -ENODATA when len is at most a header's and the bytes
 * are the beginning of a header (of version 1 or 2), or zeros: a header
 * whose write a crash cut, in a file that cannot have held a record. */
int jrec_header_check(const void *buf, size_t len);

/* back for a record appended at offset at while the file was durable up
 * to offset durable (durable <= at): their distance, or JREC_BACK_NONE
 * when it does not fit (the record then claims nothing, which is true). */
uint32_t jrec_back(uint64_t at, uint64_t durable);

/* Encodes one mutation (for DELETE, age and ssn are ignored) into buf,
 * which has room for JREC_MAX bytes, as a record of version (1 or 2)
 * claiming back (ignored by version 1). Returns the record's length. */
size_t jrec_encode(void *buf, uint32_t version, uint32_t back,
                   enum store_op op, const char *first, const char *last,
                   int age, const char *ssn);

/* Encodes a MARK record (version 2) claiming back into buf
 * (JREC_MARK_LEN bytes). Returns JREC_MARK_LEN. */
size_t jrec_encode_mark(void *buf, uint32_t back);

/* Rewrites the frame of the whole record at rec (its payload unchanged)
 * as version 2 claiming back: a version 1 record, or one bound for
 * another file (a compaction's), becomes one of that file. */
void jrec_reframe(void *rec, uint32_t back);

/* jrec_reframe for each of the whole records in buf (len bytes, of
 * either version), which are to be written at file offset at of a version
 * 2 file durable up to offset durable: each claims that. */
void jrec_reframe_all(void *buf, size_t len, uint64_t at, uint64_t durable);

/* The length of the ADD record of names this long (either version). */
size_t jrec_add_len(size_t first_len, size_t last_len);

/* One record as jrec_decode reads it. */
struct jrec {
    int kind;                   /* JREC_OP_ADD, _DELETE, or _MARK (v2) */
    uint32_t back;              /* its claim; JREC_BACK_NONE in version 1 */
    struct person p;            /* ADD, DELETE: the names; ADD: the age and
                                   SSN, each checked as a request's are (so
                                   entry_from_person may build the entry) */
};

/* Decodes the record of version at the start of buf (avail bytes there)
 * into *out. Returns its whole length; 0 when avail is too short to hold
 * it (its frame or its payload is cut); -EBADMSG when the frame is whole
 * but the length, CRC or contents are wrong, with *claimed the payload
 * length its frame claims (0 if the length itself is impossible). */
ssize_t jrec_decode(const void *buf, size_t avail, uint32_t version,
                    struct jrec *out, size_t *claimed);

/* Looks, in a version 2 image of len bytes whose first bad record starts
 * at bad, for a record after it that shows the bytes at bad had been
 * durable: one that decodes whole and checked at some offset p > bad (each
 * offset is tried, as the damage may hide where records begin; a record
 * found is stepped over whole) and whose claim covers bad (p - back >
 * bad). Such a record was appended after bad was synced, so the damage is
 * not a crash's cut of an unsynced write. Returns p, with the offset its
 * claim reaches in *upto; 0 when no record does. *whole counts the whole
 * records it met on the way (any claim). */
size_t jrec_witness(const void *buf, size_t len, size_t bad, size_t *upto,
                    size_t *whole);

/* What a scan of a whole journal image found. */
enum jscan_status {
    JSCAN_CLEAN,        /* every byte is a whole, good record */
    JSCAN_TORN,         /* v1: a partial or bad LAST record (followed by
                           nothing or by zeros only); v2: a bad record no
                           later record says was durable (jrec_witness);
                           either: zeros to the end. Cut at good_end */
    JSCAN_DAMAGED,      /* v1: a bad record with more after it; v2: a bad
                           record a later one says was durable (witness);
                           either: a record the callback refused. The
                           journal cannot be trusted past bad_offset */
    JSCAN_FOREIGN,      /* not a journal: refuse, never overwrite */
    JSCAN_VERSION,      /* a journal of another version */
    JSCAN_HEADER_CUT,   /* shorter than a header, and its beginning (or
                           zeros): no record was ever in it; start empty */
};

struct jscan {
    enum jscan_status status;
    uint32_t version;   /* the header's, when it was whole and known */
    size_t good_end;    /* the offset after the last good record */
    size_t bad_offset;  /* TORN, DAMAGED: where the bad record starts */
    size_t records;     /* good ADD and DELETE records passed to the
                           callback (MARKs are not) */
    size_t adds, deletes;
    int cb_error;       /* the callback's -errno when it refused one */
    int zero_tail;      /* TORN only by zeros from good_end to the end:
                           space reserved ahead, nothing lost */
    size_t tail_data;   /* TORN: the bytes from bad_offset to the last
                           non-zero one (what the cut drops but zeros) */
    size_t tail_whole;  /* TORN, v2: whole records found in that tail */
    size_t witness;     /* DAMAGED, v2: the record that shows bad_offset
                           was durable (jrec_witness), 0 if none */
    size_t witness_upto;    /* the offset its claim reaches */
    size_t attested;    /* v2: the farthest offset a good record claims
                           durable (JREC_HEADER_LEN at least) */
    size_t data_end;    /* the end of the last good ADD or DELETE
                           (JREC_HEADER_LEN if none) */
};

/* Scans a journal image of len bytes: checks the header, then calls
 * cb(op, p, arg) for each good ADD or DELETE record (p is the scan's own,
 * on its stack: copy what outlives the call) in order until the first
 * bad one, where the recovery rule of the file's version decides between
 * TORN and DAMAGED. A callback returning non-zero stops the scan as
 * DAMAGED at that record: a whole, checked record that contradicts the
 * ones before is not what a crash leaves. Returns res->status. */
enum jscan_status jrec_scan(const void *buf, size_t len,
                            int (*cb)(enum store_op op, const struct person *p,
                                      void *arg),
                            void *arg, struct jscan *res);

#endif
