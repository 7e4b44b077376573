/* stats.c -- formatting the STATS block (stats.h). Everything it reads is
 * an atomic counter, a setting fixed at start-up, or passed in. */
#include <stdio.h>
#include "lockmode.h"
#include "proto.h"
#include "server.h"
#include "stats.h"

size_t stats_format(char *buf, size_t cap, const struct store *st,
                    size_t entries, long own_commands)
{
    int n = snprintf(buf, cap,
        "mode %s\n"
        "version %s\n"
        "uptime_seconds %ld\n"
        "connections_current %ld\n"
        "connections_total %ld\n"
        "connections_rejected %ld\n"
        "thread_failures %ld\n"
        "commands_total %ld\n"
        "entries %zu\n"
        "race_window_usec %ld\n"
        "max_clients %ld\n"
        "max_output %zu\n"
        "timeout %ld\n"
        "write_timeout %ld\n"
        "clients_output_limited %ld\n"
        "clients_idle_timeout %ld\n"
        "clients_write_timeout %ld\n"
        "accept_fd_exhausted %ld\n"
        PROTO_END_LINE,
        st->policy->name, SSN_VERSION, server_uptime(),
        atomic_load(&srv.connections_current),
        atomic_load(&srv.connections_total),
        atomic_load(&srv.connections_rejected),
        atomic_load(&srv.thread_failures),
        atomic_load(&srv.commands_total) + own_commands,
        entries, srv.opt.race_window_us, srv.opt.max_clients,
        srv.opt.max_output, srv.opt.idle_timeout_s, srv.opt.write_timeout_s,
        atomic_load(&srv.clients_output_limited),
        atomic_load(&srv.clients_idle_timeout),
        atomic_load(&srv.clients_write_timeout),
        atomic_load(&srv.accept_fd_exhausted));
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}
