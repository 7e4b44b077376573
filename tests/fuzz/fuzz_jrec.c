/* fuzz_jrec.c -- the journal's on-disk format reader
 * (server/journal/journal_rec.c: jrec_header_check, jrec_decode,
 * jrec_witness, jrec_scan) on any bytes, as journal_open finds them in a
 * file at start-up: no bytes there may crash the server, and recovery's
 * decisions must hang together.
 *
 * The input is two control bytes, then the journal image (a missing
 * control byte reads as 0):
 *   byte 0, bits 0-1  the header: 0 none (the rest is the whole image, its
 *                     own header included), 1 a valid version 1 header
 *                     before the rest, 2 or 3 a valid version 2 header
 *   byte 0, bits 2-7  k: 0 none, else a second scan's callback refuses
 *                     the k-th record it is given (1..63)
 *   byte 1            records whose CRC is re-sealed, so the fuzzer gets
 *                     past the checksums to the fields: bit i (0-6) for
 *                     the record frame i (from 0) after the header, bit 7
 *                     for frames 7 and on. Frames are found by the length
 *                     in their word, from the header's end, while a whole
 *                     frame and payload of a possible length (1..141) is
 *                     there; only when the image's header (its own or the
 *                     one put in front) is of version 1 or 2. Also: how
 *                     many zeros (1 + byte % 64) go after a CLEAN image.
 * The image is copied into a buffer of its exact size (ASan sees a read
 * one byte past it); so is every image cut or extended below.
 *
 * The oracle (journal_rec.h's contract, DURABILITY.md's recovery table):
 *   - the status is a jscan_status, and the header's one: FOREIGN, VERSION
 *     and HEADER_CUT exactly when jrec_header_check says -EPROTO, -ENOTSUP
 *     and -ENODATA (at most 16 bytes then), with no record and no call;
 *     else the version it returns; a valid header put in front always
 *     gives a record status;
 *   - good_end <= len; records == adds + deletes == the callback's calls
 *     (one more when it refused one); every person given to it is valid as
 *     a request's (names pass entry_name_ok, ADD's age is 0..150 and its
 *     SSN passes entry_ssn_ok), and entry_from_person builds it;
 *   - jrec_decode, walked from the header on, returns a record as long as
 *     its frame says (9..149 bytes), 0 only when the bytes are too few for
 *     the frame or the payload it claims, or -EBADMSG with a whole frame
 *     and *claimed its length (0 if impossible); every record it accepts
 *     re-encodes with jrec_encode (jrec_encode_mark for a MARK, version 2
 *     only), same version and claim, to exactly its bytes: no field goes
 *     unchecked;
 *   - the scan's records are those of that walk, end to end: good_end is
 *     where one of them ends, the calls are the ADDs and DELETEs before it
 *     in order, data_end the end of the last of those, and (version 2)
 *     attested the farthest claim among them, JREC_HEADER_LEN at least
 *     (with a refusal, only between that and good_end); no record it
 *     passes claims into the header; the only record jrec_decode reads
 *     and the scan stops at is one whose claim does (DURABILITY.md), or
 *     one the callback refused;
 *   - CLEAN: good_end == len. TORN, DAMAGED: bad_offset == good_end < len
 *     (the bad record starts where the good ones end);
 *   - zeros from good_end to the end are TORN with zero_tail, and
 *     zero_tail means exactly that; TORN's tail_data is the bytes from
 *     bad_offset to the last non-zero one;
 *   - version 1: a bad record cut short (jrec_decode 0) is TORN; one with
 *     a whole frame of a possible length is TORN exactly when only zeros
 *     follow the frame, else DAMAGED;
 *   - version 2: DAMAGED (the callback refusing nothing) exactly when
 *     jrec_witness finds a witness, and then witness > bad_offset,
 *     bad_offset < witness_upto <= witness, the record there decodes whole
 *     and claims witness_upto; TORN's tail_whole is jrec_witness's count;
 *   - prefix: the first good_end bytes scan CLEAN with the same records,
 *     calls, data_end and (v2) attested (what start-up keeps when it cuts);
 *     a CLEAN image with zeros after it scans TORN, zero_tail, the same;
 *   - a callback refusing the k-th record stops the scan as DAMAGED at
 *     that record's offset, cb_error what it returned, with the k - 1
 *     records before it and the same calls (it changes nothing when there
 *     are fewer than k records); the other scans' callbacks never refuse;
 *   - scanning the same bytes twice gives the same result.
 *
 * This file turns the input into images, runs jrec_scan and the walk on
 * them, and calls the oracle's checks in order; the checks are in
 * fuzz_jrec_check.c (fuzz_jrec.h between).
 */
