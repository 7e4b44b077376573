/* stats.c -- formatting the STATS block (stats.h). Everything it reads is
 * an atomic counter, a setting fixed at start-up, passed in, or the
 * latency figures of metrics.h (read under that module's own locks). The
 * gauges (connections_current, entries) and the settings are never reset. */
#include <stdio.h>
#include "journal/journal.h"
#include "lockmode.h"
#include "metrics.h"
#include "proto.h"
#include "server.h"
#include "session.h"
#include "log_source.h"
#include "stats.h"
#include "store.h"
#include "trace.h"

/* "NAME_p50_us V" ... "NAME_max_us V" (us: a nanosecond summary in whole
 * microseconds, rounded down as the older fields are, so the order
 * p50 <= p90 <= p99 <= p999 <= max holds in print too), or with unit ""
 * a plain count ("NAME_p50 V"). */
static int summary_lines(char *buf, size_t cap, const char *name,
                         const char *unit, const struct hist_summary *h)
{
    uint64_t div = *unit ? 1000 : 1;

    return snprintf(buf, cap,
        "%s_p50%s %llu\n%s_p90%s %llu\n%s_p99%s %llu\n%s_p999%s %llu\n"
        "%s_max%s %llu\n",
        name, unit, (unsigned long long)(h->p50 / div),
        name, unit, (unsigned long long)(h->p90 / div),
        name, unit, (unsigned long long)(h->p99 / div),
        name, unit, (unsigned long long)(h->p999 / div),
        name, unit, (unsigned long long)(h->max / div));
}

/* Adds m, what an snprintf at buf + *n wrote, to *n: 0, or -1 when it did
 * not fit in cap. */
static int append(size_t cap, size_t *n, int m)
{
    if (m < 0 || (size_t)m >= cap - *n)
        return -1;
    *n += (size_t)m;
    return 0;
}

/* Each command's latency, then the journal's rounds. */
static int metrics_lines(char *buf, size_t cap, size_t *n,
                         const struct metrics_snapshot *ms)
{
    char name[32];

    for (int i = 0; i < METRICS_CMDS; i++) {
        snprintf(name, sizeof(name), "cmd_%s", metrics_cmd_names[i]);
        if (append(cap, n, snprintf(buf + *n, cap - *n, "%s_count %llu\n",
                   name, (unsigned long long)ms->cmd[i].count)) ||
            append(cap, n, summary_lines(buf + *n, cap - *n, name, "_us",
                                              &ms->cmd[i])))
            return -1;
    }
    if (append(cap, n, snprintf(buf + *n, cap - *n,
               "journal_rounds %llu\n",
               (unsigned long long)ms->round_records.count)) ||
        append(cap, n, summary_lines(buf + *n, cap - *n,
               "journal_round_records", "", &ms->round_records)) ||
        append(cap, n, summary_lines(buf + *n, cap - *n,
               "journal_round", "_us", &ms->round_ns)))
        return -1;
    return 0;
}

static int lock_lines(char *buf, size_t cap,
                      const struct store_lock_figures *f)
{
    return snprintf(buf, cap,
        "lock_acquisitions %llu\n"
        "lock_contended %llu\n"
        "lock_wait_us %llu\n"
        "lock_hold_us %llu\n"
        "lock_wait_max_us %llu\n"
        "lock_hold_max_us %llu\n"
        "lock_wait_p99_us %llu\n"
        "lock_hold_p99_us %llu\n"
        "lock_wait_p50_us %llu\n"
        "lock_wait_p90_us %llu\n"
        "lock_wait_p999_us %llu\n"
        "lock_hold_p50_us %llu\n"
        "lock_hold_p90_us %llu\n"
        "lock_hold_p999_us %llu\n",
        (unsigned long long)f->acquisitions, (unsigned long long)f->contended,
        (unsigned long long)f->wait_us, (unsigned long long)f->hold_us,
        (unsigned long long)f->wait_max_us, (unsigned long long)f->hold_max_us,
        (unsigned long long)f->wait_p99_us,
        (unsigned long long)f->hold_p99_us,
        (unsigned long long)(f->wait.p50 / 1000),
        (unsigned long long)(f->wait.p90 / 1000),
        (unsigned long long)(f->wait.p999 / 1000),
        (unsigned long long)(f->hold.p50 / 1000),
        (unsigned long long)(f->hold.p90 / 1000),
        (unsigned long long)(f->hold.p999 / 1000));
}

