/* session_life.c -- a session's life (session.h): made and freed (its
 * buffers given back wiped: they held SSNs and passwords), begun and ended through
 * the lock policy's hooks, admitted after AUTH, and its settings. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "lockmode.h"
#include "server.h"
#include "session.h"
#include "store.h"

/* No buffer yet: they are borrowed when bytes come (session_bufs.c), so
 * a connection that never talks holds none. */
static void set_up(struct session *s, struct store *st,
                   const struct session_io *io, void *arg, int quiet)
{
    memset(s, 0, sizeof(*s));
    s->store = st;
    s->io = io;
    s->io_arg = arg;
    s->quiet = quiet;
    s->authed = !srv.auth_required;
    s->peer = "stdin";
    telnet_init(&s->tn);
    lr_init(&s->in, PROTO_MAX_LINE);
    ob_init(&s->out, 0);                /* allocates nothing */
}

struct session *session_new(struct store *st, const struct session_io *io,
                            void *arg, int quiet)
{
    struct session *s = malloc(sizeof(*s));
    if (s)
        set_up(s, st, io, arg, quiet);
    return s;
}

struct session *session_new_pooled(struct session_pool *p, struct store *st,
                                   const struct session_io *io, void *arg)
{
    struct session *s = bufpool_get(&p->sessions);
    if (s) {
        set_up(s, st, io, arg, 0);
        s->pool = p;
    }
    return s;
}

void session_free(struct session *s)
{
    if (!s)
        return;
    digest_free(s->digest);
    /* Requests and replies held SSNs and passwords: the buffers go back
     * wiped (session_bufs.c), whatever they still held. */
    lr_drop(&s->in);
    ob_truncate(&s->out, 0);
    s->waiting = 0;                     /* nothing will run again */
    session_release(s);
    ob_destroy(&s->out);                /* one that grew without a pool */
    if (session_own_pool(s))            /* pointers and counts only now:
                                           nothing to wipe */
        bufpool_put(&s->pool->sessions, s, sizeof(*s), 0);
    else
        free(s);
}

int session_begin(struct session *s)
{
    if (!s->authed)
        return 0;                       /* admitted after AUTH */
    int rc = s->store->policy->session_begin(s->store);
    s->begun = rc == 0;
    return rc;
}

void session_end(struct session *s)
{
    if (s->begun)
        s->store->policy->session_end(s->store);
    s->begun = 0;
}

int session_begin_nowait(struct session *s, struct store_waiter *w)
{
    if (!s->authed)
        return 0;                       /* admitted after AUTH */
    int rc = s->store->policy->session_begin_nowait(s->store, w);
    s->begun = rc == 0;
    return rc;
}

void session_begin_adopt(struct session *s, struct store_waiter *w)
{
    store_lock_adopt(s->store, w);
    s->begun = 1;
}

int session_admit(struct session *s)
{
    if (s->begun)
        return 0;                       /* AUTH again, already admitted */
    return s->io->admit ? s->io->admit(s->io_arg) : session_begin(s);
}

void session_set_peer(struct session *s, const char *peer)
{
    s->peer = peer;
}

void session_set_batch(struct session *s, int n)
{
    s->batch_max = n;
}

void session_set_output_limit(struct session *s, size_t limit)
{
    s->out.limit = limit;
}
