/* threads.c -- the thread-per-connection driver (threads.h). A session
 * thread blocks in read(2), hands what arrived to its session, and writes
 * the batch's replies with one write, after waiting for the journal when
 * they acknowledge a mutation. The thread never holds the store lock
 * itself: the session takes it through the lock policy. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include "budget.h"
#include "fdio.h"
#include "journal/journal.h"
#include "log.h"
#include "server.h"
#include "session.h"
#include "threads.h"
#include "threads_reap.h"
#include "timeutil.h"
#include "trace.h"

/* Each session thread's stack, set explicitly rather than inherited from
 * ulimit -s: only the pages a thread touches cost memory, but the size
 * bounds what it may ever touch. 64 kB is more than three times the
 * deepest any session goes (tools/bench-stack-depth runs every kind of
 * request and reads the stacks; docs/PERFORMANCE.md has the figure), and
 * glibc puts the guard page below it. Sanitizers' redzones and shadow
 * frames take several times the stack: sanitized builds get 1 MB
 * (SSN_SANITIZED comes from make asan and make tsan; the compilers' own
 * macros catch other sanitized builds). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SESSION_STACK_SANITIZED 1
#endif
#endif
#if defined(SSN_SANITIZED) || defined(__SANITIZE_ADDRESS__) || \
    defined(__SANITIZE_THREAD__) || defined(SESSION_STACK_SANITIZED)
#define SESSION_STACK   (1024 * 1024)
#else
#define SESSION_STACK   (64 * 1024)
#endif

/* Bytes a session thread reads at once while its session holds no buffer
 * (read_idle): one request, or a batch of small ones, in a frame no deeper
 * than a request's own (an idle thread has touched 8.2 kB of stack). */
#define THREADS_IDLE_READ 2048

static pthread_attr_t session_attr;

/* The buffers the session threads borrow while a request is in progress
 * (session_bufs.c): taken and given back under the pool's lock, so that
 * a request at one in flight allocates nothing. Kept for the process's
 * life: at most SESSION_POOL_SPARE of each kind stay spare. */
static struct session_pool threads_pool;
static int pool_made;

void threads_done(void)
{
    threads_reap_all();                 /* every one has ended (registry
                                           empty): none is left after */
    if (pool_made)
        session_pool_destroy(&threads_pool);
    pool_made = 0;
}

int threads_init(void)
{
    if (!pool_made) {
        int rc = session_pool_init_shared(&threads_pool, SESSION_POOL_SPARE);
        if (rc)
            return rc;
        pool_made = 1;
    }
    int rc = pthread_attr_init(&session_attr);
    if (!rc)
        rc = pthread_attr_setstacksize(&session_attr, SESSION_STACK);
    return -rc;
}

/* Writes all of data, blocking. A large buffer (a PRINT listing, a long
 * run of replies) is held for the client from the first byte sent until
 * the socket has taken the last: it is charged to the reply budget
 * (budget.h) for that long, so that many threads each sending one cannot
 * add up unseen. A small one is tried without blocking first, and charged
 * only when the socket does not take it at once: steady traffic never
 * touches the budget's counters. */
static int write_charged(struct conn *c, const void *data, size_t len)
{
    ssize_t n = 0;

    if (len < BUDGET_CHARGE_AT) {
        n = send(c->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n == (ssize_t)len)
            return 0;
        if (n < 0 && errno == ENOTSOCK) /* --stdin: nobody to charge */
            return fd_write_all(c->fd, data, len);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
            errno != EINTR)
            return -errno;
        n = n > 0 ? n : 0;
    }
    budget_charge(c, len);
    int rc = fd_write_all(c->fd, (const char *)data + n, len - (size_t)n);
    budget_release(c, len);
    return rc;
}

/* Takes back what the journal still holds of c's replies (journal.h,
 * struct journal_reply) and sends it, blocking, once durable: before
 * anything that must follow it leaves by another way, and before the
 * socket closes. 0 or -errno (-EIO: never durable, nothing sent). */