/* What keeps any one client from exhausting the server (docs/LIMITS.md):
 * the reply budget, the unauthenticated, failed AUTHs, the log's limit;
 * and the buffers sessions took from malloc (session_bufs.c). */
static int guard_lines(char *buf, size_t cap)
{
    return snprintf(buf, cap,
        "max_output_total %zu\n"
        "reply_bytes_held %zu\n"
        "clients_reply_budget %ld\n"
        "session_buffers_malloced %lu\n"
        "max_unauth %ld\n"
        "login_grace %ld\n"
        "tcp_keepalive %ld\n"
        "connections_unauth %ld\n"
        "clients_unauth_dropped %ld\n"
        "clients_login_timeout %ld\n"
        "auth_closed %ld\n"
        "log_lines_suppressed %ld\n",
        srv.opt.max_output_total, atomic_load(&srv.reply_held),
        atomic_load(&srv.clients_reply_budget),
        session_buffers_malloced(),
        srv.auth_required ? srv.opt.max_unauth : 0L,
        srv.auth_required ? srv.opt.login_grace_s : 0L,
        srv.opt.tcp_keepalive_s,
        atomic_load(&srv.connections_unauth),
        atomic_load(&srv.clients_unauth_dropped),
        atomic_load(&srv.clients_login_timeout),
        atomic_load(&srv.auth_closed),
        atomic_load(&log_source_suppressed));
}

/* The server's own lines: its mode, its connections and its options. */
static int server_lines(char *buf, size_t cap, const struct store *st,
                        size_t entries, long own_commands)
{
    return snprintf(buf, cap,
        "mode %s\n"
        "version %s\n"
        "uptime_seconds %ld\n"
        "connections_current %ld\n"
        "connections_lingering %ld\n"
        "connections_total %ld\n"
        "connections_rejected %ld\n"
        "thread_failures %ld\n"
        "commands_total %ld\n"
        "entries %zu\n"
        "race_window_usec %ld\n"
        "io %s\n"
        "workers %d\n"
        "batch %d\n"
        "lock_fair %d\n"
        "lock_order %s\n"
        "sched %s\n"
        "uring %s\n"
        "uring_calls %llu\n"
        "uring_enters %llu\n"
        "max_clients %ld\n"
        "max_output %zu\n"
        "timeout %ld\n"
        "write_timeout %ld\n"
        "clients_output_limited %ld\n"
        "clients_idle_timeout %ld\n"
        "clients_write_timeout %ld\n"
        "accept_fd_exhausted %ld\n"
        "auth_required %d\n"
        "auth_failures %ld\n",
        st->policy->name, SSN_VERSION, server_uptime(),
        atomic_load(&srv.connections_current),
        atomic_load(&srv.connections_lingering),
        atomic_load(&srv.connections_total),
        atomic_load(&srv.connections_rejected),
        atomic_load(&srv.thread_failures),
        atomic_load(&srv.commands_total) + own_commands,
        entries, srv.opt.race_window_us,
        srv.opt.io_events ? "events" : "threads",
        srv.opt.io_events ? srv.opt.workers : 0, srv.opt.batch,
        srv.opt.lock_order != STORE_LOCK_UNFAIR,
        store_lock_order_name((enum store_lock_order)srv.opt.lock_order),
        server_sched_name(), server_uring_name(),
        atomic_load(&srv.uring_calls), atomic_load(&srv.uring_enters),
        srv.opt.max_clients,
        srv.opt.max_output, srv.opt.idle_timeout_s, srv.opt.write_timeout_s,
        atomic_load(&srv.clients_output_limited),
        atomic_load(&srv.clients_idle_timeout),
        atomic_load(&srv.clients_write_timeout),
        atomic_load(&srv.accept_fd_exhausted), srv.auth_required,
        atomic_load(&srv.auth_failures));
}

