/* session_life.c -- a session's life (session.h): made and freed (its
 * buffers wiped: they held SSNs and passwords), begun and ended through
 * the lock policy's hooks, admitted after AUTH, and its settings. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include "lockmode.h"
#include "server.h"
#include "session.h"
#include "store.h"

struct session *session_new(struct store *st, const struct session_io *io,
                            int quiet)
{
    /* Not calloc: zeroing would touch every page of the 16 kB line buffer
     * (s->in.buf), and an idle connection would keep them all resident
     * (20 kB of heap per connection instead of 8, docs/PERFORMANCE.md).
     * Every field but the buffer is zeroed; lr_init sets the reader's. */
    struct session *s = malloc(sizeof(*s));
    if (!s)
        return NULL;
    memset(s, 0, offsetof(struct session, in));
    memset((char *)&s->in + sizeof(s->in), 0,
           sizeof(*s) - offsetof(struct session, in) - sizeof(s->in));
    s->store = st;
    s->io = *io;
    s->quiet = quiet;
    s->authed = !srv.auth_required;
    snprintf(s->peer, sizeof(s->peer), "stdin");
    telnet_init(&s->tn);
    lr_init(&s->in, PROTO_MAX_LINE);
    if (ob_init(&s->out, SESSION_OUT_INITIAL))
        goto err;
    s->digest = digest_new();
    if (!s->digest)
        goto err;
    return s;
err:
    ob_destroy(&s->out);
    free(s);
    return NULL;
}

void session_free(struct session *s)
{
    if (!s)
        return;
    digest_free(s->digest);
    /* Requests and replies held SSNs and passwords: wipe before freeing. */
    OPENSSL_cleanse(s->in.buf, sizeof(s->in.buf));
    if (s->out.buf)
        OPENSSL_cleanse(s->out.buf, s->out.cap);
    ob_destroy(&s->out);
    OPENSSL_cleanse(&s->req, sizeof(s->req));
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
    return s->io.admit ? s->io.admit(s->io.arg) : session_begin(s);
}

void session_set_peer(struct session *s, const char *peer)
{
    snprintf(s->peer, sizeof(s->peer), "%s", peer);
}

void session_set_batch(struct session *s, int n)
{
    s->batch_max = n;
}

void session_set_output_limit(struct session *s, size_t limit)
{
    s->out.limit = limit;
}
