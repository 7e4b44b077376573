/* bench_set.c -- ssn-bench's workers as a whole (bench_conn.h): connect
 * every connection, give each worker thread its share, run a phase on all
 * of them and wait, then check that every request was answered. One
 * connection's work is in bench_conn.c.
 *
 * The main thread owns the set between phases; during one it only reads
 * the workers' progress counters and sets the drain flag. Worker threads
 * run with every signal blocked, so SIGINT reaches the main thread only.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include "bench_conn_int.h"
#include "net.h"
#include "timeutil.h"

#define BENCH_CONNECT_MS  5000      /* a connect's time limit */
#define BENCH_FDS_SPARE   32        /* descriptors beyond the sockets */
#define BENCH_WAIT_MS     100       /* the main thread's tick */

/* Raises the soft descriptor limit to what conns sockets need. Returns 0,
 * or -1 with the reason in err. */
static int fd_limit(unsigned conns, char *err, size_t errlen)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)conns + BENCH_FDS_SPARE;

    if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= want)
        return 0;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
        snprintf(err, errlen, "%u connections need %llu file descriptors; "
                 "the limit is %llu (ulimit -n)", conns,
                 (unsigned long long)want, (unsigned long long)rl.rlim_max);
        return -1;
    }
    rl.rlim_cur = want;
    if (setrlimit(RLIMIT_NOFILE, &rl)) {
        snprintf(err, errlen, "cannot raise the file descriptor limit to "
                 "%llu: %s", (unsigned long long)want, strerror(errno));
        return -1;
    }
    return 0;
}

/* Connects c and registers its events with w's loop. */
static int conn_open(struct bench_worker *w, struct bench_conn *c,
                     unsigned id, char *err, size_t errlen)
{
    const struct bench_plan *p = w->p;
    c->w = w;
    c->id = id;
    c->fd = net_connect(p->host, p->port, 0, 0, BENCH_CONNECT_MS, err,
                        errlen);
    if (c->fd < 0)
        return -1;
    c->ring = calloc(p->pipeline, sizeof(*c->ring));
    c->rev = event_new(w->base, c->fd, EV_READ | EV_PERSIST,
                       bench_conn_read_cb, c);
    c->wev = event_new(w->base, c->fd, EV_WRITE | EV_PERSIST,
                       bench_conn_write_cb, c);
    if (!c->ring || !c->rev || !c->wev || event_add(c->rev, NULL)) {
        snprintf(err, errlen, "out of memory for connection %u", id);
        return -1;
    }
    return 0;
}

/* Makes worker i, with n connections numbered from first. */
static int worker_open(struct bench_set *s, unsigned i, unsigned first,
                       unsigned n, char *err, size_t errlen)
{
    static const struct timeval tick = { 0, BENCH_TICK_MS * 1000 };
    struct bench_worker *w = &s->w[i];

    w->set = s;
    w->p = &s->p;
    w->id = i;
    w->rng = 0x9e3779b97f4a7c15ull * (i + 1);
    for (unsigned k = 0; k < BENCH_OPS; k++)
        w->mix_total += s->p.mix[k];
    w->base = event_base_new();
    w->rbuf = malloc(BENCH_PART_MAX + BENCH_RBUF);
    w->conns = calloc(n, sizeof(*w->conns));
    if (!w->base || !w->rbuf || !w->conns)
        goto nomem;
    w->tick = event_new(w->base, -1, EV_PERSIST, bench_worker_tick_cb, w);
    if (!w->tick || event_add(w->tick, &tick))
        goto nomem;
    for (unsigned k = 0; k < n; k++) {
        w->conns[k].fd = -1;
        w->nconns++;
        if (conn_open(w, &w->conns[k], first + k, err, errlen))
            return -1;
    }
    return 0;
nomem:
    snprintf(err, errlen, "out of memory for worker %u", i);
    return -1;
}

