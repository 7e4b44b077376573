/* bench_conn.c -- one ssn-bench connection on its worker's event loop:
 * keep up to `pipeline` requests in flight, match each reply to the oldest
 * one, count it, time it, send the next (bench_conn_int.h). Reading is one
 * recv into the worker's buffer, behind whatever part of a reply the last
 * read left (so the dialect's parser always sees a reply from its first
 * byte); writing is one send of every request built since, with a write
 * event only while the socket is full, as Redis's networking.c does.
 *
 * Everything here runs on the worker's thread. A failure on any
 * connection fails the whole run: the counts would no longer mean much.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "bench_conn_int.h"
#include "termsafe.h"
#include "timeutil.h"

/* Records the first failure of w, stops its loop and tells every other
 * worker to stop. Returns -1. */
static int __attribute__((format(printf, 2, 3)))
conn_fail(struct bench_conn *c, const char *fmt, ...)
{
    struct bench_worker *w = c->w;
    if (!w->failed) {
        va_list ap;
        int n = snprintf(w->fail, sizeof(w->fail), "connection %u: ", c->id);
        va_start(ap, fmt);
        vsnprintf(w->fail + n, sizeof(w->fail) - (size_t)n, fmt, ap);
        va_end(ap);
        w->failed = 1;
    }
    atomic_store(&w->set->abort, 1);
    event_base_loopbreak(w->base);
    return -1;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* Whether c may send another request in this phase (room in the
 * pipeline aside). */
static int conn_may_send(const struct bench_conn *c)
{
    const struct bench_worker *w = c->w;
    if (w->stopping)
        return 0;
    switch (w->phase) {
    case BPH_AUTH:
        return c->sent == 0;
    case BPH_PRELOAD:
        return w->next_key < w->end_key;
    case BPH_RUN:
        return w->budget > 0;
    }
    return 0;
}

/* A new key for an ADD (--new-keys): the workers draw numbers i * nw + id
 * in turn, so no two requests of the run ever name the same one. Returns
 * 0, or -1 when the run has used them all. */
static int conn_new_key(struct bench_conn *c, uint64_t *key)
{
    struct bench_worker *w = c->w;
    const struct bench_plan *p = w->p;
    uint64_t i = w->new_keys * w->set->nw + w->id;

    if (i >= BENCH_NEW_KEYS)
        return conn_fail(c, "--new-keys: all %llu new keys are used",
                         (unsigned long long)BENCH_NEW_KEYS);
    w->new_keys++;
    *key = bench_new_key(p->keys > p->preload ? p->keys : p->preload, i);
    return 0;
}

/* The next request of the phase; takes it from the budget or the keys.
 * Returns 0 or -1 (failed). */
static int conn_next(struct bench_conn *c, struct bench_req *rq)
{
    struct bench_worker *w = c->w;
    rq->key = 0;
    switch (w->phase) {
    case BPH_AUTH:
        rq->op = BOP_AUTH;
        return 0;
    case BPH_PRELOAD:
        rq->op = BOP_ADD;
        rq->key = w->next_key++;
        return 0;
    case BPH_RUN:
        break;
    }
    if (w->budget != UINT64_MAX)
        w->budget--;
    unsigned pick = (unsigned)((rng_next(&w->rng) >> 32) % w->mix_total);
    const unsigned *mix = w->p->mix;
    rq->op = pick < mix[0] ? BOP_ADD
             : pick < mix[0] + mix[1] ? BOP_FIND : BOP_DELETE;
    if (rq->op == BOP_ADD && w->p->new_keys)
        return conn_new_key(c, &rq->key);
    rq->key = rng_next(&w->rng) % w->p->keys;
    return 0;
}

/* Room for one more request in c->out. Returns 0 or -1 (failed). */
static int conn_out_room(struct bench_conn *c)
{
    if (c->ocap - c->olen >= BENCH_REQ_MAX)
        return 0;
    if (c->opos > 0) {              /* what was written makes room first */
        memmove(c->out, c->out + c->opos, c->olen - c->opos);
        c->olen -= c->opos;
        c->opos = 0;
        if (c->ocap - c->olen >= BENCH_REQ_MAX)
            return 0;
    }
    size_t cap = c->ocap ? 2 * c->ocap : 4 * BENCH_REQ_MAX;
    char *p = realloc(c->out, cap);
    if (!p)
        return conn_fail(c, "out of memory for requests");
    c->out = p;
    c->ocap = cap;
    return 0;
}

/* Builds requests until the pipeline is full or the phase has no more for
 * c. Returns 0 or -1. */
static int conn_fill(struct bench_conn *c, uint64_t now)
{
    struct bench_worker *w = c->w;
    unsigned depth = w->p->pipeline;

    while (c->count < depth && conn_may_send(c)) {
        struct bench_req rq;
        if (conn_out_room(c))
            return -1;
        if (conn_next(c, &rq))
            return -1;
        size_t n = w->p->dialect->build((enum bench_op)rq.op, rq.key,
                                        w->p->password, c->out + c->olen);
        if (n == 0)
            return conn_fail(c, "%s: cannot build a %s request",
                             w->p->dialect->name,
                             bench_op_name((enum bench_op)rq.op));
        if (c->count == 0)
            c->last_rx_ns = now;    /* the hang clock starts now */
        rq.t_ns = now;
        c->olen += n;
        c->ring[(c->head + c->count) % depth] = rq;
        c->count++;
        c->sent++;
        w->counts.sent++;
    }
    return 0;
}

/* A failed write: often the server hung up after one last line ("Error:
 * too many connections"), which may still be there to read. */
static int conn_fail_write(struct bench_conn *c, int err)
{
    char last[96], shown[80];
    ssize_t n = recv(c->fd, last, sizeof(last), MSG_DONTWAIT);
    if (n > 0)
        return conn_fail(c, "write: %s (the server's last words: '%s')",
                         strerror(err), bench_show(last, (size_t)n, shown,
                                                   sizeof(shown)));
    if (c->last_err[0])
        return conn_fail(c, "write: %s (its last error reply: '%s')",
                         strerror(err), c->last_err);
    return conn_fail(c, "write: %s", strerror(err));
}

/* Writes what c->out holds, as far as the socket takes it; the write
 * event finishes the rest. Returns 0 or -1. */
static int conn_flush(struct bench_conn *c)
{
    while (c->opos < c->olen) {
        ssize_t n = send(c->fd, c->out + c->opos, c->olen - c->opos,
                         MSG_NOSIGNAL);
        if (n > 0) {
            c->opos += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return event_add(c->wev, NULL) ? conn_fail(c, "event_add") : 0;
        return conn_fail_write(c, errno);
    }
    c->opos = c->olen = 0;
    event_del(c->wev);
    return 0;
}

/* Marks c done when it has nothing in flight and nothing more to send;
 * the last connection done ends the worker's loop. */
static void conn_check_done(struct bench_conn *c)
{
    struct bench_worker *w = c->w;
    if (c->done || c->count > 0 || conn_may_send(c))
        return;
    c->done = 1;
    if (--w->active == 0)
        event_base_loopbreak(w->base);
}

/* Counts one reply to rq and times it. Returns 0 or -1. */
static int conn_account(struct bench_conn *c, const struct bench_req *rq,
                        const struct bench_reply *r, uint64_t now)
{
    struct bench_worker *w = c->w;

    if (w->phase == BPH_AUTH && r->kind != BK_STORED) {
        char shown[80];
        return conn_fail(c, "AUTH refused: '%s'", bench_show(r->text,
                         r->text_len, shown, sizeof(shown)));
    }
    w->counts.replies++;
    w->counts.kind[r->kind]++;
    w->counts.error_replies += r->is_error != 0;
    if (r->kind == BK_ERROR) {
        size_t n = r->text_len < BENCH_LASTERR - 1 ? r->text_len
                                                   : BENCH_LASTERR - 1;
        /* Printed in the report: no terminal escape gets through. */
        c->last_err[term_safe(r->text, n, c->last_err)] = '\0';
        if (!w->first_error[0])
            snprintf(w->first_error, sizeof(w->first_error), "%s",
                     c->last_err);
    }
    if (w->phase == BPH_RUN)
        hist_record(&w->lat, now - rq->t_ns);
    return 0;
}

/* Parses every whole reply in buf[0..len) and returns how many bytes they
 * took, or -1. */
static long conn_replies(struct bench_conn *c, const char *buf, size_t len,
                         uint64_t now)
{
    const struct bench_dialect *d = c->w->p->dialect;
    size_t pos = 0;

    while (pos < len) {
        char err[BENCH_ERR_MAX];
        struct bench_reply r;
        if (c->count == 0) {
            char shown[48];
            return conn_fail(c, "%s: a reply with no request in flight: "
                             "'%s'", d->name, bench_show(buf + pos, len - pos,
                             shown, sizeof(shown)));
        }
        const struct bench_req *rq = &c->ring[c->head];
        long took = d->parse((enum bench_op)rq->op, rq->key, buf + pos,
                             len - pos, &r, err, sizeof(err));
        if (took == 0)
            break;
        if (took < 0)
            return conn_fail(c, "reply %llu: %s",
                             (unsigned long long)(c->sent - c->count + 1),
                             err);
        if (conn_account(c, rq, &r, now))
            return -1;
        pos += (size_t)took;
        c->head = (c->head + 1) % c->w->p->pipeline;
        c->count--;
    }
    return (long)pos;
}

/* Keeps the unparsed tail of a read for the next one. Returns 0 or -1. */
static int conn_keep_part(struct bench_conn *c, const char *tail, size_t n)
{
    c->plen = 0;
    if (n == 0)
        return 0;
    if (n > BENCH_PART_MAX)
        return conn_fail(c, "a reply longer than %d bytes", BENCH_PART_MAX);
    if (!c->part && !(c->part = malloc(BENCH_PART_MAX)))
        return conn_fail(c, "out of memory");
    memcpy(c->part, tail, n);
    c->plen = n;
    return 0;
}

void bench_conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
    struct bench_conn *c = arg;
    struct bench_worker *w = c->w;
    char *buf = w->rbuf;
    (void)what;

    if (w->failed)
        return;
    if (c->plen)                    /* part is NULL until first needed */
        memcpy(buf, c->part, c->plen);
    ssize_t n = recv(fd, buf + c->plen, BENCH_RBUF, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n < 0) {
        conn_fail(c, "read: %s (%u request%s in flight)", strerror(errno),
                  c->count, c->count == 1 ? "" : "s");
        return;
    }
    if (n == 0) {
        conn_fail(c, "the server closed the connection with %u requests in "
                  "flight%s%s%s", c->count, c->last_err[0] ? " (its last "
                  "error reply: '" : "", c->last_err,
                  c->last_err[0] ? "')" : "");
        return;
    }
    uint64_t now = time_now_ns();
    size_t len = c->plen + (size_t)n;
    long used = conn_replies(c, buf, len, now);
    if (used < 0 || conn_keep_part(c, buf + used, len - (size_t)used))
        return;
    if (used > 0)               /* a whole reply: a server that drips
                                   bytes does not hold the hang clock */
        c->last_rx_ns = w->last_rx_ns = now;
    atomic_store_explicit(&w->progress, w->counts.replies,
                          memory_order_relaxed);
    if (w->deadline_ns && now >= w->deadline_ns)
        w->stopping = 1;
    if (conn_fill(c, now) == 0 && conn_flush(c) == 0)
        conn_check_done(c);
}

void bench_conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
    struct bench_conn *c = arg;
    (void)fd;
    (void)what;
    if (!c->w->failed)
        conn_flush(c);
}

