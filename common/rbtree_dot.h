/* rbtree_dot.h -- the top levels of a red-black tree (rbtree.h) drawn as
 * Graphviz DOT, with the nodes that break a rule of the tree marked. Like
 * the tree, it knows nothing of what the nodes hold and takes no lock: the
 * caller names each node (label) and takes each line of the drawing (out),
 * and holds the tree still while it is read.
 *
 * The drawing, one statement per line (render it with `dot -Tsvg`):
 *   - each node within depth levels of the root, filled red or black, with
 *     its label in white; left child before right (ordering=out);
 *   - for each child cut off by the depth bound, a dashed box "+N more" (on
 *     two lines): the nodes hidden below the cut, or "+? more" when they
 *     cannot be
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
 * Two phases, so that a caller that must hold a lock to keep the tree still
 * holds it only while the tree is read, not while the lines are formatted
 * and handed out:
 *
 *     snap = rb_dot_snapshot_new(depth);       allocates; no tree access
 *     (hold the tree still)
 *     rb_dot_snapshot_take(t, &d, snap);       reads the tree; no allocation
 *     (let the tree go)
 *     rb_dot_snapshot_write(snap, &d);         formats; no tree access
 *     rb_dot_snapshot_free(snap);
 *
 * rb_dot_write does all four in one call.
 *
 * Cost of the take: at most 2^depth - 1 labels made and 2^(depth+1) slots
 * filled; counting the hidden nodes and checking walk the whole tree once
 * each, each walk bounded by count + 1 nodes and RB_MAX_DEPTH levels, so a
 * corrupted tree (a cycle included) costs no more. The write is bounded by
 * the depth alone.
 */
#ifndef SSN_RBTREE_DOT_H
#define SSN_RBTREE_DOT_H

#include <stddef.h>
#include "rbtree.h"

#define RB_DOT_MAX_DEPTH 10     /* most levels drawn: 1023 nodes */
#define RB_DOT_LABEL_MAX 160    /* a label's bytes, its NUL included */

/* Writes n's name, plain text NUL-terminated, into buf (size bytes). It is
 * escaped for DOT by the caller: a newline is a line break in the drawing,
 * other control characters become '?'. */
typedef void (*rb_dot_label_fn)(const struct rb_node *n, char *buf,
                                size_t size);

/* Takes one line of DOT (len bytes, '\n' included). Returns 0, or non-zero
 * to stop the drawing (rb_dot_snapshot_write and rb_dot_write return that
 * value). */
typedef int (*rb_dot_out_fn)(void *arg, const char *line, size_t len);

/* What to draw and where the lines go. rb_dot_snapshot_take reads depth,
 * cmp and label; rb_dot_snapshot_write reads nil_leaves, out and arg. */
struct rb_dot {
    int depth;                  /* levels to draw, 1..RB_DOT_MAX_DEPTH */
    int nil_leaves;             /* draw NULL children of drawn nodes */
    rb_cmp_fn cmp;              /* the tree's order; NULL: no checking */
    rb_dot_label_fn label;      /* NULL: nodes have empty labels */
    rb_dot_out_fn out;          /* takes every line */
    void *arg;                  /* out's */
};

/* What a drawing needs of the tree, copied out of it: each drawn node's
 * label and colour, which children are nil, cut off or reached again, the
 * counts under the cuts and the rules broken. It holds no pointer into the
 * tree once taken, so it may outlive the tree's next change, or the tree. */
struct rb_dot_snapshot;

/* A snapshot for drawings of up to depth levels: one allocation of
 * 2^(depth+1) slots and 2^depth - 1 labels of RB_DOT_LABEL_MAX bytes
 * (208 KiB at depth 10, 6.4 KiB at 5). Returns it, or NULL with errno
 * EINVAL (depth out of 1..RB_DOT_MAX_DEPTH) or ENOMEM. The caller frees it
 * with rb_dot_snapshot_free, and may take and write it any number of
 * times. */
struct rb_dot_snapshot *rb_dot_snapshot_new(int depth);

/* Frees snap (NULL is fine). */
void rb_dot_snapshot_free(struct rb_dot_snapshot *snap);

/* Copies the top d->depth levels of t into snap, calling d->label for each
 * drawn node, counting the hidden nodes and, with d->cmp, checking t
 * (rb_check_faults). The caller holds t still. Allocates nothing and
 * hands out no line. Returns 0, or -EINVAL (snap unchanged) when d->depth is
 * below 1 or above the depth snap was made for. Reads every link once, so
 * a tree changed under it gives a meaningless snapshot but a bounded one. */
int rb_dot_snapshot_take(const struct rb_tree *t, const struct rb_dot *d,
                         struct rb_dot_snapshot *snap);

/* Writes the drawing of what snap holds through d->out, line by line, the
 * same bytes rb_dot_write gives for the tree snap was taken from. Touches
 * no tree. Returns 0; -EINVAL when snap was never taken or d has no out;
 * or what out returned when it stopped the drawing (the lines so far are
 * then an incomplete graph). */
int rb_dot_snapshot_write(const struct rb_dot_snapshot *snap,
                          const struct rb_dot *d);

/* Draws t as d says: a snapshot made, taken, written and freed. Returns
 * 0; -EINVAL for a depth out of range or no out; -ENOMEM (before any line
 * is written); or what out returned when it stopped the drawing. The
 * caller holds t still throughout: use the phases to hold it less. */
int rb_dot_write(const struct rb_tree *t, const struct rb_dot *d);

#endif
