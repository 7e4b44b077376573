/* journal_rec.c -- encoding, decoding and scanning the journal's records
 * (journal_rec.h). The recovery rules live in jrec_scan: a bad record is
 * a torn tail when nothing follows it (the crash cut the last write), and
 * damage when whole records follow it (something else broke the file). */
#include <errno.h>
#include <string.h>
#include <openssl/crypto.h>
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

void jrec_header_write(void *buf)
{
    unsigned char *p = buf;

    memcpy(p, JREC_MAGIC, 8);
    put32(p + 8, JREC_VERSION);
    put32(p + 12, crc32c(p, 12));
}

int jrec_header_check(const void *buf, size_t len)
{
    const unsigned char *p = buf;

    if (len < JREC_HEADER_LEN || memcmp(p, JREC_MAGIC, 8) ||
        get32(p + 12) != crc32c(p, 12))
        return -EPROTO;
    return get32(p + 8) == JREC_VERSION ? 0 : -ENOTSUP;
}

static unsigned char *put_name(unsigned char *p, const char *name)
{
    size_t n = strnlen(name, ENTRY_NAME_MAX);

    *p++ = (unsigned char)n;
    memcpy(p, name, n);
    return p + n;
}

size_t jrec_encode(void *buf, enum store_op op, const char *first,
                   const char *last, int age, const char *ssn)
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
    put32(rec, (uint32_t)n);
    put32(rec + 4, crc32c(pay, n));
    return JREC_FRAME_LEN + n;
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

ssize_t jrec_decode(const void *buf, size_t avail, enum store_op *op,
                    struct person *out, size_t *claimed)
{
    const unsigned char *rec = buf;

    *claimed = 0;
    if (avail < JREC_FRAME_LEN)
        return 0;
    size_t n = get32(rec);
    if (n < 1 || n > JREC_PAYLOAD_MAX)
        return -EBADMSG;        /* no record has this length */
    *claimed = n;
    if (avail - JREC_FRAME_LEN < n)
        return 0;
    const unsigned char *p = rec + JREC_FRAME_LEN, *end = p + n;
    if (get32(rec + 4) != crc32c(p, n))
        return -EBADMSG;
    int code = *p++;
    if (code != JREC_OP_ADD && code != JREC_OP_DELETE)
        return -EBADMSG;
    if (!(p = get_name(p, end, out->first)) ||
        !(p = get_name(p, end, out->last)))
        return -EBADMSG;
    *op = code == JREC_OP_ADD ? STORE_ADD : STORE_DELETE;
    if (*op == STORE_ADD) {
        if (end - p != 1 + ENTRY_SSN_LEN || *p > ENTRY_AGE_MAX ||
            !entry_ssn_ok((const char *)p + 1, ENTRY_SSN_LEN))
            return -EBADMSG;
        out->age = *p;
        memcpy(out->ssn, p + 1, ENTRY_SSN_LEN);
        out->ssn[ENTRY_SSN_LEN] = '\0';
    } else if (p != end) {
        return -EBADMSG;
    }
    return (ssize_t)(JREC_FRAME_LEN + n);
}

static int all_zero(const unsigned char *p, size_t n)
{
    while (n--)
        if (*p++)
            return 0;
    return 1;
}

enum jscan_status jrec_scan(const void *buf, size_t len,
                            int (*cb)(enum store_op op, const struct person *p,
                                      void *arg),
                            void *arg, struct jscan *res)
{
    const unsigned char *base = buf;
    size_t off = JREC_HEADER_LEN;
    struct person rec;

    memset(res, 0, sizeof(*res));
    int hrc = jrec_header_check(buf, len);
    if (hrc) {
        res->status = hrc == -ENOTSUP ? JSCAN_VERSION : JSCAN_FOREIGN;
        return res->status;
    }
    res->status = JSCAN_CLEAN;
    res->good_end = JREC_HEADER_LEN;
    while (off < len) {
        enum store_op op = STORE_ADD;
        size_t claimed, rest = len - off;
        memset(&rec, 0, sizeof(rec));
        ssize_t n = jrec_decode(base + off, rest, &op, &rec, &claimed);
        if (n > 0) {
            int rc = cb(op, &rec, arg);
            if (rc) {
                res->status = JSCAN_DAMAGED;
                res->cb_error = rc;
                res->bad_offset = off;
                break;
            }
            res->records++;
            *(op == STORE_ADD ? &res->adds : &res->deletes) += 1;
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
        /* Cut (n == 0), bad and reaching exactly the end, or bad and
         * followed by nothing but zeros (the last write, cut by a crash,
         * inside that reserved space): all the marks of a last write a
         * crash interrupted. */
        size_t frame_end = JREC_FRAME_LEN + claimed;
        if (n == 0 || (claimed && frame_end == rest) ||
            (claimed && frame_end < rest &&
             all_zero(base + off + frame_end, rest - frame_end)))
            res->status = JSCAN_TORN;
        else
            res->status = JSCAN_DAMAGED;
        break;
    }
    OPENSSL_cleanse(&rec, sizeof(rec));     /* the last record's SSN */
    return res->status;
}
