/* session_bufs.c -- a session's input and reply buffers, borrowed while a
 * request is in progress and given back when the connection goes idle
 * (session.h; memcached's rbuf cache). A pool belongs to one event
 * worker and is used by its thread alone, so nothing here locks; without
 * a pool (a thread per connection, tests) the buffers come from malloc
 * and go back to free. Either way they go back wiped: only the bytes
 * written (the reader's and outbuf's `dirty`), so that giving back a
 * buffer after a short request costs a short wipe.
 */
#include <errno.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include "session.h"

static void *get(struct bufpool *p, size_t size)
{
    return p ? bufpool_get(p) : malloc(size);
}

static void put(struct bufpool *p, void *buf, size_t size, size_t dirty)
{
    if (p) {
        bufpool_put(p, buf, size, dirty);
    } else if (buf) {
        OPENSSL_cleanse(buf, dirty < size ? dirty : size);
        free(buf);
    }
}

int session_borrow(struct session *s)
{
    struct session_pool *p = s->pool;

    if (!s->in.buf) {
        char *b = get(p ? &p->line : NULL, LR_BUF_SIZE);
        if (!b)
            return -ENOMEM;
        lr_attach(&s->in, b);
    }
    if (!s->out.buf) {
        char *b = get(p ? &p->reply : NULL, SESSION_OUT_INITIAL);
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
    put(p ? &p->line : NULL, b, LR_BUF_SIZE, dirty);
    b = ob_detach(&s->out, &cap, &dirty);
    put(p ? &p->reply : NULL, b, cap, dirty);  /* grown: freed */
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
}

void session_pool_destroy(struct session_pool *p)
{
    bufpool_destroy(&p->line);
    bufpool_destroy(&p->reply);
    bufpool_destroy(&p->sessions);
    digest_free(p->digest);
    p->digest = NULL;
}

/* A SHA-256 context is needed by AUTH and DIGEST only, so an idle
 * connection holds none: its pool's (one per event worker, used by one
 * request at a time on that thread), or one of its own made now. */
struct digest *session_digest(struct session *s)
{
    struct digest **d = s->pool ? &s->pool->digest : &s->digest;

    if (!*d)
        *d = digest_new();
    return *d;
}
