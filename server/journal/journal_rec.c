/* journal_rec.c -- encoding, decoding and scanning the journal's records
 * (journal_rec.h). The recovery rules live in jrec_scan. Version 1: a bad
 * record is a torn tail when nothing but zeros follows it (the crash cut
 * the last write), and damage when anything else does. Version 2: a bad
 * record is damage when a record after it claims the bytes there had been
 * durable (jrec_witness), and otherwise the last, unsynced writes that a
 * crash left incomplete or out of order: cut.
 */
#include <errno.h>
#include <string.h>
#include "crc32c.h"
#include "journal_rec.h"

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

void jrec_header_write_version(void *buf, uint32_t version)
{
    unsigned char *p = buf;

    memcpy(p, JREC_MAGIC, 8);
    put32(p + 8, version);
    put32(p + 12, crc32c(p, 12));
}

void jrec_header_write(void *buf)
{
    jrec_header_write_version(buf, JREC_VERSION);
}

/* 1 when the len bytes at p (len <= JREC_HEADER_LEN) begin a header of
 * version v. */
static int header_prefix(const unsigned char *p, size_t len, uint32_t v)
{
    unsigned char h[JREC_HEADER_LEN];

    jrec_header_write_version(h, v);
    return memcmp(p, h, len) == 0;
}

static int all_zero(const unsigned char *p, size_t n)
{
    while (n--)
        if (*p++)
            return 0;
    return 1;
}

int jrec_header_check(const void *buf, size_t len)
{
    const unsigned char *p = buf;

    /* A header the crash cut (or whose bytes never reached the disk,
     * leaving zeros): the file was being created, no record was in it. */
    if (len < JREC_HEADER_LEN || (len == JREC_HEADER_LEN && all_zero(p, len)))
        return header_prefix(p, len, JREC_VERSION) ||
               header_prefix(p, len, JREC_VERSION_V1) ||
               all_zero(p, len) ? -ENODATA : -EPROTO;
    if (memcmp(p, JREC_MAGIC, 8) || get32(p + 12) != crc32c(p, 12))
        return -EPROTO;
    uint32_t v = get32(p + 8);
    return v == JREC_VERSION || v == JREC_VERSION_V1 ? (int)v : -ENOTSUP;
}

uint32_t jrec_back(uint64_t at, uint64_t durable)
{
    return durable <= at && at - durable <= JREC_BACK_MAX
           ? (uint32_t)(at - durable) : JREC_BACK_NONE;
}

/* The frame of the record at rec, whose payload of n bytes follows it. */
static void seal(unsigned char *rec, size_t n, uint32_t version,
                 uint32_t back)
{
    const unsigned char *pay = rec + JREC_FRAME_LEN;

    if (version == JREC_VERSION_V1) {
        put32(rec, (uint32_t)n);
        put32(rec + 4, crc32c(pay, n));
        return;
    }
    /* The CRC starts from the length word instead of 0: the word is
     * checked too (a change to it alone always changes the CRC), in the
     * one pass over the payload that version 1 made. A CRC of the word,
     * then the payload, cost 76 instructions more per record. */
    uint32_t word = (uint32_t)n | (back & JREC_BACK_NONE) << 8;
    put32(rec, word);
    put32(rec + 4, crc32c_update(word, pay, n));
}

static unsigned char *put_name(unsigned char *p, const char *name)
{
    size_t n = strnlen(name, ENTRY_NAME_MAX);

    *p++ = (unsigned char)n;
    memcpy(p, name, n);
    return p + n;
}

size_t jrec_encode(void *buf, uint32_t version, uint32_t back,
                   enum store_op op, const char *first, const char *last,
                   int age, const char *ssn)
{
    unsigned char *rec = buf, *pay = rec + JREC_FRAME_LEN, *p = pay;

    *p++ = op == STORE_ADD ? JREC_OP_ADD : JREC_OP_DELETE;
    p = put_name(p, first);
    p = put_name(p, last);
    if (op == STORE_ADD) {
        *p++ = (unsigned char)age;
        memcpy(p, ssn, ENTRY_SSN_LEN);
        p += ENTRY_SSN_LEN;
    }
    size_t n = (size_t)(p - pay);
    seal(rec, n, version, back);
    return JREC_FRAME_LEN + n;
}

size_t jrec_encode_mark(void *buf, uint32_t back)
{
    unsigned char *rec = buf;

    rec[JREC_FRAME_LEN] = JREC_OP_MARK;
    seal(rec, 1, JREC_VERSION, back);
    return JREC_MARK_LEN;
}

