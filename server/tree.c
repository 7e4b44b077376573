/* tree.c -- TREE [DEPTH]: the top levels of the store's tree as Graphviz
 * DOT (commands.h, docs/PROTOCOL.md), drawn by common/rbtree_dot.c.
 *
 * Each person is labelled "Last, First" and nothing more: SSNs and ages
 * are personal data and never go into TREE. The nodes that break a rule of
 * the tree are marked, as CHECK would find them.
 *
 * The drawing is written into the reply with the store held for a read, as
 * CHECK's walk is: the tree must not move under it. That is O(n) under the
 * lock (the hidden nodes are counted and the whole tree is checked, two
 * bounded walks), plus at most 2^depth nodes formatted. Copying the top
 * levels out to draw them after leaving would save only the formatting.
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
               "TREE allows more levels than rb_dot_write draws");

/* "Last, First": an entry's names never change once it is made, but the
 * reads stay bounded by ENTRY_NAME_MAX anyway (in nolock the tree may be
 * changing under us). */
static void person_label(const struct rb_node *n, char *buf, size_t size)
{
    const struct entry *e = RB_ENTRY(n, const struct entry, node);

    snprintf(buf, size, "%.*s, %.*s",
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

void cmd_tree(struct session *s, int depth)
{
    struct rb_dot d = {
        .depth = depth, .nil_leaves = 1, .cmp = entry_cmp,
        .label = person_label, .out = tree_out, .arg = s,
    };
    int rc;

    if (cmd_store_enter(s, STORE_READ))
        return;
    STORE_ASSERT_HELD(s->store);
    rc = rb_dot_write(&s->store->tree, &d);
    cmd_store_leave(s, STORE_READ);

    if (rc == 0)
        reply_puts(s, PROTO_END_LINE);
    else if (rc == -ENOMEM)     /* before anything was written */
        reply_puts(s, PROTO_ERR_NOMEM_LINE);
    else if (!reply_failed(s))  /* -EINVAL: the parser lets none through */
        reply_printf(s, "Error: bad depth: a whole number from 1 to %d\n",
                     PROTO_TREE_MAX_DEPTH);
}
