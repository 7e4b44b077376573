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
    pthread_cond_t space;       /* the reader freed ring slots */
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

/* Frames every complete line buffered. A line with no request waiting
 * for it is counted as bad and otherwise ignored. */
static void reader_lines(struct pl *p, struct framer *f, struct slot *cur,
                         int *toolong)
{
    char *line;
    size_t len;
    int st;

    while ((st = lr_next(&p->lr, &line, &len)) != LR_AGAIN) {
        if (st == LR_TOOLONG) {
            line = (char *)"";
            len = 0;
        }
        if (f->state == FRAME_IDLE) {
            pthread_mutex_lock(&p->mu);
            int waiting = p->tail != p->head;
            if (waiting)
                *cur = p->ring[p->tail % PL_MAX_INFLIGHT];
            pthread_mutex_unlock(&p->mu);
            if (!waiting) {
                p->r->bad++;            /* nobody asked for this line */
                continue;
            }
            frame_begin(f, cur->cmd);
            *toolong = 0;
        }
        *toolong |= st == LR_TOOLONG;
        if (p->o->echo) {
            fwrite(line, 1, len, p->o->echo);
            putc('\n', p->o->echo);
        }
        if (frame_line(f, line, len))
            reply_done(p, f, cur, *toolong);
    }
}

