/* fuzz_session_check.c -- what the session fuzz target checks once the
 * session has ended (the rules are listed at the top of fuzz_session.c):
 * the conversation, which replays what the session was given through the
 * telnet filter and frames it into lines as PROTOCOL.md does, checks the
 * telnet answers and hands each request to fs_check_request
 * (fuzz_session_reply.c), then checks how the session ended; and the
 * store, held against the model under the store lock, then emptied and
 * made afresh for the next input.
 */
#include <errno.h>
#include <string.h>
#include "fuzz.h"
#include "fuzz_session.h"
#include "lockmode.h"
#include "proto.h"
#include "server.h"
#include "telnet.h"

/* ---- the conversation --------------------------------------------------- */

/* Telnet answers, back to back. */
struct answers {
    unsigned char *buf;
    size_t len;
};

/* telnet_filter's answer callback: one answer after the others. */
static void note_answer(void *arg, const unsigned char *seq, size_t len)
{
    struct answers *a = arg;

    memcpy(a->buf + a->len, seq, len);
    a->len += len;
}

/* What the client received, split: the telnet answers (each IAC WONT x or
 * IAC DONT x) into got, the rest, which must be text lines, into
 * replies. Returns the replies' length. */
static size_t split_answers(const struct run *run, char *replies,
                            struct answers *got)
{
    const unsigned char *b = (const unsigned char *)run->client.buf;
    size_t n = run->client.len, out = 0;

    for (size_t i = 0; i < n; i++) {
        if (b[i] == TELNET_IAC) {
            FUZZ_CHECK(i + 2 < n && (b[i + 1] == TELNET_WONT ||
                                     b[i + 1] == TELNET_DONT),
                       "0xFF is sent only in IAC WONT x or IAC DONT x");
            note_answer(got, b + i, TELNET_ANSWER_MAX);
            i += 2;
            continue;
        }
        FUZZ_CHECK(b[i] == '\n' || (b[i] >= 0x20 && b[i] != 0x7f &&
                                    b[i] != 0xfe),
                   "no reply has a control byte, DEL, 0xFE or 0xFF");
        replies[out++] = (char)b[i];
    }
    return out;
}

/* What the session was given, through a telnet filter of its own (fuzzed
 * on its own by fuzz_telnet) into filtered, its answers into want.
 * Returns the filtered bytes' length. */
static size_t filter_input(const struct run *run, char *filtered,
                           struct answers *want)
{
    struct telnet tn;

    memcpy(filtered, run->in, run->fed);
    telnet_init(&tn);
    return telnet_filter(&tn, filtered, run->fed, run->fed, note_answer,
                         want);
}

/* The telnet answers the client got are the filter's: every byte given
 * to the session went through its filter, and each answer goes out with
 * the replies; only one that would not fit the output limit is dropped. */
static void check_answers(const struct run *run, struct answers want,
                          struct answers got)
{
    if (!run->client.failed && want.len < run->limit)
        FUZZ_CHECK(got.len == want.len &&
                   memcmp(got.buf, want.buf, want.len) == 0,
                   "the client gets the telnet filter's answers, in order");
    FUZZ_CHECK(got.len <= want.len, "no telnet answer but the filter's");
}

/* The filtered bytes framed as PROTOCOL.md frames them, each line parsed
 * (fuzz_proto) and its reply checked, until the session ended or the
 * replies ran out. */
static void check_lines(struct conv *cv, const char *filtered, size_t flen)
{
    for (size_t i = 0; !cv->ended && !cv->lost;) {
        const char *nl = memchr(filtered + i, '\n', flen - i);
        if (!nl) {
            /* A partial line is answered only once it is too long: more
             * than the limit, a '\r' and the '\n' still to come. */
            if (flen - i > PROTO_MAX_LINE + 1)
                fs_check_request(cv, PROTO_INVALID, NULL, NULL);
            break;
        }
        const char *line = filtered + i;
        size_t n = (size_t)(nl - line);
        i += n + 1;
        if (n > 0 && line[n - 1] == '\r')
            n--;                        /* one \r before the \n */
        if (n > PROTO_MAX_LINE) {
            fs_check_request(cv, PROTO_INVALID, NULL, NULL);
            continue;
        }
        struct proto_req req;
        struct person p;
        memset(&p, 0, sizeof(p));
        fs_check_request(cv, proto_parse(line, n, &req, &p), &req, &p);
    }
}

/* The model's pass over what the session was given: the telnet answers,
 * each request's reply, and then nothing more; the session ended where
 * the replies say, and a refused send ended it. */
