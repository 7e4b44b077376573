/* fuzz_jrec_check.c -- the oracle of the journal-format fuzz target, whose
 * rules are listed at the top of fuzz_jrec.c: a walk with jrec_decode is
 * the model each jrec_scan result is held against, and each check_
 * function keeps one part of the list. fuzz_jrec.c makes the images, runs
 * the reader and calls these (fuzz_jrec.h).
 */
#include <errno.h>
#include <string.h>
#include <openssl/crypto.h>
#include "entry.h"
#include "fuzz.h"
#include "fuzz_jrec.h"
#include "journal_rec.h"

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

static void check_name(const char *name, size_t cap)
{
    size_t n = strnlen(name, cap);
    FUZZ_CHECK(n < cap, "a name is NUL-terminated within its field");
    FUZZ_CHECK(entry_name_ok(name, n), "a name passes entry_name_ok");
}

/* The person of a good ADD or DELETE: valid as a request's are. */
static void check_person(enum store_op op, const struct person *p)
{
    check_name(p->first, sizeof(p->first));
    check_name(p->last, sizeof(p->last));
    if (op != STORE_ADD)
        return;
    FUZZ_CHECK(p->age >= 0 && p->age <= ENTRY_AGE_MAX, "ADD's age is 0..150");
    size_t n = strnlen(p->ssn, sizeof(p->ssn));
    FUZZ_CHECK(n == ENTRY_SSN_LEN && entry_ssn_ok(p->ssn, n),
               "ADD's SSN is DDD-DD-DDDD");

    /* struct jrec's promise: entry_from_person may build the entry (it
     * asserts what it does not check). */
    char ssn[ENTRY_SSN_LEN + 1];
    struct entry *e = entry_from_person(p);
    FUZZ_CHECK(e != NULL, "entry_from_person allocates");
    FUZZ_CHECK(strcmp(entry_last(e), p->last) == 0 &&
               strcmp(entry_first(e), p->first) == 0 &&
               entry_age(e) == p->age &&
               strcmp(entry_ssn_text(e, ssn), p->ssn) == 0,
               "the entry built holds the record's fields");
    entry_free(e);
}

static int same_person(enum store_op op, const struct person *a,
                       const struct person *b)
{
    return strcmp(a->first, b->first) == 0 && strcmp(a->last, b->last) == 0 &&
           (op != STORE_ADD ||
            (a->age == b->age && strcmp(a->ssn, b->ssn) == 0));
}

/* The callback's call: an ADD or a DELETE of a valid person. */
void fj_check_call(enum store_op op, const struct person *p)
{
    FUZZ_CHECK(op == STORE_ADD || op == STORE_DELETE,
               "the callback gets ADD or DELETE");
    check_person(op, p);
}

