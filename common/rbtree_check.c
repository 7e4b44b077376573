/* rbtree_check.c -- the checker of rbtree.h: walks a tree that may be
 * corrupted (a racy caller's) and names the first broken rule (rb_check),
 * or reports every fault to a callback (rb_check_faults, which TREE draws).
 * Bounded by depth and count, so a cyclic or torn tree still returns.
 */
#include "rbtree.h"

static const char *const rule_names[RB_RULES] = {   /* by enum rb_rule */
    "order violated", "root is red", "red node with red child",
    "black height differs", "parent link broken", "tree too deep or cyclic",
    "count mismatch",
};

const char *rb_rule_name(enum rb_rule rule)
{
    return (unsigned)rule < RB_RULES ? rule_names[rule] : NULL;
}

/* A recursive in-order walk that no corruption can make loop or overflow
 * the stack: it goes at most RB_MAX_DEPTH deep ("tree too deep or cyclic")
 * and passes at most count + 1 nodes in order ("count mismatch"). A cycle is
 * caught where it closes, before either bound: a child whose parent pointer
 * does not name the node we came from is "tree too deep or cyclic" when it
 * is already on the path from the root (a link back to an ancestor or to
 * itself), otherwise "parent link broken" (as is a root with a parent).
 * When several rules are broken, the first met is reported: "root is red"
 * first; on the way down the depth, the parent link, a red pair; in order
 * "order violated", then the count bound; on the way up "black height
 * differs"; at the end "count mismatch" if fewer than count nodes were seen.
 * Links are read once, so a tree changing under the walk (racy mode) gives
 * a meaningless answer but still a bounded walk.
 * rb_check_faults walks the same way (its first fault is rb_check's answer)
 * but goes on, past a wrong parent link, not into a cycle. A subtree with a
 * fault has no black height (0), lest all its ancestors be blamed; and each
 * node is checked against its ancestors' range, to blame the misplaced. */
struct rb_walk {
    rb_cmp_fn cmp;
    rb_fault_fn fn;                     /* NULL: stop at the first fault */
    void *arg;
    size_t count;                       /* t->count, read once */
    size_t seen;                        /* nodes passed in order */
    const struct rb_node *prev;         /* the last of them */
    const struct rb_node *path[RB_MAX_DEPTH]; /* root .. current node */
    const char *err;                    /* the first rule found broken */
    int stop;                           /* the walk is over */
};

/* Tells fn of n (NULL: the whole tree). 1 when the walk must stop. */
static int report(struct rb_walk *w, enum rb_rule rule,
                  const struct rb_node *n, int depth)
{
    struct rb_fault f = { rule, rule_names[rule], n, depth, w->path };

    if (w->fn && w->fn(&f, w->arg))
        w->fn = NULL;           /* no more reports: finish as rb_check */
    return w->stop = !w->fn && w->err;
}

/* rule is broken at n; the first one is the answer. 1: stop the walk. */
static int broken(struct rb_walk *w, enum rb_rule rule,
                  const struct rb_node *n, int depth)
{
    if (!w->err)
        w->err = rule_names[rule];
    return report(w, rule, n, depth);
}

/* n's visit in order: the order checks and the count bound. n must sort
 * after lo and before hi (NULL: no bound). 1 when the walk must stop. */
static int visit(struct rb_walk *w, const struct rb_node *n, int depth,
                 const struct rb_node *lo, const struct rb_node *hi)
{
    if (w->prev && w->cmp(w->prev, n) >= 0 && !w->err)
        w->err = rule_names[RB_RULE_ORDER];
    if (!w->fn && w->err)
        return w->stop = 1;
    if (w->fn && ((lo && w->cmp(lo, n) >= 0) || (hi && w->cmp(n, hi) >= 0))
        && report(w, RB_RULE_ORDER, n, depth))
        return 1;
    if (++w->seen > w->count) {
        broken(w, RB_RULE_COUNT, NULL, 0);
        return w->stop = 1;     /* the walk's bound: it ends here */
    }
    w->prev = n;
    return 0;
}

/* Checks the subtree at n, entered from parent at depth (root = 1). Returns
 * its black height with the NULL leaves, or 0 (a fault inside, or stop). */
static int check_subtree(struct rb_walk *w, const struct rb_node *n,
                         const struct rb_node *parent, int depth,
                         const struct rb_node *lo, const struct rb_node *hi)
{
    const struct rb_node *left, *right;
    int lh, rh, red;

    if (!n)
        return 1;
    if (depth > RB_MAX_DEPTH) {
        broken(w, RB_RULE_CYCLE, n, depth);
        return 0;
    }
    if (n->parent != parent) {
        for (int i = 0; i < depth - 1; i++)
            if (w->path[i] == n) {      /* parent links back: a cycle */
                broken(w, RB_RULE_CYCLE, parent, depth - 1);
                return 0;
            }
        if (broken(w, RB_RULE_PARENT_LINK, n, depth))
            return 0;
    }
    red = n->red;
    if (red && parent && parent->red &&
        (broken(w, RB_RULE_RED_RED, parent, depth - 1) ||
         report(w, RB_RULE_RED_RED, n, depth)))
        return 0;
    w->path[depth - 1] = n;
    left = n->left;
    right = n->right;
    lh = check_subtree(w, left, n, depth + 1, lo, n);
    if (w->stop || visit(w, n, depth, lo, hi))
        return 0;
    rh = check_subtree(w, right, n, depth + 1, n, hi);
    if (w->stop || !lh || !rh)
        return 0;
    if (lh != rh) {
        broken(w, RB_RULE_BLACK_HEIGHT, n, depth);
        return 0;
    }
    return lh + !red;
}

const char *rb_check_faults(const struct rb_tree *t, rb_cmp_fn cmp,
                            rb_fault_fn fn, void *arg)
{
    struct rb_walk w = { .cmp = cmp, .fn = fn, .arg = arg, .count = t->count };
    const struct rb_node *root = t->root;

    if (root && root->red && broken(&w, RB_RULE_ROOT_RED, root, 1))
        return w.err;
    check_subtree(&w, root, NULL, 1, NULL, NULL);
    if (!w.stop && w.seen != w.count)
        broken(&w, RB_RULE_COUNT, NULL, 0);
    return w.err;
}

const char *rb_check(const struct rb_tree *t, rb_cmp_fn cmp)
{
    return rb_check_faults(t, cmp, NULL, NULL);
}