void fs_check_conversation(struct run *run, struct model *m)
{
    struct conv cv = { .run = run, .authed = !run->password };
    char *filtered = malloc(run->fed + 1);
    char *replies = malloc(run->client.len + 1);
    struct answers want = { malloc(run->fed + 1), 0 };
    struct answers got = { malloc(run->client.len + 1), 0 };

    FUZZ_CHECK(filtered && replies && want.buf && got.buf,
               "memory for the check");
    size_t flen = filter_input(run, filtered, &want);
    cv.r.buf = replies;
    cv.r.len = split_answers(run, replies, &got);
    check_answers(run, want, got);
    check_lines(&cv, filtered, flen);
    if (!cv.lost)
        FUZZ_CHECK(cv.r.at == cv.r.len,
                   "nothing is sent but one reply per request");
    FUZZ_CHECK((run->send_error != 0) == run->client.failed &&
               (!run->send_error || (run->send_error == -EPIPE &&
                                     run->ending)),
               "a refused send ends the session, which keeps its error");
    if (!run->client.failed)
        FUZZ_CHECK(run->ending == cv.ended,
                   "the session ends at QUIT, the third wrong password or "
                   "the output limit, and only there");
    *m = cv.m;
    free(filtered);
    free(replies);
    free(want.buf);
    free(got.buf);
}

/* ---- the store ---------------------------------------------------------- */

/* The store after the session: the tree and its index consistent and,
 * when every reply was seen, holding the model's people in order.
 * Returns its count. Caller holds the store lock (store_lock). */
static size_t check_people_locked(const struct run *run,
                                  const struct model *m)
{
    struct store *st = &srv.store;
    char ssn[ENTRY_SSN_LEN + 1];
    const char *broken;

    broken = store_check_locked(st);
    if (broken)
        fprintf(stderr, "fuzz: store_check_locked: %s\n", broken);
    FUZZ_CHECK(broken == NULL, "the tree and its index are consistent");
    /* What follows walks the tree's order: the ADDs pending a link go in
     * first, as for every reader of it (store_pending.c), and then the
     * tree alone must still be consistent. */
    store_settle_locked(st);
    FUZZ_CHECK(st->npending == 0 && store_check_locked(st) == NULL,
               "the pending ADDs settle into a consistent tree");

    size_t count = store_count_locked(st), i = 0;
    if (!run->client.failed) {
        FUZZ_CHECK(count == m->n, "the store's count is the model's: ADDs "
                   "minus DELETEs that said OK");
        for (struct rb_node *n = rb_first(&st->tree); n; n = rb_next(n), i++) {
            const struct entry *e = RB_ENTRY(n, const struct entry, node);
            FUZZ_CHECK(i < m->n && strcmp(entry_last(e), m->p[i].last) == 0 &&
                       strcmp(entry_first(e), m->p[i].first) == 0 &&
                       entry_age(e) == m->p[i].age &&
                       strcmp(entry_ssn_text(e, ssn), m->p[i].ssn) == 0,
                       "the store holds the model's people, in order");
        }
    }
    return count;
}

/* Every one of the count people deleted by name, as DELETE does, and the
 * emptied store checked. Returns the entries taken out, which the caller
 * frees once it has let the lock go. Caller holds the store lock. */
static struct entry **empty_locked(size_t count)
{
    struct store *st = &srv.store;
    struct entry **gone = malloc((count + 1) * sizeof(*gone));

    FUZZ_CHECK(gone != NULL, "memory for the emptying");
    for (size_t i = 0; i < count; i++) {
        struct rb_node *n = rb_first(&st->tree);
        FUZZ_CHECK(n != NULL, "the tree holds its count");
        struct entry *e = RB_ENTRY(n, struct entry, node);
        struct store_mutation mu = {
            .op = STORE_DELETE,
            .key = { .last = entry_last(e), .first = entry_first(e) },
        };
        FUZZ_CHECK(store_apply_locked(st, &mu) == 0 && mu.removed == e,
                   "every person in the tree can be deleted by name");
        gone[i] = mu.removed;
    }
    FUZZ_CHECK(store_count_locked(st) == 0 && rb_first(&st->tree) == NULL &&
               store_check_locked(st) == NULL,
               "an emptied store is empty and consistent");
    return gone;
}

/* So that no input's history (the index's size, a rehash under way, the
 * lock's figures, PRINT's cached listing) changes how the next one runs,
 * the store is checked, emptied and made afresh. */
void fs_check_store(const struct run *run, const struct model *m,
                    const struct lock_policy *policy)
{
    struct store *st = &srv.store;

    FUZZ_CHECK(!store_lock_owned(st), "no store lock is held once the "
               "session has ended");
    FUZZ_CHECK(store_lock(st) == 0, "the store lock");
    size_t count = check_people_locked(run, m);
    struct entry **gone = empty_locked(count);
    FUZZ_CHECK(store_unlock(st) == 0, "the store lock");
    for (size_t i = 0; i < count; i++)  /* freed outside the lock */
        entry_free(gone[i]);
    free(gone);
    store_destroy(st);
    FUZZ_CHECK(store_init(st, policy) == 0, "a fresh store");
}
