/* metrics_http.c -- --metrics-port (metrics_http.h): GET /metrics in the
 * Prometheus text exposition format, version 0.0.4, served by
 * metrics_conn.c's small HTTP server, which bounds the connections.
 *
 * It runs on a thread of its own with an event_base of its own: a scrape
 * is never a turn of the main loop (signals, accepting) or of a worker.
 * What it reads takes no lock a request holds for long: atomic counters,
 * the store lock's histograms by relaxed loads (store_lock_figures; never
 * the store lock itself, which coarse holds for a session's whole life),
 * the latency sets (metrics_snapshot, their own leaf locks) and the
 * journal's figures (journal->lock, a leaf held for a few copies).
 *
 * Counters are counted since start-up where the server keeps that
 * (connections, commands); the others, and the summaries, since start-up
 * or the last STATS RESET, which Prometheus takes for a counter reset.
 * The summaries' quantiles cover the same span, not a sliding window.
 * Nothing in it names a person: no name, no SSN, only counts and times.
 *
 * With --password-file, a scrape must carry the password, as Prometheus
 * sends it: "Authorization: Basic" (basic_auth, any user name) or
 * "Authorization: Bearer" (authorization, credentials). It is checked as
 * AUTH checks it (server_password_ok: digests compared in constant time);
 * anything else gets 401 and a challenge, logged at most once a second.
 * An Authorization header without the password is a wrong AUTH from the
 * peer's address (auth.c): counted in srv.auth_failures, charged to the
 * address (auth_source.h), and its 401 held back AUTH_DELAY_FIRST_MS, or
 * the address's wait when longer. Any answer to an Authorization header,
 * right or wrong, waits the address's wait, as AUTH's does; so guessing
 * here slows the main port's AUTH from that address, and the other way
 * round. No Authorization header at all is no guess (Prometheus without
 * credentials sends none each scrape): 401 at once, nothing counted.
 * The waits are metrics_conn.c's timers, never a sleep of this thread;
 * a held 200 carries the figures of when its request came.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <openssl/evp.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include "commands.h"
#include "journal/journal.h"
#include "listener.h"
#include "lockmode.h"
#include "log.h"
#include "log_source.h"
#include "metrics.h"
#include "metrics_conn.h"
#include "metrics_http.h"
#include "server.h"
#include "timeutil.h"
#include "trace.h"

#define HTTP_AUTH_MAX       512     /* the longest credentials decoded */
#define HTTP_REALM          "Basic realm=\"ssnserver\""

static struct event_base *base;
static struct digest *auth_digest;     /* the HTTP thread's, for
                                           server_password_ok */
static pthread_t thread;
static int running;

/* ---- the exposition ------------------------------------------------------ */

static int family(struct evbuffer *b, const char *name, const char *type,
                  const char *help)
{
    return evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help,
                               name, type) < 0;
}

static int counter(struct evbuffer *b, const char *name, const char *help,
                   unsigned long long v)
{
    return family(b, name, "counter", help) ||
           evbuffer_add_printf(b, "%s %llu\n", name, v) < 0;
}

static int gauge(struct evbuffer *b, const char *name, const char *help,
                 double v)
{
    return family(b, name, "gauge", help) ||
           evbuffer_add_printf(b, "%s %.17g\n", name, v) < 0;
}

/* One summary's samples, labels ("" or `command="find"`) on each; scale
 * turns the histogram's unit into the metric's (1e-9: ns to seconds). */
static int summary_samples(struct evbuffer *b, const char *name,
                           const char *labels, const struct hist_summary *h,
                           double scale)
{
    static const char *const q[] = { "0.5", "0.9", "0.99", "0.999" };
    const uint64_t v[] = { h->p50, h->p90, h->p99, h->p999 };
    const char *sep = *labels ? "," : "";
    int bad = 0;

    for (int i = 0; i < 4; i++)
        bad |= evbuffer_add_printf(b, "%s{%s%squantile=\"%s\"} %.9g\n", name,
                                   labels, sep, q[i], (double)v[i] * scale) < 0;
    bad |= evbuffer_add_printf(b, "%s_sum%s%s%s %.9g\n", name,
                               *labels ? "{" : "", labels, *labels ? "}" : "",
                               (double)h->sum * scale) < 0;
    bad |= evbuffer_add_printf(b, "%s_count%s%s%s %llu\n", name,
                               *labels ? "{" : "", labels, *labels ? "}" : "",
                               (unsigned long long)h->count) < 0;
    return bad;
}

