/* store.c -- people kept in a red-black tree keyed by (last, first), with
 * a hash index by name beside it (store_index.h) when the policy's
 * hash_index says so (every mode but nolock); the lock that guards
 * them is store_lock.c's (store.h). The policy (lockmode.c) decides when
 * the lock is taken; every _locked function asserts it is held as the
 * policy requires. Entries are made and freed by the session, outside the
 * lock; the only allocation under it is the index's growth, a doubling now
 * and then. The tree is searched here and then linked and recoloured
 * (rbtree.h), so the race window of the lab sits in this file, between
 * the search and the relinking, not in the tree. An ADD that would walk
 * alone may instead wait, indexed, to be linked with others
 * (store_pending.c).
 */
#include <assert.h>
#include <errno.h>
#include <string.h>
#include "journal/journal.h"
#include "listing.h"
#include "lockmode.h"
#include "store.h"

int store_init(struct store *st, const struct lock_policy *policy)
{
    int rc = store_lock_init(st);
    if (rc)
        return rc;
    st->policy = policy;
    rb_init(&st->tree);
    memset(&st->index, 0, sizeof(st->index));  /* off */
    if (policy->hash_index)
        sindex_init(&st->index);
    st->version = 0;
    st->erases = 0;
    st->npending = 0;
    atomic_init(&st->entries, 0);
    st->digest_valid = 0;
    st->listing = NULL;
    st->journal = NULL;
    st->pause = NULL;
    st->pause_arg = NULL;
    return 0;
}

void store_destroy(struct store *st)
{
    while (st->npending)
        entry_free(st->pending[--st->npending]);
    struct rb_node *n = rb_first(&st->tree);

    while (n) {
        struct rb_node *next = rb_next(n);
        rb_erase(&st->tree, n);
        entry_free(RB_ENTRY(n, struct entry, node));
        n = next;
    }
    sindex_destroy(&st->index);
    listing_put(st->listing);
    st->listing = NULL;
    store_lock_destroy(st);
}

/* The lab's race window: the place is chosen, nothing is relinked yet. A
 * thread that changes the tree now makes that place stale. */
static void race_window(const struct store *st)
{
    if (st->pause)
        st->pause(st->pause_arg);
}

/* Whether key still belongs at the hint's place (store_slot_hint): its
 * parent not freed since, that side empty, and key between the parent and
 * its neighbour on that side, which is then exactly where key goes. */
struct rb_node **store_hinted_link(const struct store *st,
                                   const struct store_slot_hint *hint,
                                   const struct entry_key *key)
{
    struct rb_node *p = hint->parent, *next;

    if (!p || hint->erases != st->erases)
        return NULL;
    if (hint->left) {
        if (p->left || entry_key_cmp(key, p) >= 0)
            return NULL;
        next = rb_prev(p);
        return !next || entry_key_cmp(key, next) > 0 ? &p->left : NULL;
    }
    if (p->right || entry_key_cmp(key, p) <= 0)
        return NULL;
    next = rb_next(p);
    return !next || entry_key_cmp(key, next) < 0 ? &p->right : NULL;
}

static int add_locked(struct store *st, struct entry *e,
                      const struct store_slot_hint *hint)
{
    struct entry_key key = { .last = entry_last(e), .first = entry_first(e) };
    struct rb_node *parent, **link;
    uint64_t h = 0;

    /* Someone of that name already: the index says so without a walk. */
    if (sindex_on(&st->index)) {
        /* The look-ahead hashed the names already (the hint's entry is
         * the one its line made: take_entry, commands.c). */
        h = hint->hash ? hint->hash
                       : sindex_hash(&st->index, key.last, key.first);
        if (sindex_find(&st->index, &key, h))
            return -EEXIST;
        /* Without the index a hint could name a node of the same key. */
        if ((link = store_hinted_link(st, hint, &key))) {
            parent = hint->parent;
            goto found;
        }
    }
    /* A key after the last one (a compacted journal's replay adds them all
     * in order) goes right of it: one comparison instead of a search. Only
     * when asked: for a key anywhere else the way down the right edge is
     * a second walk. */
    if (hint->after_last && (!(parent = rb_last(&st->tree)) ||
                             entry_key_cmp(&key, parent) > 0)) {
        link = parent ? &parent->right : &st->tree.root;
    } else if (store_pending_push(st, e, hint)) {
        /* A lone walk waits for others', to go side by side
         * (store_pending.c); the index holds it meanwhile. */
        sindex_insert(&st->index, e, h);
        goto settle;
    } else if (rb_find_slot(&st->tree, &key, entry_key_cmp, &parent,
                            &link)) {
        return -EEXIST;
    }
found:
    race_window(st);
    rb_link_node(&e->node, parent, link);
    rb_insert_color(&st->tree, &e->node);
    sindex_insert(&st->index, e, h);
settle:
    /* The index off (it could not grow) finds nobody pending: link now. */
    if (st->npending == STORE_PENDING_MAX ||
        (st->npending && !sindex_on(&st->index)))
        store_settle_locked(st);
    return 0;
}

