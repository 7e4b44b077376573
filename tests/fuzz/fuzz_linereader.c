/* fuzz_linereader.c -- the line reader (common/linereader.c) fed arbitrary
 * chunks, in arbitrary sizes, through both of its ways in (lr_feed, and
 * lr_space + lr_commit), with lines taken at arbitrary moments.
 *
 * The input is a small program:
 *   bytes 0-1   the limit: with bit 15 set, bits 0-14 (0..32767, so the cap
 *               at LR_MAX_LINE is crossed); else bits 0-5 (0..63)
 *   then ops, each one byte:
 *     00nnnnnn  lr_feed the next n+1 bytes of the input
 *     01nnnnnn  the next n+1 bytes through lr_space + lr_commit
 *     10nnnnnn  (n+1) * 256 copies of the next input byte, through lr_feed
 *               (reaches a full 16 KiB buffer with a few bytes of input)
 *     11nnnnnn  take n lines (0: every line buffered)
 * When no room is left the target takes every buffered line (the contract
 * of lr_space), and at the end it takes every line left. Whenever taking
 * lines leaves nothing buffered, the buffer is detached, poisoned and the
 * other of two attached in its place, as a server gives its buffer back
 * between requests: the stream must read the same. Whenever, then,
 * lr_between_lines says the reader is between lines, the reader is made
 * afresh (lr_init), as an event connection parks its session there and
 * takes another for its next bytes (server/session_park.c): the stream
 * must read the same again, and the model must not be dropping the rest
 * of an over-long line.
 *
 * The oracle: max_line is min(limit, LR_MAX_LINE); every line is at most
 * max_line bytes, holds no '\n', is NUL-terminated in place; room always
 * comes back after the waiting lines are taken; and what comes out is
 * exactly what a simple model of the whole stream says: for each segment
 * up to a '\n', with one '\r' before it removed, the segment itself when it
 * is within max_line, else one LR_TOOLONG (which may come early, before the
 * '\n' has arrived, once more than max_line + 1 bytes of it are buffered).
 * The rest of a segment reported early is dropped, up to its '\n'. A last
 * segment without '\n' is reported too long when it has more than
 * max_line + 1 bytes, and otherwise is still pending.
 */
#include <string.h>
#include "fuzz.h"
#include "linereader.h"

#define STREAM_MAX (64u << 10)  /* bytes fed per input, at most: 4 full buffers */

/* The model: the whole stream, and how far its segments were matched. */
struct model {
    uint8_t *s;
    size_t len, cap;
    size_t pos;                 /* start of the next unmatched segment */
    int skipping;               /* a segment reported too long before its
                                   '\n' came: the rest of it is dropped */
    size_t max_line;
};

struct run {
    size_t limit;               /* lr_init's */
    struct linereader *lr;
    struct model m;
    char *bufs[2];              /* lent to lr in turn (swap) */
    int cur;                    /* bufs[cur] is attached */
};

static void model_append(struct model *m, const uint8_t *p, size_t n)
{
    fuzz_append(&m->s, &m->len, &m->cap, p, n, "memory for the model");
}

/* The next segment of the whole stream: *seg and *n (its '\n' excluded);
 * returns 1 when a '\n' ends it, 0 for a last segment without one. */
static int model_segment(const struct model *m, const uint8_t **seg,
                         size_t *n)
{
    const uint8_t *p = m->s + m->pos;
    const uint8_t *nl = memchr(p, '\n', m->len - m->pos);

    *seg = p;
    *n = nl ? (size_t)(nl - p) : m->len - m->pos;
    return nl != NULL;
}

/* Drops what is left of a segment reported too long early: up to and
 * including its '\n' once that is in the stream, else all there is. */
static void model_skip(struct model *m)
{
    if (!m->skipping)
        return;
    const uint8_t *nl = memchr(m->s + m->pos, '\n', m->len - m->pos);
    m->pos = nl ? (size_t)(nl - m->s) + 1 : m->len;
    m->skipping = !nl;
}

/* Checks one result of lr_next against the model. */
static void expect(struct run *r, int st, const char *line, size_t len)
{
    struct model *m = &r->m;
    const uint8_t *seg;
    size_t n;

    model_skip(m);
    FUZZ_CHECK(!m->skipping, "nothing comes out of a line being dropped");
    FUZZ_CHECK(m->pos < m->len, "lr_next gives nothing the stream lacks");
    int complete = model_segment(m, &seg, &n);
    size_t content = complete && n > 0 && seg[n - 1] == '\r' ? n - 1 : n;

    if (st == LR_LINE) {
        FUZZ_CHECK(len <= m->max_line, "a line is within max_line");
        FUZZ_CHECK(!memchr(line, '\n', len), "a line holds no '\\n'");
        FUZZ_CHECK(line[len] == '\0', "a line is NUL-terminated");
        FUZZ_CHECK(complete, "a line is only given once its '\\n' came");
        FUZZ_CHECK(len == content && memcmp(line, seg, len) == 0,
                   "the line is the stream's next segment");
    } else {
        FUZZ_CHECK(st == LR_TOOLONG, "lr_next returns LINE, AGAIN or TOOLONG");
        FUZZ_CHECK(complete ? content > m->max_line : n > m->max_line + 1,
                   "LR_TOOLONG only for a segment over max_line");
    }
    m->pos += complete ? n + 1 : n;
    m->skipping = !complete;
}