static int conn_settle(struct conn *c)
{
    struct journal *j = c->session->store->journal;
    struct journal_reply *r = c->reply;
    int rc;

    if (!r)
        return 0;
    if (!journal_reply_held(r))
        return r->err;          /* all sent, or the send that failed */
    rc = journal_reply_take(j, r);
    if (rc == 0 && r->len > r->off)
        rc = journal_wait(j, r->seq);
    if (rc == 0 && r->len > r->off)
        rc = write_charged(c, r->data + r->off, r->len - r->off);
    r->off = r->len = 0;
    return rc;
}

/* Hands a durable reply (or one that follows a held one) to the journal,
 * which sends it when the round that makes it durable ends, so that this
 * thread goes back to read(2) instead of sleeping until then. Returns 0
 * when held, 1 when the caller is to send data now (nothing to wait for),
 * 2 when it is to wait and send as before (no room: the held ones were
 * sent first), or -errno. */
static int conn_hold(struct conn *c, const void *data, size_t len,
                     uint64_t durable)
{
    struct journal *j = c->session->store->journal;

    if (!c->reply) {
        c->reply = malloc(sizeof(*c->reply));
        if (!c->reply)
            return 2;
        journal_reply_init(c->reply, c->fd);
    }
    int rc = journal_reply_push(j, c->reply, data, len, durable);
    if (rc == -E2BIG && (rc = conn_settle(c)) == 0)
        rc = 2;
    return rc;
}

/* The one way out of a thread's session. A reply that acknowledges a
 * journal record not yet durable: when no round is under way, this thread
 * leads one and then writes the reply (group commit without a hand-off);
 * when one is, the reply, and what follows it while it is held, is handed
 * to the journal (conn_hold), which sends it when the round that covers it
 * ends; one that does not fit waits here until the record is durable
 * (journal_wait), then is written, blocking. */
static int conn_send(void *arg, const void *data, size_t len,
                     uint64_t durable)
{
    struct conn *c = arg;
    int led = 0;
    /* Held replies not all sent yet: these follow them. Once they are
     * (or failed, whose error the socket repeats), the session may lead
     * rounds again. */
    int holding = c->reply && journal_reply_held(c->reply);

    if (c->is_socket && c->session->ending)     /* not --stdin's */
        conns_leaving(c);                       /* before Bye leaves */
    /* No round under way: this thread leads one (its own write and
     * sync), and replies with nothing held. Else the reply is held. */
    if (durable && !holding && c->is_socket) {
        int rc = journal_lead(c->session->store->journal, durable);
        if (rc == 0)
            durable = 0, led = 1;
        else if (rc != -EBUSY)
            return rc;          /* never durable: the reply must not go */
    }
    if (c->is_socket && (durable || holding)) {
        int rc = conn_hold(c, data, len, durable);
        if (rc <= 0)
            return rc;
        if (rc == 1)
            durable = 0;
    }
    if (durable) {
        int rc = journal_wait(c->session->store->journal, durable);
        if (rc)
            return rc;          /* never durable: the reply must not go */
    }
    int rc = write_charged(c, data, len);
    if (led && rc == 0)         /* its reply gone: rounds for the others */
        journal_help(c->session->store->journal);
    return rc;
}

/* fine's streamed PRINT: written at once, the store lock held. */
static int conn_send_locked(void *arg, const void *data, size_t len)
{
    struct conn *c = arg;

    return fd_write_all(c->fd, data, len);
}

/* fine's streamed PRINT writes under the store lock: what the journal
 * holds goes first, so that nothing under the lock waits for it. A held
 * reply that never becomes durable ends the connection. */
static int conn_drained(void *arg)
{
    struct conn *c = arg;

    if (conn_settle(c))
        shutdown(c->fd, SHUT_RDWR);
    return 1;
}

/* AUTH succeeded: the connection counts as authenticated, and the
 * session begins (coarse's lock, serial's turn), blocking. */
static int conn_admit(void *arg)
{
    struct conn *c = arg;

    conns_authed(c);
    return session_begin(c->session);
}

/* An AUTH answer's delay, cut short when the connection is dropped
 * (conns_drop_locked shuts both directions: POLLHUP) or the server stops
 * (conns_stop_all shuts reading: POLLRDHUP). A client's bytes do not wake
 * it. After the client's own half-close (POLLRDHUP, which stays) its
 * answer is still owed: then it looks at the stop every 50 ms. */
