/* bench-dbuf.c -- bench-log variant (f): double buffering, the design of
 * server/log.c. Callers format their line outside any lock, then memcpy it
 * into the current buffer under d.mu: the only work done under the lock is a
 * copy of LOG_LINE_LEN bytes. The one writer thread swaps the full buffer for
 * the empty spare and write(2)s it with no lock held, so a slow disk stalls
 * callers only when both buffers are full.
 *
 * Wake-ups: the first caller to find the buffer full signals the writer
 * (d.full remembers it has been signalled), so there is one signal per
 * buffer, not per line. Callers that find it full wait on d.space; the writer
 * broadcasts there after a swap only if someone waits. The writer also wakes
 * every DBUF_FLUSH_MS to write a partial buffer, as a real logger must.
 */
#include "bench-dbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "timeutil.h"

#define DBUF_FLUSH_MS   100     /* longest a partial buffer waits for the writer */

struct dbuf {
    pthread_mutex_t mu;     /* guards every field below except fd */
    pthread_cond_t wake;    /* the writer waits here: full buffer or stop */
    pthread_cond_t space;   /* callers wait here while the buffer is full */
    char *cur;              /* the buffer callers fill */
    size_t len, cap;        /* bytes used in cur, and its size */
    char *spare;            /* empty buffer to swap in; NULL while being written */
    bool full;              /* the writer has been signalled about cur */
    int waiting;            /* callers waiting on space */
    bool stop;              /* no more lines will come */
    unsigned long signals;  /* signals sent on wake */
    int err;                /* first write error, as a positive errno */
    int fd;                 /* written by the writer thread only */
};

struct caller {
    struct dbuf *d;
    unsigned long lo, hi;
    int id;
};

static void dbuf_append(struct dbuf *d, const char *line, size_t n)
{
    pthread_mutex_lock(&d->mu);
    while (d->cap - d->len < n) {
        if (!d->full) {
            d->full = true;
            d->signals++;
            pthread_cond_signal(&d->wake);
        }
        d->waiting++;
        pthread_cond_wait(&d->space, &d->mu);
        d->waiting--;
    }
    memcpy(d->cur + d->len, line, n);
    d->len += n;
    pthread_mutex_unlock(&d->mu);
}

static void *dbuf_writer(void *arg)
{
    struct dbuf *d = arg;

    pthread_mutex_lock(&d->mu);
    for (;;) {
        struct timespec until = time_mono_after_ns(DBUF_FLUSH_MS *
                                                   TIME_NS_PER_MS);
        char *out;
        size_t outlen;
        int rc;

        while (!d->full && !d->stop) {
            rc = pthread_cond_timedwait(&d->wake, &d->mu, &until);
            if (rc == ETIMEDOUT)
                break;                      /* flush a partial buffer, if any */
        }
        if (d->len == 0) {
            if (d->stop)
                break;
            continue;
        }
        /* Swap: callers get the empty spare at once; the full one is ours. */
        out = d->cur;
        outlen = d->len;
        d->cur = d->spare;
        d->spare = NULL;
        d->len = 0;
        d->full = false;
        if (d->waiting > 0)
            pthread_cond_broadcast(&d->space);
        pthread_mutex_unlock(&d->mu);

        rc = fd_write_all(d->fd, out, outlen);  /* the slow part, unlocked */

        pthread_mutex_lock(&d->mu);
        if (rc != 0 && d->err == 0)
            d->err = -rc;
        d->spare = out;
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

static void *dbuf_caller(void *arg)
{
    struct caller *c = arg;
    char line[LOG_LINE_LEN + 1];

    for (unsigned long i = c->lo; i < c->hi; i++) {
        log_format_line(line, i, c->id);
        dbuf_append(c->d, line, LOG_LINE_LEN);
    }
    return NULL;
}

int dbuf_run(const char *path, unsigned long lines, int threads,
             size_t bufsize, unsigned long *signals)
{
    struct dbuf d = { .cap = bufsize, .fd = -1 };
    struct caller callers[LOG_MAX_THREADS];
    pthread_t writer, tids[LOG_MAX_THREADS];
    pthread_condattr_t ca;
    int rc = 0, started = 0;

    if (threads < 1 || threads > LOG_MAX_THREADS || bufsize < LOG_LINE_LEN)
        return -EINVAL;
    d.cur = malloc(bufsize);
    d.spare = malloc(bufsize);
    if (d.cur == NULL || d.spare == NULL) {
        rc = ENOMEM;
        goto err_free;
    }
    if ((d.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0) {
        rc = errno;
        goto err_free;
    }
    pthread_mutex_init(&d.mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d.wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&d.space, NULL);
    if ((rc = pthread_create(&writer, NULL, dbuf_writer, &d)) != 0)
        goto err_close;
    for (int t = 0; t < threads; t++) {
        unsigned long n = (unsigned long)threads;

        callers[t] = (struct caller){ &d, lines * (unsigned long)t / n,
                                      lines * (unsigned long)(t + 1) / n, t };
        if ((rc = pthread_create(&tids[t], NULL, dbuf_caller, &callers[t])) != 0)
            break;
        started++;
    }
    for (int t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    pthread_mutex_lock(&d.mu);
    d.stop = true;
    d.signals++;
    pthread_cond_signal(&d.wake);
    pthread_mutex_unlock(&d.mu);
    pthread_join(writer, NULL);         /* it drains what is left first */
    if (rc == 0)
        rc = d.err;
err_close:
    if (close(d.fd) != 0 && rc == 0)
        rc = errno;
    pthread_cond_destroy(&d.space);
    pthread_cond_destroy(&d.wake);
    pthread_mutex_destroy(&d.mu);
err_free:
    free(d.cur);
    free(d.spare);
    *signals = d.signals;
    return -rc;
}
