/* main.c -- ssnserver's start-up and shutdown: options, the store, the
 * logger, libevent's loop with the listener and the SIGINT/SIGTERM events.
 * The driver (listener.c, threads.c), the session core (session.c) and the
 * lock policy (lockmode.c) are chosen separately; this file only wires them
 * together. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <event2/event.h>
#include <event2/thread.h>
#include "digest.h"
#include "listener.h"
#include "lockmode.h"
#include "log.h"
#include "options.h"
#include "server.h"
#include "session.h"
#include "threads.h"

#define STOP_GRACE_MS 1500      /* sessions get this long to finish at exit */

/* What main set up, for shutdown to take down. */
struct loop {
    struct event_base *base;
    struct event *sigint, *sigterm;
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

static int serve_stdin(void)
{
    const struct session_io io = { .send = threads_send_fd, .arg = (void *)1 };
    struct session *s = session_new(&srv.store, &io, srv.opt.quiet);

    if (!s) {
        fprintf(stderr, "ssnserver: out of memory\n");
        return 1;
    }
    int rc = threads_serve(s, 0);
    session_free(s);
    if (rc)
        fprintf(stderr, "ssnserver: %s\n", strerror(-rc));
    return rc ? 1 : 0;
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
    if (srv.opt.race_window_us) {
        srv.store.pause = race_pause;
        srv.store.pause_arg = (void *)(intptr_t)srv.opt.race_window_us;
    }
    return 0;
}

/* libevent, the logger, the listener and the signal events. */
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
                strerror(-err));
        return -1;
    }
    if (listener_start(lp->base))
        return -1;
    lp->sigint = evsignal_new(lp->base, SIGINT, stop_cb, lp->base);
    lp->sigterm = evsignal_new(lp->base, SIGTERM, stop_cb, lp->base);
    if (!lp->sigint || !lp->sigterm || evsignal_add(lp->sigint, NULL) ||
        evsignal_add(lp->sigterm, NULL)) {
        fprintf(stderr, "ssnserver: cannot catch signals\n");
        return -1;
    }
    return 0;
}

static void loop_free(struct loop *lp)
{
    if (lp->sigint)
        event_free(lp->sigint);
    if (lp->sigterm)
        event_free(lp->sigterm);
    if (lp->base)
        event_base_free(lp->base);
}

static void log_started(void)
{
    const struct lock_policy *p = srv.store.policy;

    log_msg(LOG_LEVEL_INFO, "ssnserver %s started, pid %d, lock mode %s: %s%s",
            SSN_VERSION, (int)getpid(), p->name, p->summary,
            srv.opt.race_window_us ? " (race window set)" : "");
    if (p->warning)
        log_msg(LOG_LEVEL_WARN, "%s", p->warning);
}

/* Stops accepting and lets each session finish its current request. When
 * some do not in time, exits at once: their threads still use the store. */
static void drain_sessions(void)
{
    listener_stop();
    conns_stop_all();
    if (!conns_wait_empty(STOP_GRACE_MS)) {
        log_msg(LOG_LEVEL_WARN, "%ld sessions still busy after %d ms; exiting",
                atomic_load(&srv.connections_current), STOP_GRACE_MS);
        log_shutdown();
        _exit(0);
    }
    log_msg(LOG_LEVEL_INFO, "stopped after %ld connections, %ld commands",
            atomic_load(&srv.connections_total),
            atomic_load(&srv.commands_total));
}

int main(int argc, char **argv)
{
    struct loop lp = { 0 };
    int rc = 1;

    options_parse(argc, argv, &srv.opt, lock_policy_built);
    signal(SIGPIPE, SIG_IGN);           /* a vanished client is an EPIPE */
    if (digest_global_init()) {
        fprintf(stderr, "ssnserver: libcrypto has no SHA-256\n");
        return 1;
    }
    if (server_init())
        return 1;
    if (srv.opt.use_stdin) {
        rc = serve_stdin();
    } else if (loop_start(&lp) == 0) {
        log_started();
        event_base_dispatch(lp.base);
        drain_sessions();
        rc = 0;
    }
    loop_free(&lp);
    log_shutdown();
    store_destroy(&srv.store);
    digest_global_cleanup();
    libevent_global_shutdown();
    return rc;
}
