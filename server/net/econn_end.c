/* econn_end.c -- how an event-driven connection ends (econn.h): its
 * session's end and the policy told once, the close that frees it, the
 * closing after QUIT while replies are still due, and the linger after
 * them, which drains what the client still sends without holding the
 * worker (the read, write and settle steps are econn.c's).
 */
#include <stdlib.h>
#include <unistd.h>
#include <sys/socket.h>
#include "econn.h"
#include "session.h"
#include "timeutil.h"

static void end_session(struct econn *c)
{
    if (c->state == ECONN_PARKED) {
        if (store_lock_cancel(&srv.store, &c->park->waiter)) {
            session_begin_adopt(c->conn.session, &c->park->waiter);
            session_end(c->conn.session);
        }
    } else if (c->state == ECONN_OPEN && c->conn.session) {
        session_end(c->conn.session);
    } else if (c->state == ECONN_OPEN) {
        session_end_parked(&srv.store, &c->keep);
    }
}

/* The session is over (once; later calls change nothing): why is noted
 * and the policy may admit the next one. The connection stays registered
 * until econn_close. 1 when it may linger (linger asked, and fewer than
 * srv.linger_max do); the second call, econn_close's after a linger, asks
 * nothing. */
static int session_over(struct econn *c, int idle, int begin_error,
                        int linger)
{
    if (c->conn.over)
        return 0;
    conns_note_end(&c->conn, idle, begin_error);
    return conns_session_over(&c->conn, linger);
}

void econn_close(struct econn *c)
{
    struct journal *j = srv.store.journal;

    end_session(c);
    session_over(c, c->idle, c->begin_error, 0);
    if (c->ev)
        event_free(c->ev);
    econn_drop_wakes(c, j);
    outq_clear(&c->q);
    session_free(c->conn.session);
    conns_unregister(&c->conn);         /* before the close (conns.c) */
    close(c->conn.fd);
    events_round_forget(c);
    events_hold_forget(c);
    econn_batch_forget(c);
    events_forget(c);
    free(c);
}

/* After QUIT (or an output limit): every reply due is sent first, then the
 * server shuts its side and drains input for a while (see threads.c's
 * linger_drain for why), without holding the worker; closed at once when
 * srv.linger_max connections linger already. */
void econn_begin_linger(struct econn *c)
{
    struct timeval tv = { .tv_sec = SSN_LINGER_MS / 1000,
                          .tv_usec = (SSN_LINGER_MS % 1000) * 1000 };

    if (!session_over(c, 0, 0, 1)) {
        econn_close(c);
        return;
    }
    c->state = ECONN_LINGER;
    c->linger_until = time_now_ns() + SSN_LINGER_MS * TIME_NS_PER_MS;
    shutdown(c->conn.fd, SHUT_WR);
    econn_read_off(c);
    econn_write_off(c);
    econn_watch(c, EV_READ, &tv);
}

void econn_begin_closing(struct econn *c)
{
    end_session(c);                     /* coarse: the lock goes on now */
    c->state = ECONN_CLOSING;
    econn_read_off(c);
}

void econn_on_linger(struct econn *c, short what)
{
    char junk[4096];

    if (!(what & EV_TIMEOUT) &&
        recv(c->conn.fd, junk, sizeof(junk), MSG_DONTWAIT) > 0 &&
        time_now_ns() < c->linger_until)
        return;
    econn_close(c);
}
