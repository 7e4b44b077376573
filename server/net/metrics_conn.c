/* metrics_conn.c -- the connections of --metrics-port (metrics_conn.h):
 * accepted with a cap, each closed at its deadline whatever it does, its
 * request head read into at most METRICS_HEAD_MAX bytes, parsed, answered
 * by the handler (metrics_http.c), and closed once the answer has left
 * and the client has closed its side (or the deadline came). An answer
 * the handler holds back (a wrong password's delay, metrics_http.c) stays
 * queued with writing off until the connection's release timer fires: the
 * loop never sleeps, and other scrapes are answered meanwhile.
 *
 * libevent 2.1's evhttp, which served the port before, caps neither the
 * connections nor their life (its timeout restarts with every byte), so
 * idle or trickling connections to this port held every descriptor the
 * process had, and the main port stopped answering (test-metrics.sh
 * case_metrics_exhaust). The descriptors this port may take are counted
 * in the open-file limit at start-up (server/limits_fit.c). With all of
 * them open, a new connection closes the oldest one that has not sent a
 * whole request (or whose answer has left or is held back): neither idle
 * connections nor held answers to wrong guesses can keep a scraper out.
 * So at most METRICS_CONNS_MAX answers are held at once.
 *
 * State: the metrics thread's alone (its event_base), no lock;
 * metrics_conn_refused and metrics_conn_evicted are read from any
 * thread.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include "listener.h"
#include "log.h"
#include "log_source.h"
#include "metrics_conn.h"
#include "metrics_head.h"
#include "server.h"

struct mconn {
    struct mconn *prev, *next;
    struct bufferevent *bev;
    struct event *deadline;
    struct event *release;      /* ends a held answer's wait */
    int answered;               /* the answer is queued: input is dropped */
    int held;                   /* ... and held back: writing is off */
    int sent;                   /* the answer has left */
    int eof;                    /* the client has closed its side */
    char peer[SSN_PEER_MAX];
};

static struct evconnlistener *lev;
static struct event *resume;    /* accepting again after EMFILE */
static metrics_handler handler;
static struct mconn *conns;     /* every open connection */
static int nconns;
static atomic_ulong refused, evicted;

unsigned long metrics_conn_refused(void)
{
    return atomic_load_explicit(&refused, memory_order_relaxed);
}

unsigned long metrics_conn_evicted(void)
{
    return atomic_load_explicit(&evicted, memory_order_relaxed);
}

int metrics_conn_answer(struct evbuffer *out, int head_only, int code,
                        const char *reason, const char *ctype,
                        const char *extra, struct evbuffer *body,
                        const char *text)
{
    size_t n = body ? evbuffer_get_length(body) : strlen(text);

    if (evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
                            "Content-Length: %zu\r\nConnection: close\r\n"
                            "%s\r\n", code, reason, ctype, n,
                            extra ? extra : "") < 0)
        return -1;
    if (head_only)
        return 0;
    return body ? evbuffer_add_buffer(out, body) : evbuffer_add(out, text, n);
}

static void conn_free(struct mconn *mc)
{
    if (mc->prev)
        mc->prev->next = mc->next;
    else
        conns = mc->next;
    if (mc->next)
        mc->next->prev = mc->prev;
    nconns--;
    event_free(mc->deadline);
    event_free(mc->release);
    metrics_wipe_drain(bufferevent_get_input(mc->bev));   /* a head cut
                                           short may hold a password */
    bufferevent_free(mc->bev);          /* closes the socket */
    free(mc);
}

/* ---- the request head ---------------------------------------------------- */

/* The length of the head at the start of in, through the blank line that
 * ends it; 0 while it is not all there. */
static size_t head_length(struct evbuffer *in)
{
    struct evbuffer_ptr a = evbuffer_search(in, "\n\n", 2, NULL);
    struct evbuffer_ptr b = evbuffer_search(in, "\n\r\n", 3, NULL);

    if (a.pos < 0 && b.pos < 0)
        return 0;
    if (b.pos < 0 || (a.pos >= 0 && a.pos < b.pos))
        return (size_t)a.pos + 2;
    return (size_t)b.pos + 3;
}

static const char *reason_of(int code)
{
    switch (code) {
    case 405: return "Method Not Allowed";
    case 431: return "Request Header Fields Too Large";
    case 505: return "HTTP Version Not Supported";
    default:  return "Bad Request";
    }
}

/* ---- a connection's life ------------------------------------------------- */

static void read_cb(struct bufferevent *bev, void *arg);
static void event_cb(struct bufferevent *bev, short what, void *arg);

