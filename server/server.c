/* server.c -- the one struct server (server.h) and what reads it whole
 * (the uptime, the scheduling policy's name, the password check AUTH and
 * /metrics share). Kept out of main.c so the unit tests can link every
 * server object but main(). */
#include <string.h>
#include <openssl/crypto.h>
#include "server.h"

struct server srv;
_Thread_local int srv_on_event_loop;

long server_uptime(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)(now.tv_sec - srv.started.tv_sec);
}

/* What the session threads run as: "normal" once the kernel refused
 * SCHED_BATCH to one of them (threads.c, session_sched), so that STATS and
 * /metrics never claim a policy the threads do not have. */
const char *server_sched_name(void)
{
    return !srv.opt.io_events && srv.opt.sched_batch &&
           !atomic_load_explicit(&srv.sched_refused, memory_order_relaxed)
           ? "batch" : "normal";
}

const char *server_uring_name(void)
{
    if (!srv.opt.io_events || !srv.opt.uring)
        return "off";
    return atomic_load_explicit(&srv.uring_workers, memory_order_relaxed)
           ? "on" : "unavailable";
}

int server_password_ok(struct digest *d, const void *secret, size_t len)
{
    char hex[DIGEST_HEX_LEN + 1];
    int ok = srv.auth_required && digest_hex(d, secret, len, hex) == 0 &&
             CRYPTO_memcmp(hex, srv.password_hex, DIGEST_HEX_LEN) == 0;

    explicit_bzero(hex, sizeof(hex));
    return ok;
}
