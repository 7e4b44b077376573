/* killit_verify.c -- what kill_it asks the server before and after a run
 * and what it concludes (killit.h): COUNT at the start (verification needs
 * an empty server), the optional preload, the expected final state from
 * the clients' streams, COUNT/CHECK/DIGEST at the end, and the verdict with
 * every reason. Every question to the server is bounded by a time limit.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cliutil.h"
#include "ctl.h"
#include "frame.h"
#include "expect.h"
#include "findpid.h"
#include "killit.h"
#include "preload.h"
#include "proto.h"

static void reason(struct killit *k, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void reason(struct killit *k, const char *fmt, ...)
{
    size_t len = strlen(k->reasons);
    if (len + 3 >= sizeof(k->reasons))
        return;
    if (len)
        len += (size_t)snprintf(k->reasons + len, sizeof(k->reasons) - len,
                                "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->reasons + len, sizeof(k->reasons) - len, fmt, ap);
    va_end(ap);
}

/* One control request's time limit: --hang, and never past --timeout. */
static int ctl_timeout_ms(const struct killit *k)
{
    double s = k->hang_s > 0 && k->hang_s < k->timeout_s ? k->hang_s
                                                         : k->timeout_s;
    return s > 0 ? (int)(s * 1000) : 10000;
}

static int is_local(const char *host)
{
    return strcmp(host, "localhost") == 0 || strcmp(host, "::1") == 0 ||
           strncmp(host, "127.", 4) == 0;
}

/* Connects, and says AUTH when there is a password. Returns 0; -1 when
 * there is no connection, -2 when AUTH failed (c->err says why; the
 * connection is closed either way). */
static int ctl_connect(struct killit *k, struct ctl *c)
{
    if (ctl_open(c, k->host, k->port, ctl_timeout_ms(k)))
        return -1;
    if (k->password_file && ctl_auth(c, k->password)) {
        ctl_abandon(c);
        return -2;
    }
    return 0;
}

/* COUNT's reply as a number (cli_parse_count's: digits only), or -1. */
static long long count_of(const char *reply)
{
    uint64_t n;

    return cli_parse_count(reply, &n) || n > LLONG_MAX ? -1 : (long long)n;
}

/* COUNT before the run: is verification possible? Returns -1 when the
 * server cannot be reached at all, -2 when it will not serve us. */
int ki_check_start(struct killit *k)
{
    struct ctl c;
    char reply[CTL_REPLY_MAX];
    int rc;

    k->start_count = -1;
    if (!k->server_pid && is_local(k->host))
        k->server_pid = find_listener_pid((unsigned)atoi(k->port));
    if ((rc = ctl_connect(k, &c)) == -1) {
        fprintf(stderr, "kill_it: %s\n", c.err);
        return -1;
    }
    if (rc == -2) {
        snprintf(k->start_note, sizeof(k->start_note), "%.190s", c.err);
        return -2;
    }
    if ((rc = ctl_query(&c, "COUNT", reply, sizeof(reply)))) {
        snprintf(k->start_note, sizeof(k->start_note), "COUNT failed: %.150s",
                 c.err);
        ctl_abandon(&c);
        return rc == -ETIMEDOUT ? -2 : 0;   /* not answering: no run */
    } else if (strcmp(reply, PL_AUTH_REQUIRED) == 0) {
        snprintf(k->start_note, sizeof(k->start_note), "the server requires "
                 "a password: it answered '%s' (give --password-file FILE)",
                 PL_AUTH_REQUIRED);
        ctl_close(&c);
        return -2;
    } else if (count_of(reply) < 0)
        snprintf(k->start_note, sizeof(k->start_note),
                 "COUNT replied '%.60s'", reply);
    else
        k->start_count = count_of(reply);
    ctl_close(&c);
    return 0;
}

void ki_check_end(struct killit *k)
{
    struct ctl c;
    char reply[CTL_REPLY_MAX];

    k->end_count = -1;
    if (ctl_connect(k, &c)) {
        snprintf(k->end_check, sizeof(k->end_check), "%.190s", c.err);
        return;
    }
    /* Each question is asked only if the one before was answered: a
     * server that stopped answering costs one time limit, not four. */
    int rc = ctl_query(&c, "COUNT", reply, sizeof(reply));
    if (rc == 0)
        k->end_count = count_of(reply);     /* -1: no number */
    if (rc == 0)
        rc = ctl_query(&c, "CHECK", reply, sizeof(reply));
    if (rc == 0) {
        snprintf(k->end_check, sizeof(k->end_check), "%.190s", reply);
        k->server_reachable = 1;
    } else {
        snprintf(k->end_check, sizeof(k->end_check), "no reply: %.180s",
                 c.err);
    }
    if (rc == 0 && ctl_query(&c, "DIGEST", reply, sizeof(reply)) == 0)
        snprintf(k->end_digest, sizeof(k->end_digest), "%.190s", reply);
    if (rc == 0)
        ctl_close(&c);
    else
        ctl_abandon(&c);
}

/* STATS RESET before the clients, so the lock's figures (totals, max and
 * p99 alike) cover the run. Its own session counts: in coarse mode it holds
 * the lock while it lives, and STATS after the run takes it once more. */
