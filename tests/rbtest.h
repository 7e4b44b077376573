/* rbtest.h -- helpers shared by the red-black tree's unit tests
 * (check_rbtree.c, check_rbtree_random.c, check_rbtree_checker.c): a test
 * record with its node and key comparators, the search + link + colour
 * insert every caller of the tree writes, a seeded PRNG and tree-building
 * and inspection helpers. static inline so each test file takes only what
 * it uses. */
#ifndef SSN_TESTS_RBTEST_H
#define SSN_TESTS_RBTEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <check.h>
#include "rbtree.h"

struct item {
    int key;
    struct rb_node node;
};

static inline int key_of(const struct rb_node *n)
{
    return RB_ENTRY(n, const struct item, node)->key;
}

static inline int item_cmp(const struct rb_node *a, const struct rb_node *b)
{
    int x = key_of(a), y = key_of(b);

    return (x > y) - (x < y);
}

/* The key comparator: key points to an int. */
static inline int item_key_cmp(const void *key, const struct rb_node *n)
{
    int x = *(const int *)key, y = key_of(n);

    return (x > y) - (x < y);
}

static inline struct rb_node *find_key(const struct rb_tree *t, int key)
{
    return rb_find(t, &key, item_key_cmp);
}

/* Inserts n (an item's node) as a caller of the tree does: search, link,
 * colour. Returns NULL, or the node already holding n's key, in which case
 * neither the tree nor n is touched (OpenBSD tree.h's convention). */
static inline struct rb_node *insert_node(struct rb_tree *t, struct rb_node *n)
{
    struct rb_node *parent, **link, *old;
    int key = key_of(n);

    if ((old = rb_find_slot(t, &key, item_key_cmp, &parent, &link)))
        return old;
    rb_link_node(n, parent, link);
    rb_insert_color(t, n);
    return NULL;
}

/* xorshift64*: the same sequence on every run and every libc (seed != 0). */
static inline uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static inline void shuffle(int *a, int n, uint64_t seed)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rng_next(&seed) % (uint64_t)(i + 1));
        int tmp = a[i];

        a[i] = a[j];
        a[j] = tmp;
    }
}

/* Called after every step of the long runs: ck_abort_msg() only on failure
 * keeps check's per-assertion bookkeeping out of the hot loop. */
#define assert_valid(t) do {                                            \
        const char *err_ = rb_check(t, item_cmp);                       \
        if (err_)                                                       \
            ck_abort_msg("rb_check: %s", err_);                         \
    } while (0)

#define assert_check(t, want) do {                                      \
        const char *err_ = rb_check(t, item_cmp);                       \
        ck_assert_msg(err_ != NULL, "rb_check passed, wanted \"%s\"", want); \
        ck_assert_str_eq(err_, want);                                   \
    } while (0)

/* Writes the keys met by rb_first/rb_next into out (up to max) and returns
 * how many nodes the traversal passed (it stops counting past max). */
static inline size_t inorder_keys(const struct rb_tree *t, int *out, size_t max)
{
    size_t n = 0;

    for (const struct rb_node *p = rb_first(t); p && n <= max; p = rb_next(p)) {
        if (n < max)
            out[n] = key_of(p);
        n++;
    }
    return n;
}

static inline int height(const struct rb_node *n)
{
    if (!n)
        return 0;
    int l = height(n->left), r = height(n->right);
    return 1 + (l > r ? l : r);
}

/* A red-black tree of n nodes is at most 2*log2(n+1) high: 2^h <= (n+1)^2. */
static inline void assert_balanced(const struct rb_tree *t)
{
    int h = height(t->root);
    uint64_t n1 = t->count + 1;

    ck_assert_int_lt(h, 64);
    ck_assert_msg((UINT64_C(1) << h) <= n1 * n1,
                  "height %d too large for %zu nodes", h, t->count);
}

/* Inserts items[0..n-1] with keys 10, 20, ..., 10*n in a shuffled order. */
static inline void build_spaced(struct rb_tree *t, struct item *items, int n,
                                uint64_t seed)
{
    int order[256];

    ck_assert_int_le(n, 256);
    rb_init(t);
    for (int i = 0; i < n; i++)
        order[i] = i;
    shuffle(order, n, seed);
    for (int i = 0; i < n; i++) {
        struct item *it = &items[order[i]];

        it->key = 10 * (order[i] + 1);
        ck_assert_ptr_null(insert_node(t, &it->node));
    }
    ck_assert_uint_eq(t->count, (size_t)n);
    assert_valid(t);
}

#endif
