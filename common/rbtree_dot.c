/* rbtree_dot.c -- the top levels of a red-black tree as Graphviz DOT, its
 * faults marked (rbtree_dot.h).
 *
 * The take copies the top levels into the snapshot's table, laid out as a
 * binary heap: the root in slot 1, the children of slot i in 2i and 2i+1,
 * and the slots from 2^depth on hold the children cut off by the bound.
 * Each link is read once, while copying; a node met a second time (a
 * cycle, a shared child) is not copied again but points at its first slot
 * (alias). The drawn nodes' labels are made then. Then two walks of the
 * tree itself, both bounded by its count and RB_MAX_DEPTH: one counts the
 * nodes under each cut, one finds the faults (rb_check_faults), each placed
 * by following its path, root first, down the table to the node's slot, or
 * to the cut box above it. Last, the node pointers are dropped, leaving
 * only whether a slot holds a node: nothing in a taken snapshot leads back
 * into the tree.
 *
 * The write makes the lines from the table alone, in slot order: so a
 * node's left child is written before its right one, which is what
 * ordering=out keeps apart.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rbtree_dot.h"

#define DOT_LINE_MAX 1024       /* one statement: a label escaped (at most
                                   2 * RB_DOT_LABEL_MAX), the rules twice
                                   (RULES_MAX each) and the attributes */
#define RULES_MAX    192        /* every rule's name, ", "-separated */
#define UNKNOWN      ((size_t)-1)   /* a count that cannot be trusted */

struct slot {
    const struct rb_node *node; /* during the take only: NULL, no child */
    size_t hidden;              /* cut slots: nodes in node's subtree */
    unsigned short alias;       /* node's first slot when met before */
    unsigned char present;      /* a node is here: what the write needs
                                   of node, kept when node is dropped */
    unsigned char red;          /* node's colour, read once */
    unsigned char marks;        /* 1 << rb_rule for each rule broken */
};

struct rb_dot_snapshot {
    int max_depth;              /* the most levels it has room for */
    int depth;                  /* the take's levels; 0: never taken */
    int checked;                /* the take had a cmp */
    size_t count;               /* the tree's count, read once */
    size_t cut;                 /* the first cut slot: 2^depth */
    size_t nslots;              /* 2^(depth + 1) */
    unsigned broken;            /* 1 << rb_rule for every rule broken */
    const char *verdict;        /* what rb_check says: a rule's name */
    char *labels;               /* slot i's at (i - 1) * RB_DOT_LABEL_MAX,
                                   for i in [1, cut) */
    struct slot slot[];         /* [1, nslots); slot[0] unused */
};

static char *label_of(const struct rb_dot_snapshot *snap, size_t i)
{
    return snap->labels + (i - 1) * RB_DOT_LABEL_MAX;
}

struct rb_dot_snapshot *rb_dot_snapshot_new(int depth)
{
    struct rb_dot_snapshot *snap;
    size_t cut, slots_size;

    if (depth < 1 || depth > RB_DOT_MAX_DEPTH) {
        errno = EINVAL;
        return NULL;
    }
    cut = (size_t)1 << depth;
    slots_size = 2 * cut * sizeof(struct slot);
    /* One block: the header, the slots, then the labels (chars, which
     * need no alignment). calloc: a label never made is empty. */
    snap = calloc(1, sizeof(*snap) + slots_size +
                     (cut - 1) * RB_DOT_LABEL_MAX);
    if (!snap)
        return NULL;                    /* errno: ENOMEM */
    snap->max_depth = depth;
    snap->labels = (char *)snap->slot + slots_size;
    return snap;
}

void rb_dot_snapshot_free(struct rb_dot_snapshot *snap)
{
    free(snap);
}

/* ---- the table ------------------------------------------------------- */

/* The slot before `before` where n was copied, or 0. */
static unsigned short first_slot(const struct rb_dot_snapshot *r,
                                 const struct rb_node *n, size_t before)
{
    for (size_t j = 1; j < before; j++)
        if (r->slot[j].node == n && !r->slot[j].alias)
            return (unsigned short)j;
    return 0;
}

/* Copies the top depth levels and the cut children, breadth first. At most
 * 2^(depth+1) slots, each compared with those before it: a million pointer
 * comparisons at depth 10, and no walk that a cycle could prolong. */