#include <errno.h>
#include <string.h>
#include <openssl/crypto.h>
#include "crc32c.h"
#include "fuzz.h"
#include "fuzz_jrec.h"
#include "journal_rec.h"

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* A new buffer of room bytes (room >= n) starting with the n at p. */
uint8_t *fj_copy_of(const uint8_t *p, size_t n, size_t room)
{
    /* A byte for an empty image: malloc(0) may give NULL. */
    uint8_t *c = malloc(room ? room : 1);

    FUZZ_CHECK(c != NULL, "memory for an image");
    if (n)
        memcpy(c, p, n);
    return c;
}

/* The payload length of the frame at p (avail bytes there) of version:
 * 0 when the frame is cut or no record has that length (1..141). */
size_t fj_frame_claim(const uint8_t *p, size_t avail, uint32_t version)
{
    if (avail < JREC_FRAME_LEN)
        return 0;
    uint32_t word = get32(p);
    size_t n = version == JREC_VERSION_V1 ? word : (word & 0xff);
    return n >= 1 && n <= JREC_PAYLOAD_MAX ? n : 0;
}

/* The byte-1 option: re-seals the CRC of the frames mask picks, walking
 * frames by their length word from the header's end (see the top). */
static void reseal(uint8_t *img, size_t len, uint8_t mask)
{
    int v = jrec_header_check(img, len);
    size_t off = JREC_HEADER_LEN;

    if (mask == 0 || (v != JREC_VERSION && v != JREC_VERSION_V1))
        return;
    for (unsigned i = 0; ; i++) {
        size_t n = fj_frame_claim(img + off, len - off, (uint32_t)v);
        if (n == 0 || n > len - off - JREC_FRAME_LEN)
            break;
        if (mask & (1u << (i < 7 ? i : 7))) {
            uint8_t *pay = img + off + JREC_FRAME_LEN;
            uint32_t seed = v == JREC_VERSION_V1 ? 0 : get32(img + off);
            uint32_t crc = crc32c_update(seed, pay, n);
            for (int b = 0; b < 4; b++)
                img[off + 4 + b] = (uint8_t)(crc >> (8 * b));
        }
        off += JREC_FRAME_LEN + n;
    }
}

/* The image byte 0 asks for: the body_len bytes at body, after a valid
 * header (version 1 for hdr 1, else 2) unless hdr is 0; its size in
 * *len, its buffer of exactly that size the caller's to free. */
static uint8_t *make_image(const uint8_t *body, size_t body_len,
                           unsigned hdr, size_t *len)
{
    size_t hlen = hdr ? JREC_HEADER_LEN : 0;

    *len = hlen + body_len;
    uint8_t *img = fj_copy_of(NULL, 0, *len);
    if (hdr)
        jrec_header_write_version(img, hdr == 1 ? JREC_VERSION_V1
                                                : JREC_VERSION);
    if (body_len)
        memcpy(img + hlen, body, body_len);
    return img;
}

/* The scan's callback: records each call in arg (struct calls), and
 * refuses the one at refuse_at with REFUSE_RC. */
static int on_record(enum store_op op, const struct person *p, void *arg)
{
    struct calls *c = arg;

    fj_check_call(op, p);
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 32;
        c->v = realloc(c->v, c->cap * sizeof(*c->v));
        FUZZ_CHECK(c->v != NULL, "memory for the calls");
    }
    c->v[c->n].op = op;
    c->v[c->n].p = *p;
    return c->n++ == c->refuse_at ? REFUSE_RC : 0;
}

