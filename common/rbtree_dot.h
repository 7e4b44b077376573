/* rbtree_dot.h -- the top levels of a red-black tree (rbtree.h) drawn as
 * Graphviz DOT, with the nodes that break a rule of the tree marked. Like
 * the tree, it knows nothing of what the nodes hold and takes no lock: the
 * caller names each node (label) and takes each line of the drawing (out),
 * and holds the tree still while it runs.
 *
 * The drawing, one statement per line (render it with `dot -Tsvg`):
 *   - each node within depth levels of the root, filled red or black, with
 *     its label in white; left child before right (ordering=out);
 *   - for each child cut off by the depth bound, a dashed box "+ N more":
 *     the nodes hidden below the cut, or "+ ? more" when they cannot be
 *     counted (a corrupted subtree: a wrong parent link, a cycle, more
 *     nodes than the tree's count);
 *   - with nil_leaves, each NULL child of a drawn node as a small black
 *     "nil" box: the black leaves of rule 3, which also keep a lone child
 *     on its own side;
 *   - with cmp, every node rb_check_faults() blames gets a thick orange
 *     border, and the rules it breaks as its xlabel and tooltip; a cut box
 *     with faults below it says "below: RULE"; a node reached a second way
 *     (a cycle, a shared child) is drawn once, and the second link to it is
 *     an orange edge "again"; the graph's label names every rule broken,
 *     the first being what rb_check() says.
 *
 * Cost: the drawing is bounded by the depth (at most 2^depth - 1 nodes and
 * as many boxes); counting the hidden nodes and checking walk the whole
 * tree once each, each walk bounded by count + 1 nodes and RB_MAX_DEPTH
 * levels, so a corrupted tree (a cycle included) costs no more.
 */
#ifndef SSN_RBTREE_DOT_H
#define SSN_RBTREE_DOT_H

#include <stddef.h>
#include "rbtree.h"

#define RB_DOT_MAX_DEPTH 10     /* most levels drawn: 1023 nodes */
#define RB_DOT_LABEL_MAX 160    /* a label's bytes, its NUL included */

/* Writes n's name, plain text NUL-terminated, into buf (size bytes). It is
 * escaped for DOT by the caller; control characters become '?'. */
typedef void (*rb_dot_label_fn)(const struct rb_node *n, char *buf,
                                size_t size);

/* Takes one line of DOT (len bytes, '\n' included). Returns 0, or non-zero
 * to stop the drawing (rb_dot_write returns that value). */
typedef int (*rb_dot_out_fn)(void *arg, const char *line, size_t len);

struct rb_dot {
    int depth;                  /* levels to draw, 1..RB_DOT_MAX_DEPTH */
    int nil_leaves;             /* draw NULL children of drawn nodes */
    rb_cmp_fn cmp;              /* the tree's order; NULL: no checking */
    rb_dot_label_fn label;      /* NULL: nodes have empty labels */
    rb_dot_out_fn out;          /* takes every line */
    void *arg;                  /* out's */
};

/* Draws t as d says. Allocates one table of 2^(depth+1) slots (48 KiB at
 * the most) and frees it before returning. Returns 0; -EINVAL for a depth
 * out of range or no out; -ENOMEM (before any line is written); or what
 * out returned when it stopped the drawing (the lines so far are then
 * an incomplete graph). Reads every link once, so a tree changed under it
 * gives a meaningless drawing but a bounded one. */
int rb_dot_write(const struct rb_tree *t, const struct rb_dot *d);

#endif