static void collect(struct rb_dot_snapshot *r, const struct rb_node *root)
{
    r->slot[1].node = root;
    if (root)
        r->slot[1].red = root->red != 0;
    for (size_t i = 1; i < r->cut; i++) {
        const struct rb_node *n = r->slot[i].node;

        if (!n || r->slot[i].alias)
            continue;
        const struct rb_node *kid[2] = { n->left, n->right };
        for (size_t k = 0; k < 2; k++) {
            struct slot *c = &r->slot[2 * i + k];

            c->node = kid[k];
            if (kid[k]) {
                c->red = kid[k]->red != 0;
                c->alias = first_slot(r, kid[k], 2 * i + k);
            }
        }
    }
}

/* The nodes in n's subtree, n entered from parent at depth; UNKNOWN when
 * they cannot be trusted: a wrong parent link, a shared child, too deep, or
 * more than *budget of them (which counts down). With every parent link
 * right and no node having one child twice, no node is met twice, so the
 * count is exact and the walk cannot loop. */
static size_t count_below(const struct rb_node *n,
                          const struct rb_node *parent, int depth,
                          size_t *budget)
{
    const struct rb_node *left, *right;
    size_t l, r;

    if (!n)
        return 0;
    if (depth > RB_MAX_DEPTH || n->parent != parent || *budget == 0)
        return UNKNOWN;
    left = n->left;
    right = n->right;
    if (left && left == right)
        return UNKNOWN;
    --*budget;
    if ((l = count_below(left, n, depth + 1, budget)) == UNKNOWN ||
        (r = count_below(right, n, depth + 1, budget)) == UNKNOWN)
        return UNKNOWN;
    return l + r + 1;
}

/* Counts every cut subtree, count + 1 nodes at most over all of them. */
static void count_hidden(struct rb_dot_snapshot *r)
{
    size_t budget = r->count + 1;

    for (size_t i = r->cut; i < r->nslots; i++) {
        struct slot *s = &r->slot[i];

        if (s->node && !s->alias)
            s->hidden = count_below(s->node, r->slot[i / 2].node,
                                    r->depth + 1, &budget);
    }
}

/* ---- the faults ------------------------------------------------------ */

static size_t unalias(const struct rb_dot_snapshot *r, size_t i)
{
    return r->slot[i].alias ? r->slot[i].alias : i;
}

/* The k-th node of f's path, root first: f->node itself is the last. */
static const struct rb_node *path_node(const struct rb_fault *f, int k)
{
    return k == f->depth - 1 ? f->node : f->path[k];
}

/* The slot to mark for f: its node's own, or the cut box above it. 0 when
 * the path is not the table's (the tree changed between the walks). */
static size_t place(const struct rb_dot_snapshot *r,
                    const struct rb_fault *f)
{
    size_t i = 1;

    if (r->slot[1].node != path_node(f, 0))
        return 0;
    for (int k = 1; k < f->depth; k++) {
        const struct rb_node *want = path_node(f, k);

        i = unalias(r, i);
        if (2 * i >= r->nslots)
            break;                      /* under a cut box: mark the box */
        if (r->slot[2 * i].node == want)
            i = 2 * i;
        else if (r->slot[2 * i + 1].node == want)
            i = 2 * i + 1;
        else
            return 0;
    }
    return unalias(r, i);
}

/* rb_check_faults' callback: marks the slot, and notes the rule for the
 * graph's label (so a fault that has no slot is still named there). */
static int on_fault(const struct rb_fault *f, void *arg)
{
    struct rb_dot_snapshot *r = arg;
    size_t i = f->node ? place(r, f) : 0;

    r->broken |= 1u << f->rule;
    if (i)
        r->slot[i].marks |= (unsigned char)(1u << f->rule);
    return 0;
}

/* ---- the take -------------------------------------------------------- */

/* Each drawn node's label, in the buffer of its slot, zeroed first: what
 * label leaves unwritten is the end of the string. */
static void make_labels(struct rb_dot_snapshot *r, rb_dot_label_fn label)
{
    for (size_t i = 1; i < r->cut; i++) {
        const struct slot *s = &r->slot[i];
        char *buf = label_of(r, i);

        if (!s->node || s->alias)
            continue;
        memset(buf, 0, RB_DOT_LABEL_MAX);
        if (label) {
            label(s->node, buf, RB_DOT_LABEL_MAX);
            buf[RB_DOT_LABEL_MAX - 1] = '\0';
        }
    }
}

/* Keeps only whether each slot holds a node: the write needs no more. */
static void drop_pointers(struct rb_dot_snapshot *r)
{
    for (size_t i = 1; i < r->nslots; i++) {
        r->slot[i].present = r->slot[i].node != NULL;
        r->slot[i].node = NULL;
    }
}