struct bench_set *bench_set_new(const struct bench_plan *p, char *err,
                                size_t errlen)
{
    struct bench_set *s = calloc(1, sizeof(*s));
    if (!s || fd_limit(p->conns, err, errlen))
        goto err;
    s->p = *p;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->finished, &ca);
    pthread_condattr_destroy(&ca);
    s->w = calloc(p->threads, sizeof(*s->w));
    if (!s->w) {
        snprintf(err, errlen, "out of memory");
        goto err;
    }
    s->nw = p->threads;
    unsigned first = 0;
    for (unsigned i = 0; i < p->threads; i++) {
        unsigned n = p->conns / p->threads + (i < p->conns % p->threads);
        if (worker_open(s, i, first, n, err, errlen))
            goto err;
        first += n;
    }
    return s;
err:
    if (!s)
        snprintf(err, errlen, "out of memory");
    bench_set_free(s);
    return NULL;
}

void bench_set_free(struct bench_set *s)
{
    if (!s)
        return;
    for (unsigned i = 0; s->w && i < s->nw; i++) {
        struct bench_worker *w = &s->w[i];
        for (unsigned k = 0; k < w->nconns; k++) {
            struct bench_conn *c = &w->conns[k];
            if (c->rev)
                event_free(c->rev);
            if (c->wev)
                event_free(c->wev);
            if (c->fd >= 0)
                close(c->fd);
            free(c->ring);
            free(c->out);
            free(c->part);
        }
        if (w->tick)
            event_free(w->tick);
        if (w->base)
            event_base_free(w->base);
        free(w->conns);
        free(w->rbuf);
    }
    if (s->w) {
        pthread_cond_destroy(&s->finished);
        pthread_mutex_destroy(&s->lock);
    }
    free(s->w);
    free(s);
}

/* share of total for worker i: in proportion to its connections, so the
 * shares add up to total exactly. */
static uint64_t share(const struct bench_set *s, unsigned i, uint64_t total,
                      uint64_t *from)
{
    uint64_t before = 0;
    for (unsigned k = 0; k < i; k++)
        before += s->w[k].nconns;
    uint64_t lo = total * before / s->p.conns;
    uint64_t hi = total * (before + s->w[i].nconns) / s->p.conns;
    if (from)
        *from = lo;
    return hi - lo;
}

/* Sets every worker up for phase ph, starting at start. */
static void phase_reset(struct bench_set *s, enum bench_phase ph,
                        uint64_t start)
{
    for (unsigned i = 0; i < s->nw; i++) {
        struct bench_worker *w = &s->w[i];
        w->phase = ph;
        w->stopping = 0;
        w->first_tx_ns = start;     /* the clock --duration runs on */
        memset(&w->counts, 0, sizeof(w->counts));
        hist_init(&w->lat);
        w->first_error[0] = '\0';
        atomic_store(&w->progress, 0);
        w->budget = s->p.duration_ns ? UINT64_MAX
                    : share(s, i, s->p.requests, NULL);
        uint64_t from, n = share(s, i, s->p.preload, &from);
        w->next_key = from;
        w->end_key = from + n;
        w->deadline_ns = ph == BPH_RUN && s->p.duration_ns
                         ? start + s->p.duration_ns : 0;
    }
}

/* Starts one thread per worker with every signal blocked. Returns how
 * many started; err says why one did not. */