static void written_cb(struct bufferevent *bev, void *arg)
{
    struct mconn *mc = arg;

    /* The answer has left: say so with a FIN, and close once the client
     * has read it and closed too, so that no reset overtakes it. */
    shutdown(bufferevent_getfd(bev), SHUT_WR);
    mc->sent = 1;
    if (mc->eof)
        conn_free(mc);
    else
        bufferevent_setcb(bev, read_cb, NULL, event_cb, mc);
}

/* The held answer's time is up: it leaves now. */
static void release_cb(evutil_socket_t fd, short what, void *arg)
{
    struct mconn *mc = arg;
    (void)fd;
    (void)what;

    mc->held = 0;
    if (evbuffer_get_length(bufferevent_get_output(mc->bev)) == 0)
        written_cb(mc->bev, mc);        /* nothing to write (no memory) */
    else
        bufferevent_enable(mc->bev, EV_WRITE);
}

/* Holds the answer queued on mc, writing off, for ns nanoseconds (rounded
 * up to a microsecond: never early). 0, or -1 when the timer cannot be
 * set: the caller closes the connection, unanswered rather than early. */
static int hold(struct mconn *mc, uint64_t ns)
{
    uint64_t us = (ns + 999) / 1000;
    struct timeval tv = { .tv_sec = (time_t)(us / 1000000),
                          .tv_usec = (suseconds_t)(us % 1000000) };

    if (evtimer_add(mc->release, &tv))
        return -1;
    mc->held = 1;
    return 0;
}

void metrics_wipe_drain(struct evbuffer *in)
{
    struct evbuffer_iovec v[8];
    size_t left;

    /* peek counts empty chunks too (libevent keeps one to read into): the
     * bytes left say when it is done, not the chunks */
    while ((left = evbuffer_get_length(in)) > 0) {
        int n = evbuffer_peek(in, (ev_ssize_t)left, NULL, v, 8);
        size_t len = 0;
        for (int i = 0; i < n && i < 8; i++) {
            explicit_bzero(v[i].iov_base, v[i].iov_len);
            len += v[i].iov_len;
        }
        if (len == 0 || evbuffer_drain(in, len) != 0)
            break;                      /* cannot happen: nothing to wipe */
    }
}

/* Queues the answer to the head in, or a refusal. */
static void answer(struct mconn *mc, struct evbuffer *in, size_t len)
{
    struct evbuffer *out = bufferevent_get_output(mc->bev);
    struct metrics_request rq = { .peer = mc->peer };
    char head[METRICS_HEAD_MAX + 1];
    int code = 431;
    uint64_t wait = 0;
    size_t copied = 0;                  /* of head, to wipe */

    if (len && len <= METRICS_HEAD_MAX) {
        copied = len;
        evbuffer_copyout(in, head, len);
        head[len] = '\0';
        code = memchr(head, '\0', len) ? 400 : metrics_head_parse(head, &rq);
    }
    metrics_wipe_drain(in);
    mc->answered = 1;
    if (code == 0) {
        /* Writing is off while the handler writes, so that nothing of an
         * answer it holds back leaves before its time. */
        bufferevent_disable(mc->bev, EV_WRITE);
        wait = handler(&rq, out);
        explicit_bzero(head, copied);   /* its Authorization, rq's */
        if (wait && hold(mc, wait)) {
            conn_free(mc);
            return;
        }
        if (!wait)
            bufferevent_enable(mc->bev, EV_WRITE);
    } else {
        explicit_bzero(head, copied);
        metrics_conn_answer(out, 0, code, reason_of(code),
                            "text/plain; charset=utf-8",
                            code == 405 ? "Allow: GET, HEAD\r\n" : NULL, NULL,
                            code == 431 ? "431 the request's head is too "
                            "long\n" : "a GET of /metrics, in HTTP/1.x\n");
    }
    bufferevent_setcb(mc->bev, read_cb, written_cb, event_cb, mc);
    if (!mc->held && evbuffer_get_length(out) == 0)
        written_cb(mc->bev, mc);
}

static void read_cb(struct bufferevent *bev, void *arg)
{
    struct mconn *mc = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    size_t len;

    if (mc->answered) {                 /* one request a connection */
        metrics_wipe_drain(in);
        return;
    }
    len = head_length(in);
    if (len || evbuffer_get_length(in) > METRICS_HEAD_MAX)
        answer(mc, in, len);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    struct mconn *mc = arg;

    if ((what & BEV_EVENT_EOF) && mc->answered &&
        evbuffer_get_length(bufferevent_get_output(bev)) > 0) {
        mc->eof = 1;                    /* the answer still leaves */
        bufferevent_disable(bev, EV_READ);
        return;
    }
    conn_free(mc);                      /* EOF, an error */
}

