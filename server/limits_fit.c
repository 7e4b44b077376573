/* limits_fit.c -- --max-clients and --max-unauth fitted at start-up to
 * what the process may open (limits_fit.h), before anything listens.
 * Runs once, on the main thread, before any other thread exists.
 */
#include <stdio.h>
#include <sys/resource.h>
#include "limits_fit.h"
#include "log.h"
#include "net/metrics_conn.h"
#include "server.h"

#define FDS_RESERVED  32        /* descriptors kept for everything but
                                   clients: listener, log, libevent, stdio */
#define FDS_A_WORKER  5         /* an event worker's: its event_base's
                                   epoll, eventfd and pipe, its io_uring */

/* How many connections may be on their way out at once for m clients
 * (lingering after QUIT, or leaving before their Bye: conns_leaving): an
 * eighth, SSN_LINGER_MIN to SSN_LINGER_MAX. Each holds a descriptor, and
 * with a thread per connection a thread, beside the m. */
static long linger_max(long m)
{
    long n = m / 8;

    return n < SSN_LINGER_MIN ? SSN_LINGER_MIN :
           n > SSN_LINGER_MAX ? SSN_LINGER_MAX : n;
}

/* Raises the open-file limit as far as --max-clients (and its lingering
 * connections) need and the system allows (root may raise the hard limit
 * too), then lowers max_clients to what the limit can hold, saying so.
 * Sets srv.linger_max. Returns 0, or -1 when not even one client fits. */
int limits_fit_fds(void)
{
    struct rlimit rl;
    /* --metrics-port's connections are bounded (metrics_conn.h): so
     * many descriptors more, which its clients can never take from the
     * main port's. */
    rlim_t reserved = FDS_RESERVED +
                      (srv.opt.metrics_port >= 0 ? METRICS_CONNS_MAX : 0) +
                      (srv.opt.io_events ? (rlim_t)srv.opt.workers *
                                           FDS_A_WORKER : 0);
    rlim_t want = (rlim_t)(srv.opt.max_clients +
                           linger_max(srv.opt.max_clients)) + reserved;

    srv.linger_max = linger_max(srv.opt.max_clients);
    if (getrlimit(RLIMIT_NOFILE, &rl))
        return 0;
    if (rl.rlim_cur < want) {
        struct rlimit up = { want, rl.rlim_max > want ? rl.rlim_max : want };
        if (setrlimit(RLIMIT_NOFILE, &up)) {
            up.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
            up.rlim_max = rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &up);
        }
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur >= want)
        return 0;
    if (rl.rlim_cur <= reserved + 1) {
        fprintf(stderr, "ssnserver: the open-file limit (%lu) leaves no room "
                "for clients; raise it with ulimit -n\n",
                (unsigned long)rl.rlim_cur);
        return -1;
    }
    /* m + linger_max(m) fits: linger_max(m) <= linger_max(room). A room
     * of fewer than SSN_LINGER_MIN + 1 leaves one client and the rest to
     * those on their way out. */
    long room = (long)(rl.rlim_cur - reserved);
    long m = room - linger_max(room);
    if (m < 1)
        m = 1;
    log_msg(LOG_LEVEL_WARN, "--max-clients lowered from %ld to %ld: the "
            "open-file limit is %lu (raise it with ulimit -n)",
            srv.opt.max_clients, m, (unsigned long)rl.rlim_cur);
    srv.opt.max_clients = m;
    srv.linger_max = room - m < linger_max(m) ? room - m : linger_max(m);
    return 0;
}

/* --max-unauth: a quarter of --max-clients by default, and below it (the
 * limit may have lowered --max-clients), so that authenticated clients
 * always have room. */
int limits_fit_max_unauth(void)
{
    long most = srv.opt.max_clients > 1 ? srv.opt.max_clients - 1 : 1;

    if (srv.opt.password_file && srv.opt.max_clients < 2) {
        fprintf(stderr, "ssnserver: --max-clients lowered to 1 by the "
                "open-file limit: with --password-file one connection that "
                "has not given it would keep every client out (raise it with "
                "ulimit -n)\n");
        return -1;
    }

    if (!srv.opt.max_unauth)
        srv.opt.max_unauth = srv.opt.max_clients / 4;
    if (srv.opt.max_unauth > most)
        srv.opt.max_unauth = most;
    if (srv.opt.max_unauth < 1)
        srv.opt.max_unauth = 1;
    return 0;
}