void ki_lock_reset(struct killit *k)
{
    struct ctl c;
    char reply[CTL_REPLY_MAX];

    k->lock_known = 0;
    if (ctl_connect(k, &c)) {
        snprintf(k->lock_note, sizeof(k->lock_note), "%.190s", c.err);
        return;
    }
    if (ctl_query(&c, "STATS RESET", reply, sizeof(reply)) ||
        strcmp(reply, PROTO_OK) != 0) {
        snprintf(k->lock_note, sizeof(k->lock_note), "STATS RESET: %.150s",
                 c.err[0] ? c.err : reply);
        ctl_abandon(&c);
        return;
    }
    ctl_close(&c);
    k->lock_known = 1;
}

static void stats_line(void *arg, const char *line)
{
    static const struct { const char *name; size_t off; } f[] = {
        { "lock_acquisitions", offsetof(struct killit, lock_acq) },
        { "lock_contended", offsetof(struct killit, lock_contended) },
        { "lock_wait_us", offsetof(struct killit, lock_wait_us) },
        { "lock_hold_us", offsetof(struct killit, lock_hold_us) },
        { "lock_wait_max_us", offsetof(struct killit, lock_wait_max_us) },
        { "lock_hold_max_us", offsetof(struct killit, lock_hold_max_us) },
        { "lock_wait_p99_us", offsetof(struct killit, lock_wait_p99_us) },
        { "lock_hold_p99_us", offsetof(struct killit, lock_hold_p99_us) },
    };
    struct killit *k = arg;
    const char *sp = strchr(line, ' ');
    if (!sp)
        return;
    size_t n = (size_t)(sp - line);
    if (n == 4 && strncmp(line, "mode", 4) == 0) {
        snprintf(k->lock_mode, sizeof(k->lock_mode), "%.15s", sp + 1);
        return;
    }
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
        if (strlen(f[i].name) == n && strncmp(line, f[i].name, n) == 0 &&
            cli_parse_count(sp + 1, (uint64_t *)((char *)k + f[i].off)))
            k->lock_bad = 1;    /* "-1", "1e308", past 2^64, junk after */
}

/* What ssnserver's figures always are: contended among the acquisitions,
 * a longest wait or hold within their sum, a p99 within the longest.
 * NULL, or what is not. */
static const char *lock_figures_odd(const struct killit *k)
{
    if (k->lock_bad)
        return "a lock figure that is no count";
    if (k->lock_contended > k->lock_acq)
        return "more contended acquisitions than acquisitions";
    if (k->lock_wait_max_us > k->lock_wait_us ||
        k->lock_hold_max_us > k->lock_hold_us ||
        k->lock_wait_p99_us > k->lock_wait_max_us ||
        k->lock_hold_p99_us > k->lock_hold_max_us)
        return "a longest wait or hold past their sum, or a p99 past it";
    return NULL;
}

void ki_lock_read(struct killit *k)
{
    struct ctl c;

    if (!k->lock_known)
        return;
    k->lock_known = 0;
    if (ctl_connect(k, &c)) {
        snprintf(k->lock_note, sizeof(k->lock_note), "%.190s", c.err);
        return;
    }
    k->lock_bad = 0;
    if (ctl_query_block(&c, "STATS", stats_line, k)) {
        snprintf(k->lock_note, sizeof(k->lock_note), "STATS: %.180s", c.err);
        ctl_abandon(&c);
        return;
    }
    ctl_close(&c);
    const char *odd = lock_figures_odd(k);
    if (odd) {
        snprintf(k->lock_note, sizeof(k->lock_note), "STATS has %s: not "
                 "ssnserver?", odd);
        return;
    }
    k->lock_known = 1;
}

/* Adds the --preload people in one pipelined session of our own, closed
 * before any client starts. */
void ki_preload(struct killit *k)
{
    struct preload_source ps;
    struct pl_source src;
    struct pl_result r;
    struct pl_opts o = {
        .host = k->host, .port = k->port,
        .password = k->password_file ? k->password : NULL,
        .timeout_s = k->timeout_s, .hang_s = k->hang_s,
    };

    preload_source_init(&src, &ps, k->preload);
    if (pl_run(&o, &src, &r, NULL))
        snprintf(k->preload_fail, sizeof(k->preload_fail), "%.200s",
                 r.what);
    else if (r.errors || r.bad)
        snprintf(k->preload_fail, sizeof(k->preload_fail),
                 "%llu of its ADDs failed", (unsigned long long)(r.errors +
                                                                 r.bad));
}

/* The union of every client's final live set, from their streams. */
int ki_expected(struct killit *k)
{
    struct expect x;
    int rc = 0;

    expect_init(&x);
    for (uint64_t i = 0; i < k->preload && rc == 0; i++) {
        struct person e;
        preload_entry(i, &e);
        rc = expect_add_entry(&x, &e);
    }
    for (unsigned i = 0; i < k->nclients && rc == 0; i++) {
        struct gen g;
        struct gen_opts go = {
            .nevents = k->nevents, .seed = k->seed + i,
            .shard_k = i, .shard_n = k->nclients, .mix = k->mix,
        };
        rc = gen_init(&g, &k->names, &go);
        if (rc == 0) {
            gen_run_to_end(&g);
            rc = expect_add(&x, &g);
            gen_destroy(&g);
        }
    }
    if (rc == 0) {
        expect_sort(&x);
        k->expect_count = x.n;
        rc = expect_digest(&x, k->expect_digest);
    }
    expect_free(&x);
    return rc;
}

