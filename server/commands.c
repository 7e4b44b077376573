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
    return (struct entry_key){ .last = s->req->last, .first = s->req->first };
}

/* The names' index hash: known, the look-ahead's (0: not), or made now,
 * before the request takes the store lock (store_key_hash). */
static uint64_t names_hash(const struct session *s,
                           const struct entry_key *key, uint64_t known)
{
    return known ? known : store_key_hash(s->store, key);
}

/* "Error: FIRST LAST" and what, as one reply, copied rather than printed
 * (vsnprintf cost 870 instructions more for an ADD refused as a duplicate,
 * callgrind). The names are at most ENTRY_NAME_MAX bytes each. */
static void reply_name_error(struct session *s, const char *first,
                             const char *last, const char *what)
{
    char line[sizeof("Error: ") + 2 * ENTRY_NAME_MAX + 32];
    size_t nf = strnlen(first, ENTRY_NAME_MAX);
    size_t nl = strnlen(last, ENTRY_NAME_MAX);
    size_t nw = strlen(what), n = sizeof("Error: ") - 1;

    assert(nw < 32);
    memcpy(line, "Error: ", n);
    memcpy(line + n, first, nf);
    n += nf;
    line[n++] = ' ';
    memcpy(line + n, last, nl);
    n += nl;
    memcpy(line + n, what, nw);
    reply_put(s, line, n + nw);
}

/* ADD's one allocation: the entry, sized to its names, made from the
 * parsed request before entering the store and freed after leaving it when
 * the store refuses it (a duplicate, or the journal). */
static void cmd_add(struct session *s)
{
    struct store_slot_hint hint = { .parent = NULL };
    struct entry *e = cmd_take_entry(s->req, &hint);
    if (!e) {
        reply_puts(s, PROTO_ERR_NOMEM_LINE);
        return;
    }

    struct entry_key key = req_key(s);
    struct store_mutation m = { .op = STORE_ADD, .entry = e, .hint = hint };
    m.hint.hash = names_hash(s, &key, hint.hash);
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
        reply_name_error(s, s->req->first, s->req->last, " already exists\n");
}

/* The same with a C1 control shown as '?': apart, so that its copies are
 * not in the common path's frame (a thread's idle stack is measured:
 * tests/test-idle-mem.sh). */
static __attribute__((noinline)) void reply_not_found_shown(struct session *s)
{
    char first[ENTRY_NAME_MAX + 1], last[ENTRY_NAME_MAX + 1];

    reply_printf(s, "Error: %s %s not found\n",
                 entry_name_shown(s->req->first, first),
                 entry_name_shown(s->req->last, last));
}

/* "Error: FIRST LAST not found": FIND and DELETE take a name with a C1
 * control (a journal may hold one), which the reply shows as '?'. */
static void reply_not_found(struct session *s)
{
    const char *first = s->req->first, *last = s->req->last;

    if (entry_name_unsafe(first, strlen(first)) ||
        entry_name_unsafe(last, strlen(last)))
        reply_not_found_shown(s);
    else
        reply_name_error(s, first, last, " not found\n");
}

static void cmd_delete(struct session *s)
{
    struct store_mutation m = {
        .op = STORE_DELETE, .key = req_key(s),
    };
    m.key_hash = names_hash(s, &m.key, s->req_hash);
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
        reply_not_found(s);
    }
}

static void cmd_find(struct session *s)
{
    struct entry_key key = req_key(s);
    uint64_t h = names_hash(s, &key, s->req_hash);
    char line[ENTRY_LINE_MAX];
    size_t n = 0;

    if (cmd_store_enter(s, STORE_READ))
        return;
    const struct entry *e = store_find_hashed_locked(s->store, &key, h);
    if (e)
        n = entry_format_print(e, line);    /* copy before leaving */
    cmd_store_leave(s, STORE_READ);

    if (n)
        reply_put(s, line, n);
    else
        reply_not_found(s);
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
static int digest_locked(struct session *s, struct digest *d, char *hex)
{
    struct digest_walk w = { .d = d, .len = 0 };
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
    struct digest *d = session_digest(s);       /* before the lock */
    int rc = 0;

    if (!d) {
        reply_puts(s, "Error: out of memory\n");
        return;
    }
    if (cmd_store_enter(s, STORE_READ))
        return;
    if (!st->digest_valid || st->digest_version != st->version) {
        rc = digest_locked(s, d, st->digest_hex);
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
        reply_printf(s, "OK %zu %s, all invariants hold\n", n,
                     n == 1 ? "entry" : "entries");
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
    if (s->io->never_waits) {
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
    case PROTO_TREE:   return cmd_tree(s, s->req_depth);
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
