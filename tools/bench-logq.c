/* bench-logq.c -- bench-log variant (e): one logger thread fed through a
 * queue. Each caller mallocs a node, formats its line into it, appends it
 * under q.mu and signals q.cv once per line (as the classic did); the logger
 * pops one node at a time and fwrites it outside the lock.
 *
 * The queue is unbounded, like the classic's: when callers outrun the logger
 * the backlog lives in memory (about 100 bytes per line).
 */
#include "bench-logq.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct qnode {
    struct qnode *next;
    char line[LOG_LINE_LEN + 1];
};

struct logq {
    pthread_mutex_t mu;         /* guards everything below */
    pthread_cond_t cv;          /* signalled per appended line, and at stop */
    struct qnode *head;
    struct qnode **tail;
    bool stop;                  /* no more lines will come */
    unsigned long signals;
    FILE *f;                    /* used by the logger thread only */
    int err;                    /* first allocation failure of a caller */
};

struct caller {
    struct logq *q;
    unsigned long lo, hi;
    int id;
};

static void *logq_logger(void *arg)
{
    struct logq *q = arg;

    pthread_mutex_lock(&q->mu);
    for (;;) {
        struct qnode *n;

        while (q->head == NULL && !q->stop)
            pthread_cond_wait(&q->cv, &q->mu);
        if ((n = q->head) == NULL)
            break;                          /* stopped and drained */
        q->head = n->next;
        if (q->head == NULL)
            q->tail = &q->head;
        pthread_mutex_unlock(&q->mu);
        fwrite(n->line, 1, LOG_LINE_LEN, q->f);     /* I/O outside the lock */
        free(n);
        pthread_mutex_lock(&q->mu);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

static void *logq_caller(void *arg)
{
    struct caller *c = arg;
    struct logq *q = c->q;

    for (unsigned long i = c->lo; i < c->hi; i++) {
        struct qnode *n = malloc(sizeof *n);

        if (n == NULL) {
            pthread_mutex_lock(&q->mu);
            q->err = ENOMEM;
            pthread_mutex_unlock(&q->mu);
            return NULL;
        }
        log_format_line(n->line, i, c->id);
        n->next = NULL;
        pthread_mutex_lock(&q->mu);
        *q->tail = n;
        q->tail = &n->next;
        q->signals++;
        pthread_cond_signal(&q->cv);
        pthread_mutex_unlock(&q->mu);
    }
    return NULL;
}

int logq_run(const char *path, unsigned long lines, int threads,
             unsigned long *signals)
{
    struct logq q = { .tail = &q.head };
    struct caller callers[LOG_MAX_THREADS];
    pthread_t logger, tids[LOG_MAX_THREADS];
    int rc, started = 0;

    if (threads < 1 || threads > LOG_MAX_THREADS)
        return -EINVAL;
    if ((q.f = fopen(path, "w")) == NULL)
        return -errno;
    pthread_mutex_init(&q.mu, NULL);
    pthread_cond_init(&q.cv, NULL);
    if ((rc = pthread_create(&logger, NULL, logq_logger, &q)) != 0)
        goto out;
    for (int t = 0; t < threads; t++) {
        unsigned long n = (unsigned long)threads;

        callers[t] = (struct caller){ &q, lines * (unsigned long)t / n,
                                      lines * (unsigned long)(t + 1) / n, t };
        if ((rc = pthread_create(&tids[t], NULL, logq_caller, &callers[t])) != 0)
            break;
        started++;
    }
    for (int t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    pthread_mutex_lock(&q.mu);
    q.stop = true;
    q.signals++;
    pthread_cond_signal(&q.cv);
    if (rc == 0)
        rc = q.err;
    pthread_mutex_unlock(&q.mu);
    pthread_join(logger, NULL);
out:
    if (fclose(q.f) != 0 && rc == 0)
        rc = errno;
    pthread_cond_destroy(&q.cv);
    pthread_mutex_destroy(&q.mu);
    *signals = q.signals;
    return -rc;
}
