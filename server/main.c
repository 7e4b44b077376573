/* main.c -- ssnserver's start-up and shutdown: options, the store, the
 * logger, libevent's loop with the listener and the signal events
 * (SIGINT, SIGTERM, SIGHUP, SIGUSR1; SIGPIPE, SIGUSR2 and SIGXFSZ are ignored).
 * The driver (listener.c, threads.c), the session core (session.c) and the
 * lock policy (lockmode.c) are chosen separately; this file only wires them
 * together. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <event2/event.h>
#include <event2/thread.h>
#include "digest.h"
#include "journal/journal.h"
#include "net/listener.h"
#include "net/metrics_http.h"
#include "lockmode.h"
#include "log.h"
#include "limits_fit.h"
#include "log_source.h"
#include "metrics.h"
#include "options.h"
#include "server.h"
#include "session.h"
#include "stats.h"
#include "trace.h"
#include "net/events.h"
#include "net/threads.h"

#define STOP_GRACE_MS 500       /* sessions get this long to finish their
                                   current request at exit ... */
#define STOP_GRACE_MAX_MS 5000  /* ... and this long in all while their
                                   number keeps going down */
#define EXIT_ABANDONED 3        /* the exit status of a stop that left
                                   sessions running (ssnserver.1) */
#define EXIT_JOURNAL_NOMEM 4    /* the journal could not be replayed for
                                   want of memory; the file is untouched
                                   (ssnserver.1) */

/* What main set up, for shutdown to take down. */
struct loop {
    struct event_base *base;
    struct event *signals[4];   /* SIGINT, SIGTERM, SIGHUP, SIGUSR1 */
};

static void race_pause(void *arg)
{
    usleep((useconds_t)(intptr_t)arg);
}

static void stop_cb(evutil_socket_t sig, short what, void *arg)
{
    struct event_base *base = arg;
    (void)what;
    log_msg(LOG_LEVEL_INFO, "%s: stopping", strsignal((int)sig));
    event_base_loopbreak(base);
}

/* SIGHUP: reopen the log file (the logrotate convention). */
static void reopen_cb(evutil_socket_t sig, short what, void *arg)
{
    (void)sig; (void)what; (void)arg;
    int rc = log_reopen();
    if (rc < 0)
        log_msg(LOG_LEVEL_ERROR, "SIGHUP: cannot reopen %s: %s; still "
                "logging to the file it had", srv.opt.log_file,
                log_open_error(rc));
    else
        log_msg(LOG_LEVEL_INFO, rc ? "SIGHUP: logging to standard error, "
                "nothing to reopen" : "SIGHUP: log file reopened");
}

/* SIGUSR1: the STATS block into the log, a line each. The main thread
 * never waits for the store lock (coarse may hold it for a session's
 * life), so the count comes from the store's lock-free copy. */