int rb_dot_snapshot_take(const struct rb_tree *t, const struct rb_dot *d,
                         struct rb_dot_snapshot *snap)
{
    if (d->depth < 1 || d->depth > snap->max_depth)
        return -EINVAL;
    snap->depth = d->depth;
    snap->checked = d->cmp != NULL;
    snap->count = t->count;             /* read once */
    snap->cut = (size_t)1 << d->depth;
    snap->nslots = 2 * snap->cut;
    snap->broken = 0;
    snap->verdict = NULL;
    memset(snap->slot, 0, snap->nslots * sizeof(snap->slot[0]));
    collect(snap, t->root);
    make_labels(snap, d->label);
    count_hidden(snap);
    if (d->cmp)
        snap->verdict = rb_check_faults(t, d->cmp, on_fault, snap);
    drop_pointers(snap);
    return 0;
}

/* ---- the lines ------------------------------------------------------- */

/* One write: the snapshot, where its lines go, and the line being made. */
struct dot_out {
    const struct rb_dot_snapshot *snap;
    const struct rb_dot *d;
    char line[DOT_LINE_MAX];
};

static int emit(struct dot_out *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Formats one line and hands it to out. */
static int emit(struct dot_out *r, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(r->line, sizeof(r->line) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n > sizeof(r->line) - 2)
        n = (int)sizeof(r->line) - 2;   /* cannot happen: DOT_LINE_MAX */
    r->line[n++] = '\n';
    return r->d->out(r->d->arg, r->line, (size_t)n);
}

/* The length of the valid UTF-8 sequence at s, or 0 (Graphviz refuses
 * invalid UTF-8, and names may hold any byte from 0x80 on). */
static size_t utf8_len(const unsigned char *s)
{
    size_t n = *s < 0x80 ? 1 : *s < 0xc2 ? 0 : *s < 0xe0 ? 2
             : *s < 0xf0 ? 3 : *s < 0xf5 ? 4 : 0;

    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* s as the inside of a DOT string in dst (size bytes): quotes and
 * backslashes escaped; control bytes and invalid UTF-8 as '?'. */
static void escape(char *dst, size_t size, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t j = 0, n;

    while (*p && j + 5 <= size) {
        n = utf8_len(p);
        if (*p == '\n') {              /* the label's own line break */
            dst[j++] = '\\';
            dst[j++] = 'n';
            p++;
            continue;
        }
        if (n == 0 || (n == 1 && (*p < ' ' || *p == 0x7f))) {
            dst[j++] = '?';
            p++;
            continue;
        }
        if (*p == '"' || *p == '\\')
            dst[j++] = '\\';
        while (n--)
            dst[j++] = (char)*p++;
    }
    dst[j] = '\0';
}

/* The names of the rules in marks, ", "-separated, into buf. */
static void rule_list(char *buf, size_t size, unsigned marks)
{
    size_t len = 0;

    buf[0] = '\0';
    for (int k = 0; k < RB_RULES && len < size; k++)
        if (marks & (1u << k))
            len += (size_t)snprintf(buf + len, size - len, "%s%s",
                                    len ? ", " : "", rb_rule_name(k));
}

/* The attributes that mark a node or box breaking the rules in marks. */
static void mark_attrs(char *buf, size_t size, unsigned marks,
                       const char *prefix)
{
    char rules[RULES_MAX];

    buf[0] = '\0';
    if (!marks)
        return;
    rule_list(rules, sizeof(rules), marks);
    /* The rules in dark red: an xlabel takes its node's font colour, white
     * on a filled node, and would vanish on the white page. */
    snprintf(buf, size, ", color=orange, penwidth=4, "
             "xlabel=<<font color=\"#b00000\">%s%s</font>>, "
             "tooltip=\"%s%s\"", prefix, rules, prefix, rules);
}

static int emit_node(struct dot_out *r, size_t i)
{
    const struct slot *s = &r->snap->slot[i];
    char label[2 * RB_DOT_LABEL_MAX], marks[2 * RULES_MAX + 96];

    escape(label, sizeof(label), label_of(r->snap, i));
    mark_attrs(marks, sizeof(marks), s->marks, "");
    return emit(r, "  n%zu [label=\"%s\", fillcolor=%s%s];", i, label,
                s->red ? "red" : "black", marks);
}

static int emit_cut(struct dot_out *r, size_t i)
{
    const struct slot *s = &r->snap->slot[i];
    char count[24] = "?", marks[2 * RULES_MAX + 96];

    if (s->hidden != UNKNOWN)
        snprintf(count, sizeof(count), "%zu", s->hidden);
    mark_attrs(marks, sizeof(marks), s->marks, "below: ");
    return emit(r, "  h%zu [label=\"+%s\\nmore\", shape=box, style=dashed, "
                "fontcolor=black, fontsize=10%s];", i, count, marks);
}

/* Slot i's statements: its node, cut box or nil leaf, and the edge from
 * its parent; nothing under a slot that is not drawn. */
static int emit_slot(struct dot_out *r, size_t i)
{
    const struct slot *s = &r->snap->slot[i], *up = &r->snap->slot[i / 2];
    char kind = i < r->snap->cut ? 'n' : 'h';
    int rc;

    if (i > 1 && (!up->present || up->alias))
        return 0;
    if (!s->present) {
        if (!r->d->nil_leaves)
            return 0;
        rc = emit(r, "  z%zu [label=\"nil\", shape=box, fillcolor=black, "
                  "fontsize=8, width=0.3, height=0.2];", i);
        return rc || i == 1 ? rc : emit(r, "  n%zu -> z%zu;", i / 2, i);
    }
    if (s->alias)
        return emit(r, "  n%zu -> %c%u [color=orange, penwidth=3, "
                    "arrowhead=normal, constraint=false, label=\"again\"];",
                    i / 2, s->alias < r->snap->cut ? 'n' : 'h', s->alias);
    rc = kind == 'n' ? emit_node(r, i) : emit_cut(r, i);
    if (rc || i == 1)
        return rc;
    return emit(r, "  n%zu -> %c%zu%s;", i / 2, kind, i,
                kind == 'n' ? "" : " [style=dashed]");
}

/* The graph's opening lines; its label says what the checker found. */
static int emit_head(struct dot_out *r)
{
    const struct rb_dot_snapshot *snap = r->snap;
    char rules[RULES_MAX] = "", found[RULES_MAX + 32] = "";
    unsigned first = 0;
    int rc;

    for (int k = 0; k < RB_RULES; k++)
        if (snap->verdict == rb_rule_name(k))
            first = 1u << k;
    rule_list(rules, sizeof(rules), snap->broken & ~first);
    if (snap->checked && !snap->verdict)
        snprintf(found, sizeof(found), "\\nall invariants hold");
    else if (snap->checked)
        snprintf(found, sizeof(found), "\\nbroken: %s%s%s", snap->verdict,
                 rules[0] ? "; also " : "", rules);
    rc = emit(r, "digraph rbtree {");
    if (!rc)
        rc = emit(r, "  graph [ordering=out, forcelabels=true, labelloc=t, "
                  "nodesep=0.08, ranksep=0.3, "
                  "label=\"%zu nodes, top %d level%s%s\"];", snap->count,
                  snap->depth, snap->depth == 1 ? "" : "s", found);
    if (!rc)
        /* Rounded boxes no wider than their labels, close together: the 16
         * people of a fifth level and the 32 boxes under them fit a
         * 1920-pixel screen (ellipses at graphviz's default sizes took
         * 3,600 to 4,100 pixels). */
        rc = emit(r, "  node [shape=box, style=\"filled,rounded\", "
                  "fontcolor=white, fontname=\"Helvetica\", fontsize=10, "
                  "margin=\"0.06,0.03\", width=0.3, height=0.3];");
    if (!rc)
        rc = emit(r, "  edge [arrowhead=none];");
    return rc;
}

int rb_dot_snapshot_write(const struct rb_dot_snapshot *snap,
                          const struct rb_dot *d)
{
    struct dot_out r = { .snap = snap, .d = d };
    int rc;

    if (!d->out || !snap->depth)
        return -EINVAL;
    rc = emit_head(&r);
    for (size_t i = 1; i < snap->nslots && !rc; i++)
        rc = emit_slot(&r, i);
    if (!rc)
        rc = emit(&r, "}");
    return rc;
}

int rb_dot_write(const struct rb_tree *t, const struct rb_dot *d)
{
    struct rb_dot_snapshot *snap;
    int rc;

    if (!d->out || d->depth < 1 || d->depth > RB_DOT_MAX_DEPTH)
        return -EINVAL;
    snap = rb_dot_snapshot_new(d->depth);
    if (!snap)
        return -ENOMEM;
    rc = rb_dot_snapshot_take(t, d, snap);
    if (!rc)
        rc = rb_dot_snapshot_write(snap, d);
    rb_dot_snapshot_free(snap);
    return rc;
}
