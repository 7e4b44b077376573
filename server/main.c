/* main.c -- ssnserver's start-up and shutdown: options, the store, the
 * logger, libevent's loop with the listener and the SIGINT/SIGTERM events.
 * The I/O model (listener.c, session.c) and the lock policy (lockmode.c)
 * are chosen separately; this file only wires them together. */
#include <signal.h>
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

#define STOP_GRACE_MS 1500      /* sessions get this long to finish at exit */

static void race_pause(void *arg)
{
    usleep((useconds_t)(long)(intptr_t)arg);
}

static void stop_cb(evutil_socket_t sig, short what, void *arg)
{
    struct event_base *base = arg;
    (void)what;
    log_msg(LOG_INFO, "%s: stopping", strsignal((int)sig));
    event_base_loopbreak(base);
}

static int serve_stdin(void)
{
    struct session *s = session_new(0, 1, srv.opt.quiet);
    if (!s) {
        fprintf(stderr, "ssnserver: out of memory\n");
        return 1;
    }
    session_run(s);
    session_free(s);
    return 0;
}

static void server_init(void)
{
    pthread_condattr_t ca;

    clock_gettime(CLOCK_MONOTONIC, &srv.started);
    pthread_mutex_init(&srv.conns_lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&srv.conns_empty, &ca);
    pthread_condattr_destroy(&ca);
    store_init(&srv.store, srv.opt.race_window_us ? race_pause : NULL,
               (void *)(intptr_t)srv.opt.race_window_us);
}

int main(int argc, char **argv)
{
    struct event_base *base = NULL;
    struct event *sigint = NULL, *sigterm = NULL;
    int rc = 1;

    options_parse(argc, argv, &srv.opt);
    signal(SIGPIPE, SIG_IGN);           /* a vanished client is an EPIPE */
    if (digest_global_init()) {
        fprintf(stderr, "ssnserver: libcrypto has no SHA-256\n");
        return 1;
    }
    server_init();

    if (srv.opt.use_stdin) {
        rc = serve_stdin();
        goto out;
    }
    if (evthread_use_pthreads() || !(base = event_base_new())) {
        fprintf(stderr, "ssnserver: cannot start libevent\n");
        goto out;
    }
    int err = log_init(srv.opt.log_level, srv.opt.log_file);
    if (err) {
        fprintf(stderr, "ssnserver: cannot open log %s: %s\n",
                srv.opt.log_file ? srv.opt.log_file : "(stderr)",
                strerror(-err));
        goto out;
    }
    if (listener_start(base))
        goto out;
    sigint = evsignal_new(base, SIGINT, stop_cb, base);
    sigterm = evsignal_new(base, SIGTERM, stop_cb, base);
    if (!sigint || !sigterm || evsignal_add(sigint, NULL) ||
        evsignal_add(sigterm, NULL)) {
        fprintf(stderr, "ssnserver: cannot catch signals\n");
        goto out;
    }
    log_msg(LOG_INFO, "ssnserver %s started, pid %d, lock mode %s: %s%s",
            SSN_VERSION, (int)getpid(), lock_policy->name,
            lock_policy->summary,
            srv.opt.race_window_us ? " (race window set)" : "");
    if (lock_policy->racy)
        log_msg(LOG_WARN, "nolock mode: the tree is NOT protected; "
                "concurrent clients will corrupt it");

    event_base_dispatch(base);

    /* Stop accepting, let each session finish its current request. */
    listener_stop();
    atomic_store(&srv.stopping, 1);
    conns_stop_all();
    if (!conns_wait_empty(STOP_GRACE_MS)) {
        log_msg(LOG_WARN, "%ld sessions still busy after %d ms; exiting",
                atomic_load(&srv.connections_current), STOP_GRACE_MS);
        log_shutdown();
        _exit(0);       /* busy threads still use the store: no cleanup */
    }
    log_msg(LOG_INFO, "stopped after %ld connections, %ld commands",
            atomic_load(&srv.connections_total),
            atomic_load(&srv.commands_total));
    rc = 0;
out:
    if (sigint)
        event_free(sigint);
    if (sigterm)
        event_free(sigterm);
    if (base)
        event_base_free(base);
    log_shutdown();
    store_destroy(&srv.store);
    digest_global_cleanup();
    libevent_global_shutdown();
    return rc;
}