static int conn_sleep_until(void *arg, uint64_t until)
{
    struct conn *c = arg;
    struct pollfd p = { .fd = c->fd, .events = POLLRDHUP };

    for (uint64_t now; (now = time_now_ns()) < until; ) {
        uint64_t ms = (until - now + TIME_NS_PER_MS - 1) / TIME_NS_PER_MS;
        if (!p.events && ms > 50)
            ms = 50;
        int n = poll(&p, 1, (int)ms);
        if (atomic_load(&srv.stopping) ||
            atomic_load(&c->dropped) != CONN_KEPT)
            return -1;
        if (n > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL)))
            return -1;                  /* gone, or reset */
        if (n > 0)
            p.events = 0;               /* the client's half-close */
    }
    return 0;
}

struct session *threads_session_new(struct conn *c, int quiet)
{
    static const struct session_io io = {
        .send = conn_send, .send_locked = conn_send_locked,
        .drained = conn_drained, .admit = conn_admit,
        .sleep_until = conn_sleep_until,
    };

    c->session = session_new(&srv.store, &io, c, quiet);
    return c->session;
}

/* Reads once while the session holds no buffer (it gave them back, idle):
 * into a small buffer on this thread's stack, then into the session's
 * borrowed input buffer, so that a thread blocked in read(2) between
 * requests holds no heap buffer. Not inlined, and nothing runs under it:
 * its frame is gone before the request runs, so it touches no stack page
 * a request does not touch anyway. Returns as read(2); -1 with ENOMEM
 * when the buffers cannot be had. */
static __attribute__((noinline)) ssize_t read_idle(struct session *s, int fd)
{
    char buf[THREADS_IDLE_READ];
    size_t room;
    ssize_t n = read(fd, buf, sizeof(buf));

    if (n <= 0)
        return n;
    char *p = session_recv_space(s, &room);     /* borrows: room is all */
    if (p && room >= (size_t)n)
        memcpy(p, buf, (size_t)n);
    explicit_bzero(buf, (size_t)n);     /* it may have held an SSN */
    if (!p || room < (size_t)n) {
        errno = ENOMEM;
        return -1;
    }
    return n;
}

/* Reads once into the session's buffer, borrowed already. */
static ssize_t read_busy(struct session *s, int fd)
{
    size_t room;
    char *p = session_recv_space(s, &room);

    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    return read(fd, p, room);
}

int threads_serve(struct session *s, int rfd, int *read_errno)
{
    int rc = session_begin(s);
    int bare = 1;                       /* the session holds no buffer */

    if (rc)
        return rc;
    for (;;) {
        ssize_t n = bare ? read_idle(s, rfd) : read_busy(s, rfd);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            rc = THREADS_IDLE;          /* SO_RCVTIMEO: --timeout */
            break;
        }
        if (n < 0) {                    /* reset, or --stdin's error */
            *read_errno = errno;
            rc = THREADS_READ_FAILED;
            break;
        }
        if (n == 0)
            break;                      /* closed or shut down */
        bare = 0;
        int done = session_received(s, (size_t)n);
        if (session_flush(s) || done) {
            rc = THREADS_ENDED;
            break;
        }
        bare = session_release(s);      /* idle: the buffers go back */
    }
    session_flush(s);
    session_end(s);
    session_wipe_thread();              /* the last request's fields */
    return rc;
}

/* After QUIT (or an output limit) the client may still be sending: closing
 * with unread input makes the kernel reset the connection, and a reset can
 * destroy replies the client has not read yet. So the server says it is
 * done (FIN), reads and drops what still comes for a bounded time, and
 * only then closes (its caller). A shut-down read side (conns_stop_all,
 * conns_drop_locked) ends it at once. */
static void linger_drain(int fd)
{
    uint64_t deadline = time_now_ns() + SSN_LINGER_MS * TIME_NS_PER_MS;
    struct pollfd p = { .fd = fd, .events = POLLIN };
    char junk[4096];

    shutdown(fd, SHUT_WR);
    for (;;) {
        uint64_t now = time_now_ns();
        if (now >= deadline ||
            poll(&p, 1, (int)((deadline - now) / TIME_NS_PER_MS) + 1) <= 0)
            break;
        if (read(fd, junk, sizeof(junk)) <= 0)
            break;
    }
}