/* A summary and, beside it, its exact maximum as a gauge NAME_max. */
static int summary(struct evbuffer *b, const char *name, const char *help,
                   const struct hist_summary *h, double scale)
{
    char max[96];

    snprintf(max, sizeof(max), "%s_max", name);
    return family(b, name, "summary", help) ||
           summary_samples(b, name, "", h, scale) ||
           family(b, max, "gauge", "The largest value of the summary of the "
                  "same name.") ||
           evbuffer_add_printf(b, "%s %.9g\n", max, (double)h->max * scale) < 0;
}

static int requests(struct evbuffer *b, const struct metrics_snapshot *ms)
{
    const char *name = "ssn_request_duration_seconds";
    char labels[40];
    int bad = family(b, name, "summary", "A request's time in the server, by "
                     "command: from its parse to the end of its reply.");

    for (int i = 0; i < METRICS_CMDS && !bad; i++) {
        snprintf(labels, sizeof(labels), "command=\"%s\"",
                 metrics_cmd_names[i]);
        bad = summary_samples(b, name, labels, &ms->cmd[i], 1e-9);
    }
    bad = bad || family(b, "ssn_request_duration_seconds_max", "gauge",
                        "The longest request, by command.");
    for (int i = 0; i < METRICS_CMDS && !bad; i++)
        bad = evbuffer_add_printf(b, "ssn_request_duration_seconds_max"
                                  "{command=\"%s\"} %.9g\n",
                                  metrics_cmd_names[i],
                                  (double)ms->cmd[i].max * 1e-9) < 0;
    return bad;
}

static int server_lines(struct evbuffer *b)
{
    char info[256];

    snprintf(info, sizeof(info), "ssn_info{version=\"%s\",mode=\"%s\","
             "io=\"%s\",lock_order=\"%s\",sched=\"%s\"} 1\n", SSN_VERSION,
             srv.store.policy->name, srv.opt.io_events ? "events" : "threads",
             store_lock_order_name((enum store_lock_order)srv.opt.lock_order),
             server_sched_name());
    return family(b, "ssn_info", "gauge", "The server's version, lock mode, "
                  "I/O model, lock order and session threads' scheduling "
                  "policy, as labels.") ||
        evbuffer_add(b, info, strlen(info)) ||
        gauge(b, "ssn_uptime_seconds", "Seconds since start-up.",
              (double)server_uptime()) ||
        gauge(b, "ssn_connections", "Connections served now.",
              (double)atomic_load(&srv.connections_current)) ||
        gauge(b, "ssn_connections_lingering", "Connections on their way "
              "out: draining input after QUIT, or dropped before AUTH.",
              (double)atomic_load(&srv.connections_lingering)) ||
        gauge(b, "ssn_entries", "People in the store.",
              (double)atomic_load(&srv.store.entries)) ||
        counter(b, "ssn_connections_total", "Connections accepted since "
                "start-up.", (unsigned long long)
                (atomic_load(&srv.connections_total) +
                 atomic_load(&srv.connections_reset))) ||
        counter(b, "ssn_commands_total", "Requests answered since start-up.",
                (unsigned long long)(atomic_load(&srv.commands_total) +
                                     atomic_load(&srv.commands_reset))) ||
        counter(b, "ssn_connections_rejected_total", "Connections turned "
                "away by --max-clients.",
                (unsigned long long)atomic_load(&srv.connections_rejected)) ||
        counter(b, "ssn_thread_failures_total", "Connections closed because "
                "no thread could be started.",
                (unsigned long long)atomic_load(&srv.thread_failures)) ||
        counter(b, "ssn_clients_output_limited_total", "Clients disconnected "
                "for going over --max-output.",
                (unsigned long long)atomic_load(&srv.clients_output_limited)) ||
        counter(b, "ssn_clients_idle_timeout_total", "Connections closed by "
                "--timeout.",
                (unsigned long long)atomic_load(&srv.clients_idle_timeout)) ||
        counter(b, "ssn_clients_write_timeout_total", "Sessions ended by "
                "--write-timeout.",
                (unsigned long long)atomic_load(&srv.clients_write_timeout)) ||
        counter(b, "ssn_accept_fd_exhausted_total", "Times accepting paused "
                "for want of file descriptors.",
                (unsigned long long)atomic_load(&srv.accept_fd_exhausted)) ||
        counter(b, "ssn_auth_failures_total", "Wrong passwords sent with "
                "AUTH or to /metrics.",
                (unsigned long long)atomic_load(&srv.auth_failures)) ||
        counter(b, "ssn_metrics_connections_refused_total", "Connections "
                "to --metrics-port closed at once: as many as it serves were "
                "being answered.",
                (unsigned long long)metrics_conn_refused()) ||
        counter(b, "ssn_metrics_connections_evicted_total", "Connections "
                "to --metrics-port closed, idle or done, to let a new one "
                "in.", (unsigned long long)metrics_conn_evicted()) ||
        counter(b, "ssn_trace_events_dropped_total", "Events of --trace "
                "lost to a full ring.", (unsigned long long)trace_dropped()) ||
        counter(b, "ssn_uring_calls_total", "Socket reads and sends an "
                "event worker made through io_uring (--uring).",
                (unsigned long long)atomic_load(&srv.uring_calls)) ||
        counter(b, "ssn_uring_enters_total", "io_uring_enter calls that "
                "made them.",
                (unsigned long long)atomic_load(&srv.uring_enters));
}

