/* session.c -- the session core (session.h): requests in, one reply each
 * out, no I/O of its own. Also the reply builder of reply.h.
 *
 * Every complete request already received is answered before the driver
 * receives again, and the replies of such a batch leave in one write. The
 * commands themselves are in commands.c; the store is touched only there
 * and in print.c and tree.c, between the policy's op_enter and op_leave.
 * Every byte for the client leaves through emit(), which asserts that no
 * store operation's lock is held, and carries the journal mark.
 */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "listing.h"
#include "lockmode.h"
#include "metrics.h"
#include "proto.h"
#include "reply.h"
#include "server.h"
#include "session.h"
#include "timeutil.h"
#include "trace.h"
#include "store.h"

/* ---- replies ----------------------------------------------------------- */

void reply_begin(struct session *s)
{
    s->reply_mark = s->out.len;
    s->reply_failed = 0;
}

/* ---- the slice's histograms -------------------------------------------- */

/* Gives back the slice's set of histograms: at the slice's end, before a
 * request that may wait (every one but the batchable ADD, DELETE, FIND
 * and COUNT: a TREE's turn, the store lock behind O(n) holds, an AUTH's
 * delay), and before a send that may block (a blocking driver's). A set is
 * 135 KiB, and sets are made for as many slices as ever held one at once
 * and kept: 500 threads queued behind CHECKs or TREEs held one each, 69 MB
 * (docs/LIMITS.md). The next request measured takes one again, most often
 * the same (metrics.c's slot hint). */
static void ms_give(struct session *s)
{
    metrics_give(s->ms);
    s->ms = NULL;
}

/* A request of cmd took ns, from its parse to its reply's end: into the
 * slice's set (metrics.h), taken when it has none. */
static void measure(struct session *s, enum proto_cmd cmd, uint64_t ns)
{
    int i = metrics_cmd_of(cmd);

    if (i < 0)
        return;
    if (!s->ms && !(s->ms = metrics_take()))
        return;                 /* no memory: this one goes unmeasured */
    metrics_record(s->ms, i, ns);
}

/* ---- the one way out ---------------------------------------------------- */

void session_send_failed(struct session *s, int rc)
{
    s->ending = 1;
    s->send_error = rc;
}

/* Every byte a client gets leaves here (but fine's streamed PRINT, by
 * reply_send_locked), marked with the journal record the replies so far
 * acknowledge. The mark goes with the bytes: a driver releases its output
 * in order, so later bytes can never overtake these, and need no mark of
 * their own for records already marked. Never under the store lock for a
 * store operation: a client that does not read would hold it. */
static int emit(struct session *s, const void *data, size_t len)
{
    STORE_ASSERT_NOT_HELD(s->store);
    if (!s->io->never_waits)
        ms_give(s);                     /* it may block */
    uint64_t t = trace_begin();
    int rc = s->io->send(s->io_arg, data, len, s->journal_seq);
    trace_end(TRACE_SEND, t, (uint32_t)len);
    s->journal_seq = 0;
    if (rc)
        session_send_failed(s, rc);
    return rc;
}

/* A shared PRINT listing, the same way out as emit's bytes. */
static int emit_listing(struct session *s, struct listing *l)
{
    STORE_ASSERT_NOT_HELD(s->store);
    if (!s->io->never_waits)
        ms_give(s);                     /* it may block */
    uint64_t t = trace_begin();
    size_t len = l->len;                /* l may be gone once sent */
    int rc = s->io->send_listing(s->io_arg, l, s->journal_seq);
    trace_end(TRACE_SEND, t, (uint32_t)len);
    s->journal_seq = 0;
    if (rc)
        session_send_failed(s, rc);
    return rc;
}

int reply_send_listing(struct session *s, struct listing *l)
{
    int rc = session_flush(s);              /* earlier replies first */

    if (rc) {
        listing_put(l);
        return rc;
    }
    if (s->io->send_listing)
        return emit_listing(s, l);          /* the driver's reference */
    rc = emit(s, l->data, l->len);
    listing_put(l);
    return rc;
}

int reply_send_locked(struct session *s)
{
    int rc = 0;

    assert(s->journal_seq == 0);        /* sent before the lock was taken */
    if (s->out.len) {
        uint64_t t = trace_begin();
        rc = s->io->send_locked(s->io_arg, s->out.buf, s->out.len);
        trace_end(TRACE_SEND, t, (uint32_t)s->out.len);
    }
    s->out.len = 0;
    s->reply_mark = 0;
    if (rc)
        session_send_failed(s, rc);
    return rc;
}

int reply_drained(const struct session *s)
{
    return s->out.len == 0 && (!s->io->drained || s->io->drained(s->io_arg));
}

/* Over the output limit while earlier replies of the batch are still held
 * back: those go to the client first (the limit is about what the client
 * has not taken, not about what the server chose to batch). Returns 0 when
 * there is room to try again. */