void bench_worker_tick_cb(evutil_socket_t fd, short what, void *arg)
{
    struct bench_worker *w = arg;
    uint64_t now = time_now_ns();
    (void)fd;
    (void)what;

    if (atomic_load(&w->set->abort)) {
        event_base_loopbreak(w->base);
        return;
    }
    if (atomic_load(&w->set->drain) ||
        (w->deadline_ns && now >= w->deadline_ns))
        w->stopping = 1;
    for (unsigned i = 0; i < w->nconns && !w->failed; i++) {
        struct bench_conn *c = &w->conns[i];
        if (c->count > 0 && now - c->last_rx_ns > w->p->hang_ns)
            conn_fail(c, "no reply for %.1f s with %u request%s in flight",
                      (double)w->p->hang_ns / TIME_NS_PER_SEC, c->count,
                      c->count == 1 ? "" : "s");
        conn_check_done(c);
    }
}

void *bench_worker_main(void *arg)
{
    struct bench_worker *w = arg;
    uint64_t now = time_now_ns();

    w->last_rx_ns = now;
    w->active = w->nconns;
    for (unsigned i = 0; i < w->nconns && !w->failed; i++) {
        struct bench_conn *c = &w->conns[i];
        c->done = 0;
        c->sent = 0;
        if (conn_fill(c, time_now_ns()) == 0 && conn_flush(c) == 0)
            conn_check_done(c);
    }
    if (!w->failed && w->active > 0)
        event_base_dispatch(w->base);

    struct bench_set *s = w->set;
    pthread_mutex_lock(&s->lock);
    s->running--;
    pthread_cond_signal(&s->finished);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}
