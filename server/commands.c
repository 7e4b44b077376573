/* commands.c -- one function per request (commands.h).
 *
 * Each touches the store only between cmd_store_enter and cmd_store_leave,
 * the lock policy's op hooks, and keeps that stretch short: nothing is
 * formatted at length or written to the client inside it, and outside a
 * batch nothing is allocated or freed there either. PRINT is the exception
 * the policy chooses (print.c). The reply is built after leaving, from
 * what was copied out inside. A batch (session_set_batch, the event
 * driver's) keeps one hold across a run of simple requests; the session
 * ends it (cmd_batch_end) before any other request.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>
#include "commands.h"
#include "journal/journal.h"
#include "lockmode.h"
#include "log.h"
#include "reply.h"
#include "server.h"
#include "session.h"
#include "stats.h"

/* The entries of a batch's next ADDs, made before its hold
 * (store_prefetch_parse), taken in input order by cmd_add. A batch begins
 * and ends on one thread, within one session_received_slice, so they are
 * the thread's; what the batch did not take is freed once the hold ends
 * (free_ahead). */
static __thread struct {
    struct entry *e[STORE_PREFETCH_MAX];
    struct store_slot_hint hint[STORE_PREFETCH_MAX];    /* where each
                                           one's walk ended, once the hold
                                           began (store_prefetch_locked) */
    int n, next;
} ahead;

/* The entry for p: the next one made ahead when it is p's (it always is
 * unless the batch and the look-ahead parsed differently), with where its
 * walk ended into *hint; else a new one, and no hint. */
static struct entry *take_entry(const struct person *p,
                                struct store_slot_hint *hint)
{
    if (ahead.next < ahead.n) {
        struct entry *e = ahead.e[ahead.next];
        const struct entry_key key = { .last = p->last, .first = p->first };
        if (entry_key_cmp(&key, &e->node) == 0 && entry_age(e) == p->age &&
            e->ssn == entry_ssn_pack(p->ssn)) {
            *hint = ahead.hint[ahead.next++];
            return e;
        }
    }
    return entry_from_person(p);
}

/* With no store lock held: the batch is over. */
static void free_ahead(void)
{
    while (ahead.next < ahead.n)
        entry_free(ahead.e[ahead.next++]);
    ahead.n = ahead.next = 0;
}

int cmd_store_enter(struct session *s, enum store_access how)
{
    if (s->batch_kept)
        return 0;               /* kept from the request before */
    s->batch_left = s->batch_max;
    s->batch_how = how;
    /* A batch begins: the requests after this one are read now, their
     * ADDs' entries made, and their cache lines asked for together once
     * the lock is held. */
    struct store_prefetch pf;
    int ahead_n = s->batch_ok && s->batch_max > 0 && lr_pending(&s->in) &&
                  store_prefetch_parse(s->store, &pf,
                                       s->in.buf + s->in.start,
                                       s->in.end - s->in.start,
                                       s->batch_max);
    if (ahead_n) {
        assert(ahead.n == 0);           /* the last batch freed its own */
        memcpy(ahead.e, pf.made, (size_t)pf.nmade * sizeof(pf.made[0]));
        ahead.n = pf.nmade;
        ahead.next = 0;
    }
    int rc = s->store->policy->op_enter(s->store, how);
    if (rc) {
        free_ahead();
        reply_printf(s, "Error: store lock failed: %s\n", strerror(-rc));
    } else if (ahead_n) {
        store_prefetch_locked(s->store, &pf);
        /* made[i] is the i-th ADD, as k[i] is (the walkers come first,
         * in input order). */
        for (int i = 0; i < ahead.n; i++)
            ahead.hint[i] = pf.k[i].slot;
    }
    return rc;
}

/* A batchable request with more bytes buffered keeps the lock for the
 * next one (cmd_run ends the batch when that one is not batchable). */
