/* print.c -- PRINT's two strategies (print.h), named by the lock policy
 * rows in lockmode.c. This is where fine and buffered differ: fine writes to
 * the client while holding the store lock, so one slow reader stalls every
 * other client; buffered pays memory to release the lock before writing.
 */
#include "commands.h"
#include "entry.h"
#include "print.h"
#include "reply.h"
#include "session.h"

/* ---- while walking ------------------------------------------------------ */

/* Appends without ever growing the buffer: when data does not fit in the
 * capacity there is, what is buffered goes to the client first. So no
 * allocation can fail halfway through a listing already partly sent. */
static int stream_put(struct session *s, const char *data, size_t len)
{
    int rc = 0;

    if (s->out.cap - s->out.len < len)
        rc = reply_send_now(s);
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
    if (cmd_store_enter(s, STORE_READ))
        return 0;
    rc = stream_put(s, ENTRY_PRINT_HEAD, sizeof(ENTRY_PRINT_HEAD) - 1);
    if (rc == 0)
        rc = store_foreach_locked(s->store, stream_one, s);
    if (rc == 0)
        rc = stream_put(s, ENTRY_PRINT_TAIL, sizeof(ENTRY_PRINT_TAIL) - 1);
    if (rc == 0)
        rc = reply_send_now(s);         /* the whole reply, lock held */
    cmd_store_leave(s, STORE_READ);
    return rc;
}

/* ---- after unlocking ---------------------------------------------------- */

static int format_one(const struct entry *e, void *arg)
{
    struct session *s = arg;
    char line[ENTRY_LINE_MAX];
    size_t n = entry_format_print(e, line);

    reply_put(s, line, n);
    return reply_failed(s);             /* out of memory: stop walking */
}

int print_after_unlock(struct session *s)
{
    if (cmd_store_enter(s, STORE_READ))
        return 0;
    reply_puts(s, ENTRY_PRINT_HEAD);
    store_foreach_locked(s->store, format_one, s);
    reply_puts(s, ENTRY_PRINT_TAIL);
    cmd_store_leave(s, STORE_READ);
    return 0;                   /* the driver writes it, lock released */
}