/* The entry named key: by the index when it is on, else by the tree. *h
 * is the names' hash, or 0 to compute it here. */
static struct entry *lookup(const struct store *st,
                            const struct entry_key *key, uint64_t *h)
{
    assert(sindex_on(&st->index) || !st->npending);    /* add_locked */
    if (sindex_on(&st->index)) {
        if (!*h)
            *h = sindex_hash(&st->index, key->last, key->first);
        return sindex_find(&st->index, key, *h);
    }
    struct rb_node *n = rb_find(&st->tree, key, entry_key_cmp);
    return n ? RB_ENTRY(n, struct entry, node) : NULL;
}

static int delete_locked(struct store *st, struct store_mutation *m)
{
    uint64_t h = m->key_hash;
    struct entry *e = lookup(st, &m->key, &h);

    if (!e)
        return -ENOENT;
    race_window(st);
    if (!store_pending_drop(st, e)) {
        rb_erase(&st->tree, &e->node);
        st->erases++;
    }
    sindex_remove(&st->index, e, h);
    m->removed = e;
    return 0;
}

int store_apply_locked(struct store *st, struct store_mutation *m)
{
    int rc = -EINVAL;

    STORE_ASSERT_HELD(st);
    m->seq = 0;
    m->compact_due = 0;
    /* The journal hook: space first (it may wait for the flusher, never
     * for I/O of its own), so a refused mutation changes nothing. */
    if (st->journal && (rc = journal_reserve_locked(st->journal)))
        return rc;
    switch (m->op) {
    case STORE_ADD:
        rc = add_locked(st, m->entry, &m->hint);
        break;
    case STORE_DELETE:
        rc = delete_locked(st, m);
        break;
    }
    if (rc == 0) {
        if (st->journal)                /* a memcpy, in tree order */
            m->seq = journal_append_locked(st->journal, m, &m->compact_due);
        st->version++;
        atomic_store_explicit(&st->entries, st->tree.count + st->npending,
                              memory_order_relaxed);
    }
    return rc;
}

uint64_t store_key_hash(const struct store *st, const struct entry_key *key)
{
    return st->policy->hash_index
           ? sindex_hash(&st->index, key->last, key->first) : 0;
}

const struct entry *store_find_hashed_locked(const struct store *st,
                                             const struct entry_key *key,
                                             uint64_t h)
{
    STORE_ASSERT_HELD(st);
    return lookup(st, key, &h);
}

const struct entry *store_find_locked(const struct store *st,
                                      const struct entry_key *key)
{
    return store_find_hashed_locked(st, key, 0);
}

size_t store_count_locked(const struct store *st)
{
    STORE_ASSERT_HELD(st);
    return st->tree.count + st->npending;
}

void store_reserve_locked(struct store *st, size_t n)
{
    STORE_ASSERT_HELD(st);
    sindex_reserve(&st->index, n);
}

static int indexed(const struct store *st, const struct entry *e)
{
    struct entry_key k = { .last = entry_last(e), .first = entry_first(e) };

    return sindex_find(&st->index, &k,
                       sindex_hash(&st->index, k.last, k.first)) == e;
}

/* The index holds exactly the tree's entries and the pending ones: as
 * many, and each found by its name. Nobody is pending without it. */
static const char *index_check(const struct store *st)
{
    if (!sindex_on(&st->index))
        return st->npending ? "people pending without the name index" : NULL;
    if (st->index.count != st->tree.count + st->npending)
        return "the name index does not count as many people as the tree";
    for (struct rb_node *n = rb_first(&st->tree); n; n = rb_next(n))
        if (!indexed(st, RB_ENTRY(n, struct entry, node)))
            return "a person in the tree is missing from the name index";
    for (unsigned i = 0; i < st->npending; i++)
        if (!indexed(st, st->pending[i]))
            return "a pending person is missing from the name index";
    return NULL;
}

const char *store_check_locked(const struct store *st)
{
    STORE_ASSERT_HELD(st);
    const char *why = rb_check(&st->tree, entry_cmp);
    return why ? why : index_check(st);
}

int store_foreach_locked(struct store *st,
                         int (*fn)(const struct entry *e, void *arg),
                         void *arg)
{
    /* In nolock a race can link the tree into a cycle: a walk that meets
     * more nodes than the tree could hold stops (-ELOOP), so a PRINT ends
     * instead of streaming for ever. In the locked modes it never does. */
    STORE_ASSERT_HELD(st);
    store_settle_locked(st);
    size_t left = 2 * st->tree.count + RB_MAX_DEPTH;

    for (struct rb_node *n = rb_first(&st->tree); n; n = rb_next(n)) {
        if (left-- == 0)
            return -ELOOP;
        int rc = fn(RB_ENTRY(n, struct entry, node), arg);
        if (rc)
            return rc;
    }
    return 0;
}

