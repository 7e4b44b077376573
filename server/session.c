/* session.c -- one connection's request loop (session.h).
 *
 * Every complete request already read is answered before the next read, and
 * the replies of such a batch leave in one write. The store is touched only
 * between lock_policy->op_enter and op_leave; nothing is allocated, freed or
 * written to the client inside them, except PRINT in the modes whose policy
 * says print_under_lock (that is what fine mode demonstrates).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lockmode.h"
#include "proto.h"
#include "server.h"
#include "session.h"

#define OUT_INITIAL     4096    /* reply buffer to start with */
#define OUT_HIGH_WATER  65536   /* flush mid-batch beyond this */
#define PRINT_CHUNK     4096    /* PRINT under the lock writes this much
                                   at a time */

struct session *session_new(int rfd, int wfd, int quiet)
{
    struct session *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->rfd = rfd;
    s->wfd = wfd;
    s->quiet = quiet;
    lr_init(&s->lr, rfd, PROTO_MAX_LINE);
    if (ob_init(&s->out, wfd, OUT_INITIAL))
        goto err;
    s->digest = digest_new();
    if (!s->digest)
        goto err;
    s->spare = store_entry_new();   /* may fail: retried at the next ADD */
    return s;
err:
    ob_destroy(&s->out);
    free(s);
    return NULL;
}

void session_free(struct session *s)
{
    if (!s)
        return;
    store_entry_free(s->spare);
    digest_free(s->digest);
    ob_destroy(&s->out);
    free(s);
}

static void reply(struct session *s, const char *line)
{
    ob_puts(&s->out, line);
}

static void reply_ok(struct session *s)
{
    if (!s->quiet)
        reply(s, "OK\n");
}

static void do_add(struct session *s)
{
    if (!s->spare && !(s->spare = store_entry_new())) {
        reply(s, "Error: out of memory\n");
        return;
    }
    struct entry *e = s->spare;
    memcpy(e->first, s->probe.first, sizeof(e->first));
    memcpy(e->last, s->probe.last, sizeof(e->last));
    memcpy(e->ssn, s->probe.ssn, sizeof(e->ssn));
    e->age = s->probe.age;

    struct store_mutation m = { .op = STORE_ADD, .entry = e };
    lock_policy->op_enter();
    int rc = store_apply_locked(&srv.store, &m);
    lock_policy->op_leave();

    if (rc == 0) {
        s->spare = store_entry_new();   /* outside the lock */
        reply_ok(s);
    } else {
        ob_printf(&s->out, "Error: %s %s already exists\n", e->first, e->last);
    }
}

static void do_delete(struct session *s)
{
    struct store_mutation m = { .op = STORE_DELETE, .entry = &s->probe };
    lock_policy->op_enter();
    int rc = store_apply_locked(&srv.store, &m);
    lock_policy->op_leave();

    if (rc == 0) {
        store_entry_free(m.removed);    /* outside the lock */
        reply_ok(s);
    } else {
        ob_printf(&s->out, "Error: No %s %s\n", s->probe.first, s->probe.last);
    }
}

static void do_find(struct session *s)
{
    char line[ENTRY_LINE_MAX];
    size_t n = 0;

    lock_policy->op_enter();
    const struct entry *e = store_find_locked(&srv.store, &s->probe);
    if (e)
        n = entry_format_print(e, line);    /* copy before unlocking */
    lock_policy->op_leave();

    if (e)
        ob_append(&s->out, line, n);
    else
        ob_printf(&s->out, "Error: No %s %s\n", s->probe.first, s->probe.last);
}

/* PRINT's per-entry step. Under print_under_lock the chunk goes to the
 * client right here, lock held: a slow reader stalls every other client. */
static int print_one(const struct entry *e, void *arg)
{
    struct session *s = arg;
    char line[ENTRY_LINE_MAX];
    size_t n = entry_format_print(e, line);

    if (ob_append(&s->out, line, n))
        return -ENOMEM;
    if (lock_policy->print_under_lock && s->out.len >= PRINT_CHUNK)
        return ob_flush(&s->out);
    return 0;
}

/* Returns -errno when the client could not be written to. */
static int do_print(struct session *s)
{
    int rc = 0;

    if (lock_policy->print_under_lock)
        rc = ob_flush(&s->out);         /* earlier replies first, unlocked */
    if (rc)
        return rc;
    lock_policy->op_enter();
    ob_puts(&s->out, ENTRY_PRINT_HEAD);
    rc = store_foreach_locked(&srv.store, print_one, s);
    ob_puts(&s->out, ENTRY_PRINT_TAIL);
    if (lock_policy->print_under_lock && rc == 0)
        rc = ob_flush(&s->out);
    lock_policy->op_leave();
    return rc == -ENOMEM ? 0 : rc;
}