static int send_earlier(struct session *s)
{
    if (s->reply_mark == 0)
        return -ENOBUFS;
    cmd_batch_end(s);                   /* no send under a batch's hold */
    int rc = emit(s, s->out.buf, s->reply_mark);
    if (rc)
        return rc;
    ob_consume(&s->out, s->reply_mark);
    s->reply_mark = 0;
    return 0;
}

void reply_put(struct session *s, const void *data, size_t len)
{
    if (s->reply_failed)
        return;
    s->reply_failed = ob_append(&s->out, data, len);
    if (s->reply_failed == -ENOBUFS && send_earlier(s) == 0)
        s->reply_failed = ob_append(&s->out, data, len);
}

void reply_puts(struct session *s, const char *str)
{
    reply_put(s, str, strlen(str));
}

void reply_printf(struct session *s, const char *fmt, ...)
{
    va_list ap;

    if (s->reply_failed)
        return;
    va_start(ap, fmt);
    s->reply_failed = ob_vprintf(&s->out, fmt, ap);
    va_end(ap);
    if (s->reply_failed == -ENOBUFS && send_earlier(s) == 0) {
        va_start(ap, fmt);
        s->reply_failed = ob_vprintf(&s->out, fmt, ap);
        va_end(ap);
    }
}

int reply_failed(const struct session *s)
{
    return s->reply_failed != 0;
}

void reply_limit_exceeded(struct session *s)
{
    s->reply_failed = -ENOBUFS;
}

int reply_send_now(struct session *s)
{
    int rc = session_flush(s);
    s->reply_mark = 0;
    return rc;
}

/* One reply per request: a reply that lost a part is replaced whole. If
 * even the error line cannot be appended, what is buffered goes to the
 * client first, after which the buffer's own capacity (at least
 * SESSION_OUT_INITIAL) holds it without allocating. */
void reply_end(struct session *s)
{
    const char *err = PROTO_ERR_NOMEM_LINE;

    if (!s->reply_failed)
        return;
    if (s->reply_failed == -ENOBUFS) {
        err = PROTO_ERR_LIMIT_LINE;
        s->output_limited = 1;
        s->ending = 1;
    }
    ob_truncate(&s->out, s->reply_mark);
    if (ob_puts(&s->out, err)) {
        cmd_batch_end(s);               /* no send under a batch's hold */
        if (reply_send_now(s) == 0)
            ob_puts(&s->out, err);
    }
    s->reply_failed = 0;
}

/* ---- input and output -------------------------------------------------- */

/* Before AUTH only AUTH, HELP and QUIT are served. */
static int needs_auth(const struct session *s, enum proto_cmd cmd)
{
    return !s->authed && cmd != PROTO_AUTH && cmd != PROTO_HELP &&
           cmd != PROTO_QUIT && cmd != PROTO_INVALID;
}

/* Runs one parsed request into the current reply: 0, or CMD_WAITS when
 * it must run again later (session_waiting), its reply not begun. */
static int run(struct session *s, enum proto_cmd cmd, const char *err,
               const struct proto_req *req)
{
    if (cmd == PROTO_INVALID) {
        reply_printf(s, "%s\n", err);
        return 0;
    }
    if (needs_auth(s, cmd)) {
        reply_puts(s, "Error: authentication required\n");
        return 0;
    }
    if (cmd == PROTO_AUTH)
        return cmd_auth(s, req->secret, req->secret_len);
    return cmd_run(s, cmd);
}

/* The running request's fields, one per thread: one request at a time
 * runs on a thread, and nothing reads them once it has run, so an idle
 * session holds none (144 bytes less each). They hold an SSN until the
 * thread's next request; a session thread wipes them as it ends
 * (session_wipe_thread). */
static _Thread_local struct person req_space;

void session_wipe_thread(void)
{
    explicit_bzero(&req_space, sizeof(req_space));
}

/* Ends the reply of a request that ran. */
static void request_done(struct session *s)
{
    reply_end(s);
    s->commands++;
}

/* Answers one request, or leaves it waiting (s->waiting). Returns what
 * it was (PROTO_BLANK: nothing to answer). */
static enum proto_cmd handle(struct session *s, const char *line, size_t len)
{
    struct proto_req req;
    enum proto_cmd cmd;

    s->req = &req_space;
    s->req_hash = 0;
    if (cmd_kept_take(line, len, &req, s->req, &s->req_hash))
        cmd = req.cmd;          /* the round's look-ahead parsed it */
    else
        cmd = proto_parse(line, len, &req, s->req);

    if (cmd == PROTO_BLANK) {
        s->req = NULL;
        return cmd;             /* no reply at all, not counted */
    }
    /* One store-lock hold covers a run of batchable requests only: any
     * other request (AUTH, PRINT, COMPACT, an error...) may send, log or
     * wait, so it runs with the batch's lock released. */
    if (!cmd_batchable(cmd)) {
        cmd_batch_end(s);
        ms_give(s);                     /* it may wait */
    }
    s->req_depth = req.depth;
    reply_begin(s);
    int rc = run(s, cmd, req.err, &req);
    s->req = NULL;              /* the thread's next request's, soon */
    if (rc == CMD_WAITS) {
        s->waiting = 1;
        s->waiting_cmd = cmd;
        if (cmd != PROTO_AUTH)          /* AUTH says what it waits for */
            s->wait_kind = cmd == PROTO_COMPACT ? SESSION_WAITS_COMPACT
                           : cmd == PROTO_TRACE_STOP ? SESSION_WAITS_TRACE
                                                     : SESSION_WAITS_DRAINED;
        return cmd;
    }
    request_done(s);
    return cmd;
}