static int lock_lines(struct evbuffer *b)
{
    struct store_lock_figures f;

    if (store_lock_figures(&srv.store, &f))
        return 1;
    return counter(b, "ssn_lock_acquisitions_total", "Times the store lock "
                   "was taken.", (unsigned long long)f.acquisitions) ||
        counter(b, "ssn_lock_contended_total", "Acquisitions of the store "
                "lock that found it held or queued for.",
                (unsigned long long)f.contended) ||
        summary(b, "ssn_lock_wait_seconds", "Waits for the store lock.",
                &f.wait, 1e-9) ||
        summary(b, "ssn_lock_hold_seconds", "Holds of the store lock.",
                &f.hold, 1e-9);
}

static int journal_lines(struct evbuffer *b, const struct metrics_snapshot *ms)
{
    struct journal_figures jf = { .fsync = JOURNAL_FSYNC_EVERYSEC };

    if (srv.store.journal)
        journal_figures(srv.store.journal, &jf);
    return gauge(b, "ssn_journal_enabled", "1 with --journal.",
                 srv.store.journal != NULL) ||
        counter(b, "ssn_journal_records_total", "Records appended to the "
                "journal.", (unsigned long long)jf.records) ||
        counter(b, "ssn_journal_bytes_total", "Bytes appended to the "
                "journal.", (unsigned long long)jf.bytes) ||
        counter(b, "ssn_journal_fsyncs_total", "fdatasync calls made.",
                (unsigned long long)jf.fsyncs) ||
        counter(b, "ssn_journal_compactions_total", "Compactions finished.",
                (unsigned long long)jf.compactions) ||
        gauge(b, "ssn_journal_readonly", "1 once a journal write or sync "
              "failed: ADD and DELETE are refused.", jf.readonly) ||
        gauge(b, "ssn_journal_size_bytes", "The journal file's length.",
              (double)jf.size) ||
        summary(b, "ssn_journal_round_records", "Records one journal round "
                "wrote (group commit).", &ms->round_records, 1) ||
        summary(b, "ssn_journal_round_duration_seconds", "A journal round's "
                "write and sync.", &ms->round_ns, 1e-9);
}

int metrics_http_write(struct evbuffer *b)
{
    struct metrics_snapshot ms;

    if (metrics_snapshot(&ms))
        return -ENOMEM;
    if (server_lines(b) || lock_lines(b) || requests(b, &ms) ||
        journal_lines(b, &ms))
        return -ENOMEM;
    return 0;
}

/* ---- the password -------------------------------------------------------- */

/* 1 when the Authorization header h carries the password. */
static int password_in(const char *h)
{
    const char *cred, *secret = NULL;
    unsigned char buf[HTTP_AUTH_MAX];
    int len = -1, ok;

    if (!auth_digest)
        return 0;
    if ((cred = metrics_auth_scheme(h, "Basic")))
        len = metrics_basic_password(cred, buf, sizeof(buf), &secret);
    else if ((cred = metrics_auth_scheme(h, "Bearer"))) {
        secret = cred;
        for (len = (int)strlen(cred); len > 0 && cred[len - 1] == ' '; len--)
            ;
    }
    ok = len >= 0 && server_password_ok(auth_digest, secret, (size_t)len);
    explicit_bzero(buf, sizeof(buf));
    return ok;
}

/* Whether rq may see the figures (*ok), and how long, in ns, its answer
 * waits: as AUTH's (auth.c's cmd_auth), the address's wait for any
 * credentials, and for wrong ones at least a first wrong AUTH's delay,
 * the guess counted and charged to the address. No credentials, or no
 * password set: no guess, no wait. */
