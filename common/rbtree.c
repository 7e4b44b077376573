/* rbtree.c -- the intrusive red-black tree declared in rbtree.h: insert,
 * find, erase and in-order traversal in O(log n); the checker for the
 * invariants is rbtree_check.c's. It never allocates and never locks:
 * callers serialise access, and a caller that does not (a deliberately racy
 * one) gets a corrupted tree on which rb_check() must still return.
 *
 * The rules (rbtree.h), with NULL children counted as black leaves:
 *   1. every node is red or black; the root is black;
 *   2. a red node has no red child;
 *   3. every path from a node down to a NULL leaf crosses the same number of
 *      black nodes.
 * Insert breaks at most rule 2 (the new node is red) and erase at most rule 3
 * (a black node leaves); the fix-ups below restore them with O(1) rotations
 * and O(log n) recolourings, walking up the parent pointers.
 *
 * The case diagrams use the convention of Linux lib/rbtree.c: lower case is
 * red, upper case is black, (x) is either colour. Each case is drawn for
 * the left side; the right side is its mirror image.
 */
#include "rbtree.h"

static int is_red(const struct rb_node *n)
{
    return n && n->red;         /* NULL leaves are black */
}

void rb_init(struct rb_tree *t)
{
    *t = (struct rb_tree)RB_TREE_INIT;
}

/* Makes parent's link to old (or the root, when parent is NULL) point at
 * new. Does not touch new->parent. */
static void replace_child(struct rb_tree *t, struct rb_node *parent,
                          struct rb_node *old, struct rb_node *new)
{
    if (!parent)
        t->root = new;
    else if (parent->left == old)
        parent->left = new;
    else
        parent->right = new;
}

/* rotate_left(x) turns the left picture into the right one; rotate_right(y)
 * does the reverse. In-order sequence and the other nodes are unchanged.
 *      X                Y
 *     / \              / \
 *    a   Y    -->     X   c
 *       / \          / \
 *      b   c        a   b
 */
static void rotate_left(struct rb_tree *t, struct rb_node *x)
{
    struct rb_node *y = x->right;

    x->right = y->left;
    if (y->left)
        y->left->parent = x;
    y->parent = x->parent;
    replace_child(t, x->parent, x, y);
    y->left = x;
    x->parent = y;
}

static void rotate_right(struct rb_tree *t, struct rb_node *x)
{
    struct rb_node *y = x->left;

    x->left = y->right;
    if (y->right)
        y->right->parent = x;
    y->parent = x->parent;
    replace_child(t, x->parent, x, y);
    y->right = x;
    x->parent = y;
}

/* n was just linked in red. Only rule 2 can be broken, between n and its
 * parent p; a red p is never the root, so the grandparent G exists. */
static void insert_fixup(struct rb_tree *t, struct rb_node *n)
{
    struct rb_node *p, *g, *u;

    while ((p = n->parent) && p->red) {
        g = p->parent;
        if (p == g->left) {
            u = g->right;
            if (is_red(u)) {
                /* Case 1: red uncle. Paint p and u black, g red:
                 * black heights are kept, but g may now have a red
                 * parent, so go on from g. */
                p->red = u->red = 0;
                g->red = 1;
                n = g;
                continue;
            }
            if (n == p->right) {
                /* Case 2: black uncle, n an inner child. Rotate at p to
                 * make it an outer child, then go on with case 3.
                 *      G             G
                 *     / \           / \
                 *    p   U  -->    n   U
                 *     \           /
                 *      n         p
                 */
                rotate_left(t, p);
                n = p;
                p = n->parent;
            }
            /* Case 3: black uncle, n an outer child. Rotate at g; the
             * subtree's top is black again, so we are done.
             *        G           P
             *       / \         / \
             *      p   U  -->  n   g
             *     /                 \
             *    n                   U
             */
            p->red = 0;
            g->red = 1;
            rotate_right(t, g);
        } else {
            u = g->left;
            if (is_red(u)) {            /* case 1, mirrored */
                p->red = u->red = 0;
                g->red = 1;
                n = g;
                continue;
            }
            if (n == p->left) {         /* case 2, mirrored */
                rotate_right(t, p);
                n = p;
                p = n->parent;
            }
            p->red = 0;                 /* case 3, mirrored */
            g->red = 1;
            rotate_left(t, g);
        }
    }
    t->root->red = 0;           /* case 1 may have painted the root red */
}

void rb_insert_color(struct rb_tree *t, struct rb_node *n)
{
    insert_fixup(t, n);
    t->count++;
}

struct rb_node *rb_find(const struct rb_tree *t, const void *key,
                        rb_key_cmp_fn cmp)
{
    struct rb_node *n = t->root;

    while (n) {
        int c = cmp(key, n);

        if (c < 0)
            n = n->left;
        else if (c > 0)
            n = n->right;
        else
            return n;
    }
    return NULL;
}

struct rb_node *rb_find_slot(struct rb_tree *t, const void *key,
                             rb_key_cmp_fn cmp, struct rb_node **parent,
                             struct rb_node ***link)
{
    struct rb_node *p = NULL, **l = &t->root;

    while (*l) {
        /* Both children are asked for before the comparison reads this
         * node's key, which may sit on a second cache line: the misses
         * overlap (+4 % to +7 % inserts/s, docs/PERFORMANCE.md). */
        __builtin_prefetch((*l)->left);
        __builtin_prefetch((*l)->right);
        int c = cmp(key, *l);

        p = *l;
        if (c < 0)
            l = &p->left;
        else if (c > 0)
            l = &p->right;
        else
            return p;
    }
    *parent = p;
    *link = l;
    return NULL;
}

