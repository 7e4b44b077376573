/* tree.c -- TREE [DEPTH]: the top levels of the store's tree as Graphviz
 * DOT (commands.h, docs/PROTOCOL.md), drawn by common/rbtree_dot.c.
 *
 * Each person is labelled "Last," and "First" on two lines, and nothing
 * more: SSNs and ages are personal data and never go into TREE. The nodes that break a rule of
 * the tree are marked, as CHECK would find them.
 *
 * Like FIND, TREE copies what it needs out of the tree with the store held
 * for a read (cmd_store_enter .. cmd_store_leave), and writes its reply
 * after leaving: the DOT is formatted and put into the reply outside the
 * store lock, so a reply that outgrows the client's --max-output and must
 * be sent early (reply_put) never sends on the socket under it. The
 * snapshot is allocated before entering and freed after leaving, so
 * nothing is allocated under the lock either. What stays under it is the
 * take (rb_dot_snapshot_take): the top levels copied and labelled (at most
 * 2^depth - 1 names), bounded by the depth; and two O(n) walks of the
 * whole tree, bounded as CHECK's is: one counts the nodes hidden under
 * each cut, one checks every rule. (Coarse mode holds the store for a
 * session's whole life, this reply included: that is coarse's design.)
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "lockmode.h"
#include "rbtree_dot.h"
#include "reply.h"
#include "session.h"

_Static_assert(PROTO_TREE_MAX_DEPTH <= RB_DOT_MAX_DEPTH,
               "TREE allows more levels than rb_dot draws");

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

/* Each line into the reply; a reply that lost a part stops the drawing. */
static int tree_out(void *arg, const char *line, size_t len)
{
    struct session *s = arg;

    reply_put(s, line, len);
    return reply_failed(s) ? -ENOBUFS : 0;
}

/* TREE's last line: END, or what stopped the drawing. */
static void tree_end(struct session *s, int rc)
{
    if (rc == 0)
        reply_puts(s, PROTO_END_LINE);
    else if (rc == -ENOMEM)     /* before anything was written */
        reply_puts(s, PROTO_ERR_NOMEM_LINE);
    else if (!reply_failed(s))  /* -EINVAL: the parser lets none through */
        reply_printf(s, "Error: bad depth: a whole number from 1 to %d\n",
                     PROTO_TREE_MAX_DEPTH);
}

void cmd_tree(struct session *s, int depth)
{
    struct rb_dot d = {
        .depth = depth, .nil_leaves = 1, .cmp = entry_cmp,
        .label = person_label, .out = tree_out, .arg = s,
    };
    struct rb_dot_snapshot *snap = rb_dot_snapshot_new(depth);
    int rc;

    if (!snap) {
        tree_end(s, -errno);
        return;
    }
    if (cmd_store_enter(s, STORE_READ)) {
        rb_dot_snapshot_free(snap);
        return;
    }
    STORE_ASSERT_HELD(s->store);
    rc = rb_dot_snapshot_take(&s->store->tree, &d, snap);
    cmd_store_leave(s, STORE_READ);

    if (rc == 0)
        rc = rb_dot_snapshot_write(snap, &d);   /* the store left */
    rb_dot_snapshot_free(snap);
    tree_end(s, rc);
}
