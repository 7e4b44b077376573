/* print.c -- PRINT's two strategies (print.h), named by the lock policy
 * rows in lockmode.c. This is where fine and buffered differ: fine writes to
 * the client while holding the store lock, so one slow reader stalls every
 * other client; buffered pays memory to release the lock before writing,
 * and shares that memory among everyone who prints an unchanged store
 * (listing.h).
 */
#include <errno.h>
#include "commands.h"
#include "entry.h"
#include "listing.h"
#include "lockmode.h"
#include "print.h"
#include "reply.h"
#include "session.h"

/* ---- while walking ------------------------------------------------------ */

/* What is buffered goes to the client now: under fine's lock by the path
 * named for it (the lesson: the client's pace is everyone's), in the
 * other modes the ordinary way. */
static int stream_send(struct session *s)
{
    return store_op_held(s->store) ? reply_send_locked(s)
                                   : reply_send_now(s);
}

/* Appends without ever growing the buffer: when data does not fit in the
 * capacity there is, what is buffered goes to the client first. So no
 * allocation can fail halfway through a listing already partly sent. */
static int stream_put(struct session *s, const char *data, size_t len)
{
    int rc = 0;

    if (s->out.cap - s->out.len < len)
        rc = stream_send(s);
    if (rc == 0)
        reply_put(s, data, len);        /* fits: cap >= one line */
    return rc;
}

static int stream_one(const struct entry *e, void *arg)
{
    struct session *s = arg;
    char line[ENTRY_LINE_MAX];
    size_t n = entry_format_print(e, line);

    return stream_put(s, line, n);
}

int print_while_walking(struct session *s)
{
    int rc = reply_send_now(s);         /* earlier replies first, unlocked */

    if (rc)
        return rc;
    /* An event driver may still hold earlier replies (the client reads
     * slowly, or they wait for the journal): the walk starts only once
     * they are gone, so that under the lock nothing waits for the
     * journal, and the only wait is the client's. */
    if (!reply_drained(s))
        return -EINPROGRESS;
    if (cmd_store_enter(s, STORE_READ))
        return 0;
    rc = stream_put(s, ENTRY_PRINT_HEAD, sizeof(ENTRY_PRINT_HEAD) - 1);
    if (rc == 0)
        rc = store_foreach_locked(s->store, stream_one, s);
    if (rc == 0)
        rc = stream_put(s, ENTRY_PRINT_TAIL, sizeof(ENTRY_PRINT_TAIL) - 1);
    if (rc == 0)
        rc = stream_send(s);            /* the whole reply, lock held */
    cmd_store_leave(s, STORE_READ);
    return rc;
}

/* ---- after unlocking ---------------------------------------------------- */

int print_after_unlock(struct session *s)
{
    struct listing *l, *stale;

    if (cmd_store_enter(s, STORE_READ))
        return 0;
    l = listing_get_locked(s->store, &stale);   /* may update the cache */
    cmd_store_leave(s, STORE_READ);
    listing_put(stale);                         /* freed outside the lock */

    if (!l) {
        reply_puts(s, PROTO_ERR_NOMEM_LINE);
        return 0;
    }
    if (s->out.limit && l->len > s->out.limit) {
        reply_limit_exceeded(s);
        listing_put(l);
        return 0;
    }
    return reply_send_listing(s, l);    /* earlier replies first */
}