struct digest_walk {
    struct digest *d;
    size_t len;
    char buf[4096];             /* dump lines, hashed a chunk at a time */
};

static int digest_one(const struct entry *e, void *arg)
{
    struct digest_walk *w = arg;

    if (w->len + ENTRY_LINE_MAX > sizeof(w->buf)) {
        digest_update(w->d, w->buf, w->len);
        w->len = 0;
    }
    w->len += entry_format_dump(e, w->buf + w->len);
    return 0;
}

/* Hashing happens under the lock: it is CPU work on data the lock guards,
 * with no I/O and no allocation (see docs/LESSONS.md on the context). */
static void do_digest(struct session *s)
{
    struct digest_walk w = { .d = s->digest, .len = 0 };
    char hex[DIGEST_HEX_LEN + 1];
    int rc = digest_begin(w.d);

    lock_policy->op_enter();
    if (rc == 0) {
        store_foreach_locked(&srv.store, digest_one, &w);
        rc = digest_update(w.d, w.buf, w.len);
    }
    lock_policy->op_leave();
    if (rc == 0)
        rc = digest_end(w.d, hex);
    if (rc == 0)
        ob_printf(&s->out, "%s\n", hex);
    else
        reply(s, "Error: digest failed\n");
}

static void do_count(struct session *s)
{
    lock_policy->op_enter();
    size_t n = store_count_locked(&srv.store);
    lock_policy->op_leave();
    ob_printf(&s->out, "%zu\n", n);
}

static void do_check(struct session *s)
{
    lock_policy->op_enter();
    const char *broken = store_check_locked(&srv.store);
    size_t n = store_count_locked(&srv.store);
    lock_policy->op_leave();
    if (broken)
        ob_printf(&s->out, "Error: %s\n", broken);
    else
        ob_printf(&s->out, "OK %zu entries, all invariants hold\n", n);
}

static void do_stats(struct session *s)
{
    lock_policy->op_enter();
    size_t n = store_count_locked(&srv.store);
    lock_policy->op_leave();
    ob_printf(&s->out,
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
              "END\n",
              lock_policy->name, SSN_VERSION, server_uptime(),
              atomic_load(&srv.connections_current),
              atomic_load(&srv.connections_total),
              atomic_load(&srv.connections_rejected),
              atomic_load(&srv.thread_failures),
              atomic_load(&srv.commands_total) + s->commands,
              n, srv.opt.race_window_us);
}

/* Answers one request into the reply buffer. Returns 1 when the session
 * must end (QUIT, or the client cannot be written to), else 0. */
static int session_handle(struct session *s, const char *line, size_t len)
{
    struct proto_req req;

    switch (proto_parse(line, len, &req, &s->probe)) {
    case PROTO_BLANK:
        return 0;
    case PROTO_INVALID:
        ob_printf(&s->out, "%s\n", req.err);
        break;
    case PROTO_ADD:    do_add(s);    break;
    case PROTO_DELETE: do_delete(s); break;
    case PROTO_FIND:   do_find(s);   break;
    case PROTO_PRINT:
        if (do_print(s)) {
            s->commands++;
            return 1;
        }
        break;
    case PROTO_COUNT:  do_count(s);  break;
    case PROTO_CHECK:  do_check(s);  break;
    case PROTO_DIGEST: do_digest(s); break;
    case PROTO_STATS:  do_stats(s);  break;
    case PROTO_HELP:   reply(s, proto_help_text); break;
    case PROTO_QUIT:
        if (!s->quiet)
            reply(s, "Bye\n");
        s->commands++;
        return 1;
    }
    s->commands++;
    return 0;
}

void session_run(struct session *s)
{
    int done = 0;

    lock_policy->session_enter();
    while (!done) {
        ssize_t n = lr_fill(&s->lr);
        if (n <= 0)
            break;                      /* closed, reset or shut down */
        char *line;
        size_t len;
        int st;
        while (!done && (st = lr_next(&s->lr, &line, &len)) != LR_AGAIN) {
            if (st == LR_TOOLONG) {
                reply(s, "Error: line too long\n");
                s->commands++;
            } else {
                done = session_handle(s, line, len);
            }
            if (s->out.len >= OUT_HIGH_WATER && ob_flush(&s->out))
                done = 1;
        }
        if (s->out.len && ob_flush(&s->out))
            done = 1;
        atomic_fetch_add(&srv.commands_total, s->commands);
        s->commands = 0;
    }
    if (s->out.len)
        ob_flush(&s->out);
    lock_policy->session_leave();
}
