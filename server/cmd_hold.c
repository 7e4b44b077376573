/* cmd_hold.c -- how a request holds the store lock (commands.h): one hold
 * per request; a session's batch, one hold across a run of its pipelined
 * simple requests (session_set_batch); and an event worker's round, one
 * hold across the simple requests of several sessions whose bytes came in
 * one pass of its loop (cmd_round_begin), so that one request in flight on
 * each of many connections is answered as a pipeline is. Either way a
 * hold begins by asking the cache for the lines its next requests will
 * touch (store_prefetch.c; in a round, the sessions then take their
 * lines' parses from that look-ahead, cmd_kept_take) and covers at most
 * batch_max + 1 requests, and the session ends it (cmd_batch_end) before
 * any request or send that is not a batch's.
 *
 * Everything here is the calling thread's: a batch begins and ends within
 * one session_received_slice, a round within one callback of a worker.
 */
#include <assert.h>
#include <string.h>
#include "commands.h"
#include "lockmode.h"
#include "reply.h"
#include "session.h"

/* The entries of a hold's next ADDs, made before it began
 * (store_prefetch_parse), taken in input order by cmd_add; what the hold
 * did not take is freed once it ends (free_ahead). */
static __thread struct {
    struct entry *e[STORE_PREFETCH_MAX];
    struct store_slot_hint hint[STORE_PREFETCH_MAX];    /* where each
                                           one's walk ended, once the hold
                                           began (store_prefetch_locked) */
    int n, next;
} ahead;

/* The worker's round under way on this thread (cmd_round_begin): its
 * sessions in the order they run, the one running, and its hold. */
static __thread struct {
    struct session *const *s;
    int n, at;                  /* n == 0: no round */
    int looked_to;              /* the last session whose lines the
                                   hold's look-ahead took whole */
    int held;                   /* the store lock is held for the round */
    int left;                   /* requests the hold may still cover */
    struct store *store;
    struct store_kept *kept;    /* the hold's look-ahead's parses */
} round;