void jrec_reframe(void *rec, uint32_t back)
{
    unsigned char *r = rec;

    seal(r, get32(r) & 0xff, JREC_VERSION, back);
}

void jrec_reframe_all(void *buf, size_t len, uint64_t at, uint64_t durable)
{
    unsigned char *p = buf;

    /* The low byte of the length word is the payload's length in both
     * versions (version 1's upper bytes are zero). */
    for (size_t off = 0; off + JREC_FRAME_LEN <= len; ) {
        size_t n = JREC_FRAME_LEN + p[off];
        jrec_reframe(p + off, jrec_back(at + off, durable));
        off += n;
    }
}

size_t jrec_add_len(size_t first_len, size_t last_len)
{
    return JREC_FRAME_LEN + 1 + 1 + first_len + 1 + last_len + 1 +
           ENTRY_SSN_LEN;
}

/* One name out of the payload; NULL when it does not fit or is invalid. */
static const unsigned char *get_name(const unsigned char *p,
                                     const unsigned char *end, char *name)
{
    if (p >= end)
        return NULL;
    size_t n = *p++;
    if (n > (size_t)(end - p) || !entry_name_ok((const char *)p, n))
        return NULL;
    memcpy(name, p, n);
    name[n] = '\0';
    return p + n;
}

ssize_t jrec_decode(const void *buf, size_t avail, uint32_t version,
                    struct jrec *out, size_t *claimed)
{
    const unsigned char *rec = buf;

    *claimed = 0;
    if (avail < JREC_FRAME_LEN)
        return 0;
    uint32_t word = get32(rec);
    size_t n = version == JREC_VERSION_V1 ? word : (word & 0xff);
    if (n < 1 || n > JREC_PAYLOAD_MAX)
        return -EBADMSG;        /* no record has this length */
    *claimed = n;
    if (avail - JREC_FRAME_LEN < n)
        return 0;
    const unsigned char *p = rec + JREC_FRAME_LEN, *end = p + n;
    uint32_t crc = crc32c_update(version == JREC_VERSION_V1 ? 0 : word, p, n);
    if (get32(rec + 4) != crc)
        return -EBADMSG;
    out->back = version == JREC_VERSION_V1 ? JREC_BACK_NONE : word >> 8;
    out->kind = *p++;
    if (out->kind == JREC_OP_MARK && version != JREC_VERSION_V1)
        return p == end ? (ssize_t)(JREC_FRAME_LEN + n) : -EBADMSG;
    if (out->kind != JREC_OP_ADD && out->kind != JREC_OP_DELETE)
        return -EBADMSG;
    if (!(p = get_name(p, end, out->p.first)) ||
        !(p = get_name(p, end, out->p.last)))
        return -EBADMSG;
    if (out->kind == JREC_OP_ADD) {
        if (end - p != 1 + ENTRY_SSN_LEN || *p > ENTRY_AGE_MAX ||
            !entry_ssn_ok((const char *)p + 1, ENTRY_SSN_LEN))
            return -EBADMSG;
        out->p.age = *p;
        memcpy(out->p.ssn, p + 1, ENTRY_SSN_LEN);
        out->p.ssn[ENTRY_SSN_LEN] = '\0';
    } else if (p != end) {
        return -EBADMSG;
    }
    return (ssize_t)(JREC_FRAME_LEN + n);
}

/* jrec_decode of the record at offset off of an image of len bytes, and
 * for version 2 its claim held against where it lies: every file is
 * durable up to its header's end at least, so a claim that reaches back
 * into the header (or before the file) is a contradiction, a bad record. */
static ssize_t decode_at(const unsigned char *base, size_t len, size_t off,
                         uint32_t version, struct jrec *out, size_t *claimed)
{
    ssize_t n = jrec_decode(base + off, len - off, version, out, claimed);

    if (n > 0 && out->back != JREC_BACK_NONE &&
        out->back > off - JREC_HEADER_LEN)
        return -EBADMSG;
    return n;
}

