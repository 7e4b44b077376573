/* pipeline.c -- one pipelined session: sender in the caller's thread,
 * receiver in a thread of its own (pipeline.h).
 *
 * Locking: pl.mu guards the in-flight ring (head, tail, slots), sender_done
 * and the failure record. Everything else belongs to one side: the sender
 * owns requests/bytes_out, the reader owns the framer, the histogram and the
 * reply counters. abort is an atomic so blocked waits can poll it.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "frame.h"
#include "net.h"
#include "pipeline.h"
#include "proto.h"
#include "timeutil.h"

#define PL_LINE_MAX     (PROTO_MAX_LINE + 2)    /* request line + "\r\n" */
#define PL_BATCH_REQS   1024    /* requests per send, at most */

struct slot {
    uint64_t t_ns;              /* when its batch was handed to send() */
    int cmd;                    /* enum proto_cmd */
};

struct pl {
    const struct pl_opts *o;
    struct pl_result *r;
    struct hist *lat;
    int fd;
    uint64_t t_start, deadline; /* deadline 0: none */
    atomic_int abort;           /* either side gave up */

    pthread_mutex_t mu;
    pthread_cond_t space;       /* the reader freed ring slots (its timed
                                   waits run on CLOCK_MONOTONIC) */
    struct slot *ring;          /* PL_MAX_INFLIGHT slots; protected by mu */
    uint64_t head, tail;        /* next to send, oldest unanswered; mu */
    int sender_done;            /* nothing more will be pushed; mu */
    uint64_t end_ns;            /* last reply or failure; mu */

    struct linereader lr;       /* the reader's */
};

const char *pl_fail_name(int fail)
{
    static const char *const names[] = {
        "ok", "connect", "reset", "closed", "hung", "timeout", "io",
        "source", "stopped", "internal",
    };
    return fail >= 0 && fail <= PL_ERR_INTERNAL ? names[fail] : "unknown";
}

/* Records the first failure only, and tells the other side to stop. */
static void fail_set(struct pl *p, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail_set(struct pl *p, int kind, const char *fmt, ...)
{
    pthread_mutex_lock(&p->mu);
    if (p->r->fail == PL_OK) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->r->what, sizeof(p->r->what), fmt, ap);
        va_end(ap);
        p->r->fail = kind;
        p->end_ns = time_now_ns();
    }
    pthread_mutex_unlock(&p->mu);
    atomic_store(&p->abort, 1);
    pthread_cond_broadcast(&p->space);
}

static void fail_errno(struct pl *p, int err, const char *doing)
{
    if (err == ECONNRESET)
        fail_set(p, PL_ERR_RESET, "connection reset by the server while %s",
                 doing);
    else if (err == EPIPE)
        fail_set(p, PL_ERR_CLOSED, "server closed the connection while %s",
                 doing);
    else if (err == ETIMEDOUT)
        fail_set(p, PL_ERR_TIMEOUT, "timed out after %.1f s while %s",
                 p->o->timeout_s, doing);
    else if (err != ECANCELED)
        fail_set(p, PL_ERR_IO, "%s while %s", strerror(err), doing);
}

/* ---- the receiving side ---------------------------------------------- */

/* The receive-rate limiter: a token bucket kept as a virtual clock. Each
 * byte read pushes *vt on by 1/rate seconds; while *vt is ahead of now we
 * sleep (in short slices). Idle time earns at most PL_RATE_BURST bytes of
 * credit, so a client that waited (for a lock, say) cannot then take its
 * backlog at full speed: a slow link stays slow. */
static void rate_wait(struct pl *p, uint64_t *vt, uint64_t n)
{
    uint64_t now = time_now_ns();
    uint64_t burst = (uint64_t)((double)PL_RATE_BURST * 1e9 /
                                (double)p->o->rate);
    if (*vt + burst < now)
        *vt = now - burst;
    *vt += (uint64_t)((double)n * 1e9 / (double)p->o->rate);
    for (;;) {
        now = time_now_ns();
        if (now >= *vt || atomic_load(&p->abort) ||
            (p->deadline && now >= p->deadline))
            return;
        uint64_t slice = *vt - now;
        if (slice > NET_POLL_MS * TIME_NS_PER_MS)
            slice = NET_POLL_MS * TIME_NS_PER_MS;
        time_sleep_ns(slice);
    }
}

/* One complete reply: latency, counters, and its slot freed. */
static void reply_done(struct pl *p, const struct framer *f,
                       const struct slot *s, int toolong)
{
    uint64_t now = time_now_ns();
    hist_record(p->lat, now > s->t_ns ? now - s->t_ns : 0);
    p->r->replies++;
    p->r->errors += f->error;
    p->r->bad += (f->bad || toolong);
    pthread_mutex_lock(&p->mu);
    p->tail++;
    p->end_ns = now;
    pthread_mutex_unlock(&p->mu);
    pthread_cond_signal(&p->space);
    if (p->o->progress)
        atomic_fetch_add_explicit(&p->o->progress->replies, 1,
                                  memory_order_relaxed);
}

