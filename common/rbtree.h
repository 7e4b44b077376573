/* rbtree.h -- an intrusive red-black tree that never allocates and never locks.
 *
 * Embed a struct rb_node in your record and give the tree a comparator over
 * two nodes (use container_of/RB_ENTRY to get back to the record). Lookups
 * take a probe: a record of the same type filled with the key fields only.
 * Callers serialise access themselves (see server/lockmode.c).
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

/* Returns <0, 0 or >0 as a sorts before, equal to or after b. */
typedef int (*rb_cmp_fn)(const struct rb_node *a, const struct rb_node *b);

/* Called, when set, inside insert and erase between finding the place and
 * relinking: the race window of the classroom lab. NULL in normal runs. */
typedef void (*rb_pause_fn)(void *arg);

struct rb_tree {
    struct rb_node *root;
    size_t count;               /* nodes linked into the tree */
    rb_cmp_fn cmp;
    rb_pause_fn pause;          /* NULL unless --race-window is set */
    void *pause_arg;
};

/* Deepest tree rb_check() will walk: a valid tree of 2^63 nodes is lower. */
#define RB_MAX_DEPTH 128

#define RB_ENTRY(ptr, type, member) \
    ((type *)((char *)(ptr) - offsetof(type, member)))

void rb_init(struct rb_tree *t, rb_cmp_fn cmp);

/* Links n into the tree. Returns NULL when inserted, or the node already in
 * the tree that compares equal (the tree is then unchanged and n untouched). */
struct rb_node *rb_insert(struct rb_tree *t, struct rb_node *n);

/* Returns the node equal to probe, or NULL. */
struct rb_node *rb_find(const struct rb_tree *t, const struct rb_node *probe);

/* Unlinks n, which must be in t. The caller still owns n and frees it. */
void rb_erase(struct rb_tree *t, struct rb_node *n);

/* In-order traversal: first node, and the node after n (NULL at the end). */
struct rb_node *rb_first(const struct rb_tree *t);
struct rb_node *rb_next(const struct rb_node *n);

/* Checks every invariant: parent links, BST order (strictly increasing in
 * order), root black, no red node with a red child, equal black height, depth
 * within RB_MAX_DEPTH and count matching the nodes reached. Returns NULL when
 * all hold, otherwise a static string naming the first broken one:
 * "order violated", "root is red", "red node with red child",
 * "black height differs", "parent link broken", "tree too deep or cyclic",
 * "count mismatch". Never loops forever on a corrupted tree. */
const char *rb_check(const struct rb_tree *t);

#endif