/* A black node was removed from above x (x may be NULL, hence the separate
 * parent), so every path through x is one black short (rule 3). If x is red,
 * painting it black repays the debt; otherwise the debt moves up or is
 * settled by rotations. In the diagrams x is N, its sibling is S. */
static void erase_fixup(struct rb_tree *t, struct rb_node *x,
                        struct rb_node *parent)
{
    struct rb_node *s;

    while (x != t->root && !is_red(x)) {
        if (x == parent->left) {
            /* s exists: its side has at least one more black than x's. */
            s = parent->right;
            if (s->red) {
                /* Case 1: red sibling. Rotate at the parent so that N gets
                 * a black sibling (sl), then go on with case 2, 3 or 4.
                 *     P               S
                 *    / \             / \
                 *   N   s    -->    p   Sr
                 *      / \         / \
                 *     Sl  Sr      N   Sl
                 */
                s->red = 0;
                parent->red = 1;
                rotate_left(t, parent);
                s = parent->right;
            }
            if (!is_red(s->left) && !is_red(s->right)) {
                /* Case 2: black sibling with black children. Paint S red:
                 * now both sides of p are short, so the debt moves up to
                 * p (and is paid at once if p is red). */
                s->red = 1;
                x = parent;
                parent = x->parent;
                continue;
            }
            if (!is_red(s->right)) {
                /* Case 3: black sibling, inner nephew red, outer black.
                 * Rotate at s to make the red nephew the outer one.
                 *    (p)           (p)
                 *    / \           / \
                 *   N   S    -->  N   Sl
                 *      / \             \
                 *     sl  Sr            s
                 *                        \
                 *                         Sr
                 */
                s->left->red = 0;
                s->red = 1;
                rotate_right(t, s);
                s = parent->right;
            }
            /* Case 4: black sibling, outer nephew red. Rotate at p: N gains
             * a black ancestor (P), s's side keeps its count. Done.
             *      (p)             (s)
             *      / \             / \
             *     N   S     -->   P   Sr
             *        / \         / \
             *      (sl) sr      N  (sl)
             */
            s->red = parent->red;
            parent->red = 0;
            s->right->red = 0;
            rotate_left(t, parent);
            x = t->root;
        } else {
            s = parent->left;
            if (s->red) {                               /* case 1 */
                s->red = 0;
                parent->red = 1;
                rotate_right(t, parent);
                s = parent->left;
            }
            if (!is_red(s->left) && !is_red(s->right)) { /* case 2 */
                s->red = 1;
                x = parent;
                parent = x->parent;
                continue;
            }
            if (!is_red(s->left)) {                     /* case 3 */
                s->right->red = 0;
                s->red = 1;
                rotate_left(t, s);
                s = parent->left;
            }
            s->red = parent->red;                       /* case 4 */
            parent->red = 0;
            s->left->red = 0;
            rotate_right(t, parent);
            x = t->root;
        }
    }
    if (x)
        x->red = 0;
}

void rb_erase(struct rb_tree *t, struct rb_node *n)
{
    struct rb_node *succ = NULL, *child, *parent;
    int removed_black;

    /* With two children, n's in-order successor (leftmost of the right
     * subtree, which has no left child) takes n's place and colour; the
     * node physically removed from its spot is then the successor. */
    if (n->left && n->right)
        for (succ = n->right; succ->left; succ = succ->left)
            ;
    if (!succ) {
        /* Zero or one child: splice n out. */
        child = n->left ? n->left : n->right;
        parent = n->parent;
        removed_black = !n->red;
        if (child)
            child->parent = parent;
        replace_child(t, parent, n, child);
    } else {
        child = succ->right;
        removed_black = !succ->red;
        if (succ->parent == n) {
            parent = succ;      /* child stays succ's right child */
        } else {
            parent = succ->parent;
            parent->left = child;
            if (child)
                child->parent = parent;
            succ->right = n->right;
            n->right->parent = succ;
        }
        succ->left = n->left;
        n->left->parent = succ;
        succ->parent = n->parent;
        replace_child(t, n->parent, n, succ);
        succ->red = n->red;
    }
    if (removed_black)
        erase_fixup(t, child, parent);
    t->count--;
    n->parent = n->left = n->right = NULL;  /* stale use finds nothing */
}

struct rb_node *rb_first(const struct rb_tree *t)
{
    struct rb_node *n;

    for (n = t->root; n && n->left; n = n->left)
        ;
    return n;
}

struct rb_node *rb_last(const struct rb_tree *t)
{
    struct rb_node *n;

    for (n = t->root; n && n->right; n = n->right)
        ;
    return n;
}

struct rb_node *rb_next(const struct rb_node *n)
{
    struct rb_node *p;

    if (n->right) {
        /* The leftmost node of the right subtree. */
        for (p = n->right; p->left; p = p->left)
            ;
        return p;
    }
    /* Otherwise the first ancestor of which n is in the left subtree. */
    while ((p = n->parent) && n == p->right)
        n = p;
    return p;
}

struct rb_node *rb_prev(const struct rb_node *n)
{
    struct rb_node *p;

    if (n->left) {
        /* The rightmost node of the left subtree. */
        for (p = n->left; p->right; p = p->right)
            ;
        return p;
    }
    /* Otherwise the first ancestor of which n is in the right subtree. */
    while ((p = n->parent) && n == p->left)
        n = p;
    return p;
}