static unsigned phase_start(struct bench_set *s, char *err, size_t errlen)
{
    sigset_t all, old;
    unsigned n = 0;

    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    s->running = s->nw;
    for (; n < s->nw; n++) {
        int rc = pthread_create(&s->w[n].tid, NULL, bench_worker_main,
                                &s->w[n]);
        if (rc) {
            snprintf(err, errlen, "cannot start a thread: %s", strerror(rc));
            atomic_store(&s->abort, 1);
            pthread_mutex_lock(&s->lock);
            s->running -= s->nw - n;
            pthread_mutex_unlock(&s->lock);
            break;
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return n;
}

/* Waits for the workers, calling tick every BENCH_WAIT_MS. */
static void phase_wait(struct bench_set *s, uint64_t start,
                       int (*tick)(void *, uint64_t, uint64_t), void *arg)
{
    pthread_mutex_lock(&s->lock);
    while (s->running > 0) {
        struct timespec ts = time_mono_after_ns(BENCH_WAIT_MS *
                                                TIME_NS_PER_MS);
        pthread_cond_timedwait(&s->finished, &s->lock, &ts);
        if (s->running == 0 || !tick)
            continue;
        pthread_mutex_unlock(&s->lock);
        uint64_t done = 0;
        for (unsigned i = 0; i < s->nw; i++)
            done += atomic_load_explicit(&s->w[i].progress,
                                         memory_order_relaxed);
        if (tick(arg, done, time_now_ns() - start))
            atomic_store(&s->drain, 1);
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
}

/* Bytes waiting on a connection whose every request was answered: a
 * reply too many (that arrived after the phase's last read). Returns 0,
 * or -1 with the reason in err. */
static int stray_bytes(const struct bench_set *s, char *err, size_t errlen)
{
    for (unsigned i = 0; i < s->nw; i++)
        for (unsigned k = 0; k < s->w[i].nconns; k++) {
            const struct bench_conn *c = &s->w[i].conns[k];
            char b[48], shown[48];
            ssize_t n = recv(c->fd, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT);
            if (n <= 0)
                continue;
            snprintf(err, errlen, "connection %u: %s: bytes after the last "
                     "reply: '%s'", c->id, s->p.dialect->name,
                     bench_show(b, (size_t)n, shown, sizeof(shown)));
            return -1;
        }
    return 0;
}

/* After a phase: the first failure, or whether every request sent was
 * answered and, under -n, every request asked for was sent. */
static int phase_check(const struct bench_set *s, enum bench_phase ph,
                       char *err, size_t errlen)
{
    struct bench_counts c = { 0 };
    for (unsigned i = 0; i < s->nw; i++) {
        if (s->w[i].failed) {
            snprintf(err, errlen, "%s", s->w[i].fail);
            return -1;
        }
        bench_counts_add(&c, &s->w[i].counts);
    }
    if (atomic_load(&s->abort))
        return -1;                  /* err says why already */
    uint64_t want = ph == BPH_RUN ? s->p.requests
                    : ph == BPH_PRELOAD ? s->p.preload : s->p.conns;
    int early = atomic_load(&s->drain) || (ph == BPH_RUN && s->p.duration_ns);
    if (stray_bytes(s, err, errlen))
        return -1;
    if (c.sent != c.replies || (!early && c.sent != want)) {
        snprintf(err, errlen, "the counts do not match: %llu requests "
                 "wanted, %llu sent, %llu replies", (unsigned long long)want,
                 (unsigned long long)c.sent, (unsigned long long)c.replies);
        return -1;
    }
    return 0;
}

int bench_set_run(struct bench_set *s, enum bench_phase ph,
                  int (*tick)(void *arg, uint64_t replies,
                              uint64_t elapsed_ns),
                  void *arg, char *err, size_t errlen)
{
    uint64_t start = time_now_ns();

    snprintf(err, errlen, "a worker failed");
    atomic_store(&s->drain, 0);
    atomic_store(&s->abort, 0);
    phase_reset(s, ph, start);
    unsigned started = phase_start(s, err, errlen);
    phase_wait(s, start, tick, arg);
    for (unsigned i = 0; i < started; i++)
        pthread_join(s->w[i].tid, NULL);
    if (started < s->nw)
        return -1;
    return phase_check(s, ph, err, errlen);
}

void bench_set_result(const struct bench_set *s, struct bench_result *r)
{
    uint64_t first = UINT64_MAX, last = 0;

    memset(&r->c, 0, sizeof(r->c));
    hist_init(&r->lat);
    r->first_error[0] = '\0';
    for (unsigned i = 0; i < s->nw; i++) {
        const struct bench_worker *w = &s->w[i];
        bench_counts_add(&r->c, &w->counts);
        hist_merge(&r->lat, &w->lat);
        if (w->first_tx_ns < first)
            first = w->first_tx_ns;
        if (w->counts.replies && w->last_rx_ns > last)
            last = w->last_rx_ns;
        if (!r->first_error[0] && w->first_error[0])
            snprintf(r->first_error, sizeof(r->first_error), "%s",
                     w->first_error);
    }
    r->elapsed_ns = last > first ? last - first : 0;
    r->interrupted = atomic_load(&s->drain);
}