/* Numbers the session threads' lanes in a --trace timeline. */
static atomic_ulong sessions_traced;

/* --sched batch (the default): the session thread runs as SCHED_BATCH.
 * A thread the kernel wakes because its client's bytes arrived then waits
 * for the running thread's time slice instead of preempting it at once.
 * With 50 threads on 2 CPUs that preemption often caught a thread inside
 * the store lock, and every other session then queued behind a holder
 * that was not running: the lock's mean hold over 16 inserts was 31 to
 * 35 us with the kernel's default policy and 24 to 26 us with this one
 * (docs/PERFORMANCE.md). Unprivileged; if refused, say so once and serve
 * on. Each thread sets its own: the listener, the journal's threads and
 * the log writer keep the default. */
static void session_sched(void)
{
    struct sched_param sp = { .sched_priority = 0 };
    int rc = pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);

    if (rc && !atomic_exchange(&srv.sched_refused, 1))
        log_msg(LOG_LEVEL_WARN, "--sched batch: SCHED_BATCH refused (%s); "
                "session threads keep the default policy", strerror(rc));
}

static void *session_thread(void *arg)
{
    struct tconn *t = arg;
    struct conn *c = &t->conn;

    if (srv.opt.sched_batch)
        session_sched();
    if (trace_configured()) {          /* a window may start later */
        char name[32];
        snprintf(name, sizeof(name), "client %lu",
                 atomic_fetch_add(&sessions_traced, 1) + 1);
        trace_thread_name(name);
    }
    int read_errno = 0;
    int rc = threads_serve(c->session, c->fd, &read_errno);
    int held = conn_settle(c);          /* before the socket closes */
    int linger = rc == THREADS_ENDED && !c->session->send_error && !held;

    if (c->reply) {
        journal_reply_destroy(c->reply);
        free(c->reply);
    }

    conns_note_end(c, rc == THREADS_IDLE, rc < 0 ? rc : 0);
    session_free(c->session);
    c->session = NULL;
    /* Registered while it lingers, so that shutdown's conns_stop_all
     * ends it; no longer counted against --max-clients, and at most
     * srv.linger_max of them (conns_session_over). */
    if (conns_session_over(c, linger))
        linger_drain(c->fd);
    threads_note_ended(t);          /* before it leaves the registry */
    conns_unregister(c);            /* before the close: c->fd is still
                                       this socket for conns_stop_all */
    close(c->fd);
    return NULL;                    /* threads_reap frees t */
}

/* --timeout and --write-timeout, as the socket's own timeouts: a read or
 * send that makes no progress for that long fails with EAGAIN. */
static void set_timeouts(int fd)
{
    struct timeval tv = { .tv_usec = 0 };

    if (srv.opt.idle_timeout_s) {
        tv.tv_sec = srv.opt.idle_timeout_s;
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    }
    if (srv.opt.write_timeout_s) {
        tv.tv_sec = srv.opt.write_timeout_s;
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    }
}

int threads_start(int fd, const char *peer)
{
    struct tconn *t = calloc(1, sizeof(*t));
    struct conn *c = t ? &t->conn : NULL;
    int rc;

    if (!t)
        return -ENOMEM;
    c->fd = fd;
    c->is_socket = 1;
    snprintf(c->peer, sizeof(c->peer), "%s", peer);
    if (!threads_session_new(c, 0)) {
        free(t);
        return -ENOMEM;
    }
    session_set_output_limit(c->session, srv.opt.max_output);
    session_set_batch(c->session, srv.opt.batch - 1);
    session_set_peer(c->session, c->peer);
    session_set_pool(c->session, &threads_pool);
    set_timeouts(fd);
    conns_register(c);
    rc = pthread_create(&t->tid, &session_attr, session_thread, t);
    if (rc) {
        conns_unregister(c);
        session_free(c->session);
        free(t);
        return -rc;
    }
    return 0;
}