static void *reader_main(void *arg)
{
    struct pl *p = arg;
    const struct pl_opts *o = p->o;
    struct framer f;
    struct slot cur = { 0, 0 };
    int toolong = 0;
    uint64_t vt = time_now_ns(), last_rx = p->t_start;
    uint64_t hang_ns = time_s_to_ns(o->hang_s);

    frame_init(&f);
    for (;;) {
        reader_lines(p, &f, &cur, &toolong);
        if (o->echo)
            fflush(o->echo);

        pthread_mutex_lock(&p->mu);
        uint64_t due = p->head - p->tail;
        int finished = p->sender_done && due == 0;
        uint64_t oldest = due ? p->ring[p->tail % PL_MAX_INFLIGHT].t_ns : 0;
        pthread_mutex_unlock(&p->mu);
        if (finished || atomic_load(&p->abort))
            break;
        if (o->stop && atomic_load(o->stop)) {
            fail_set(p, PL_ERR_STOPPED, "stopped from outside");
            break;
        }
        uint64_t now = time_now_ns();
        if (p->deadline && now >= p->deadline) {
            fail_set(p, PL_ERR_TIMEOUT, "timed out after %.1f s with %llu "
                     "replies outstanding", o->timeout_s,
                     (unsigned long long)due);
            break;
        }
        uint64_t quiet_since = oldest > last_rx ? oldest : last_rx;
        if (hang_ns && due && now > quiet_since + hang_ns) {
            fail_set(p, PL_ERR_HUNG, "server hung: nothing received for "
                     "%.1f s with %llu replies outstanding",
                     time_ns_to_s(now - quiet_since), (unsigned long long)due);
            break;
        }

        int ev = net_wait(p->fd, POLLIN, NET_POLL_MS);
        if (ev == 0)
            continue;
        if (ev < 0) {
            fail_errno(p, -ev, "waiting for replies");
            break;
        }
        ssize_t n = lr_fill(&p->lr);
        if (n > 0) {
            last_rx = time_now_ns();
            p->r->bytes_in += (uint64_t)n;
            if (o->progress) {
                atomic_fetch_add_explicit(&o->progress->bytes_in, (uint64_t)n,
                                          memory_order_relaxed);
                atomic_store_explicit(&o->progress->last_rx_ns, last_rx,
                                      memory_order_relaxed);
            }
            if (o->rate)
                rate_wait(p, &vt, (uint64_t)n);
            continue;
        }
        if (n == -EAGAIN || n == -EWOULDBLOCK)
            continue;
        /* End of stream or reset: clean only when nothing is owed. */
        reader_lines(p, &f, &cur, &toolong);
        pthread_mutex_lock(&p->mu);
        due = p->head - p->tail;
        finished = p->sender_done && due == 0;
        pthread_mutex_unlock(&p->mu);
        if (finished)
            break;
        if (n == 0)
            fail_set(p, PL_ERR_CLOSED, "server closed the connection with "
                     "%llu replies outstanding", (unsigned long long)due);
        else
            fail_errno(p, (int)-n, "waiting for replies");
        break;
    }
    if (o->echo)
        fflush(o->echo);
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

static void sender_run(struct pl *p, struct pl_source *src, char *batch)
{
    int kinds[PL_BATCH_REQS];
    int src_done = 0;

    while (!src_done && !atomic_load(&p->abort)) {
        size_t blen = 0, nreq = 0;
        while (PL_BATCH_BYTES - blen >= PL_LINE_MAX && nreq < PL_BATCH_REQS) {
            int cmd = PROTO_INVALID;
            ssize_t n = src->next(src->arg, batch + blen, PL_LINE_MAX, &cmd);
            if (n > 0) {
                kinds[nreq++] = cmd;
                blen += (size_t)n;
                if (cmd == PROTO_QUIT) {    /* the server closes after it */
                    src_done = 1;
                    break;
                }
            } else if (n == 0) {
                src_done = 1;
                break;
            } else if (n == -EAGAIN) {
                if (nreq > 0)
                    break;                  /* send what we have first */
                if (source_wait(p, src) < 0)
                    return;
            } else {
                fail_set(p, PL_ERR_SOURCE, "reading requests: %s",
                         strerror((int)-n));
                return;
            }
        }

        pthread_mutex_lock(&p->mu);
        while (p->head - p->tail + nreq > PL_MAX_INFLIGHT &&
               !atomic_load(&p->abort)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += NET_POLL_MS * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&p->space, &p->mu, &ts);
        }
        /* Slots are published before the bytes leave, so a reply can never
         * arrive for a request the reader does not know about yet. */
        uint64_t now = time_now_ns();
        for (size_t i = 0; i < nreq; i++) {
            struct slot *s = &p->ring[(p->head + i) % PL_MAX_INFLIGHT];
            s->t_ns = now;
            s->cmd = kinds[i];
        }
        p->head += nreq;
        if (p->head - p->tail > p->r->inflight_max)
            p->r->inflight_max = p->head - p->tail;
        if (src_done)
            p->sender_done = 1;
        pthread_mutex_unlock(&p->mu);
        if (nreq == 0 || atomic_load(&p->abort))
            continue;

        size_t sent = 0;
        int rc = net_send_all(p->fd, batch, blen, p->deadline, &p->abort,
                              &sent);
        p->r->bytes_out += sent;
        if (rc) {
            fail_errno(p, -rc, "sending requests");
            return;
        }
        p->r->requests += nreq;
        if (p->o->progress)
            atomic_fetch_add_explicit(&p->o->progress->sent, nreq,
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
    pthread_cond_init(&p->space, NULL);

    p->t_start = time_now_ns();
    p->deadline = o->timeout_s > 0 ? p->t_start + time_s_to_ns(o->timeout_s)
                                   : 0;
    int rcvbuf = o->rcvbuf ? o->rcvbuf : o->rate ? PL_RATE_RCVBUF : 0;
    int conn_ms = o->timeout_s > 0 ? (int)(o->timeout_s * 1000) + 1
                                   : PL_CONNECT_MS;
    if (conn_ms > PL_CONNECT_MS)
        conn_ms = PL_CONNECT_MS;
    int mss = o->mss ? o->mss : o->rate ? PL_RATE_MSS : 0;
    p->fd = net_connect(o->host, o->port, rcvbuf, mss, conn_ms, r->what,
                        sizeof(r->what));
    if (p->fd < 0) {
        r->fail = PL_ERR_CONNECT;
        p->end_ns = time_now_ns();
        goto done;
    }
    lr_init(&p->lr, p->fd, PL_REPLY_MAX);

    pthread_t reader;
    int rc = pthread_create(&reader, NULL, reader_main, p);
    if (rc) {
        r->fail = PL_ERR_INTERNAL;
        snprintf(r->what, sizeof(r->what), "pthread_create: %s", strerror(rc));
        close(p->fd);
        goto done;
    }
    sender_run(p, src, batch);
    pthread_mutex_lock(&p->mu);
    p->sender_done = 1;
    pthread_mutex_unlock(&p->mu);
    pthread_join(reader, NULL);
    close(p->fd);
done:
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