void cmd_store_leave(struct session *s, enum store_access how)
{
    if (s->batch_ok && s->batch_left > 0 && lr_pending(&s->in)) {
        s->batch_left--;
        s->batch_kept = 1;
        if (how == STORE_WRITE)
            s->batch_how = STORE_WRITE; /* the strongest it covered */
        return;
    }
    s->batch_kept = 0;
    s->store->policy->op_leave(s->store, how);
    free_ahead();
}

void cmd_batch_end(struct session *s)
{
    if (!s->batch_kept)
        return;
    s->batch_kept = 0;
    s->store->policy->op_leave(s->store, s->batch_how);
    free_ahead();
}

int cmd_batchable(enum proto_cmd cmd)
{
    return cmd == PROTO_ADD || cmd == PROTO_DELETE || cmd == PROTO_FIND ||
           cmd == PROTO_COUNT;
}

static void reply_ok(struct session *s)
{
    if (!s->quiet)
        reply_puts(s, PROTO_OK_LINE);
}

/* A mutation the journal refused (store_apply_locked): nothing changed.
 * Returns 1 when rc was such a refusal and it is answered. */
static int journal_refused(struct session *s, int rc)
{
    if (rc == -EROFS) {
        char why[128];
        journal_error(s->store->journal, why, sizeof(why));
        reply_printf(s, "Error: read-only: %s\n",
                     why[0] ? why : "journal failed");
        return 1;
    }
    if (rc != -EEXIST && rc != -ENOENT) {
        reply_printf(s, "Error: journal write failed: %s\n", strerror(-rc));
        return 1;
    }
    return 0;
}

static struct entry_key req_key(const struct session *s)
{
    return (struct entry_key){ .last = s->req.last, .first = s->req.first };
}


/* ADD's one allocation: the entry, sized to its names, made from the
 * parsed request before entering the store and freed after leaving it when
 * the store refuses it (a duplicate, or the journal). */
static void cmd_add(struct session *s)
{
    struct store_slot_hint hint = { .parent = NULL };
    struct entry *e = take_entry(&s->req, &hint);
    if (!e) {
        reply_puts(s, PROTO_ERR_NOMEM_LINE);
        return;
    }

    struct store_mutation m = { .op = STORE_ADD, .entry = e, .hint = hint };
    if (cmd_store_enter(s, STORE_WRITE)) {
        entry_free(e);
        return;
    }
    int rc = store_apply_locked(s->store, &m);
    cmd_store_leave(s, STORE_WRITE);
    s->compact_due |= m.compact_due;    /* started after the batch */

    if (rc == 0) {
        if (m.seq)
            s->journal_seq = m.seq;     /* the reply waits for it */
        reply_ok(s);
        return;
    }
    entry_free(e);                      /* refused: still ours */
    if (!journal_refused(s, rc))
        reply_printf(s, "Error: %s %s already exists\n", s->req.first,
                     s->req.last);
}

static void cmd_delete(struct session *s)
{
    struct store_mutation m = { .op = STORE_DELETE, .key = req_key(s) };
    if (cmd_store_enter(s, STORE_WRITE))
        return;
    int rc = store_apply_locked(s->store, &m);
    cmd_store_leave(s, STORE_WRITE);
    s->compact_due |= m.compact_due;    /* started after the batch */

    if (rc == 0) {
        entry_free(m.removed);          /* outside the lock */
        if (m.seq)
            s->journal_seq = m.seq;
        reply_ok(s);
    } else if (!journal_refused(s, rc)) {
        reply_printf(s, "Error: %s %s not found\n", s->req.first, s->req.last);
    }
}

