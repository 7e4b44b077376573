/* store_pending.c -- ADDs indexed at once and linked into the tree later,
 * several together (store.h, struct store's pending). A lone insert's
 * walk down the tree is a chain of cache misses, each waiting for the
 * last; STORE_PENDING_MAX walks side by side overlap theirs, as a batch's
 * look-ahead does (store_prefetch.c). Until then the name index answers
 * for a pending person (FIND, DELETE, ADD's duplicate check), and every
 * reader of the tree's order settles first (store_settle_locked): PRINT,
 * DIGEST, COMPACT's snapshot, TREE: a reader's hold may change the
 * tree, which every policy's hold allows (one exclusive lock,
 * lockmode.c). Only while the index is on and no race window is set
 * (nolock and the race lab link at once), and not in a journal's replay.
 */
#include <assert.h>
#include "lockmode.h"
#include "store.h"

/* The walks of the pending keys down the tree, one level of each in
 * turn so that their misses overlap (each asks for both children of its
 * node before the keys are compared): where each ends, into slot. */
static void walk_side_by_side(const struct store *st,
                              const struct entry_key *key,
                              struct store_slot_hint *slot)
{
    const struct rb_node *at[STORE_PENDING_MAX];
    unsigned n = st->npending;
    int live = 1;

    for (unsigned i = 0; i < n; i++) {
        at[i] = st->tree.root;
        slot[i] = (struct store_slot_hint){ .erases = st->erases };
    }
    for (int depth = 0; live && depth < RB_MAX_DEPTH; depth++) {
        live = 0;
        for (unsigned i = 0; i < n; i++) {
            if (at[i]) {
                __builtin_prefetch(at[i]->left);
                __builtin_prefetch(at[i]->right);
            }
        }
        for (unsigned i = 0; i < n; i++) {
            if (!at[i])
                continue;
            int c = entry_key_cmp(&key[i], at[i]);
            const struct rb_node *child = c < 0 ? at[i]->left : at[i]->right;
            if (!child) {               /* its empty place */
                slot[i].parent = (struct rb_node *)at[i];
                slot[i].left = c < 0;
            }
            at[i] = child;
            live |= child != NULL;
        }
    }
}

void store_settle_locked(struct store *st)
{
    struct entry_key key[STORE_PENDING_MAX];
    struct store_slot_hint slot[STORE_PENDING_MAX];

    STORE_ASSERT_HELD(st);
    if (!st->npending)
        return;
    for (unsigned i = 0; i < st->npending; i++) {
        const struct entry *e = st->pending[i];
        key[i] = (struct entry_key){ entry_last(e), entry_first(e) };
    }
    walk_side_by_side(st, key, slot);
    for (unsigned i = 0; i < st->npending; i++) {
        struct entry *e = st->pending[i];
        struct rb_node *parent = slot[i].parent, **link;
        /* A place the links before took or moved: walk again (the index
         * refused every duplicate, pending ones included). */
        if (!(link = store_hinted_link(st, &slot[i], &key[i]))) {
            struct rb_node *same = rb_find_slot(&st->tree, &key[i],
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

int store_pending_push(struct store *st, struct entry *e)
{
    if (!sindex_on(&st->index) || st->pause)
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