/* The journal's lines ("journal off" and zeros without one). */
static int journal_lines(char *buf, size_t cap, const struct store *st)
{
    struct journal_figures jf = { .fsync = JOURNAL_FSYNC_EVERYSEC };

    if (st->journal)
        journal_figures(st->journal, &jf);
    return snprintf(buf, cap,
        "journal %s\n"
        "fsync %s\n"
        "journal_records %llu\n"
        "journal_bytes %llu\n"
        "journal_fsyncs %llu\n"
        "journal_group_size_avg %.2f\n"
        "journal_fsync_us_p99 %llu\n"
        "journal_readonly %d\n"
        "journal_fsync_us_p50 %llu\n"
        "journal_wake %s\n"
        "journal_wakes %llu\n"
        "journal_wake_us_p50 %llu\n"
        "journal_wake_us_p99 %llu\n"
        "journal_async_waits %llu\n"
        "journal_size %llu\n"
        "journal_live_bytes %llu\n"
        "journal_compactions %llu\n"
        "journal_compacting %d\n",
        st->journal ? "on" : "off",
        st->journal ? journal_fsync_name(jf.fsync) : "-",
        (unsigned long long)jf.records, (unsigned long long)jf.bytes,
        (unsigned long long)jf.fsyncs, jf.group_size_avg,
        (unsigned long long)jf.fsync_p99_us, jf.readonly,
        (unsigned long long)jf.fsync_p50_us,
        st->journal ? journal_wake_name(jf.wake) : "-",
        (unsigned long long)jf.wakes, (unsigned long long)jf.wake_p50_us,
        (unsigned long long)jf.wake_p99_us,
        (unsigned long long)jf.async_waits,
        (unsigned long long)jf.size, (unsigned long long)jf.live_bytes,
        (unsigned long long)jf.compactions, jf.compacting);
}

size_t stats_format(char *buf, size_t cap, const struct store *st,
                    size_t entries, const struct store_lock_figures *lock,
                    long own_commands)
{
    size_t len = 0;
    struct metrics_snapshot ms;

    if (append(cap, &len, server_lines(buf, cap, st, entries,
                                       own_commands)) ||
        append(cap, &len, guard_lines(buf + len, cap - len)) ||
        (lock && append(cap, &len, lock_lines(buf + len, cap - len, lock))) ||
        append(cap, &len, journal_lines(buf + len, cap - len, st)) ||
        metrics_snapshot(&ms) || metrics_lines(buf, cap, &len, &ms))
        return 0;
    if (append(cap, &len, snprintf(buf + len, cap - len,
               "trace %d\ntrace_events %llu\ntrace_events_dropped %llu\n",
               trace_enabled(), (unsigned long long)trace_events(),
               (unsigned long long)trace_dropped())))
        return 0;
    if (append(cap, &len, snprintf(buf + len, cap - len, PROTO_END_LINE)))
        return 0;
    return len;
}

void stats_reset(void)
{
    /* What the totals held goes into the since-start-up sums, for the
     * log's last line: no second count on the request path. */
    atomic_fetch_add(&srv.connections_reset,
                     atomic_exchange(&srv.connections_total, 0));
    atomic_store(&srv.connections_rejected, 0);
    atomic_store(&srv.thread_failures, 0);
    atomic_fetch_add(&srv.commands_reset,
                     atomic_exchange(&srv.commands_total, 0));
    atomic_store(&srv.clients_output_limited, 0);
    atomic_store(&srv.clients_idle_timeout, 0);
    atomic_store(&srv.clients_write_timeout, 0);
    atomic_store(&srv.accept_fd_exhausted, 0);
    atomic_store(&srv.auth_failures, 0);
    atomic_store(&srv.auth_closed, 0);
    atomic_store(&srv.clients_reply_budget, 0);
    atomic_store(&srv.clients_unauth_dropped, 0);
    atomic_store(&srv.clients_login_timeout, 0);
    atomic_store(&log_source_suppressed, 0);
    session_buffers_malloced_reset();
    metrics_reset();
}