struct entry *cmd_take_entry(const struct person *p,
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

/* With no store lock held: the hold is over. */
static void free_ahead(void)
{
    while (ahead.next < ahead.n)
        entry_free(ahead.e[ahead.next++]);
    ahead.n = ahead.next = 0;
    if (round.kept && round.kept->n)
        store_kept_wipe(round.kept);
}

int cmd_kept_take(const char *line, size_t len, struct proto_req *req,
                  struct person *p, uint64_t *hash)
{
    struct store_kept *kept = round.kept;

    if (!kept)
        return 0;
    /* In input order; a line the session did not run as a request (too
     * long) is passed over. */
    for (int i = kept->next; i < kept->n; i++) {
        struct store_kept_line *l = &kept->l[i];
        if (l->len != len || memcmp(l->line, line, len) != 0)
            continue;
        *p = l->who;
        *hash = l->hash;
        req->cmd = (enum proto_cmd)l->cmd;
        while (kept->next <= i)         /* this one and those passed over */
            store_kept_wipe_line(&kept->l[kept->next++]);
        return 1;
    }
    return 0;
}

/* Whole lines buffered in in, what a look-ahead would parse: whether
 * they are more than room (counted no further). */
static int lines_over(const struct linereader *in, int room)
{
    const char *p = in->buf + in->start, *end = in->buf + in->end;
    int n = 0;

    while (n <= room && p < end &&
           (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        n++;
        p++;
    }
    return n > room;
}

/* The lines after the running request in a round: s's own (as many as
 * fit), then those of the sessions after it, each whole or not at all, so
 * that the session at which the look-ahead stopped begins a new one
 * (cmd_round_at). Notes the last session looked at whole. */
static int look_ahead(struct session *s, struct store_prefetch *pf)
{
    const struct linereader *in = &s->in;

    store_prefetch_clear(pf);
    assert(!round.kept || round.kept->n == 0);  /* the last hold wiped it */
    pf->kept = round.kept;
    if (lr_pending(in))
        store_prefetch_parse_more(s->store, pf, in->buf + in->start,
                                  in->end - in->start, s->batch_max);
    round.looked_to = round.at;
    for (int i = round.at + 1; i < round.n; i++) {
        const struct linereader *o = &round.s[i]->in;
        if (lr_pending(o)) {
            if (lines_over(o, STORE_PREFETCH_MAX - pf->n))
                break;
            store_prefetch_parse_more(s->store, pf, o->buf + o->start,
                                      o->end - o->start, s->batch_max);
        }
        round.looked_to = i;
    }
    return pf->n;
}

/* Before the hold: the entries its ADDs will take. */
static void ahead_take(const struct store_prefetch *pf)
{
    assert(ahead.n == 0);               /* the last hold freed its own */
    memcpy(ahead.e, pf->made, (size_t)pf->nmade * sizeof(pf->made[0]));
    ahead.n = pf->nmade;
    ahead.next = 0;
}

/* Once the lock is held: their walks, and where each ended. */
static void ahead_walk(const struct store *st, struct store_prefetch *pf)
{
    store_prefetch_locked(st, pf);
    /* made[i] is the i-th ADD, as k[i] is (the walkers come first, in
     * input order). */
    for (int i = 0; i < ahead.n; i++)
        ahead.hint[i] = pf->k[i].slot;
}

/* Takes the lock for a batch or a round: what it will touch is asked for
 * first. 0, or -errno with the reply saying so. */
static int hold_begin(struct session *s, enum store_access how, int ahead_n,
                      struct store_prefetch *pf)
{
    if (ahead_n)
        ahead_take(pf);
    int rc = s->store->policy->op_enter(s->store, how);
    if (rc) {
        free_ahead();
        reply_printf(s, "Error: store lock failed: %s\n", strerror(-rc));
    } else if (ahead_n) {
        ahead_walk(s->store, pf);
    }
    return rc;
}

static void round_release(void)
{
    round.held = 0;
    round.store->policy->op_leave(round.store, STORE_WRITE);
    free_ahead();
}

/* A round's request: the round's hold, taken when its first request needs
 * it, for every session of the round (one lock serves reads and writes).
 * The look-ahead's 3 kB are on the stack of the functions that look ahead
 * only (noinline): a session thread that has answered one request at a
 * time has not touched them, and an idle connection costs a page less. */
static __attribute__((noinline)) int round_take(struct session *s)
{
    struct store_prefetch pf;
    int rc = hold_begin(s, STORE_WRITE, look_ahead(s, &pf), &pf);
    if (rc == 0) {
        round.held = 1;
        round.left = s->batch_max;
        round.store = s->store;
    }
    return rc;
}

/* A batch begins: the requests after this one are read now, their ADDs'
 * entries made, and their cache lines asked for together once the lock
 * is held. */
static __attribute__((noinline)) int batch_take(struct session *s,
                                                enum store_access how)
{
    struct store_prefetch pf;
    int ahead_n = store_prefetch_parse(s->store, &pf,
                                       s->in.buf + s->in.start,
                                       s->in.end - s->in.start,
                                       s->batch_max);
    return hold_begin(s, how, ahead_n, &pf);
}

static int in_round(const struct session *s)
{
    return round.n && s->batch_ok && s->batch_max > 0;
}

int cmd_store_enter(struct session *s, enum store_access how)
{
    if (s->batch_kept)
        return 0;               /* kept from the request before */
    if (in_round(s))
        return round.held ? 0 : round_take(s);
    s->batch_left = s->batch_max;
    s->batch_how = how;
    if (s->batch_ok && s->batch_max > 0 && lr_pending(&s->in))
        return batch_take(s, how);
    return hold_begin(s, how, 0, NULL);
}

/* A batchable request with more bytes buffered keeps the lock for the
 * next one (cmd_run ends the batch when that one is not batchable); in a
 * round, the round keeps it until its requests are spent. */
void cmd_store_leave(struct session *s, enum store_access how)
{
    if (in_round(s)) {
        assert(round.held);
        if (--round.left < 0)
            round_release();
        return;
    }
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
    if (round.held)
        round_release();
    if (!s->batch_kept)
        return;
    s->batch_kept = 0;
    s->store->policy->op_leave(s->store, s->batch_how);
    free_ahead();
}

void cmd_slice_end(struct session *s)
{
    if (!round.n)
        cmd_batch_end(s);       /* a round's hold outlives its sessions'
                                   slices: cmd_round_end ends it */
}

int cmd_batchable(enum proto_cmd cmd)
{
    return cmd == PROTO_ADD || cmd == PROTO_DELETE || cmd == PROTO_FIND ||
           cmd == PROTO_COUNT;
}

void cmd_round_begin(struct session *const *s, int n,
                     struct store_kept *kept)
{
    assert(!round.n && !round.held && n > 0);
    round.s = s;
    round.n = n;
    round.at = 0;
    round.kept = kept;
    kept->n = kept->next = 0;
}

void cmd_round_at(int i)
{
    struct store_prefetch pf;

    assert(i >= 0 && i < round.n);
    round.at = i;
    /* A hold goes on past its look-ahead: the next one, from here. Its
     * entries are made under the lock, as they would be without it. */
    if (round.held && i > round.looked_to) {
        free_ahead();
        if (look_ahead(round.s[i], &pf)) {
            ahead_take(&pf);
            ahead_walk(round.store, &pf);
        }
    }
}

int cmd_round_holding(void)
{
    return round.held;
}

void cmd_round_end(void)
{
    if (round.held)
        round_release();
    round.n = 0;
    round.s = NULL;
    round.kept = NULL;
}
