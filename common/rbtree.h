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

/* In-order traversal: first node, last node, and the node after n (NULL
 * at the end). */
struct rb_node *rb_first(const struct rb_tree *t);
struct rb_node *rb_last(const struct rb_tree *t);
struct rb_node *rb_next(const struct rb_node *n);
struct rb_node *rb_prev(const struct rb_node *n);   /* NULL at the start */

/* Checks every invariant: parent links, order by cmp (strictly increasing
 * in order), root black, no red node with a red child, equal black height,
 * depth within RB_MAX_DEPTH and count matching the nodes reached. Returns
 * NULL when all hold, otherwise a static string naming the first broken
 * one: "order violated", "root is red", "red node with red child",
 * "black height differs", "parent link broken", "tree too deep or cyclic",
 * "count mismatch". Never loops forever on a corrupted tree. */
const char *rb_check(const struct rb_tree *t, rb_cmp_fn cmp);

/* The rules rb_check() names, for callers that want a number. */
enum rb_rule {
    RB_RULE_ORDER,              /* "order violated" */
    RB_RULE_ROOT_RED,           /* "root is red" */
    RB_RULE_RED_RED,            /* "red node with red child" */
    RB_RULE_BLACK_HEIGHT,       /* "black height differs" */
    RB_RULE_PARENT_LINK,        /* "parent link broken" */
    RB_RULE_CYCLE,              /* "tree too deep or cyclic" */
    RB_RULE_COUNT,              /* "count mismatch" */
    RB_RULES                    /* how many there are */
};

/* rb_check()'s string for rule (a static string), or NULL if out of range. */
const char *rb_rule_name(enum rb_rule rule);

/* One broken rule and the node that breaks it, as rb_check_faults() found
 * it. path and node are only valid during the callback. */
struct rb_fault {
    enum rb_rule rule;
    const char *what;           /* rb_rule_name(rule) */
    const struct rb_node *node; /* NULL: the tree as a whole (count) */
    int depth;                  /* node's depth as walked, root 1; 0 if NULL */
    const struct rb_node *const *path;  /* path[0 .. depth-2]: node's
                                   ancestors as walked, the root first */
};

/* Called for each fault; returns 0 to go on, non-zero to stop the walk. */
typedef int (*rb_fault_fn)(const struct rb_fault *f, void *arg);

/* rb_check() that goes on past the first broken rule and calls fn(f, arg)
 * for each node that breaks one:
 *   order violated           the node outside the range its ancestors
 *                            allow (the misplaced one, not its neighbour)
 *   root is red              the root
 *   red node with red child  the red parent, then the red child
 *   black height differs     the node whose two subtrees' black heights
 *                            differ (not its ancestors: a subtree with a
 *                            fault has no black height to compare)
 *   parent link broken       the node whose parent pointer is wrong
 *   tree too deep or cyclic  the node whose child link points back to one
 *                            of its ancestors (or itself), or the node
 *                            found deeper than RB_MAX_DEPTH
 *   count mismatch           NULL: the tree as a whole
 * A node may be reported more than once. The walk is bounded as
 * rb_check's is (depth RB_MAX_DEPTH, count + 1 nodes in order; it stops at
 * the count bound) and costs at most three cmp calls per node. Returns
 * exactly what rb_check(t, cmp) returns, whatever fn does: once fn returns
 * non-zero it is not called again, and the walk goes on only as far as
 * rb_check's would. With fn NULL it is rb_check(). */
const char *rb_check_faults(const struct rb_tree *t, rb_cmp_fn cmp,
                            rb_fault_fn fn, void *arg);

#endif
