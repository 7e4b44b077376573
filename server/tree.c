/* tree.c -- TREE [DEPTH]: the top levels of the store's tree as Graphviz
 * DOT (commands.h, docs/PROTOCOL.md), drawn by common/rbtree_dot.c.
 *
 * Each person is labelled "Last," and "First" on two lines, and nothing
 * more: SSNs and ages are personal data and never go into TREE. The nodes that break a rule of
 * the tree are marked, as CHECK would find them.
 *
 * Like FIND, TREE copies what it needs out of the tree with the store held
 * for a read (cmd_store_enter .. cmd_store_leave), and writes its reply
 * after leaving: the DOT is formatted outside the store lock. The
 * snapshot is taken from the drawings' own (below) before entering, and
 * the text is made after leaving, so nothing is allocated under the lock
 * either. What stays under it is the
 * take (rb_dot_snapshot_take): the top levels copied and labelled (at most
 * 2^depth - 1 names), bounded by the depth; and two O(n) walks of the
 * whole tree, bounded as CHECK's is: one counts the nodes hidden under
 * each cut, one checks every rule. (Coarse mode holds the store for a
 * session's whole life, this reply included: that is coarse's design.)
 *
 * Memory. A drawing costs its snapshot (213 KiB at depth 10) and its text
 * (about 190 KiB at depth 10), each request's own. Clients pipelining
 * TREEs must not add these up beyond the reply budget (docs/LIMITS.md):
 *   - at most TREE_DRAWINGS_MAX drawings are made at once. A TREE waits
 *     for its turn before it takes a snapshot (drawing_lock): with a
 *     thread per connection, every TREE queued for the store lock held
 *     one (500 clients took the server to 324 MB, with their sessions'
 *     grown reply buffers and latency histograms). An event worker waits
 *     for a turn as it waits for the store lock: a drawing under way
 *     never waits for a client, only for the store lock and its work;
 *   - the text is a reply of its own (listing_new), handed to the driver
 *     as PRINT's listing is (reply_send_listing): charged to the reply
 *     budget (budget.h) in full from a thread's first byte written, or
 *     while an event driver queues it. Earlier replies go first, before
 *     the turn is taken (as for fine's streamed PRINT), so a drawing is
 *     never held behind a client that does not read, and an event
 *     driver's TREE waits (CMD_WAITS) while replies are queued ahead of
 *     it: a client that does not read gets no drawing made. It also
 *     waits while the budget is passed (budget_over): the clients dropped
 *     for it are closed on the worker's next pass, and until then every
 *     drawing made would drop one more whose drawing stays (9 MB of them
 *     above a 4 MB budget, 60 clients).
 * A text that would pass the client's --max-output is not finished: the
 * limit's error, as for PRINT.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "listing.h"
#include "lockmode.h"
#include "net/budget.h"
#include "rbtree_dot.h"
#include "reply.h"
#include "session.h"

_Static_assert(PROTO_TREE_MAX_DEPTH <= RB_DOT_MAX_DEPTH,
               "TREE allows more levels than rb_dot draws");

/* Drawings made at once, every session's: one whose snapshot is taken
 * under the store lock, one whose text is formatted meanwhile. */
#define TREE_DRAWINGS_MAX 2

/* The snapshots, made at the deepest depth when first needed and kept
 * (213 KiB each): a snapshot per TREE, freed after it, left that much
 * free memory in each of malloc's arenas (one per thread, up to 8 a CPU)
 * for good. A snapshot holds names, never an SSN or an age. */
static pthread_mutex_t drawing_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t drawing_done = PTHREAD_COND_INITIALIZER;
static struct rb_dot_snapshot *spare[TREE_DRAWINGS_MAX];
                                /* [taken, made) are free; drawing_lock */
static int made, taken;         /* snapshots made, and in use; drawing_lock */

/* "Last,\nFirst", on two lines so that the 16 nodes of a fifth level fit a
 * 1920-pixel screen: an entry's names never change once it is made, but
 * the reads stay bounded by ENTRY_NAME_MAX anyway (in nolock the tree may
 * be changing under us). */
static void person_label(const struct rb_node *n, char *buf, size_t size)
{
    const struct entry *e = RB_ENTRY(n, const struct entry, node);

    snprintf(buf, size, "%.*s,\n%.*s",
             (int)strnlen(entry_last(e), ENTRY_NAME_MAX), entry_last(e),
             (int)strnlen(entry_first(e), ENTRY_NAME_MAX), entry_first(e));
}

/* A snapshot to draw with, waiting while TREE_DRAWINGS_MAX are in use;
 * NULL when none can be made (no memory). Never under a store
 * operation's hold (a TREE is never batched). */