static void deadline_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    conn_free(arg);
}

/* The connection a new one may take the place of: the oldest that has
 * not sent a whole request, else the oldest whose answer has left (it
 * only waits for the client's close) or is held back (a wrong guess's
 * delay: its closing tells the guesser nothing its wait did not); NULL
 * when each is being answered. The list is newest first. */
static struct mconn *evictable(void)
{
    struct mconn *idle = NULL, *done = NULL;

    for (struct mconn *mc = conns; mc; mc = mc->next) {
        if (!mc->answered)
            idle = mc;
        else if (mc->sent || mc->held)
            done = mc;
    }
    return idle ? idle : done;
}

/* METRICS_CONNS_MAX are open: makes room for one more from peer, or
 * says no (0). */
static int make_room(const char *peer)
{
    struct mconn *old = evictable();

    if (!old) {
        atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
        log_source(LOG_LEVEL_WARN, peer, "/metrics: %d connections being "
                   "answered, closed one more from %s", METRICS_CONNS_MAX,
                   peer);
        return 0;
    }
    atomic_fetch_add_explicit(&evicted, 1, memory_order_relaxed);
    log_source(LOG_LEVEL_WARN, peer, "/metrics: %d connections open, "
               "closed the oldest idle, done or held one, from %s, for one "
               "from %s",
               METRICS_CONNS_MAX, old->peer, peer);
    conn_free(old);
    return 1;
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd,
                      struct sockaddr *sa, int salen, void *arg)
{
    struct event_base *base = evconnlistener_get_base(l);
    struct timeval tv = { METRICS_DEADLINE_S, 0 };
    char peer[SSN_PEER_MAX];
    struct mconn *mc;
    (void)salen;
    (void)arg;

    listener_format_peer(sa, peer, sizeof(peer));
    if (nconns >= METRICS_CONNS_MAX && !make_room(peer)) {
        evutil_closesocket(fd);
        return;
    }
    mc = calloc(1, sizeof(*mc));
    if (!mc || !(mc->deadline = evtimer_new(base, deadline_cb, mc)) ||
        !(mc->release = evtimer_new(base, release_cb, mc)) ||
        !(mc->bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE))) {
        if (mc && mc->deadline)
            event_free(mc->deadline);
        if (mc && mc->release)
            event_free(mc->release);
        free(mc);
        evutil_closesocket(fd);
        return;
    }
    memcpy(mc->peer, peer, sizeof(peer));
    mc->next = conns;
    if (conns)
        conns->prev = mc;
    conns = mc;
    nconns++;
    evtimer_add(mc->deadline, &tv);
    /* Reading stops at the longest head plus one: that one says 431. */
    bufferevent_setwatermark(mc->bev, EV_READ, 0, METRICS_HEAD_MAX + 1);
    bufferevent_setcb(mc->bev, read_cb, NULL, event_cb, mc);
    bufferevent_enable(mc->bev, EV_READ | EV_WRITE);
}

/* accept(2) failed for want of descriptors (the main port's clients hold
 * them): try again in a second, not at once and forever. */
static void accept_error_cb(struct evconnlistener *l, void *arg)
{
    struct timeval tv = { 1, 0 };
    int err = EVUTIL_SOCKET_ERROR();
    (void)arg;

    log_msg(LOG_LEVEL_WARN, "/metrics: accept failed: %s; trying again in "
            "a second", strerror(err));
    evconnlistener_disable(l);
    evtimer_add(resume, &tv);
}

static void resume_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    evconnlistener_enable(lev);
}

int metrics_conn_start(struct event_base *base, evutil_socket_t fd,
                       metrics_handler h)
{
    handler = h;
    resume = evtimer_new(base, resume_cb, NULL);
    lev = resume ? evconnlistener_new(base, accept_cb, NULL,
                                      LEV_OPT_CLOSE_ON_FREE |
                                      LEV_OPT_CLOSE_ON_EXEC, 0, fd) : NULL;
    if (!lev) {
        if (resume)
            event_free(resume);
        resume = NULL;
        evutil_closesocket(fd);
        return -1;
    }
    evconnlistener_set_error_cb(lev, accept_error_cb);
    return 0;
}

void metrics_conn_stop(void)
{
    while (conns)
        conn_free(conns);
    if (lev)
        evconnlistener_free(lev);       /* closes the socket */
    if (resume)
        event_free(resume);
    lev = NULL;
    resume = NULL;
}