static void stats_cb(evutil_socket_t sig, short what, void *arg)
{
    char block[STATS_MAX];
    size_t entries = atomic_load(&srv.store.entries);
    (void)sig; (void)what; (void)arg;

    if (!stats_format(block, sizeof(block), &srv.store, entries, NULL, 0))
        return;
    char *save;
    for (char *line = strtok_r(block, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        log_msg(LOG_LEVEL_INFO, "stats: %s", line);
}

/* --journal: replays it into the (empty) store and attaches it, before
 * any session can start. Returns 0, or after one line on stderr -ENOMEM
 * when memory ran out (exit EXIT_JOURNAL_NOMEM: the journal is whole, the
 * process too small for it), else -1. */
static int journal_start(void)
{
    char err[512];

    if (!srv.opt.journal)
        return 0;
    struct journal *j = journal_open(srv.opt.journal,
                                     (enum journal_fsync)srv.opt.fsync,
                                     srv.opt.journal_truncate, &srv.store,
                                     err, sizeof(err));
    if (!j) {
        int nomem = errno == ENOMEM;
        fprintf(stderr, "ssnserver: --journal: %s\n", err);
        return nomem ? -ENOMEM : -1;
    }
    journal_set_compact_min(j, srv.opt.journal_compact_min);
    journal_set_wake(j, (enum journal_wake)srv.opt.journal_wake);
    return 0;
}

static int serve_stdin(void)
{
    static struct conn out = { .fd = 1 };   /* replies to stdout */
    struct session *s = threads_session_new(&out, srv.opt.quiet);

    if (!s) {
        fprintf(stderr, "ssnserver: out of memory\n");
        return 1;
    }
    int jrc = journal_start();
    if (jrc) {
        session_free(s);
        return jrc == -ENOMEM ? EXIT_JOURNAL_NOMEM : 1;
    }
    int read_errno = 0;
    int rc = threads_serve(s, 0, &read_errno);
    /* A reader that left (EPIPE) ends the session as a client's hang-up
     * does; any other failed write or read loses requests or replies. */
    int send_error = s->send_error == -EPIPE ? 0 : s->send_error;
    session_free(s);
    if (rc < 0)
        fprintf(stderr, "ssnserver: %s\n", strerror(-rc));
    else if (rc == THREADS_READ_FAILED)
        fprintf(stderr, "ssnserver: --stdin: cannot read standard input: "
                "%s\n", strerror(read_errno));
    else if (send_error)
        fprintf(stderr, "ssnserver: --stdin: cannot write standard output: "
                "%s\n", strerror(-send_error));
    return rc < 0 || rc == THREADS_READ_FAILED || send_error ? 1 : 0;
}

/* --trace FILE or --trace-file FILE: the file named before any thread
 * starts; with --trace, the first window begins now. 0, or 1 after saying
 * why. */
static int trace_setup(void)
{
    const char *opt = srv.opt.trace ? "--trace" : "--trace-file";
    const char *file = srv.opt.trace ? srv.opt.trace : srv.opt.trace_file;
    int rc;

    if (!file)
        return 0;
    rc = trace_init(file);
    if (rc == 0 && srv.opt.trace)
        rc = trace_start();
    if (rc)
        fprintf(stderr, "ssnserver: %s: cannot write %s: %s\n", opt, file,
                rc == -EEXIST ? "it is a journal" :
                rc == -ENOTEMPTY ? "it holds something that is no trace" :
                strerror(-rc));
    return rc != 0;
}

/* --password-file: its first line (without "\r\n") is the password; only
 * its SHA-256 is kept. A regular file that group or others have access to
 * is refused (sshd's StrictModes with a private key) before it is read;
 * a pipe or a device is whatever the caller made it. Returns 0 or -1
 * after saying why. */
static int load_password(void)
{
    char line[1024];
    FILE *f;
    size_t n;
    int rc = -1, said = 0;

    if (!srv.opt.password_file)
        return 0;
    f = fopen(srv.opt.password_file, "r");
    if (!f) {
        fprintf(stderr, "ssnserver: --password-file: cannot read %s: %s\n",
                srv.opt.password_file, strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) &&
        (sb.st_mode & 077)) {
        fprintf(stderr, "ssnserver: --password-file: permissions %04o for "
                "%s are too open: group or others have access; fix it "
                "with: chmod 600 %s\n", (unsigned)(sb.st_mode & 07777),
                srv.opt.password_file, srv.opt.password_file);
        fclose(f);
        return -1;
    }
    if (fgets(line, sizeof(line), f)) {
        n = strcspn(line, "\r\n");
        if (n != strcspn(line, " \t\r\n")) {
            fprintf(stderr, "ssnserver: --password-file: the password in %s "
                    "has a space or tab (AUTH takes one word)\n",
                    srv.opt.password_file);
            n = 0;
            said = 1;
        }
        struct digest *d = n ? digest_new() : NULL;
        if (d && digest_hex(d, line, n, srv.password_hex) == 0)
            rc = 0;
        digest_free(d);
    }
    explicit_bzero(line, sizeof(line));
    fclose(f);
    if (rc && !said)
        fprintf(stderr, "ssnserver: --password-file: %s has no password on "
                "its first line\n", srv.opt.password_file);
    srv.auth_required = rc == 0;
    return rc;
}

static int server_init(void)
{
    pthread_condattr_t ca;
    int rc;

    clock_gettime(CLOCK_MONOTONIC, &srv.started);
    pthread_mutex_init(&srv.conns_lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&srv.conns_empty, &ca);
    pthread_condattr_destroy(&ca);
    rc = store_init(&srv.store, lock_policy_built);
    if (rc) {
        fprintf(stderr, "ssnserver: cannot make the store lock: %s\n",
                strerror(-rc));
        return -1;
    }
    store_set_lock_order(&srv.store, (enum store_lock_order)srv.opt.lock_order);
    if (srv.opt.race_window_us) {
        srv.store.pause = race_pause;
        srv.store.pause_arg = (void *)(intptr_t)srv.opt.race_window_us;
    }
    return 0;
}

/* The signal events. libevent installs a signal's handler only when its
 * event is added, and a supervisor may signal the instant it reads
 * "listening on", so they are added before the listener exists: a signal
 * that comes before the loop runs waits for it, pending, instead of
 * killing the server by its default action. They come after the journal's
 * replay, so that SIGINT still ends a long replay at once. */
static int signals_add(struct loop *lp)
{
    static const int sigs[4] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1 };
    event_callback_fn cbs[4] = { stop_cb, stop_cb, reopen_cb, stats_cb };

    for (int i = 0; i < 4; i++) {
        lp->signals[i] = evsignal_new(lp->base, sigs[i], cbs[i], lp->base);
        if (!lp->signals[i] || evsignal_add(lp->signals[i], NULL)) {
            fprintf(stderr, "ssnserver: cannot catch %s\n",
                    strsignal(sigs[i]));
            return -1;
        }
    }
    return 0;
}

/* libevent, the logger, the signal events and the listener. Returns 0,
 * or -1 after saying why (-ENOMEM: journal_start's). */
static int loop_start(struct loop *lp)
{
    if (evthread_use_pthreads() || !(lp->base = event_base_new())) {
        fprintf(stderr, "ssnserver: cannot start libevent\n");
        return -1;
    }
    int err = log_init(srv.opt.log_level, srv.opt.log_file);
    if (err) {
        fprintf(stderr, "ssnserver: cannot open log %s: %s\n",
                srv.opt.log_file ? srv.opt.log_file : "(stderr)",
                log_open_error(err));
        return -1;
    }
    /* libevent's lines too in the log, and limited as a client's are. */
    event_set_log_callback(log_source_libevent);
    if (limits_fit_fds() || limits_fit_max_unauth())
        return -1;
    if (srv.opt.io_events) {
        int rc = events_init(srv.opt.workers);
        if (rc) {
            fprintf(stderr, "ssnserver: cannot start %d workers: %s\n",
                    srv.opt.workers, strerror(-rc));
            return -1;
        }
    }
    int jrc = journal_start();  /* replayed before anyone can connect */
    if (jrc)
        return jrc;
    if (signals_add(lp) || listener_start(lp->base) || metrics_http_start())
        return -1;
    return 0;
}

static void loop_free(struct loop *lp)
{
    for (int i = 0; i < 4; i++)
        if (lp->signals[i])
            event_free(lp->signals[i]);
    if (lp->base)
        event_base_free(lp->base);
}

static void log_started(void)
{
    const struct lock_policy *p = srv.store.policy;

    log_msg(LOG_LEVEL_INFO, "ssnserver %s started, pid %d, lock mode %s: %s%s",
            SSN_VERSION, (int)getpid(), p->name, p->summary,
            srv.opt.race_window_us ? " (race window set)" : "");
    if (srv.opt.io_events)
        log_msg(LOG_LEVEL_INFO, "io events: %d worker threads, each with "
                "an event loop; up to %d requests per store-lock hold",
                srv.opt.workers, srv.opt.batch);
    else
        log_msg(LOG_LEVEL_INFO, "io threads: a thread per connection%s; up "
                "to %d requests per store-lock hold",
                srv.opt.sched_batch ? ", each SCHED_BATCH" : "",
                srv.opt.batch);
    if (srv.opt.lock_order == STORE_LOCK_UNFAIR)
        log_msg(LOG_LEVEL_INFO, "unfair store lock: a thread that finds "
                "it free takes it, ahead of the ones waiting");
    else if (srv.opt.lock_order == STORE_LOCK_FIFO)
        log_msg(LOG_LEVEL_INFO, "fifo store lock: handed over in arrival "
                "order");
    if (p->warning)
        log_msg(LOG_LEVEL_WARN, "%s", p->warning);
}

/* A stop that cannot wait any longer: says how many sessions it leaves
 * running and exits at once with EXIT_ABANDONED, without cleaning up,
 * since their threads still use the store. Their clients lose the request
 * in progress, so a supervisor must be able to tell this from a clean
 * stop. worker_busy: an event worker did not stop (--io events). */
static void abandon(int worker_busy)
{
    long left = atomic_load(&srv.connections_current);
    const char *s = left == 1 ? "" : "s";

    if (worker_busy)
        log_msg(LOG_LEVEL_ERROR, "a worker still busy %d ms after the stop: "
                "%ld session%s abandoned; exiting with status %d",
                STOP_GRACE_MS, left, s, EXIT_ABANDONED);
    else
        log_msg(LOG_LEVEL_ERROR, "%ld session%s still running after the "
                "stop (no progress in %d ms): abandoned; exiting with status "
                "%d", left, s, STOP_GRACE_MS, EXIT_ABANDONED);
    log_shutdown();
    _exit(EXIT_ABANDONED);
}

/* The connections still registered, near enough to see progress: those
 * counted, and those on their way out (lingering after QUIT, or dropped
 * before they authenticated, which no longer count). */
static long conns_left(void)
{
    return atomic_load(&srv.connections_current) +
           atomic_load(&srv.connections_lingering);
}

/* Waits for the sessions told to stop: STOP_GRACE_MS at a time, for as
 * long as each wait ends some (thousands of idle threads take a while to
 * wake), up to STOP_GRACE_MAX_MS. One stuck session (a PRINT to a client
 * that does not read) is given up after STOP_GRACE_MS. Only an empty
 * registry is an end: each of its threads is then on the ended list for
 * threads_done to join. 1 when none is left. */
static int sessions_ended(void)
{
    long before = conns_left();

    for (int waited = 0; waited < STOP_GRACE_MAX_MS; waited += STOP_GRACE_MS) {
        if (conns_wait_empty(STOP_GRACE_MS))
            return 1;
        long left = conns_left();       /* 0: closing only, not stuck */
        if (left > 0 && left >= before)
            return 0;
        before = left;
    }
    return 0;
}

/* Stops accepting and lets each session finish its current request, for
 * STOP_GRACE_MS or longer while they are ending (sessions_ended); the
 * ones that do not are abandoned (exit EXIT_ABANDONED). */
static void drain_sessions(void)
{
    atomic_store(&srv.stopping, 1);     /* no log line per connection */
    listener_stop();
    if (srv.opt.io_events && events_stop(STOP_GRACE_MS))
        abandon(1);
    conns_stop_all();
    if (!sessions_ended())
        abandon(0);
    threads_done();                     /* no session thread is left */
    log_msg(LOG_LEVEL_INFO, "stopped after %ld connections, %ld commands",
            atomic_load(&srv.connections_total) +
            atomic_load(&srv.connections_reset),
            atomic_load(&srv.commands_total) +
            atomic_load(&srv.commands_reset));
}

int main(int argc, char **argv)
{
    struct loop lp = { 0 };
    int rc = 1;

    /* Buffers of 256 KiB and more (PRINT listings, grown reply buffers,
     * the index) get pages of their own, given back to the system when
     * freed. glibc would otherwise raise this threshold after the first
     * large free and serve later listings from its arenas, which keep what
     * is freed: RSS would stay at the worst moment's, not follow what the
     * reply budget (--max-output-total) holds. */
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    options_parse(argc, argv, &srv.opt, lock_policy_built);
    /* A core file would hold every name and SSN in the store: none, not
     * even where the shell allows them (nolock crashes on purpose), but
     * with --core-dumps. Lowering a limit needs no privilege. */
    if (!srv.opt.core_dumps)
        setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
    signal(SIGPIPE, SIG_IGN);           /* a vanished client is an EPIPE */
    signal(SIGUSR2, SIG_IGN);           /* no meaning: a stray one must not
                                           kill the server (its default) */
    signal(SIGXFSZ, SIG_IGN);           /* past a file-size limit a journal
                                           write fails with EFBIG, which the
                                           journal handles, instead of the
                                           signal killing the server */
    if (digest_global_init()) {
        fprintf(stderr, "ssnserver: libcrypto has no SHA-256\n");
        return 1;
    }
    if (server_init() || load_password() || trace_setup())
        return 1;
    if (srv.auth_required)
        srv.store.policy = lock_policy_with_password(srv.store.policy);
    if (srv.opt.use_stdin) {
        rc = serve_stdin();
    } else if ((rc = loop_start(&lp)) == 0) {
        log_started();
        event_base_dispatch(lp.base);
        metrics_http_stop();
        drain_sessions();
    } else {
        rc = rc == -ENOMEM ? EXIT_JOURNAL_NOMEM : 1;
    }
    listener_stop();
    metrics_http_stop();                /* a start-up that failed after it */
    journal_close(srv.store.journal);   /* every session has ended */
    trace_close();                      /* and every thread that traced */
    loop_free(&lp);
    log_shutdown();
    store_destroy(&srv.store);
    metrics_shutdown();
    digest_global_cleanup();
    libevent_global_shutdown();
    return rc;
}