/* The reader thread's own state. */
struct reader {
    struct framer f;
    struct slot cur;            /* the request being answered */
    int toolong;                /* its reply had an over-long line */
    uint64_t vt;                /* rate_wait's virtual clock */
    uint64_t last_rx;           /* when the last byte came in */
    uint64_t hang_ns;           /* o->hang_s; 0: no hang watch */
};

/* Frames every complete line buffered. A line with no request waiting
 * for it is counted as bad and otherwise ignored. */
static void reader_lines(struct pl *p, struct reader *rd)
{
    char *line;
    size_t len;
    int st;

    while ((st = lr_next(&p->lr, &line, &len)) != LR_AGAIN) {
        if (st == LR_TOOLONG) {
            line = (char *)"";
            len = 0;
        }
        if (rd->f.state == FRAME_IDLE) {
            pthread_mutex_lock(&p->mu);
            int waiting = p->tail != p->head;
            if (waiting)
                rd->cur = p->ring[p->tail % PL_MAX_INFLIGHT];
            pthread_mutex_unlock(&p->mu);
            if (!waiting) {
                p->r->bad++;            /* nobody asked for this line */
                continue;
            }
            frame_begin(&rd->f, rd->cur.cmd);
            rd->toolong = 0;
        }
        rd->toolong |= st == LR_TOOLONG;
        if (p->o->echo) {
            fwrite(line, 1, len, p->o->echo);
            putc('\n', p->o->echo);
        }
        if (frame_line(&rd->f, line, len))
            reply_done(p, &rd->f, &rd->cur, rd->toolong);
    }
}

/* Requests sent and not yet answered; *oldest (may be NULL) gets the send
 * time of the oldest of them, 0 when there is none. *finished is 1 when
 * the sender is done and nothing is owed. */
static uint64_t replies_due(struct pl *p, uint64_t *oldest, int *finished)
{
    pthread_mutex_lock(&p->mu);
    uint64_t due = p->head - p->tail;
    *finished = p->sender_done && due == 0;
    if (oldest)
        *oldest = due ? p->ring[p->tail % PL_MAX_INFLIGHT].t_ns : 0;
    pthread_mutex_unlock(&p->mu);
    return due;
}

/* Whether the reader should stop before its next wait: the session is
 * complete, the other side gave up, or one of the limits (stop flag,
 * deadline, hang watch) has just failed it. Returns 1 to stop. */
static int reader_should_stop(struct pl *p, const struct reader *rd)
{
    const struct pl_opts *o = p->o;
    uint64_t oldest;
    int finished;
    uint64_t due = replies_due(p, &oldest, &finished);

    if (finished || atomic_load(&p->abort))
        return 1;
    if (o->stop && atomic_load(o->stop)) {
        fail_set(p, PL_ERR_STOPPED, "stopped from outside");
        return 1;
    }
    uint64_t now = time_now_ns();
    if (p->deadline && now >= p->deadline) {
        fail_set(p, PL_ERR_TIMEOUT, "timed out after %.1f s with %llu "
                 "replies outstanding", o->timeout_s, (unsigned long long)due);
        return 1;
    }
    uint64_t quiet_since = oldest > rd->last_rx ? oldest : rd->last_rx;
    if (rd->hang_ns && due && now > quiet_since + rd->hang_ns) {
        fail_set(p, PL_ERR_HUNG, "server hung: nothing received for "
                 "%.1f s with %llu replies outstanding",
                 time_ns_to_s(now - quiet_since), (unsigned long long)due);
        return 1;
    }
    return 0;
}

/* n > 0 bytes came in: counters, progress, and the rate limit. */
static void reader_got(struct pl *p, struct reader *rd, uint64_t n)
{
    const struct pl_opts *o = p->o;

    rd->last_rx = time_now_ns();
    p->r->bytes_in += n;
    if (o->progress) {
        atomic_fetch_add_explicit(&o->progress->bytes_in, n,
                                  memory_order_relaxed);
        atomic_store_explicit(&o->progress->last_rx_ns, rd->last_rx,
                              memory_order_relaxed);
    }
    if (o->rate)
        rate_wait(p, &rd->vt, n);
}

/* The stream ended (n == 0) or failed (n < 0): clean only when nothing
 * is owed once the last buffered lines are framed. */