void fj_calls_free(struct calls *c)
{
    if (c->v)
        OPENSSL_cleanse(c->v, c->cap * sizeof(*c->v));  /* SSNs */
    free(c->v);
    c->v = NULL;
    c->n = c->cap = 0;
}

/* A scan with calls into c (c->refuse_at set by the caller). */
void fj_scan(const uint8_t *img, size_t len, struct calls *c,
             struct jscan *res)
{
    memset(res, 0xa5, sizeof(*res));    /* garbage: no field passes as left */
    enum jscan_status st = jrec_scan(img, len, on_record, c, res);
    FUZZ_CHECK(st == res->status, "jrec_scan returns res->status");
    FUZZ_CHECK(st == JSCAN_CLEAN || st == JSCAN_TORN ||
               st == JSCAN_DAMAGED || st == JSCAN_FOREIGN ||
               st == JSCAN_VERSION || st == JSCAN_HEADER_CUT,
               "the status is a jscan_status");
}

/* Walks img with jrec_decode from the header on while records decode
 * whole, checking each (and its re-encoding); returns how many, in *w. */
size_t fj_walk(const uint8_t *img, size_t len, uint32_t version,
               struct wrec **w)
{
    size_t n = 0, cap = 0, off = JREC_HEADER_LEN;

    *w = NULL;
    while (off < len) {
        struct jrec rec;
        size_t r = fj_decode_at(img, len, off, version, &rec);
        if (r == 0)
            break;
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            *w = realloc(*w, cap * sizeof(**w));
            FUZZ_CHECK(*w != NULL, "memory for the walk");
        }
        (*w)[n].off = off;
        (*w)[n].len = r;
        (*w)[n].rec = rec;
        n++;
        off += r;
    }
    return n;
}

void fj_walk_free(struct wrec *w, size_t n)
{
    if (w)
        OPENSSL_cleanse(w, n * sizeof(*w));     /* SSNs */
    free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t ctl = size > 0 ? data[0] : 0, mask = size > 1 ? data[1] : 0;
    const uint8_t *body = data + (size > 2 ? 2 : size);
    size_t body_len = size > 2 ? size - 2 : 0, len;
    unsigned hdr = ctl & 3, refuse = ctl >> 2;
    uint8_t *img = make_image(body, body_len, hdr, &len);
    reseal(img, len, mask);

    int hc = jrec_header_check(img, len);
    FUZZ_CHECK(hc == JREC_VERSION || hc == JREC_VERSION_V1 || hc == -EPROTO ||
               hc == -ENOTSUP || hc == -ENODATA,
               "jrec_header_check returns 1, 2 or a documented error");
    FUZZ_CHECK(hdr == 0 || hc == (hdr == 1 ? JREC_VERSION_V1 : JREC_VERSION),
               "a valid header is read as its version");
    struct wrec *w = NULL;
    size_t nw = hc > 0 ? fj_walk(img, len, (uint32_t)hc, &w) : 0;

    struct calls c = { .refuse_at = SIZE_MAX };
    struct jscan r;
    fj_scan(img, len, &c, &r);
    FUZZ_CHECK(r.cb_error == 0, "a callback that never refuses sets no "
               "cb_error");
    fj_check_scan(img, len, &r, &c, w, nw);
    fj_check_rescan(img, len, &r, &c);
    if (fj_has_records(r.status)) {
        fj_check_prefix(img, &r, &c);
        if (r.status == JSCAN_CLEAN)
            fj_check_zero_tail(img, len, &r, &c, 1 + (size_t)mask % 64);
    }
    /* A callback refusing the k-th record (k = refuse, 1-based). */
    if (refuse)
        fj_check_refusal(img, len, &r, &c, w, nw, refuse);

    fj_calls_free(&c);
    fj_walk_free(w, nw);
    free(img);
    return 0;
}
