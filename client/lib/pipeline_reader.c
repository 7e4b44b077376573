/* pipeline_reader.c -- the receiving side of a pipelined session: a thread
 * of its own that reads replies, frames them (frame.h), matches each to the
 * oldest unanswered request in the ring and records its latency, under a
 * receive-rate limit and the session's time limits. It owns the framer, the
 * histogram and the reply counters; the ring is shared with the sender
 * under pl.mu (pipeline_int.h).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "frame.h"
#include "hist.h"
#include "linereader.h"
#include "net.h"
#include "termsafe.h"
#include "pipeline.h"
#include "pipeline_int.h"
#include "timeutil.h"

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
static uint64_t reply_done(struct pl *p, const struct framer *f,
                           const struct slot *s, int toolong)
{
    uint64_t now = time_now_ns();
    hist_record(p->lat, now > s->t_ns ? now - s->t_ns : 0);
    p->r->replies++;
    p->r->errors += f->error;
    if (f->bad || toolong)
        p->r->bad++;                    /* malformed: no kind of answer */
    else
        p->r->kinds[f->kind]++;
    pthread_mutex_lock(&p->mu);
    p->tail++;
    p->end_ns = now;
    pthread_mutex_unlock(&p->mu);
    pthread_cond_signal(&p->space);
    if (p->o->progress) {
        atomic_fetch_add_explicit(&p->o->progress->replies, 1,
                                  memory_order_relaxed);
        atomic_store_explicit(&p->o->progress->last_reply_ns, now,
                              memory_order_relaxed);
    }
    return now;
}

/* The reader thread's own state. */
struct reader {
    struct framer f;
    struct slot cur;            /* the request being answered */
    int toolong;                /* its reply had an over-long line */
    uint64_t vt;                /* rate_wait's virtual clock */
    uint64_t last_rx;           /* when the last byte came in */
    uint64_t last_reply;        /* when the last whole reply did: the hang
                                   watch's, which bytes dripping in one at
                                   a time do not hold off */
    uint64_t hang_ns;           /* o->hang_s; 0: no hang watch */
};

/* Frames every complete line buffered. A line with no request waiting
 * for it is counted as bad and otherwise ignored. A reply saying the
 * server wants AUTH first fails the session (PL_ERR_AUTH). */
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
            term_fwrite(p->o->echo, line, len);  /* no terminal escapes */
            putc('\n', p->o->echo);
        }
        if (!frame_line(&rd->f, line, len))
            continue;
        rd->last_reply = reply_done(p, &rd->f, &rd->cur, rd->toolong);
        if (rd->f.error && len == strlen(PL_AUTH_REQUIRED) &&
            memcmp(line, PL_AUTH_REQUIRED, len) == 0) {
            /* Every request after it would get the same: say why now. */
            pl_fail_set(p, PL_ERR_AUTH, "the server requires a password: "
                        "it answered '%s' (give --password-file FILE)",
                        PL_AUTH_REQUIRED);
            return;
        }
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
        pl_fail_set(p, PL_ERR_STOPPED, "stopped from outside");
        return 1;
    }
    uint64_t now = time_now_ns();
    if (p->deadline && now >= p->deadline) {
        pl_fail_set(p, PL_ERR_TIMEOUT, "timed out after %.1f s with %llu "
                    "replies outstanding", o->timeout_s,
                    (unsigned long long)due);
        return 1;
    }
    uint64_t quiet_since = oldest > rd->last_reply ? oldest : rd->last_reply;
    if (rd->hang_ns && due && now > quiet_since + rd->hang_ns) {
        pl_fail_set(p, PL_ERR_HUNG, "server hung: no reply for "
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
    if (o->progress)
        atomic_fetch_add_explicit(&o->progress->bytes_in, n,
                                  memory_order_relaxed);
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
        pl_fail_set(p, PL_ERR_CLOSED, "server closed the connection with "
                    "%llu replies outstanding", (unsigned long long)due);
    else
        pl_fail_errno(p, (int)-n, "waiting for replies");
}

void *pl_reader_main(void *arg)
{
    struct pl *p = arg;
    struct reader rd = {
        .vt = time_now_ns(), .last_rx = p->t_start, .last_reply = p->t_start,
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
            pl_fail_errno(p, -ev, "waiting for replies");
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