static void reader_end(struct pl *p, struct reader *rd, ssize_t n)
{
    int finished;

    reader_lines(p, rd);
    uint64_t due = replies_due(p, NULL, &finished);
    if (finished)
        return;
    if (n == 0)
        fail_set(p, PL_ERR_CLOSED, "server closed the connection with "
                 "%llu replies outstanding", (unsigned long long)due);
    else
        fail_errno(p, (int)-n, "waiting for replies");
}

static void *reader_main(void *arg)
{
    struct pl *p = arg;
    struct reader rd = {
        .vt = time_now_ns(), .last_rx = p->t_start,
        .hang_ns = time_s_to_ns(p->o->hang_s),
    };

    frame_init(&rd.f);
    for (;;) {
        reader_lines(p, &rd);
        if (p->o->echo)
            fflush(p->o->echo);
        if (reader_should_stop(p, &rd))
            break;
        int ev = net_wait(p->fd, POLLIN, NET_POLL_MS);
        if (ev == 0)
            continue;
        if (ev < 0) {
            fail_errno(p, -ev, "waiting for replies");
            break;
        }
        ssize_t n = lr_read(&p->lr, p->fd);
        if (n > 0)
            reader_got(p, &rd, (uint64_t)n);
        else if (n != -EAGAIN && n != -EWOULDBLOCK) {
            reader_end(p, &rd, n);
            break;
        }
    }
    if (p->o->echo)
        fflush(p->o->echo);
    return NULL;
}

/* ---- the sending side ------------------------------------------------- */

/* Waits for the source's fd to have input, bounded by abort and deadline.
 * Returns 0 when the source should be asked again, -1 to give up. */
static int source_wait(struct pl *p, const struct pl_source *src)
{
    for (;;) {
        if (atomic_load(&p->abort))
            return -1;
        if (p->deadline && time_now_ns() >= p->deadline) {
            fail_errno(p, ETIMEDOUT, "reading requests");
            return -1;
        }
        int ev = net_wait(src->fd, POLLIN, NET_POLL_MS);
        if (ev > 0)
            return 0;
        if (ev < 0) {
            fail_set(p, PL_ERR_SOURCE, "reading requests: %s", strerror(-ev));
            return -1;
        }
    }
}

/* One batch of requests: their bytes and their kinds. */
struct batch {
    char *buf;                  /* PL_BATCH_BYTES */
    size_t len, nreq;
    int kinds[PL_BATCH_REQS];   /* enum proto_cmd of each request */
    int src_done;               /* the source has nothing more */
};

/* Fills b from the source: until it is full, the source ends or would
 * block with something gathered. Returns 0, or -1 to give up (the failure
 * is recorded, or the other side gave up). */
static int batch_fill(struct pl *p, struct pl_source *src, struct batch *b)
{
    b->len = b->nreq = 0;
    while (PL_BATCH_BYTES - b->len >= PL_LINE_MAX && b->nreq < PL_BATCH_REQS) {
        int cmd = PROTO_INVALID;
        ssize_t n = src->next(src->arg, b->buf + b->len, PL_LINE_MAX, &cmd);
        if (n > 0) {
            b->kinds[b->nreq++] = cmd;
            b->len += (size_t)n;
            if (cmd == PROTO_QUIT) {        /* the server closes after it */
                b->src_done = 1;
                return 0;
            }
        } else if (n == 0) {
            b->src_done = 1;
            return 0;
        } else if (n == -EAGAIN) {
            if (b->nreq > 0)
                return 0;                   /* send what we have first */
            if (source_wait(p, src) < 0)
                return -1;
        } else {
            fail_set(p, PL_ERR_SOURCE, "reading requests: %s",
                     strerror((int)-n));
            return -1;
        }
    }
    return 0;
}

/* Waits for ring room for b's requests and publishes their slots. Slots
 * are published before the bytes leave, so a reply can never arrive for a
 * request the reader does not know about yet. */
static void batch_publish(struct pl *p, const struct batch *b)
{
    pthread_mutex_lock(&p->mu);
    while (p->head - p->tail + b->nreq > PL_MAX_INFLIGHT &&
           !atomic_load(&p->abort)) {
        struct timespec ts = time_mono_after_ns(NET_POLL_MS * TIME_NS_PER_MS);
        pthread_cond_timedwait(&p->space, &p->mu, &ts);
    }
    uint64_t now = time_now_ns();
    for (size_t i = 0; i < b->nreq; i++) {
        struct slot *s = &p->ring[(p->head + i) % PL_MAX_INFLIGHT];
        s->t_ns = now;
        s->cmd = b->kinds[i];
    }
    p->head += b->nreq;
    if (p->head - p->tail > p->r->inflight_max)
        p->r->inflight_max = p->head - p->tail;
    if (b->src_done)
        p->sender_done = 1;
    pthread_mutex_unlock(&p->mu);
}