static void server_hint(struct killit *k, char *buf, size_t len)
{
    if (k->server_pid)
        snprintf(buf, len, "server pid %ld", (long)k->server_pid);
    else
        snprintf(buf, len, "find its pid with: ss -ltnp 'sport = :%s'",
                 k->port);
}

/* What went wrong on the clients' side: hang, time-out, crashes, resets. */
static void judge_clients(struct killit *k, uint64_t *errors, uint64_t *bad)
{
    char hint[96];
    unsigned byfail[PL_ERR_INTERNAL + 1] = { 0 }, crashed = 0;
    const char *what[PL_ERR_INTERNAL + 1] = { 0 };

    if (k->hung) {
        server_hint(k, hint, sizeof(hint));
        reason(k, "server hung: no reply for %.0f s with %llu requests "
               "outstanding (%s)", k->hang_s,
               (unsigned long long)k->hung_outstanding, hint);
    }
    if (k->timed_out)
        reason(k, "the run took longer than %.0f s (--timeout)", k->timeout_s);
    if (k->interrupted)
        reason(k, "interrupted");
    for (unsigned i = 0; i < k->nclients; i++) {
        struct ki_slot *s = &k->slot[i];
        if (!atomic_load(&s->done)) {
            if (!k->hung && !k->timed_out && !k->interrupted)
                crashed++;
            continue;
        }
        *errors += s->res.errors;
        *bad += s->res.bad;
        if (s->res.fail != PL_OK) {
            byfail[s->res.fail]++;
            what[s->res.fail] = s->res.what;
        }
    }
    if (crashed)
        reason(k, "%u client%s died before reporting", crashed,
               crashed > 1 ? "s" : "");
    for (int f = PL_ERR_CONNECT; f <= PL_ERR_INTERNAL; f++)
        if (byfail[f] && !(f == PL_ERR_TIMEOUT && k->timed_out))
            reason(k, "%u client%s: %s", byfail[f], byfail[f] > 1 ? "s" : "",
                   what[f]);
}

void ki_judge(struct killit *k)
{
    uint64_t errors = 0, bad = 0;
    if (k->preload_fail[0])
        reason(k, "preloading %llu people failed: %s",
               (unsigned long long)k->preload, k->preload_fail);
    judge_clients(k, &errors, &bad);
    int clients_ok = k->reasons[0] == '\0';

    if (k->hung) {
        /* judge_clients said it; the server was not asked again */
    } else if (!k->server_reachable) {
        if (k->server_pid && kill(k->server_pid, 0) < 0 && errno == ESRCH)
            reason(k, "server died (pid %ld is gone): %s",
                   (long)k->server_pid, k->end_check);
        else
            reason(k, "server died or stopped answering: %s", k->end_check);
    } else if (!frame_check_ok(k->end_check, strlen(k->end_check))) {
        reason(k, "tree invariant broken: CHECK said '%s'", k->end_check);
    }
    if (bad)
        reason(k, "%llu garbage replies", (unsigned long long)bad);

    if (k->start_count != 0) {
        if (k->reasons[0]) {
            k->verdict = KI_FAILED;
            return;
        }
        k->verdict = KI_NOT_VERIFIED;
        if (k->start_count > 0)
            reason(k, "the server held %lld entries when the run began "
                   "(verification needs an empty server)", k->start_count);
        else
            reason(k, "%s", k->start_note);
        return;
    }
    if (errors)
        reason(k, "%llu Error: replies (none expected: clients never "
               "share names)", (unsigned long long)errors);
    if (clients_ok && k->server_reachable) {
        long long want = (long long)k->expect_count;
        if (k->end_count < 0)
            reason(k, "COUNT gave no number after the run");
        else if (k->end_count < want)
            reason(k, "lost %lld %s (expected %lld, server has %lld)",
                   want - k->end_count, want - k->end_count == 1 ? "entry"
                   : "entries", want, k->end_count);
        else if (k->end_count > want)
            reason(k, "%lld extra %s (expected %lld, server has %lld)",
                   k->end_count - want, k->end_count - want == 1 ? "entry"
                   : "entries", want, k->end_count);
        if (strcmp(k->end_digest, k->expect_digest) != 0)
            reason(k, "digest differs: expected %.16s..., server says %.20s",
                   k->expect_digest, k->end_digest[0] ? k->end_digest :
                   "nothing");
    }
    k->verdict = k->reasons[0] ? KI_FAILED : KI_VERIFIED;
    if (k->verdict == KI_VERIFIED)
        reason(k, "%zu %s, digest matches", k->expect_count,
               k->expect_count == 1 ? "entry" : "entries");
}

