/* session_bufs.c -- a session's input and reply buffers, borrowed while a
 * request is in progress and given back when the connection goes idle
 * (session.h; memcached's rbuf cache). An event worker's pool is used by
 * its thread alone, so nothing locks; the thread driver's one pool is
 * shared by its session threads, its lists under its lock (a pop or a
 * push: the wipe, malloc and free outside); without a pool (tests,
 * --stdin) the buffers come from malloc and go back to free. Either way
 * they go back wiped: only the bytes written (the reader's and outbuf's
 * `dirty`), so that giving back a buffer after a short request costs a
 * short wipe.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "session.h"

/* A shared pool's lists are taken once for both buffers, and held for
 * the pops or pushes alone: malloc, free and the wipes are done outside.
 * Without a pool every buffer is malloc'ed and freed. */
static void pool_lock(struct session_pool *p)
{
    if (p && p->shared)
        pthread_mutex_lock(&p->lock);
}

static void pool_unlock(struct session_pool *p)
{
    if (p && p->shared)
        pthread_mutex_unlock(&p->lock);
}

/* Buffers taken from malloc: the pool had no spare, or there is none. */
static atomic_ulong malloced;

unsigned long session_buffers_malloced(void)
{
    return atomic_load_explicit(&malloced, memory_order_relaxed);
}

void session_buffers_malloced_reset(void)
{
    atomic_store_explicit(&malloced, 0, memory_order_relaxed);
}

static void *buffer_malloc(size_t n)
{
    void *p = malloc(n);

    if (p)
        atomic_fetch_add_explicit(&malloced, 1, memory_order_relaxed);
    return p;
}

int session_borrow(struct session *s)
{
    struct session_pool *p = s->pool;
    char *in = NULL, *out = NULL;

    if (s->in.buf && s->out.buf)
        return 0;                       /* each read of a busy session */
    pool_lock(p);
    if (p && !s->in.buf)
        in = bufpool_take(&p->line);
    if (p && !s->out.buf)
        out = bufpool_take(&p->reply);
    pool_unlock(p);
    if (!s->in.buf && !in)
        in = buffer_malloc(LR_BUF_SIZE);
    if (in)
        lr_attach(&s->in, in);
    if (!s->out.buf && !out)
        out = buffer_malloc(SESSION_OUT_INITIAL);
    if (out)
        ob_attach(&s->out, out, SESSION_OUT_INITIAL);
    return s->in.buf && s->out.buf ? 0 : -ENOMEM;
}

int session_release(struct session *s)
{
    struct session_pool *p = s->pool;
    size_t cap, in_dirty, out_dirty;
    int keep_in = 0, keep_out = 0;

    if (lr_pending(&s->in) || s->out.len || s->waiting)
        return 0;
    char *in = lr_detach(&s->in, &in_dirty);
    char *out = ob_detach(&s->out, &cap, &out_dirty);
    if (!in && !out)
        return 1;                       /* given back already */
    if (in)
        explicit_bzero(in, in_dirty < LR_BUF_SIZE ? in_dirty : LR_BUF_SIZE);
    if (out)
        explicit_bzero(out, out_dirty < cap ? out_dirty : cap);
    pool_lock(p);
    if (p && in)
        keep_in = bufpool_keep(&p->line, in, LR_BUF_SIZE);
    if (p && out)
        keep_out = bufpool_keep(&p->reply, out, cap);  /* grown: freed */
    pool_unlock(p);
    if (!keep_in)
        free(in);
    if (!keep_out)
        free(out);
    return 1;
}

char *session_recv_space(struct session *s, size_t *room)
{
    if (session_borrow(s)) {
        *room = 0;
        return NULL;
    }
    char *p = lr_space(&s->in, room);

    /* One byte kept back for the telnet filter: a stray IAC whose next
     * byte comes in this read leaves both as data (telnet_filter). */
    if (*room > 1)
        (*room)--;
    return p;
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
    struct session_pool *own = session_own_pool(s);
    struct digest **d = own ? &own->digest : &s->digest;

    if (!*d)
        *d = digest_new();
    return *d;
}
