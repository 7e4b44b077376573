/* rbtree.h -- an intrusive red-black tree that never allocates, never locks
 * and knows nothing of what it holds, in the style of Linux's
 * include/linux/rbtree.h.
 *
 * Embed a struct rb_node in your record. The tree keeps no comparator: the
 * caller searches (with rb_find/rb_find_slot and a key comparator of its
 * own, or by hand), links the new node where the search ended with
 * rb_link_node, and then lets rb_insert_color recolour and rotate. Lookups
 * take a key, never a probe record. Callers serialise access themselves.
 *
 * The rules kept after every insert and erase:
 *   1. every node is red or black; the root is black;
 *   2. a red node has no red child;
 *   3. every path from a node down to a leaf crosses the same number of
 *      black nodes (the black height);
 * so the height is at most 2*log2(n+1) and every operation is O(log n).
 */
#ifndef SSN_RBTREE_H
#define SSN_RBTREE_H

#include <stddef.h>

struct rb_node {
    struct rb_node *parent;
    struct rb_node *left;
    struct rb_node *right;
    int red;                    /* 1 red, 0 black */
};

struct rb_tree {
    struct rb_node *root;
    size_t count;               /* nodes linked into the tree */
};

#define RB_TREE_INIT { NULL, 0 }

/* Deepest tree rb_check() will walk: a valid tree of 2^63 nodes is lower. */
#define RB_MAX_DEPTH 128

#define RB_ENTRY(ptr, type, member) \
    ((type *)((char *)(ptr) - offsetof(type, member)))

/* Orders two linked nodes (the checker's order rule): <0, 0 or >0. */
typedef int (*rb_cmp_fn)(const struct rb_node *a, const struct rb_node *b);

/* Compares a search key with a node: <0 when key sorts before n, 0 when
 * equal, >0 after. The key's type is the caller's business. */
typedef int (*rb_key_cmp_fn)(const void *key, const struct rb_node *n);

void rb_init(struct rb_tree *t);

/* The node equal to key, or NULL. */
struct rb_node *rb_find(const struct rb_tree *t, const void *key,
                        rb_key_cmp_fn cmp);

/* Searches for key. Returns the node equal to it (then *parent and *link
 * are left alone), or NULL with *parent and *link naming the place a node
 * with that key belongs: pass them to rb_link_node. The place stays right
 * only while nobody else changes the tree. */
struct rb_node *rb_find_slot(struct rb_tree *t, const void *key,
                             rb_key_cmp_fn cmp, struct rb_node **parent,
                             struct rb_node ***link);

/* Links n, red, as a leaf at the place rb_find_slot (or the caller's own
 * search) found. The tree may break rule 2 until rb_insert_color(t, n). */
static inline void rb_link_node(struct rb_node *n, struct rb_node *parent,
                                struct rb_node **link)
{
    n->parent = parent;
    n->left = n->right = NULL;
    n->red = 1;
    *link = n;
}

/* Restores the rules after rb_link_node(n, ...) and counts n in. */
void rb_insert_color(struct rb_tree *t, struct rb_node *n);

/* Unlinks n, which must be in t. The caller still owns n and frees it. */
void rb_erase(struct rb_tree *t, struct rb_node *n);

/* In-order traversal: first node, and the node after n (NULL at the end). */
struct rb_node *rb_first(const struct rb_tree *t);
struct rb_node *rb_next(const struct rb_node *n);

/* Checks every invariant: parent links, order by cmp (strictly increasing
 * in order), root black, no red node with a red child, equal black height,
 * depth within RB_MAX_DEPTH and count matching the nodes reached. Returns
 * NULL when all hold, otherwise a static string naming the first broken
 * one: "order violated", "root is red", "red node with red child",
 * "black height differs", "parent link broken", "tree too deep or cyclic",
 * "count mismatch". Never loops forever on a corrupted tree. */
const char *rb_check(const struct rb_tree *t, rb_cmp_fn cmp);

#endif