static void sender_run(struct pl *p, struct pl_source *src, char *buf)
{
    struct batch b = { .buf = buf };

    while (!b.src_done && !atomic_load(&p->abort)) {
        if (batch_fill(p, src, &b) < 0)
            return;
        batch_publish(p, &b);
        if (b.nreq == 0 || atomic_load(&p->abort))
            continue;

        size_t sent = 0;
        int rc = net_send_all(p->fd, b.buf, b.len, p->deadline, &p->abort,
                              &sent);
        p->r->bytes_out += sent;
        if (rc) {
            fail_errno(p, -rc, "sending requests");
            return;
        }
        p->r->requests += b.nreq;
        if (p->o->progress)
            atomic_fetch_add_explicit(&p->o->progress->sent, b.nreq,
                                      memory_order_relaxed);
    }
}

static void result_finish(struct pl *p)
{
    struct pl_result *r = p->r;
    uint64_t end = p->end_ns ? p->end_ns : time_now_ns();
    r->service_ns = end > p->t_start ? end - p->t_start : 0;
    r->lat_min = p->lat->count ? p->lat->min : 0;
    r->lat_p50 = hist_percentile(p->lat, 50);
    r->lat_p90 = hist_percentile(p->lat, 90);
    r->lat_p99 = hist_percentile(p->lat, 99);
    r->lat_max = p->lat->max;
    r->lat_mean = hist_mean(p->lat);
}

/* Connects: a small receive buffer and Ethernet's segment size under a
 * rate limit, and a connect limit within the session's timeout. Returns 0,
 * or -1 with the failure in p->r. */
static int session_connect(struct pl *p)
{
    const struct pl_opts *o = p->o;
    int rcvbuf = o->rcvbuf ? o->rcvbuf : o->rate ? PL_RATE_RCVBUF : 0;
    int conn_ms = o->timeout_s > 0 ? (int)(o->timeout_s * 1000) + 1
                                   : PL_CONNECT_MS;
    if (conn_ms > PL_CONNECT_MS)
        conn_ms = PL_CONNECT_MS;
    int mss = o->mss ? o->mss : o->rate ? PL_RATE_MSS : 0;

    p->fd = net_connect(o->host, o->port, rcvbuf, mss, conn_ms, p->r->what,
                        sizeof(p->r->what));
    if (p->fd < 0) {
        p->r->fail = PL_ERR_CONNECT;
        p->end_ns = time_now_ns();
        return -1;
    }
    lr_init(&p->lr, PL_REPLY_MAX);
    return 0;
}

/* The connected session: the reader in its thread, the sender here, then
 * the socket closed. Failures land in p->r. */
static void session_run(struct pl *p, struct pl_source *src, char *batch)
{
    pthread_t reader;
    int rc = pthread_create(&reader, NULL, reader_main, p);
    if (rc) {
        p->r->fail = PL_ERR_INTERNAL;
        snprintf(p->r->what, sizeof(p->r->what), "pthread_create: %s",
                 strerror(rc));
        close(p->fd);
        return;
    }
    sender_run(p, src, batch);
    pthread_mutex_lock(&p->mu);
    p->sender_done = 1;
    pthread_mutex_unlock(&p->mu);
    pthread_join(reader, NULL);
    close(p->fd);
}

int pl_run(const struct pl_opts *o, struct pl_source *src,
           struct pl_result *r, struct hist *lat)
{
    memset(r, 0, sizeof(*r));
    struct pl *p = calloc(1, sizeof(*p));
    char *batch = malloc(PL_BATCH_BYTES);
    if (p)
        p->ring = malloc(PL_MAX_INFLIGHT * sizeof(*p->ring));
    if (p)
        p->lat = malloc(sizeof(*p->lat));
    if (!p || !batch || !p->ring || !p->lat) {
        r->fail = PL_ERR_INTERNAL;
        snprintf(r->what, sizeof(r->what), "out of memory");
        goto out;
    }
    p->o = o;
    p->r = r;
    hist_init(p->lat);
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;      /* timed waits on the monotonic clock */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->space, &ca);
    pthread_condattr_destroy(&ca);

    p->t_start = time_now_ns();
    p->deadline = o->timeout_s > 0 ? p->t_start + time_s_to_ns(o->timeout_s)
                                   : 0;
    if (session_connect(p) == 0)
        session_run(p, src, batch);
    result_finish(p);
    if (lat)
        hist_merge(lat, p->lat);
    pthread_cond_destroy(&p->space);
    pthread_mutex_destroy(&p->mu);
out:
    if (p) {
        free(p->ring);
        free(p->lat);
    }
    free(p);
    free(batch);
    return r->fail == PL_OK ? 0 : -1;
}
