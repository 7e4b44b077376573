/* session_bufs.c -- a session's input and reply buffers, borrowed while a
 * request is in progress and given back when the connection goes idle
 * (session.h; memcached's rbuf cache). An event worker's pool is used by
 * its thread alone, so nothing locks; the thread driver's one pool is
 * shared by its session threads, its lists under its lock (a pop or a
 * push: the wipe is done outside); without a pool (tests, --stdin) the
 * buffers come from malloc and go back to free. Either way they go back
 * wiped: only the bytes written (the reader's and outbuf's `dirty`), so
 * that giving back a buffer after a short request costs a short wipe.
 */
#include <errno.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include "session.h"

static void *get(struct session_pool *sp, struct bufpool *p, size_t size)
{
    void *buf;

    if (!sp)
        return malloc(size);
    if (sp->shared)
        pthread_mutex_lock(&sp->lock);
    buf = bufpool_get(p);
    if (sp->shared)
        pthread_mutex_unlock(&sp->lock);
    return buf;
}

static void put(struct session_pool *sp, struct bufpool *p, void *buf,
                size_t size, size_t dirty)
{
    if (!buf)
        return;
    if (sp && !sp->shared) {
        bufpool_put(p, buf, size, dirty);
        return;
    }
    OPENSSL_cleanse(buf, dirty < size ? dirty : size);  /* not under the
                                                           lock */
    if (!sp) {
        free(buf);
        return;
    }
    pthread_mutex_lock(&sp->lock);
    bufpool_put(p, buf, size, 0);
    pthread_mutex_unlock(&sp->lock);
}

int session_borrow(struct session *s)
{
    struct session_pool *p = s->pool;

    if (!s->in.buf) {
        char *b = get(p, p ? &p->line : NULL, LR_BUF_SIZE);
        if (!b)
            return -ENOMEM;
        lr_attach(&s->in, b);
    }
    if (!s->out.buf) {
        char *b = get(p, p ? &p->reply : NULL, SESSION_OUT_INITIAL);
        if (!b)
            return -ENOMEM;
        ob_attach(&s->out, b, SESSION_OUT_INITIAL);
    }
    return 0;
}

int session_release(struct session *s)
{
    struct session_pool *p = s->pool;
    size_t cap, dirty;
    char *b;

    if (lr_pending(&s->in) || s->out.len || s->waiting)
        return 0;
    b = lr_detach(&s->in, &dirty);
    put(p, p ? &p->line : NULL, b, LR_BUF_SIZE, dirty);
    b = ob_detach(&s->out, &cap, &dirty);
    put(p, p ? &p->reply : NULL, b, cap, dirty);   /* grown: freed */
    return 1;
}

char *session_recv_space(struct session *s, size_t *room)
{
    if (session_borrow(s)) {
        *room = 0;
        return NULL;
    }
    return lr_space(&s->in, room);
}

void session_set_pool(struct session *s, struct session_pool *p)
{
    s->pool = p;
}

void session_pool_init(struct session_pool *p, int spare)
{
    bufpool_init(&p->line, LR_BUF_SIZE, spare);
    bufpool_init(&p->reply, SESSION_OUT_INITIAL, spare);
    bufpool_init(&p->sessions, sizeof(struct session), spare);
    p->digest = NULL;
    p->shared = 0;
}

int session_pool_init_shared(struct session_pool *p, int spare)
{
    session_pool_init(p, spare);
    bufpool_init(&p->sessions, sizeof(struct session), 0);
    p->shared = 1;
    return -pthread_mutex_init(&p->lock, NULL);
}

void session_pool_destroy(struct session_pool *p)
{
    bufpool_destroy(&p->line);
    bufpool_destroy(&p->reply);
    bufpool_destroy(&p->sessions);
    digest_free(p->digest);
    p->digest = NULL;
    if (p->shared)
        pthread_mutex_destroy(&p->lock);
}

/* A SHA-256 context is needed by AUTH and DIGEST only, so an idle
 * connection holds none: its pool's (one per event worker, used by one
 * request at a time on that thread), or one of its own made now (a
 * session thread's, whose pool, if any, is shared). */
struct digest *session_digest(struct session *s)
{
    struct digest **d = s->pool && !s->pool->shared ? &s->pool->digest
                                                    : &s->digest;

    if (!*d)
        *d = digest_new();
    return *d;
}