static void cmd_find(struct session *s)
{
    struct entry_key key = req_key(s);
    char line[ENTRY_LINE_MAX];
    size_t n = 0;

    if (cmd_store_enter(s, STORE_READ))
        return;
    const struct entry *e = store_find_locked(s->store, &key);
    if (e)
        n = entry_format_print(e, line);    /* copy before leaving */
    cmd_store_leave(s, STORE_READ);

    if (n)
        reply_put(s, line, n);
    else
        reply_printf(s, "Error: %s %s not found\n", s->req.first, s->req.last);
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

/* Hashes the whole store into hex; the caller holds the store. */
static int digest_locked(struct session *s, char *hex)
{
    struct digest_walk w = { .d = s->digest, .len = 0 };
    int rc = digest_begin(w.d);

    if (rc == 0) {
        store_foreach_locked(s->store, digest_one, &w);
        rc = digest_update(w.d, w.buf, w.len);
    }
    if (rc == 0)
        rc = digest_end(w.d, hex);
    return rc;
}

/* Hashing happens under the lock: it is CPU work on data the lock guards,
 * with no I/O and no allocation (see docs/LESSONS.md on the context), but
 * O(n) while every other session waits. So it happens once per change of
 * the store: the result is kept with the version it belongs to, and a
 * DIGEST of an unchanged store copies it (the store's cache may be written
 * under a read access: every mode's lock is exclusive). */
static void cmd_digest(struct session *s)
{
    struct store *st = s->store;
    char hex[DIGEST_HEX_LEN + 1];
    int rc = 0;

    if (cmd_store_enter(s, STORE_READ))
        return;
    if (!st->digest_valid || st->digest_version != st->version) {
        rc = digest_locked(s, st->digest_hex);
        st->digest_valid = rc == 0;
        st->digest_version = st->version;
    }
    if (rc == 0)
        memcpy(hex, st->digest_hex, sizeof(hex));
    cmd_store_leave(s, STORE_READ);
    if (rc == 0)
        reply_printf(s, "%s\n", hex);
    else
        reply_puts(s, "Error: digest failed\n");
}

/* COUNT, CHECK and STATS: *n is the count, *broken what CHECK found. */
static int read_count(struct session *s, size_t *n, const char **broken)
{
    if (cmd_store_enter(s, STORE_READ))
        return -1;
    if (broken)
        *broken = store_check_locked(s->store);
    *n = store_count_locked(s->store);
    cmd_store_leave(s, STORE_READ);
    return 0;
}

static void cmd_count(struct session *s)
{
    size_t n;

    if (read_count(s, &n, NULL) == 0)
        reply_printf(s, "%zu\n", n);
}

static void cmd_check(struct session *s)
{
    const char *broken;
    size_t n;

    if (read_count(s, &n, &broken))
        return;
    if (broken)
        reply_printf(s, "Error: %s\n", broken);
    else
        reply_printf(s, "OK %zu entries, all invariants hold\n", n);
}

static void cmd_stats(struct session *s)
{
    struct store_lock_figures lock;
    char block[STATS_MAX];
    size_t n, len;

    if (cmd_store_enter(s, STORE_READ))
        return;
    n = store_count_locked(s->store);
    store_lock_figures_locked(s->store, &lock);
    cmd_store_leave(s, STORE_READ);
    len = stats_format(block, sizeof(block), s->store, n, &lock, s->commands);
    if (len)
        reply_put(s, block, len);
    else
        reply_puts(s, PROTO_ERR_NOMEM_LINE);    /* the latency figures'
                                                   scratch memory */
}

/* Zeroes every counter that is not a gauge, the lock's figures included. */
static void cmd_stats_reset(struct session *s)
{
    if (cmd_store_enter(s, STORE_WRITE))
        return;
    store_lock_reset_locked(s->store);
    cmd_store_leave(s, STORE_WRITE);
    if (s->store->journal)
        journal_reset_figures(s->store->journal);
    stats_reset();
    s->commands = -1;           /* this request, counted after its reply */
    reply_puts(s, PROTO_OK_LINE);
}

/* COMPACT: the snapshot under the lock, then the wait for the new journal
 * outside it (in coarse mode the session holds the lock anyway; the
 * rewrite never needs it). An event driver's session does not wait: the
 * request waits (CMD_WAITS), and runs again once the compaction ended. */
static int cmd_compact(struct session *s)
{
    struct journal *j = s->store->journal;
    char why[128];
    int rc;

    if (!j) {
        reply_puts(s, "Error: no journal (start the server with "
                   "--journal FILE)\n");
        return 0;
    }
    if (!s->compact_gen) {              /* not yet started for this one */
        if (cmd_store_enter(s, STORE_WRITE))
            return 0;
        rc = journal_compact_start_locked(j, &s->compact_gen);
        cmd_store_leave(s, STORE_WRITE);
        if (rc == -EROFS) {
            journal_error(j, why, sizeof(why));
            reply_printf(s, "Error: read-only: %s\n", why);
        } else if (rc) {
            reply_printf(s, "Error: compaction failed: %s\n", strerror(-rc));
        }
        if (rc) {
            s->compact_gen = 0;
            return 0;
        }
    }
    /* The outcome: an event driver's session never waits for it here
     * (the driver is woken when it is known, and runs COMPACT again). */
    if (s->io.never_waits) {
        rc = journal_compact_result(j, s->compact_gen, why, sizeof(why));
        if (rc == -EINPROGRESS)
            return CMD_WAITS;
    } else {
        rc = journal_compact_wait(j, s->compact_gen, why, sizeof(why));
    }
    s->compact_gen = 0;
    if (rc)
        reply_printf(s, "Error: compaction failed: %s\n", why);
    else
        reply_ok(s);
    return 0;
}

static void cmd_quit(struct session *s)
{
    if (!s->quiet)
        reply_puts(s, PROTO_BYE_LINE);
    s->ending = 1;
}

/* PRINT as the policy writes it; a streamed one waits for the replies
 * queued ahead of it (-EINPROGRESS). */
static int cmd_print(struct session *s)
{
    int rc = s->store->policy->print(s);

    if (rc == -EINPROGRESS)
        return CMD_WAITS;
    if (rc) {
        s->ending = 1;
        s->send_error = rc;
    }
    return 0;
}

int cmd_run(struct session *s, enum proto_cmd cmd)
{
    s->batch_ok = cmd_batchable(cmd);
    assert(s->batch_ok || !s->batch_kept);  /* the session ended it */
    switch (cmd) {
    case PROTO_ADD:    cmd_add(s);    break;
    case PROTO_DELETE: cmd_delete(s); break;
    case PROTO_FIND:   cmd_find(s);   break;
    case PROTO_PRINT:  return cmd_print(s);
    case PROTO_COUNT:  cmd_count(s);  break;
    case PROTO_CHECK:  cmd_check(s);  break;
    case PROTO_DIGEST: cmd_digest(s); break;
    case PROTO_STATS:  cmd_stats(s);  break;
    case PROTO_STATS_RESET: cmd_stats_reset(s); break;
    case PROTO_TREE:   cmd_tree(s, s->req_depth); break;
    case PROTO_HELP:   reply_puts(s, proto_help_text); break;
    case PROTO_COMPACT: return cmd_compact(s);
    case PROTO_TRACE:
    case PROTO_TRACE_START:
    case PROTO_TRACE_STOP: return cmd_trace(s, cmd);
    case PROTO_QUIT:   cmd_quit(s);   break;
    case PROTO_BLANK:
    case PROTO_INVALID:
    case PROTO_AUTH:
        break;                  /* answered by the session */
    }
    return 0;
}

void cmd_compact_due(struct session *s)
{
    struct store *st = s->store;
    uint64_t gen;

    assert(!s->batch_kept);
    s->compact_due = 0;
    if (st->policy->op_enter(st, STORE_WRITE))
        return;                 /* the next mutation says it again */
    int rc = journal_compact_start_locked(st->journal, &gen);
    st->policy->op_leave(st, STORE_WRITE);
    if (rc)
        log_msg(LOG_LEVEL_WARN, "journal: cannot start the automatic "
                "compaction: %s", strerror(-rc));
}
