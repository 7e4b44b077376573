/* pipeline.c -- one pipelined session (pipeline.h): pl_run connects, starts
 * the reader thread (pipeline_reader.c), sends from the caller's thread
 * (pipeline_sender.c), then fills in the result. The failure record both
 * sides write is kept here too. The session state and its locking are
 * described in pipeline_int.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ctl.h"
#include "hist.h"
#include "linereader.h"
#include "net.h"
#include "pipeline.h"
#include "pipeline_int.h"
#include "timeutil.h"

const char *pl_fail_name(int fail)
{
    static const char *const names[] = {
        "ok", "connect", "reset", "closed", "hung", "timeout", "io",
        "source", "stopped", "auth", "internal",
    };
    return fail >= 0 && fail <= PL_ERR_INTERNAL ? names[fail] : "unknown";
}

/* Records the first failure only, and tells the other side to stop
 * (pipeline_int.h). */
void pl_fail_set(struct pl *p, int kind, const char *fmt, ...)
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

void pl_fail_errno(struct pl *p, int err, const char *doing)
{
    if (err == ECONNRESET)
        pl_fail_set(p, PL_ERR_RESET,
                    "connection reset by the server while %s", doing);
    else if (err == EPIPE)
        pl_fail_set(p, PL_ERR_CLOSED,
                    "server closed the connection while %s", doing);
    else if (err == ETIMEDOUT)
        pl_fail_set(p, PL_ERR_TIMEOUT, "timed out after %.1f s while %s",
                    p->o->timeout_s, doing);
    else if (err != ECANCELED)
        pl_fail_set(p, PL_ERR_IO, "%s while %s", strerror(err), doing);
}

/* ---- the session ------------------------------------------------------ */

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

/* AUTH on the new connection, answered before any request leaves: the
 * server sends nothing unasked, so nothing but its reply can be read here.
 * Returns 0, or -1 with the failure in p->r. */
static int session_auth(struct pl *p, int timeout_ms)
{
    struct ctl *c = malloc(sizeof(*c));     /* a 16 KiB line buffer */
    int rc;

    if (!c) {
        p->r->fail = PL_ERR_INTERNAL;
        snprintf(p->r->what, sizeof(p->r->what), "out of memory");
        return -1;
    }
    ctl_adopt(c, p->fd, timeout_ms);        /* borrowed: never closed here */
    rc = ctl_auth(c, p->o->password);
    if (rc) {
        p->r->fail = PL_ERR_AUTH;
        snprintf(p->r->what, sizeof(p->r->what), "%s%.180s",
                 rc == -EACCES ? "" : "AUTH failed: ", c->err);
    }
    free(c);
    return rc ? -1 : 0;
}

/* Connects: a small receive buffer and Ethernet's segment size under a
 * rate limit, and a connect limit within the session's timeout; then AUTH,
 * when there is a password, within the same limit. Returns 0, or -1 with
 * the failure in p->r. */
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
    if (o->password && session_auth(p, conn_ms) < 0) {
        close(p->fd);
        p->end_ns = time_now_ns();
        return -1;
    }
    lr_init(&p->lr, PL_REPLY_MAX);
    lr_attach(&p->lr, p->lr_mem);
    return 0;
}

/* The connected session: the reader in its thread, the sender here, then
 * the socket closed. Failures land in p->r. */
static void session_run(struct pl *p, struct pl_source *src, char *batch)
{
    pthread_t reader;
    int rc = pthread_create(&reader, NULL, pl_reader_main, p);
    if (rc) {
        p->r->fail = PL_ERR_INTERNAL;
        snprintf(p->r->what, sizeof(p->r->what), "pthread_create: %s",
                 strerror(rc));
        close(p->fd);
        return;
    }
    pl_sender_run(p, src, batch);
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