/* The request that waited runs again: 1 when it is answered now. */
static int resume(struct session *s)
{
    reply_begin(s);
    if ((s->waiting_cmd == PROTO_AUTH ? cmd_auth_resume(s)
                                      : cmd_run(s, s->waiting_cmd)) ==
        CMD_WAITS)
        return 0;
    s->waiting = 0;
    request_done(s);
    return 1;
}

enum session_wait session_waiting(const struct session *s)
{
    return s->waiting ? (enum session_wait)s->wait_kind : SESSION_RUNS;
}

/* Telnet's answers go out with the replies, in order. */
static void telnet_answer(void *arg, const unsigned char *seq, size_t len)
{
    struct session *s = arg;
    ob_append(&s->out, seq, len);
}

/* Replies of a batch are sent before it ends past this many bytes; under a
 * low output limit, at half of it, so batching alone never reaches it. */
static size_t high_water(const struct session *s)
{
    size_t half = s->out.limit / 2;
    return s->out.limit && half < SESSION_OUT_HIGH_WATER
           ? half : SESSION_OUT_HIGH_WATER;
}

int session_received(struct session *s, size_t n)
{
    return session_received_slice(s, n, 0, NULL);
}

void session_received_bytes(struct session *s, size_t n)
{
    size_t room;
    char *fresh = lr_space(&s->in, &room);  /* where those n bytes are */

    lr_commit(&s->in, telnet_filter(&s->tn, fresh, n, room, telnet_answer, s));
}

/* One clock read per request: its end is the next one's start (t0), and
 * the slice's budget is checked against it. A flush mid-slice (high
 * water) reads it once more, so the send is nobody's latency. */
int session_received_slice(struct session *s, size_t n, uint64_t budget_ns,
                           int *more)
{
    uint64_t t0 = time_now_ns(), now;
    uint64_t until = budget_ns ? t0 + budget_ns : 0;
    enum proto_cmd cmd;
    char *line;
    size_t len;
    int st;

    if (n)
        session_received_bytes(s, n);
    if (more)
        *more = 0;
    if (s->waiting) {
        if (!resume(s))
            return s->ending;
        t0 = time_now_ns();
        measure(s, s->waiting_cmd, t0 - s->waited_from);
    }
    while (!s->ending && !s->waiting &&
           (st = lr_next(&s->in, &line, &len)) != LR_AGAIN) {
        cmd = PROTO_BLANK;
        if (st == LR_TOOLONG) {
            s->commands++;
            reply_begin(s);
            reply_puts(s, "Error: line too long\n");
            reply_end(s);
        } else {
            cmd = handle(s, line, len);
        }
        now = time_now_ns();
        if (s->waiting)
            s->waited_from = t0;    /* measured when it is answered */
        else
            measure(s, cmd, now - t0);
        t0 = now;
        if (s->out.len >= high_water(s)) {
            cmd_batch_end(s);           /* no I/O under the store lock */
            session_flush(s);
            t0 = time_now_ns();
        }
        if (until && t0 >= until) {
            if (more)
                *more = !s->ending && !s->waiting;  /* maybe more lines */
            break;
        }
    }
    cmd_slice_end(s);
    ms_give(s);
    if (s->compact_due) {
        cmd_batch_end(s);               /* a round's hold too */
        cmd_compact_due(s);
    }
    atomic_fetch_add(&srv.commands_total, s->commands);
    s->commands = 0;
    return s->ending;
}

int session_input(struct session *s, const void *data, size_t len)
{
    const char *p = data;

    while (len > 0 && !s->ending) {
        size_t room;
        char *dst = session_recv_space(s, &room);
        if (!dst) {
            s->ending = 1;              /* no memory for its buffers */
            break;
        }
        size_t n = len < room ? len : room;

        memcpy(dst, p, n);
        session_received(s, n);
        p += n;
        len -= n;
    }
    return s->ending;
}

const char *session_output(const struct session *s, size_t *len)
{
    *len = s->out.len;
    return s->out.buf;
}

void session_output_sent(struct session *s, size_t n)
{
    ob_consume(&s->out, n);
}

/* A reply that acknowledges a mutation leaves only once the mutation is
 * durable: the mark says so to the driver. When it cannot become durable,
 * the driver sends none of it (the client must not believe it) and the
 * connection ends. */
int session_flush(struct session *s)
{
    int rc = 0;

    if (s->out.len)
        rc = emit(s, s->out.buf, s->out.len);
    s->out.len = 0;
    if (s->out.cap > SESSION_OUT_SHRINK)
        ob_shrink(&s->out, SESSION_OUT_INITIAL);
    return rc;
}
