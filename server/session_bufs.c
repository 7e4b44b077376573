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

/* A shared pool's lists are taken once for both buffers. */
static void pool_lock(struct session_pool *sp)
{
    if (sp && sp->shared)
        pthread_mutex_lock(&sp->lock);
}

static void pool_unlock(struct session_pool *sp)
{
    if (sp && sp->shared)
        pthread_mutex_unlock(&sp->lock);
}

static void *get(struct session_pool *sp, struct bufpool *p, size_t size)
{
    return sp ? bufpool_get(p) : malloc(size);
}

/* A shared pool's buffers are wiped before its lock is taken: they go
 * back with nothing left to wipe. */
static size_t wipe_first(struct session_pool *sp, void *buf, size_t size,
                         size_t dirty)
{
    if (!buf || (sp && !sp->shared))
        return dirty;
    OPENSSL_cleanse(buf, dirty < size ? dirty : size);
    return 0;
}

static void put(struct session_pool *sp, struct bufpool *p, void *buf,
                size_t size, size_t dirty)
{
    if (sp)
        bufpool_put(p, buf, size, dirty);
    else
        free(buf);                      /* wiped by wipe_first */
}

int session_borrow(struct session *s)
{
    struct session_pool *p = s->pool;
    int rc = 0;

    pool_lock(p);
    if (!s->in.buf) {
        char *b = get(p, p ? &p->line : NULL, LR_BUF_SIZE);
        if (b)
            lr_attach(&s->in, b);
        else
            rc = -ENOMEM;
    }
    if (!rc && !s->out.buf) {
        char *b = get(p, p ? &p->reply : NULL, SESSION_OUT_INITIAL);
        if (b)
            ob_attach(&s->out, b, SESSION_OUT_INITIAL);
        else
            rc = -ENOMEM;
    }
    pool_unlock(p);
    return rc;
}

int session_release(struct session *s)
{
    struct session_pool *p = s->pool;
    size_t cap, in_dirty, out_dirty;

    if (lr_pending(&s->in) || s->out.len || s->waiting)
        return 0;
    char *in = lr_detach(&s->in, &in_dirty);
    char *out = ob_detach(&s->out, &cap, &out_dirty);
    in_dirty = wipe_first(p, in, LR_BUF_SIZE, in_dirty);
    out_dirty = wipe_first(p, out, cap, out_dirty);
    pool_lock(p);
    put(p, p ? &p->line : NULL, in, LR_BUF_SIZE, in_dirty);
    put(p, p ? &p->reply : NULL, out, cap, out_dirty);  /* grown: freed */
    pool_unlock(p);
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