size_t jrec_witness(const void *buf, size_t len, size_t bad, size_t *upto,
                    size_t *whole)
{
    const unsigned char *base = buf;
    struct jrec rec;
    size_t claimed, found = 0;

    *upto = 0;
    *whole = 0;
    for (size_t p = bad + 1; p + JREC_FRAME_LEN <= len; ) {
        ssize_t n = decode_at(base, len, p, JREC_VERSION, &rec, &claimed);
        if (n <= 0) {
            p++;
            continue;
        }
        /* A record found by chance in garbage would need its CRC-32C and
         * every field to check; and if one did, it would only make replay
         * refuse (the safe side), never cut what was durable. */
        (*whole)++;
        if (rec.back != JREC_BACK_NONE && p - rec.back > bad) {
            *upto = p - rec.back;
            found = p;
            break;
        }
        p += (size_t)n;
    }
    explicit_bzero(&rec, sizeof(rec));      /* an SSN */
    return found;
}

/* The offset after the last non-zero byte of base[from, len), or from. */
static size_t data_end(const unsigned char *base, size_t from, size_t len)
{
    while (len > from && base[len - 1] == 0)
        len--;
    return len;
}

/* Version 1's rule, as before version 2: a bad record at off (n from
 * jrec_decode, claimed its frame's length) is a torn tail when it is cut
 * (n == 0), or reaches exactly the end, or is followed by nothing but
 * zeros (the last write, cut by a crash inside the space reserved ahead);
 * otherwise damage. */
static enum jscan_status v1_rule(const unsigned char *base, size_t len,
                                 size_t off, ssize_t n, size_t claimed)
{
    size_t rest = len - off, frame_end = JREC_FRAME_LEN + claimed;

    if (n == 0 || (claimed && frame_end == rest) ||
        (claimed && frame_end < rest &&
         all_zero(base + off + frame_end, rest - frame_end)))
        return JSCAN_TORN;
    return JSCAN_DAMAGED;
}

/* Version 2's rule at the bad record at off: damage if a later record
 * shows off had been durable, else a torn tail, cut. */
static enum jscan_status v2_rule(const unsigned char *base, size_t len,
                                 size_t off, struct jscan *res)
{
    size_t upto, whole;

    res->witness = jrec_witness(base, len, off, &upto, &whole);
    if (res->witness) {
        res->witness_upto = upto;
        return JSCAN_DAMAGED;
    }
    res->tail_whole = whole;
    return JSCAN_TORN;
}

enum jscan_status jrec_scan(const void *buf, size_t len,
                            int (*cb)(enum store_op op, const struct person *p,
                                      void *arg),
                            void *arg, struct jscan *res)
{
    const unsigned char *base = buf;
    size_t off = JREC_HEADER_LEN;
    struct jrec rec;

    memset(res, 0, sizeof(*res));
    int v = jrec_header_check(buf, len);
    if (v < 0) {
        res->status = v == -ENOTSUP ? JSCAN_VERSION :
                      v == -ENODATA ? JSCAN_HEADER_CUT : JSCAN_FOREIGN;
        return res->status;
    }
    res->version = (uint32_t)v;
    res->status = JSCAN_CLEAN;
    res->good_end = res->attested = res->data_end = JREC_HEADER_LEN;
    while (off < len) {
        size_t claimed, rest = len - off;
        memset(&rec, 0, sizeof(rec));
        ssize_t n = decode_at(base, len, off, res->version, &rec, &claimed);
        if (n > 0) {
            if (rec.back != JREC_BACK_NONE && off - rec.back > res->attested)
                res->attested = off - rec.back;
            if (rec.kind != JREC_OP_MARK) {
                enum store_op op = rec.kind == JREC_OP_ADD ? STORE_ADD
                                                           : STORE_DELETE;
                int rc = cb(op, &rec.p, arg);
                if (rc) {
                    res->status = JSCAN_DAMAGED;
                    res->cb_error = rc;
                    res->bad_offset = off;
                    break;
                }
                res->records++;
                *(op == STORE_ADD ? &res->adds : &res->deletes) += 1;
                res->data_end = off + (size_t)n;
            }
            off += (size_t)n;
            res->good_end = off;
            continue;
        }
        res->bad_offset = off;
        /* Zeros from a record boundary to the end: the space the journal
         * reserves ahead (journal_reserve_chunk), never written. */
        if (all_zero(base + off, rest)) {
            res->status = JSCAN_TORN;
            res->zero_tail = 1;
            break;
        }
        res->status = res->version == JREC_VERSION_V1
                      ? v1_rule(base, len, off, n, claimed)
                      : v2_rule(base, len, off, res);
        if (res->status == JSCAN_TORN)
            res->tail_data = data_end(base, off, len) - off;
        break;
    }
    explicit_bzero(&rec, sizeof(rec));      /* the last record's SSN */
    return res->status;
}