/* The first n calls of a and b are the same. */
static int same_calls(const struct calls *a, const struct calls *b, size_t n)
{
    if (a->n < n || b->n < n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (a->v[i].op != b->v[i].op ||
            !same_person(a->v[i].op, &a->v[i].p, &b->v[i].p))
            return 0;
    return 1;
}

static int same_scan(const struct jscan *a, const struct jscan *b)
{
    return a->status == b->status && a->version == b->version &&
           a->good_end == b->good_end && a->bad_offset == b->bad_offset &&
           a->records == b->records && a->adds == b->adds &&
           a->deletes == b->deletes && a->cb_error == b->cb_error &&
           a->zero_tail == b->zero_tail && a->tail_data == b->tail_data &&
           a->tail_whole == b->tail_whole && a->witness == b->witness &&
           a->witness_upto == b->witness_upto &&
           a->attested == b->attested && a->data_end == b->data_end;
}

static enum store_op op_of(int kind)
{
    return kind == JREC_OP_ADD ? STORE_ADD : STORE_DELETE;
}

/* A record jrec_decode accepted (r bytes at img + off) re-encodes to
 * exactly its bytes: no field goes unchecked. */
static void check_round_trip(const uint8_t *img, size_t off, ssize_t r,
                             uint32_t version, const struct jrec *rec)
{
    uint8_t again[JREC_MAX];
    size_t k;
    if (rec->kind == JREC_OP_MARK) {
        k = jrec_encode_mark(again, rec->back);
    } else {
        check_person(op_of(rec->kind), &rec->p);
        k = jrec_encode(again, version, rec->back, op_of(rec->kind),
                        rec->p.first, rec->p.last, rec->p.age, rec->p.ssn);
    }
    FUZZ_CHECK(k == (size_t)r && memcmp(again, img + off, k) == 0,
               "a decoded record re-encodes to exactly its bytes");
}

/* One step of the walk: jrec_decode at off agrees with the frame there;
 * returns the record's length (the record in *out), or 0 where the walk
 * ends. */
size_t fj_decode_at(const uint8_t *img, size_t len, size_t off,
                    uint32_t version, struct jrec *out)
{
    struct jrec rec;
    size_t claimed = 12345, avail = len - off;
    memset(&rec, 0, sizeof(rec));
    ssize_t r = jrec_decode(img + off, avail, version, &rec, &claimed);
    /* The payload length the frame claims, 0 when no record has it (or
     * the frame is cut). */
    size_t fl = fj_frame_claim(img + off, avail, version);
    if (r == 0) {
        FUZZ_CHECK(avail < JREC_FRAME_LEN ||
                   (fl > 0 && avail - JREC_FRAME_LEN < fl),
                   "jrec_decode says 0 only for a cut frame or payload");
        return 0;
    }
    if (r < 0) {
        FUZZ_CHECK(r == -EBADMSG, "jrec_decode fails with -EBADMSG");
        FUZZ_CHECK(avail >= JREC_FRAME_LEN &&
                   JREC_FRAME_LEN + fl <= avail,
                   "-EBADMSG: the frame (and a possible payload) is "
                   "whole");
        FUZZ_CHECK(claimed == fl, "-EBADMSG: *claimed is the frame's "
                   "length (0 if impossible)");
        return 0;
    }
    FUZZ_CHECK((size_t)r == JREC_FRAME_LEN + fl,
               "a decoded record is as long as its frame says");
    FUZZ_CHECK(r >= JREC_MARK_LEN && (size_t)r <= JREC_MAX &&
               (size_t)r <= avail,
               "a decoded record is 9..149 bytes within the image");
    FUZZ_CHECK(rec.kind == JREC_OP_ADD || rec.kind == JREC_OP_DELETE ||
               (rec.kind == JREC_OP_MARK && version == JREC_VERSION),
               "a decoded record is ADD, DELETE or (v2) MARK");
    FUZZ_CHECK(version == JREC_VERSION ? rec.back <= JREC_BACK_NONE
                                       : rec.back == JREC_BACK_NONE,
               "a v2 claim is 24 bits; v1 claims nothing");
    check_round_trip(img, off, r, version, &rec);
    *out = rec;
    return (size_t)r;
}

int fj_has_records(enum jscan_status st)
{
    return st == JSCAN_CLEAN || st == JSCAN_TORN || st == JSCAN_DAMAGED;
}

/* No records: exactly as jrec_header_check (hc) says, and no call. */
static void check_no_header(int hc, size_t len, const struct jscan *r,
                            const struct calls *c)
{
    FUZZ_CHECK(r->status == (hc == -EPROTO ? JSCAN_FOREIGN :
                             hc == -ENOTSUP ? JSCAN_VERSION :
                             hc == -ENODATA ? JSCAN_HEADER_CUT :
                             JSCAN_CLEAN),
               "no records only as jrec_header_check says");
    FUZZ_CHECK(r->status != JSCAN_HEADER_CUT || len <= JREC_HEADER_LEN,
               "a header cut is at most a header's bytes");
    FUZZ_CHECK(r->records == 0 && c->n == 0,
               "no record and no call without a header");
}

/* Records: the header's version, the counts and calls agree, and where
 * CLEAN, TORN and DAMAGED end. */
static void check_counts(int hc, size_t len, const struct jscan *r,
                         const struct calls *c)
{
    FUZZ_CHECK(hc == JREC_VERSION || hc == JREC_VERSION_V1,
               "records only after a header of version 1 or 2");
    FUZZ_CHECK(r->version == (uint32_t)hc, "the version is the header's");
    FUZZ_CHECK(r->good_end >= JREC_HEADER_LEN, "good_end is past the header");
    FUZZ_CHECK(r->records == r->adds + r->deletes,
               "records == adds + deletes");
    FUZZ_CHECK(c->n == r->records + (r->cb_error != 0),
               "one call per record (and the one refused)");
    FUZZ_CHECK(r->cb_error == 0 ||
               (r->status == JSCAN_DAMAGED && c->refuse_at == r->records &&
                r->cb_error == REFUSE_RC),
               "cb_error only when the callback refused, what it returned");

    if (r->status == JSCAN_CLEAN) {
        FUZZ_CHECK(r->good_end == len, "CLEAN: good_end == len");
        FUZZ_CHECK(r->witness == 0 && !r->zero_tail,
                   "CLEAN: no witness, no zero tail");
    } else {
        FUZZ_CHECK(r->bad_offset == r->good_end && r->bad_offset < len,
                   "TORN, DAMAGED: bad_offset == good_end < len");
    }
}

/* The scan's records are the walk's (w, nw), end to end, with their
 * calls, data_end and attested. Returns how many it kept (their calls in
 * *ncalls). */
static size_t check_walk_match(const struct jscan *r, const struct calls *c,
                               const struct wrec *w, size_t nw,
                               size_t *ncalls)
{
    size_t i = 0, end = JREC_HEADER_LEN, calls = 0, data_end = end;
    size_t attested = JREC_HEADER_LEN, adds = 0;
    for (; i < nw && end < r->good_end; i++) {
        const struct jrec *x = &w[i].rec;
        FUZZ_CHECK(w[i].off == end, "the walk's records lie end to end");
        FUZZ_CHECK(x->back == JREC_BACK_NONE ||
                   x->back <= w[i].off - JREC_HEADER_LEN,
                   "no good record claims into the header");
        if (x->back != JREC_BACK_NONE && w[i].off - x->back > attested)
            attested = w[i].off - x->back;
        end += w[i].len;
        if (x->kind == JREC_OP_MARK)
            continue;
        FUZZ_CHECK(calls < c->n && c->v[calls].op == op_of(x->kind) &&
                   same_person(op_of(x->kind), &c->v[calls].p, &x->p),
                   "the calls are the walk's ADDs and DELETEs, in order");
        adds += x->kind == JREC_OP_ADD;
        calls++;
        data_end = end;
    }
    FUZZ_CHECK(end == r->good_end, "good_end is where a record ends");
    FUZZ_CHECK(calls == r->records && adds == r->adds,
               "records and adds are those of the walk");
    FUZZ_CHECK(r->data_end == data_end, "data_end ends the last ADD/DELETE");
    /* attested is version 2's. With a refusal, the refused record's
     * claim may count or not (it is whole and checked, but not kept). */
    if (r->version == JREC_VERSION && r->cb_error == 0)
        FUZZ_CHECK(r->attested == attested,
                   "attested is the farthest claim of a good record");
    if (r->version == JREC_VERSION)
        FUZZ_CHECK(r->attested >= JREC_HEADER_LEN &&
                   r->attested <= r->good_end,
                   "attested lies between the header and good_end");
    *ncalls = calls;
    return i;
}

/* Where the scan stopped (the walk's record i, after calls calls): the
 * walk's end, the refused record, or a bad one; 1 for a bad one. */
static int check_stop(const struct jscan *r, const struct calls *c,
                      const struct wrec *w, size_t nw, size_t i,
                      size_t calls)
{
    if (r->status == JSCAN_CLEAN) {
        FUZZ_CHECK(i == nw, "CLEAN: the scan read every record the walk did");
        return 0;
    }
    if (r->cb_error) {
        FUZZ_CHECK(i < nw && w[i].rec.kind != JREC_OP_MARK &&
                   c->v[calls].op == op_of(w[i].rec.kind) &&
                   same_person(c->v[calls].op, &c->v[calls].p, &w[i].rec.p),
                   "the refused record is the walk's next one");
        FUZZ_CHECK(r->witness == 0 && !r->zero_tail,
                   "a refusal is neither a zero tail nor witnessed");
        return 0;
    }
    if (i < nw)
        FUZZ_CHECK(w[i].rec.back != JREC_BACK_NONE &&
                   w[i].rec.back > w[i].off - JREC_HEADER_LEN,
                   "the scan stops at a record jrec_decode reads only when "
                   "its claim reaches into the header");
    return 1;
}

/* Version 1's bad record: TORN when cut, or when only zeros follow its
 * whole frame; else DAMAGED. */
static void check_v1_bad(const uint8_t *img, size_t len,
                         const struct jscan *r)
{
    size_t bad = r->bad_offset, rest = len - bad;
    struct jrec x;
    size_t claimed;
    ssize_t n = jrec_decode(img + bad, rest, JREC_VERSION_V1, &x,
                            &claimed);
    FUZZ_CHECK(n <= 0, "v1's bad record does not decode");
    if (n == 0)
        FUZZ_CHECK(r->status == JSCAN_TORN, "v1: a cut record is TORN");
    else if (claimed > 0)
        FUZZ_CHECK((r->status == JSCAN_TORN) ==
                   all_zero(img + bad + JREC_FRAME_LEN + claimed,
                            rest - JREC_FRAME_LEN - claimed),
                   "v1: a bad whole record is TORN exactly when only "
                   "zeros follow it");
    /* on_damaged (journal_replay.c) reads witness whatever the version: a
     * version 1 file must never seem to have one. */
    FUZZ_CHECK(r->witness == 0, "v1 has no witness");
    OPENSSL_cleanse(&x, sizeof(x));
}

/* Version 2's bad record: DAMAGED exactly when jrec_witness finds a
 * witness, and the scan's witness (or tail_whole) is jrec_witness's. */
static void check_v2_witness(const uint8_t *img, size_t len,
                             const struct jscan *r)
{
    size_t bad = r->bad_offset;
    size_t upto = 7, whole = 7;
    size_t wit = jrec_witness(img, len, bad, &upto, &whole);
    FUZZ_CHECK((r->status == JSCAN_DAMAGED) == (wit != 0),
               "v2: DAMAGED exactly when jrec_witness finds a witness");
    if (wit == 0) {
        FUZZ_CHECK(r->witness == 0 && r->tail_whole == whole,
                   "v2 TORN: tail_whole is jrec_witness's count");
        return;
    }
    FUZZ_CHECK(r->witness == wit && r->witness_upto == upto,
               "the scan's witness is jrec_witness's");
    FUZZ_CHECK(wit > bad && upto > bad && upto <= wit,
               "the witness lies after bad_offset, and claims past it");
    struct jrec x;
    size_t claimed;
    ssize_t n = jrec_decode(img + wit, len - wit, JREC_VERSION, &x, &claimed);
    FUZZ_CHECK(n > 0 && x.back != JREC_BACK_NONE && wit - x.back == upto,
               "the witness decodes whole and claims witness_upto");
    OPENSSL_cleanse(&x, sizeof(x));
}

/* At the bad record: the zero tail and tail_data, then the version's
 * rule. */
static void check_bad_record(const uint8_t *img, size_t len,
                             const struct jscan *r)
{
    size_t bad = r->bad_offset, rest = len - bad;
    int zeros = all_zero(img + bad, rest);
    FUZZ_CHECK(zeros == (r->status == JSCAN_TORN && r->zero_tail),
               "zeros to the end exactly when TORN with zero_tail");
    size_t last = len;
    while (last > bad && img[last - 1] == 0)
        last--;
    if (r->status == JSCAN_TORN)
        FUZZ_CHECK(r->tail_data == last - bad,
                   "TORN's tail_data: bad_offset to the last non-zero byte");
    if (zeros) {
        FUZZ_CHECK(r->witness == 0 && r->tail_whole == 0,
                   "a zero tail has no witness and no whole record");
        return;
    }
    if (r->version == JREC_VERSION_V1)
        check_v1_bad(img, len, r);
    else
        check_v2_witness(img, len, r);
}

/* The rules every scan of img (len bytes) must keep, whatever its
 * callback did; w: the walk of img (nw records). */
void fj_check_scan(const uint8_t *img, size_t len, const struct jscan *r,
                   const struct calls *c, const struct wrec *w, size_t nw)
{
    int hc = jrec_header_check(img, len);

    FUZZ_CHECK(r->good_end <= len, "good_end <= len");
    if (!fj_has_records(r->status)) {
        check_no_header(hc, len, r, c);
        return;
    }
    check_counts(hc, len, r, c);
    size_t calls;
    size_t i = check_walk_match(r, c, w, nw, &calls);
    if (check_stop(r, c, w, nw, i, calls))
        check_bad_record(img, len, r);
}

/* No hidden state: scanning img again gives r and c again. */
void fj_check_rescan(const uint8_t *img, size_t len, const struct jscan *r,
                     const struct calls *c)
{
    struct calls c2 = { .refuse_at = SIZE_MAX };
    struct jscan r2;
    fj_scan(img, len, &c2, &r2);
    FUZZ_CHECK(same_scan(r, &r2) && c2.n == c->n && same_calls(c, &c2, c->n),
               "the same bytes scan the same way twice");
    fj_calls_free(&c2);
}

/* What start-up keeps when it cuts: the first good_end bytes of img scan
 * CLEAN, with the same records and calls. */
void fj_check_prefix(const uint8_t *img, const struct jscan *r,
                     const struct calls *c)
{
    struct calls pc = { .refuse_at = SIZE_MAX };
    struct jscan p;
    uint8_t *cut = fj_copy_of(img, r->good_end, r->good_end);

    fj_scan(cut, r->good_end, &pc, &p);
    FUZZ_CHECK(p.status == JSCAN_CLEAN && p.good_end == r->good_end,
               "prefix: the first good_end bytes scan CLEAN");
    FUZZ_CHECK(p.version == r->version && p.records == r->records &&
               p.adds == r->adds && p.deletes == r->deletes &&
               p.data_end == r->data_end,
               "prefix: the same records");
    if (r->version == JREC_VERSION && r->cb_error == 0)
        FUZZ_CHECK(p.attested == r->attested, "prefix: the same attested");
    FUZZ_CHECK(pc.n == r->records && same_calls(&pc, c, pc.n),
               "prefix: the same calls in the same order");
    fj_calls_free(&pc);
    free(cut);
}

/* A CLEAN image with space reserved after it (zeros) loses nothing. */
void fj_check_zero_tail(const uint8_t *img, size_t len,
                        const struct jscan *r, const struct calls *c,
                        size_t zeros)
{
    struct calls zc = { .refuse_at = SIZE_MAX };
    struct jscan z;
    uint8_t *ext = fj_copy_of(img, len, len + zeros);

    memset(ext + len, 0, zeros);
    fj_scan(ext, len + zeros, &zc, &z);
    FUZZ_CHECK(z.status == JSCAN_TORN && z.zero_tail &&
               z.good_end == len && z.bad_offset == len && z.tail_data == 0,
               "zeros after a clean journal: TORN, zero_tail, cut at its end");
    FUZZ_CHECK(z.records == r->records && z.adds == r->adds &&
               z.data_end == r->data_end &&
               (r->version != JREC_VERSION || z.attested == r->attested) &&
               zc.n == c->n && same_calls(&zc, c, c->n),
               "zeros after a clean journal: the same records");
    fj_calls_free(&zc);
    free(ext);
}

/* A callback refusing the refuse-th record (1-based) stops the scan (r, c
 * without it) there as DAMAGED; with fewer records, nothing changes. */
void fj_check_refusal(const uint8_t *img, size_t len, const struct jscan *r,
                      const struct calls *c, const struct wrec *w,
                      size_t nw, unsigned refuse)
{
    struct calls rc = { .refuse_at = refuse - 1 };
    struct jscan rr;
    fj_scan(img, len, &rc, &rr);
    fj_check_scan(img, len, &rr, &rc, w, nw);
    if (r->records >= refuse) {
        /* The walk's record the refused call came from. */
        size_t k = 0, j = 0;
        for (; j < nw; j++)
            if (w[j].rec.kind != JREC_OP_MARK && k++ == refuse - 1)
                break;
        FUZZ_CHECK(rr.status == JSCAN_DAMAGED &&
                   rr.cb_error == REFUSE_RC && rr.records == refuse - 1,
                   "a refused record stops the scan as DAMAGED");
        FUZZ_CHECK(j < nw && rr.bad_offset == w[j].off,
                   "the refusal's bad_offset is the record's offset");
        FUZZ_CHECK(same_calls(&rc, c, refuse),
                   "the calls before and at the refusal are the same");
        fj_check_prefix(img, &rr, &rc);
    } else {
        FUZZ_CHECK(same_scan(r, &rr) && rc.n == c->n &&
                   same_calls(&rc, c, c->n),
                   "a refusal past the last record changes nothing");
    }
    fj_calls_free(&rc);
}