static uint64_t check(const struct metrics_request *rq, int *ok)
{
    *ok = !srv.auth_required;
    if (*ok || !rq->authorization)
        return 0;
    *ok = password_in(rq->authorization);
    return auth_verdict(rq->peer, *ok, 1, time_now_ns());
}

static void refuse(const struct metrics_request *rq, struct evbuffer *out)
{
    /* As a wrong AUTH's: one line a second per address at most. */
    log_source(LOG_LEVEL_WARN, rq->peer, "/metrics: refused a request %s "
               "from %s", rq->authorization ? "with a wrong password"
               : "without a password", rq->peer);
    /* The body is a constant: nothing of the request echoed. */
    metrics_conn_answer(out, rq->head_only, 401, "Unauthorized",
                        "text/plain; charset=utf-8",
                        "WWW-Authenticate: " HTTP_REALM "\r\n", NULL,
                        "401 Unauthorized: /metrics needs the server's "
                        "password (Basic or Bearer)\n");
}

/* ---- the HTTP side ------------------------------------------------------- */

/* The handler (metrics_conn.h): the answer, and how long it is held. */
static uint64_t answer(const struct metrics_request *rq, struct evbuffer *out)
{
    static const char *const text = "text/plain; charset=utf-8";
    struct evbuffer *b;
    uint64_t wait;
    int ok;

    if (strcmp(rq->path, "/metrics") != 0) {
        metrics_conn_answer(out, rq->head_only, 404, "Not Found", text, NULL,
                            NULL, "404 Not Found (try /metrics)\n");
        return 0;
    }
    wait = check(rq, &ok);
    if (!ok) {
        refuse(rq, out);
        return wait;
    }
    b = evbuffer_new();
    if (!b || metrics_http_write(b))
        metrics_conn_answer(out, rq->head_only, 500, "Internal Server Error",
                            text, NULL, NULL, "500 out of memory\n");
    else
        metrics_conn_answer(out, rq->head_only, 200, "OK",
                            "text/plain; version=0.0.4; charset=utf-8", NULL,
                            b, NULL);
    if (b)
        evbuffer_free(b);
    return wait;
}

static void *serve(void *arg)
{
    (void)arg;
    event_base_dispatch(base);
    return NULL;
}

/* The socket of --metrics-port, bound and listening, or -1 after saying
 * why. Bound here, so that protected mode and the errors
 * are the main port's (listener_address). */
static evutil_socket_t bind_socket(void)
{
    struct addrinfo *ai;
    evutil_socket_t fd;
    int one = 1;

    if (listener_address("--metrics-port", srv.opt.metrics_port, &ai))
        return -1;
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
                SOCK_NONBLOCK, ai->ai_protocol);
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)) {
            evutil_closesocket(fd);
            fd = -1;
        }
    }
    if (fd < 0)
        fprintf(stderr, "ssnserver: --metrics-port: cannot listen on %s "
                "port %d: %s\n", srv.opt.bind, srv.opt.metrics_port,
                strerror(errno));
    freeaddrinfo(ai);
    return fd;
}

int metrics_http_start(void)
{
    evutil_socket_t fd;
    int rc;

    if (srv.opt.metrics_port < 0)
        return 0;
    fd = bind_socket();
    if (fd < 0)
        return -1;
    base = event_base_new();
    auth_digest = digest_new();
    if (!base || !auth_digest) {
        evutil_closesocket(fd);
        fd = -1;
    }
    if (fd < 0 || metrics_conn_start(base, fd, answer)) {
        fprintf(stderr, "ssnserver: --metrics-port: cannot start the HTTP "
                "server\n");
        metrics_http_stop();
        return -1;
    }
    listener_print_address("metrics on", fd);
    rc = pthread_create(&thread, NULL, serve, NULL);
    if (rc) {
        fprintf(stderr, "ssnserver: --metrics-port: cannot start its "
                "thread: %s\n", strerror(rc));
        metrics_http_stop();
        return -1;
    }
    running = 1;
    return 0;
}

void metrics_http_stop(void)
{
    if (running) {
        event_base_loopbreak(base);
        pthread_join(thread, NULL);
        running = 0;
    }
    metrics_conn_stop();                /* closes the sockets */
    if (base)
        event_base_free(base);
    if (auth_digest)
        digest_free(auth_digest);
    base = NULL;
    auth_digest = NULL;
}