static struct rb_dot_snapshot *drawing_begin(struct session *s)
{
    struct rb_dot_snapshot *snap = NULL;

    STORE_ASSERT_NOT_HELD(s->store);
    pthread_mutex_lock(&drawing_lock);
    while (taken == TREE_DRAWINGS_MAX)
        pthread_cond_wait(&drawing_done, &drawing_lock);
    if (taken == made) {                /* none spare: the first times */
        snap = rb_dot_snapshot_new(RB_DOT_MAX_DEPTH);
        if (snap)
            spare[made++] = snap;
    }
    if (taken < made)
        snap = spare[taken++];
    pthread_mutex_unlock(&drawing_lock);
    return snap;
}

static void drawing_end(struct rb_dot_snapshot *snap)
{
    pthread_mutex_lock(&drawing_lock);
    spare[--taken] = snap;
    pthread_cond_signal(&drawing_done);
    pthread_mutex_unlock(&drawing_lock);
}

/* The text's first allocation, per node of the deepest level drawn: a
 * node's statement, its edges and the boxes below it take about 180
 * bytes (TREE 10 of 10^5 people: 186 KiB), so the text is most often
 * made where it starts, and TREE 10's (256 KiB) has a mapping of its own
 * (M_MMAP_THRESHOLD, main.c), back to the system once sent. Only the
 * pages written cost memory. */
#define TREE_TEXT_PER_NODE ((size_t)256)

/* The text being made, and the most it may hold. */
struct text {
    struct listing *l;
    size_t limit;               /* the client's --max-output; 0: none */
};

/* Each line into the text; one that does not fit stops the drawing. */
static int text_out(void *arg, const char *line, size_t len)
{
    struct text *t = arg;

    return listing_append(t->l, line, len, t->limit);
}

/* Draws s's store into t->l with snap, END included. Returns 0; -ENOMEM,
 * -ENOBUFS (past the limit) or -EINVAL; or 1 when the store could not be
 * entered (cmd_store_enter answered). */
static int draw(struct session *s, int depth, struct rb_dot_snapshot *snap,
                struct text *t)
{
    struct rb_dot d = {
        .depth = depth, .nil_leaves = 1, .cmp = entry_cmp,
        .label = person_label, .out = text_out, .arg = t,
    };
    int rc;

    if (cmd_store_enter(s, STORE_READ))
        return 1;
    STORE_ASSERT_HELD(s->store);
    store_settle_locked(s->store);      /* the pending ADDs drawn too */
    rc = rb_dot_snapshot_take(&s->store->tree, &d, snap);
    cmd_store_leave(s, STORE_READ);

    if (rc == 0)
        rc = rb_dot_snapshot_write(snap, &d);   /* the store left */
    if (rc == 0)
        rc = text_out(t, PROTO_END_LINE, sizeof(PROTO_END_LINE) - 1);
    return rc;
}

/* What stopped the drawing, as the reply. */
static void tree_failed(struct session *s, int rc)
{
    if (rc == -ENOBUFS)
        reply_limit_exceeded(s);        /* as PRINT's past --max-output */
    else if (rc == -ENOMEM)
        reply_puts(s, PROTO_ERR_NOMEM_LINE);
    else if (rc < 0)                    /* -EINVAL */
        reply_printf(s, "Error: bad depth: a whole number from 1 to %d\n",
                     PROTO_TREE_MAX_DEPTH);
}

int cmd_tree(struct session *s, int depth)
{
    struct text t = { .limit = s->out.limit };
    struct rb_dot_snapshot *snap;
    int rc = -ENOMEM;

    if (depth < 1 || depth > RB_DOT_MAX_DEPTH) {
        tree_failed(s, -EINVAL);        /* the parser lets none through */
        return 0;
    }
    if (reply_send_now(s))
        return 0;                       /* the session ends */
    if (!reply_drained(s) || (s->io->never_waits && budget_over()))
        return CMD_WAITS;               /* replies queued ahead of it, or
                                           clients still on their way out */
    snap = drawing_begin(s);
    t.l = listing_new(t.limit && t.limit < TREE_TEXT_PER_NODE << depth
                      ? t.limit : TREE_TEXT_PER_NODE << depth);
    if (snap && t.l)
        rc = draw(s, depth, snap, &t);
    if (snap)
        drawing_end(snap);
    if (rc == 0) {
        reply_send_listing(s, t.l);     /* takes the reference */
        return 0;
    }
    listing_put(t.l);
    tree_failed(s, rc);
    return 0;
}
