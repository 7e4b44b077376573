/* auth.c -- AUTH (commands.h): the password check, what a wrong guess
 * costs, and the session's admission once the password is right.
 *
 * A wrong guess is answered only after a delay that doubles with each
 * failure on the connection (AUTH_DELAY_FIRST_MS, capped at
 * AUTH_DELAY_MAX_MS), and after AUTH_MAX_FAILURES the connection is
 * closed: one connection tries at most that many passwords, slowly. Once
 * an address has failed a few times, every AUTH answer from it waits,
 * right or wrong (auth_source.h), so hanging up early gains nothing. A
 * thread-per-connection session sleeps (no lock held: AUTH ends any
 * batch first, and coarse's session lock is not taken before AUTH); an
 * event worker never sleeps: the request waits (session_waiting) and the
 * driver runs it on when the delay is over. The comparison is
 * server_password_ok's (SHA-256 digests, CRYPTO_memcmp), so its time says
 * nothing about the guess.
 *
 * With a password, a session begins (the policy's admission: coarse's
 * session-long lock, serial's turn) only when AUTH succeeds, so a client
 * that never authenticates holds nobody up.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include "auth_source.h"
#include "commands.h"
#include "lockmode.h"
#include "log.h"
#include "log_source.h"
#include "reply.h"
#include "server.h"
#include "session.h"
#include "timeutil.h"

/* The delay before the answer to failure number n (1, 2, ...). */
static uint64_t delay_ns(int n)
{
    uint64_t d = (uint64_t)AUTH_DELAY_FIRST_MS * TIME_NS_PER_MS;

    while (--n > 0 && d < (uint64_t)AUTH_DELAY_MAX_MS * TIME_NS_PER_MS)
        d *= 2;
    return d < (uint64_t)AUTH_DELAY_MAX_MS * TIME_NS_PER_MS
           ? d : (uint64_t)AUTH_DELAY_MAX_MS * TIME_NS_PER_MS;
}

/* A wrong guess's answer, once its delay is over. */
static void refuse(struct session *s)
{
    if (s->auth_failures < AUTH_MAX_FAILURES) {
        reply_puts(s, "Error: invalid password\n");
        return;
    }
    reply_printf(s, "Error: invalid password (%d wrong; closing the "
                 "connection)\n", s->auth_failures);
    atomic_fetch_add(&srv.auth_closed, 1);
    s->ending = 1;
}

/* The password was right: the session is admitted (it begins), and the
 * answer is OK once it has. */
static int admitted(struct session *s)
{
    s->authed = 1;
    int rc = session_admit(s);

    if (rc == -EAGAIN) {
        s->wait_kind = SESSION_WAITS_ADMISSION;
        return CMD_WAITS;
    }
    if (rc) {
        reply_printf(s, "Error: the session could not begin: %s\n",
                     strerror(-rc));
        s->ending = 1;
        return 0;
    }
    reply_puts(s, PROTO_OK_LINE);
    return 0;
}

/* The answer, once its wait is over. */
static int answer(struct session *s)
{
    if (s->auth_right)
        return admitted(s);
    refuse(s);
    return 0;
}

uint64_t auth_verdict(const char *peer, int right, int failures,
                      uint64_t now)
{
    uint64_t wait = auth_source_delay(peer, now), own;

    if (right)
        return wait;
    atomic_fetch_add(&srv.auth_failures, 1);
    auth_source_failed(peer, now);
    own = delay_ns(failures);
    return own > wait ? own : wait;
}

/* Waits until `until`, then answers: a thread sleeps (no lock held: AUTH
 * ended any batch, and coarse's session lock comes after AUTH); an event
 * loop's request waits for the clock (SESSION_WAITS_TIMER). */
static int answer_at(struct session *s, uint64_t until)
{
    if (s->io->never_waits) {
        s->wait_kind = SESSION_WAITS_TIMER;
        s->wait_until = until;
        return CMD_WAITS;
    }
    STORE_ASSERT_NOT_HELD(s->store);    /* no sleep under a store op */
    reply_send_now(s);                  /* earlier replies are not held */
    if (s->io->sleep_until) {
        if (s->io->sleep_until(s->io_arg, until)) {
            s->ending = 1;              /* dropped: nobody to answer */
            return 0;
        }
        return answer(s);
    }
    struct timespec ts = { .tv_sec = (time_t)(until / TIME_NS_PER_SEC),
                           .tv_nsec = (long)(until % TIME_NS_PER_SEC) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
           EINTR)
        ;
    return answer(s);
}

/* Right or wrong, the answer waits as long as the address's failures say
 * (auth_source.h), so that a guesser gains nothing by hanging up when an
 * answer is late; a wrong one waits at least its connection's delay. */
int cmd_auth(struct session *s, const char *secret, size_t len)
{
    uint64_t now = time_now_ns(), wait;

    if (!srv.auth_required) {
        reply_puts(s, "Error: no password is set\n");
        return 0;
    }
    struct digest *d = session_digest(s);
    if (!d) {
        reply_puts(s, "Error: out of memory\n");
        return 0;
    }
    s->auth_right = server_password_ok(d, secret, len);
    if (!s->auth_right) {               /* a line a second per address */
        log_source(LOG_LEVEL_WARN, s->peer, "authentication failed from %s",
                   s->peer);
        s->auth_failures++;
    }
    wait = auth_verdict(s->peer, s->auth_right, s->auth_failures, now);
    return wait ? answer_at(s, now + wait) : answer(s);
}

int cmd_auth_resume(struct session *s)
{
    if (s->wait_kind == SESSION_WAITS_TIMER) {
        if (time_now_ns() < s->wait_until)
            return CMD_WAITS;
        return answer(s);
    }
    reply_puts(s, PROTO_OK_LINE);       /* admitted: the driver began it */
    return 0;
}
