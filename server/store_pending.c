/* store_pending.c -- ADDs indexed at once and linked into the tree later,
 * several together (store.h, struct store's pending). A lone insert's
 * walk down the tree is a chain of cache misses, each waiting for the
 * last; STORE_PENDING_MAX walks side by side overlap theirs (the batch
 * look-ahead's walker, store_walk_side_by_side). Until then the name
 * index answers for a pending person (FIND, DELETE, ADD's duplicate
 * check), and every reader of the tree's order settles first
 * (store_settle_locked): PRINT, DIGEST, COMPACT's snapshot, TREE. A
 * reader's hold may so change the tree, which every policy's hold allows
 * (one exclusive lock, lockmode.c). Which ADDs wait: store_pending_push.
 */
#include <assert.h>
#include "lockmode.h"
#include "store.h"

void store_settle_locked(struct store *st)
{
    struct store_walk w[STORE_PENDING_MAX];
    struct store_slot_hint slot[STORE_PENDING_MAX];
    int n = (int)st->npending;

    STORE_ASSERT_HELD(st);
    if (!n)
        return;
    for (int i = 0; i < n; i++) {
        const struct entry *e = st->pending[i];
        slot[i] = (struct store_slot_hint){ .erases = st->erases };
        w[i] = (struct store_walk){ { entry_last(e), entry_first(e) },
                                    st->tree.root, &slot[i] };
    }
    store_walk_side_by_side(w, n, 0, RB_MAX_DEPTH);
    for (int i = 0; i < n; i++) {
        struct entry *e = st->pending[i];
        struct rb_node *parent = slot[i].parent, **link;
        /* A place the links before took or moved: walk again (the index
         * refused every duplicate, pending ones included). */
        if (!(link = store_hinted_link(st, &slot[i], &w[i].key))) {
            struct rb_node *same = rb_find_slot(&st->tree, &w[i].key,
                                                entry_key_cmp, &parent,
                                                &link);
            assert(!same);
            (void)same;
        }
        rb_link_node(&e->node, parent, link);
        rb_insert_color(&st->tree, &e->node);
    }
    st->npending = 0;
}

/* Not when the index is off (nobody could find e), the race window is
 * set (the lab's ADD walks and links with the window between), the
 * look-ahead walked e's way (its path is in the cache: hint->parent) or
 * in a replay (after_last: the next record's path is mostly this one's,
 * and a 10^6-record replay was 8 % to 14 % slower waiting). */
int store_pending_push(struct store *st, struct entry *e,
                       const struct store_slot_hint *hint)
{
    if (!sindex_on(&st->index) || st->pause || hint->parent ||
        hint->after_last)
        return 0;
    assert(st->npending < STORE_PENDING_MAX);   /* add_locked settles */
    st->pending[st->npending++] = e;
    return 1;
}

int store_pending_drop(struct store *st, const struct entry *e)
{
    for (unsigned i = 0; i < st->npending; i++) {
        if (st->pending[i] == e) {
            st->pending[i] = st->pending[--st->npending];
            return 1;
        }
    }
    return 0;
}