/* Nothing buffered: the buffer goes back and the other one comes, the
 * old one poisoned as a wipe would, so a byte the reader still needed
 * from it would show. */
static void swap(struct run *r)
{
    size_t dirty;

    if (lr_pending(r->lr))
        return;
    char *old = lr_detach(r->lr, &dirty);
    FUZZ_CHECK(old == r->bufs[r->cur], "lr_detach gives back what was lent");
    FUZZ_CHECK(dirty <= LR_BUF_SIZE, "dirty is within the buffer");
    memset(old, 0xa5, LR_BUF_SIZE);
    r->cur ^= 1;
    if (lr_between_lines(r->lr)) {
        struct model m = r->m;
        model_skip(&m);
        FUZZ_CHECK(!m.skipping, "between lines only when no over-long line "
                   "is being dropped");
        lr_init(r->lr, r->limit);
    }
    lr_attach(r->lr, r->bufs[r->cur]);
}

/* Takes up to max lines (0: all); returns how many results came. */
static size_t take(struct run *r, size_t max)
{
    size_t got = 0;
    char *line;
    size_t len;
    int st;

    while ((max == 0 || got < max) &&
           (st = lr_next(r->lr, &line, &len)) != LR_AGAIN) {
        expect(r, st, line, len);
        got++;
    }
    swap(r);
    return got;
}

/* Puts n bytes in, through lr_feed or lr_space + lr_commit, taking lines
 * whenever the buffer is full. */
static void put(struct run *r, const uint8_t *p, size_t n, int direct)
{
    model_append(&r->m, p, n);
    while (n > 0) {
        size_t room, k;
        if (direct) {
            char *dst = lr_space(r->lr, &room);
            k = n < room ? n : room;
            memcpy(dst, p, k);
            lr_commit(r->lr, k);
        } else {
            k = lr_feed(r->lr, p, n);
        }
        if (k == 0) {
            take(r, 0);
            lr_space(r->lr, &room);
            FUZZ_CHECK(room > 0, "room comes back once the lines are taken");
        }
        p += k;
        n -= k;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct run r = { .lr = malloc(sizeof(struct linereader)),
                     .bufs = { malloc(LR_BUF_SIZE), malloc(LR_BUF_SIZE) } };
    uint8_t fill[64 * 256];

    FUZZ_CHECK(r.lr && r.bufs[0] && r.bufs[1], "memory for the line reader");
    if (size < 2) {
        free(r.lr);
        free(r.bufs[0]);
        free(r.bufs[1]);
        return 0;
    }
    unsigned v = data[0] | (unsigned)data[1] << 8;
    size_t limit = v & 0x8000 ? v & 0x7fff : v & 0x3f;
    r.limit = limit;
    lr_init(r.lr, limit);
    lr_attach(r.lr, r.bufs[0]);
    r.m.max_line = limit < LR_MAX_LINE ? limit : LR_MAX_LINE;
    FUZZ_CHECK(r.lr->max_line == r.m.max_line,
               "max_line is the limit, capped at LR_MAX_LINE");

    for (size_t i = 2; i < size && r.m.len < STREAM_MAX;) {
        unsigned op = data[i++], n = (op & 0x3f) + 1;
        switch (op >> 6) {
        case 0:
        case 1:
            if (n > size - i)
                n = (unsigned)(size - i);
            put(&r, data + i, n, op >> 6);
            i += n;
            break;
        case 2:
            if (i < size) {
                memset(fill, data[i++], n * 256);
                put(&r, fill, n * 256, 0);
            }
            break;
        case 3:
            take(&r, op & 0x3f);
            break;
        }
    }
    take(&r, 0);

    /* What is left: at most a last segment without '\n', short enough not
     * to have been reported, and still pending. */
    const uint8_t *seg;
    size_t n;
    model_skip(&r.m);
    if (r.m.pos < r.m.len) {
        FUZZ_CHECK(!model_segment(&r.m, &seg, &n) && n <= r.m.max_line + 1,
                   "every complete or over-long segment came out");
        FUZZ_CHECK(lr_pending(r.lr) == n, "the last partial line is pending");
    } else {
        FUZZ_CHECK(lr_pending(r.lr) == 0, "nothing pending after the last line");
    }
    free(r.m.s);
    free(r.lr);
    free(r.bufs[0]);
    free(r.bufs[1]);
    return 0;
}
