/* check_rbtree_dot.c -- unit tests for common/rbtree_dot.c (TREE's
 * drawing) and rb_check_faults() of common/rbtree.c.
 *   draw:   each node of a known tree in its slot with its label and colour,
 *           nil leaves, the depth bound, the exact count under each cut;
 *   marks:  a tree broken by hand one way each: the node that breaks the
 *           rule (only it) is marked, or the cut box above it; cycles end;
 *   faults: rb_check_faults() answers exactly as rb_check() does, on
 *           randomly corrupted trees too, whatever its callback says;
 *   phases: a snapshot taken, then written, gives rb_dot_write's bytes,
 *           healthy or corrupted, and its write reads nothing of the tree
 *           (the nodes are scribbled over and freed before it). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rbtree_dot.h"
#include "suites.h"
#include "rbtest.h"

enum { N = 63 };

static struct item items[N + 1];        /* + 1: a node hung on by hand */
static struct rb_tree tree;

static char dot[1 << 20];               /* the last drawing */
static size_t dot_len;
static int dot_lines, stop_after, labels_made;

static void setup(void)
{
    build_spaced(&tree, items, N, 2024);
}

static int out_cb(void *arg, const char *line, size_t len)
{
    (void)arg;
    ck_assert_uint_lt(dot_len + len, sizeof(dot));
    ck_assert_int_eq(line[len - 1], '\n');
    ck_assert_ptr_null(memchr(line, '\n', len - 1));   /* one line each */
    memcpy(dot + dot_len, line, len);
    dot_len += len;
    dot[dot_len] = '\0';
    return ++dot_lines == stop_after ? 7 : 0;
}

static void label_cb(const struct rb_node *n, char *buf, size_t size)
{
    labels_made++;
    snprintf(buf, size, "k%d", key_of(n));
}

static int draw(const struct rb_tree *t, int depth, int nil)
{
    struct rb_dot d = { .depth = depth, .nil_leaves = nil, .cmp = item_cmp,
                        .label = label_cb, .out = out_cb };

    dot_len = 0;
    dot[0] = '\0';
    dot_lines = labels_made = 0;
    return rb_dot_write(t, &d);
}

/* The line "  " + fmt's text starts, without its '\n'; or NULL. */
static __attribute__((format(printf, 1, 2)))
const char *line_of(const char *fmt, ...)
{
    static char line[1024];
    char want[256] = "\n  ";
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(want + 3, sizeof(want) - 3, fmt, ap);
    va_end(ap);
    const char *p = strstr(dot, want);
    if (!p)
        return NULL;
    p += 3;
    size_t n = strcspn(p, "\n");
    ck_assert_uint_lt(n, sizeof(line));
    memcpy(line, p, n);
    line[n] = '\0';
    return line;
}

static int count_of(const char *needle)
{
    int n = 0;

    for (const char *p = dot; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* The node in heap slot i of t (root 1, children 2i and 2i+1), or NULL. */
static struct rb_node *at_slot(const struct rb_tree *t, size_t i)
{
    if (i == 0)
        return NULL;            /* no slot 0 (and clz(0) is undefined) */
    int top = 63 - __builtin_clzll(i);
    struct rb_node *n = t->root;

    for (int b = top - 1; b >= 0 && n; b--)
        n = (i >> b) & 1 ? n->right : n->left;
    return n;
}

/* The first slot (breadth first) of the top 10 levels holding n, or 0. */
static size_t slot_of(const struct rb_tree *t, const struct rb_node *n)
{
    for (size_t i = 1; i < 1024; i++)
        if (at_slot(t, i) == n)
            return i;
    return 0;
}

static size_t subtree_size(const struct rb_node *n)
{
    return n ? 1 + subtree_size(n->left) + subtree_size(n->right) : 0;
}

/* ---- draw ------------------------------------------------------------- */

START_TEST(test_dot_every_node_in_its_slot)
{
    int nodes = 0;

    ck_assert_int_eq(draw(&tree, 10, 1), 0);
    ck_assert(strncmp(dot, "digraph rbtree {\n", 17) == 0);
    ck_assert(dot_len > 2 && strcmp(dot + dot_len - 2, "}\n") == 0);
    ck_assert_ptr_nonnull(strstr(dot, "label=\"63 nodes, top 10 levels"
                                      "\\nall invariants hold\""));
    for (size_t i = 1; i < 2048; i++) {
        struct rb_node *n = at_slot(&tree, i), *up = at_slot(&tree, i / 2);
        char want[96];

        if (n) {
            snprintf(want, sizeof(want), "n%zu [label=\"k%d\", fillcolor=%s];",
                     i, key_of(n), n->red ? "red" : "black");
            ck_assert_str_eq(line_of("n%zu [", i), want);
            if (i > 1)
                ck_assert_ptr_nonnull(line_of("n%zu -> n%zu;", i / 2, i));
            nodes++;
        } else if (i == 1 || up) {
            ck_assert_ptr_nonnull(line_of("z%zu [label=\"nil\"", i));
            ck_assert_ptr_nonnull(line_of("n%zu -> z%zu;", i / 2, i));
        } else {
            ck_assert_ptr_null(line_of("z%zu [", i));
        }
    }
    ck_assert_int_eq(nodes, N);
    ck_assert_int_eq(count_of("fillcolor=red") + count_of("fillcolor=black"),
                     N + N + 1);                /* every nil is black */
    ck_assert_int_eq(count_of("[label=\"nil\""), N + 1);
    ck_assert_int_eq(count_of("more\""), 0);
    ck_assert_int_eq(count_of("orange"), 0);
}
END_TEST

/* Depth d draws the nodes of the top d levels and nothing of the others
 * but a box per cut child, with the exact size of what it hides. */
START_TEST(test_dot_depth_bound_and_hidden_counts)
{
    for (int depth = 1; depth <= 4; depth++) {
        size_t drawn = 0, hidden = 0, cut = (size_t)1 << depth;

        ck_assert_int_eq(draw(&tree, depth, 0), 0);
        for (size_t i = 1; i < cut; i++)
            drawn += at_slot(&tree, i) != NULL;
        ck_assert_int_eq(count_of("fillcolor="), (int)drawn);
        ck_assert_int_le(labels_made, (int)cut - 1);
        for (size_t i = cut; i < 2 * cut; i++) {
            struct rb_node *n = at_slot(&tree, i);

            if (!n) {
                ck_assert_ptr_null(line_of("h%zu [", i));
                continue;
            }
            ck_assert_ptr_nonnull(line_of("h%zu [label=\"+%zu\\nmore\"", i,
                                          subtree_size(n)));
            ck_assert_ptr_nonnull(line_of("n%zu -> h%zu [style=dashed];",
                                          i / 2, i));
            hidden += subtree_size(n);
        }
        ck_assert_uint_eq(drawn + hidden, N);
        ck_assert_int_eq(count_of("nil"), 0);   /* nil_leaves off */
    }
}
END_TEST

static void odd_label(const struct rb_node *n, char *buf, size_t size)
{
    (void)n;
    snprintf(buf, size, "a\"b\\c\td\x80" "e\xc3\xa9");
}

/* The empty tree, odd labels, an out that stops, bad arguments. */
START_TEST(test_dot_edge_cases)
{
    struct rb_dot d = { .depth = 1, .label = odd_label, .out = out_cb };
    struct rb_tree empty = RB_TREE_INIT;

    ck_assert_int_eq(draw(&empty, 5, 1), 0);
    ck_assert_ptr_nonnull(strstr(dot, "\"0 nodes, top 5 levels"));
    ck_assert_ptr_nonnull(line_of("z1 [label=\"nil\""));
    ck_assert_int_eq(count_of("->"), 0);
    dot_len = 0;
    ck_assert_int_eq(rb_dot_write(&tree, &d), 0);
    ck_assert_ptr_nonnull(line_of("n1 [label=\"a\\\"b\\\\c?d?e\xc3\xa9\", "));
    ck_assert_ptr_null(strstr(dot, "invariants"));      /* no cmp: no check */
    stop_after = 3;
    ck_assert_int_eq(draw(&tree, 3, 1), 7);
    ck_assert_int_eq(dot_lines, 3);
    stop_after = 0;
    d.depth = 0;
    ck_assert_int_eq(rb_dot_write(&tree, &d), -EINVAL);
    d.depth = RB_DOT_MAX_DEPTH + 1;
    ck_assert_int_eq(rb_dot_write(&tree, &d), -EINVAL);
    d.depth = 1;
    d.out = NULL;
    ck_assert_int_eq(rb_dot_write(&tree, &d), -EINVAL);
}
END_TEST

/* ---- marks ------------------------------------------------------------ */

/* Draws 10 levels, checks the label names rb_check's answer, and returns
 * how many nodes or boxes are marked. */
static int draw_broken(const char *want)
{
    char label[96];

    ck_assert_int_eq(draw(&tree, 10, 1), 0);
    snprintf(label, sizeof(label), "\\nbroken: %s", want);
    ck_assert_msg(strstr(dot, label), "no \"%s\" in the label", want);
    ck_assert_str_eq(rb_check(&tree, item_cmp), want);
    return count_of("penwidth=4");
}

/* Node n (slot i) is marked with exactly the rules in `rules`. */
static void assert_marked(size_t i, const char *rules)
{
    char want[160];
    const char *line = line_of("n%zu [", i);

    ck_assert_ptr_nonnull(line);
    snprintf(want, sizeof(want), "color=orange, penwidth=4, "
             "xlabel=<<font color=\"#b00000\">%s</font>>, tooltip=\"%s\"];",
             rules, rules);
    ck_assert_msg(strstr(line, want), "slot %zu: %s", i, line);
}

static struct rb_node *find_node(bool (*pred)(const struct rb_node *))
{
    for (struct rb_node *p = rb_first(&tree); p; p = rb_next(p))
        if (pred(p) && slot_of(&tree, p))
            return p;
    ck_abort_msg("test tree has no node of the kind needed");
    return NULL;
}

static bool red_leaf(const struct rb_node *n)
{
    return n->red && !n->left && !n->right;
}

/* Black, under a black node that is not the root, with no red child:
 * painting it red breaks only the black height, at its parent. */
static bool black_safe_deep(const struct rb_node *n)
{
    return !n->red && n->parent && !n->parent->red && n->parent->parent
        && !(n->left && n->left->red) && !(n->right && n->right->red);
}

static bool deep_leaf(const struct rb_node *n)
{
    return !n->left && !n->right && n->parent && n->parent->parent
        && n->parent->parent->parent;
}

START_TEST(test_dot_marks_root_red)
{
    struct rb_node *l = tree.root->left, *r = tree.root->right;
    int pairs = (l && l->red) + (r && r->red);  /* red children: red pairs */

    tree.root->red = 1;
    ck_assert_int_eq(draw_broken("root is red"), 1 + pairs);
    assert_marked(1, pairs ? "root is red, red node with red child"
                           : "root is red");
    ck_assert_ptr_nonnull(line_of("n1 [label=\"k%d\", fillcolor=red,",
                                  key_of(tree.root)));
}
END_TEST

START_TEST(test_dot_marks_red_pair_both)
{
    struct rb_node *leaf = find_node(red_leaf), *x = &items[N].node;
    size_t i = slot_of(&tree, leaf);

    items[N].key = key_of(leaf) + 1;
    *x = (struct rb_node){ .parent = leaf, .red = 1 };
    leaf->right = x;
    tree.count++;
    ck_assert_int_eq(draw_broken("red node with red child"), 2);
    assert_marked(i, "red node with red child");
    assert_marked(2 * i + 1, "red node with red child");
}
END_TEST

/* The root's predecessor given a key above the root's: it, and only it,
 * is out of place (its in-order successor, the root, is blamed by none). */
START_TEST(test_dot_marks_misplaced_node)
{
    struct rb_node *n = tree.root->left;

    while (n->right)
        n = n->right;
    RB_ENTRY(n, struct item, node)->key = key_of(tree.root) + 5;
    ck_assert_int_eq(draw_broken("order violated"), 1);
    assert_marked(slot_of(&tree, n), "order violated");
}
END_TEST

/* A black node painted red: its parent's two sides now differ. */
START_TEST(test_dot_marks_black_height)
{
    struct rb_node *n = find_node(black_safe_deep);

    n->red = 1;
    ck_assert_int_eq(draw_broken("black height differs"), 1);
    assert_marked(slot_of(&tree, n->parent), "black height differs");
}
END_TEST

/* A leaf's parent link to the root; its child link back to the root (the
 * leaf is marked, the link drawn as an edge back to n1, no node twice). */
START_TEST(test_dot_marks_broken_links)
{
    struct rb_node *leaf = find_node(deep_leaf), *up = leaf->parent;
    size_t i = slot_of(&tree, leaf);

    leaf->parent = tree.root;
    ck_assert_int_eq(draw_broken("parent link broken"), 1);
    assert_marked(i, "parent link broken");
    leaf->parent = up;
    leaf->left = tree.root;
    ck_assert_int_eq(draw_broken("tree too deep or cyclic"), 1);
    assert_marked(i, "tree too deep or cyclic");
    ck_assert_ptr_nonnull(line_of("n%zu -> n1 [color=orange", i));
    ck_assert_int_eq(count_of("[label=\"k"), N);   /* each drawn once */
}
END_TEST

/* Faults under the cut mark the box above them, whose count becomes "?"
 * when the subtree's links cannot be trusted. */
START_TEST(test_dot_marks_box_above_hidden_fault)
{
    struct rb_node *n = find_node(black_safe_deep), *leaf;
    size_t i = slot_of(&tree, n->parent);

    while (i >= 4)
        i /= 2;                 /* the cut box at depth 2 above it */
    n->red = 1;
    ck_assert_int_eq(draw(&tree, 1, 0), 0);
    ck_assert_ptr_nonnull(line_of("h%zu [label=\"+%zu\\nmore\", shape=box, "
                                  "style=dashed, fontcolor=black, fontsize=10, "
                                  "color=orange, penwidth=4, xlabel=<<font "
                                  "color=\"#b00000\">below: "
                                  "black height differs</font>>", i,
                                  subtree_size(at_slot(&tree, i))));
    n->red = 0;
    leaf = find_node(deep_leaf);
    leaf->right = tree.root;    /* a cycle out of a hidden subtree */
    ck_assert_int_eq(draw(&tree, 1, 0), 0);
    ck_assert_int_eq(count_of("\"+?\\nmore\""), 1);
    ck_assert_ptr_nonnull(strstr(dot, "\">below: tree too deep or "
                                      "cyclic</font>>"));
}
END_TEST

/* A count too high is in the label only; one far too low: the hidden
 * nodes are counted up to count + 1, then the rest is "?". */
START_TEST(test_dot_count_mismatch_and_budget)
{
    tree.count = N + 1;
    ck_assert_int_eq(draw_broken("count mismatch"), 0);
    ck_assert_ptr_nonnull(strstr(dot, "\"64 nodes, top 10 levels"));
    tree.count = 5;
    ck_assert_int_eq(draw(&tree, 2, 0), 0);
    ck_assert_int_ge(count_of("\"+?\\nmore\""), 1);
    ck_assert_ptr_nonnull(strstr(dot, "broken: count mismatch"));
}
END_TEST

/* Every node's two children are the same node, 100 deep: 2^100 paths. The
 * drawing shows each node once, the second link as "again", and ends. */
START_TEST(test_dot_shared_children_bounded)
{
    enum { D = 100 };
    static struct item chain[D];
    struct rb_tree t = { &chain[0].node, D };

    for (int i = 0; i < D; i++) {
        struct rb_node *next = i + 1 < D ? &chain[i + 1].node : NULL;

        chain[i].key = D - i;   /* each child smaller: left is in order */
        chain[i].node = (struct rb_node){ i ? &chain[i - 1].node : NULL,
                                          next, next, 0 };
    }
    ck_assert_int_eq(draw(&t, 10, 1), 0);
    ck_assert_int_eq(count_of("[label=\"k"), 10);
    ck_assert_int_eq(count_of("label=\"again\""), 10);
    ck_assert_int_eq(count_of("\"+?\\nmore\""), 1);
    ck_assert_ptr_nonnull(strstr(dot, "broken: order violated"));
}
END_TEST

/* ---- faults ----------------------------------------------------------- */

static int faults_seen, faults_allowed;

static int count_fault(const struct rb_fault *f, void *arg)
{
    (void)arg;
    ck_assert_ptr_eq(f->what, rb_rule_name(f->rule));
    ck_assert(f->node ? f->depth >= 1 : f->depth == 0);
    return ++faults_seen == faults_allowed;
}

/* rb_check_faults answers as rb_check does, with a callback that goes on,
 * one that stops at the first fault and none; the drawing ends too. */
static void assert_same_answer(const struct rb_tree *t)
{
    const char *want = rb_check(t, item_cmp);

    for (faults_allowed = -1; faults_allowed <= 1; faults_allowed += 2) {
        faults_seen = 0;
        ck_assert_ptr_eq(rb_check_faults(t, item_cmp, count_fault, NULL),
                         want);
        ck_assert(want ? faults_seen >= 1 : faults_seen == 0);
    }
    ck_assert_ptr_eq(rb_check_faults(t, item_cmp, NULL, NULL), want);
    ck_assert_int_eq(draw(t, 4, 1), 0);
    ck_assert(strstr(dot, want ? want : "all invariants hold"));
}

/* Random damage, a few links or colours or keys at a time, from a fixed
 * seed: pointers to other nodes, to NULL, back up the tree. */
START_TEST(test_faults_random_damage_same_answer)
{
    uint64_t seed = 0x5eed;

    ck_assert_str_eq(rb_rule_name(RB_RULE_ORDER), "order violated");
    ck_assert_ptr_null(rb_rule_name(RB_RULES));
    assert_same_answer(&tree);
    for (int round = 0; round < 3000; round++) {
        build_spaced(&tree, items, N, 1 + (uint64_t)round);
        for (int k = 0, hits = 1 + round % 3; k < hits; k++) {
            uint64_t r = rng_next(&seed);
            struct rb_node *n = &items[r % N].node;
            struct rb_node *o = r >> 60 ? &items[(r >> 8) % N].node : NULL;
            int *key = &RB_ENTRY(n, struct item, node)->key;

            switch ((r >> 16) % 6) {
            case 0: n->left = o; break;
            case 1: n->right = o; break;
            case 2: n->parent = o; break;
            case 3: n->red = !n->red; break;
            case 4: *key = (int)((r >> 24) % 700); break;
            default: tree.count = (r >> 24) % (2 * N); break;
            }
        }
        assert_same_answer(&tree);
    }
}
END_TEST

/* ---- phases ----------------------------------------------------------- */

static char want[1 << 20];              /* rb_dot_write's drawing */
static size_t want_len;

/* Draws t with rb_dot_write into want, then with the two phases, the
 * snapshot snap (made for depth 10, reused) taken at d's depth, into dot;
 * both must succeed with the same bytes. The label is made only during
 * the take. */
static void assert_phases_same(const struct rb_tree *t,
                               struct rb_dot_snapshot *snap, int depth,
                               int nil, rb_cmp_fn cmp)
{
    struct rb_dot d = { .depth = depth, .nil_leaves = nil, .cmp = cmp,
                        .label = label_cb, .out = out_cb };

    dot_len = 0;
    dot_lines = 0;
    ck_assert_int_eq(rb_dot_write(t, &d), 0);
    memcpy(want, dot, dot_len + 1);
    want_len = dot_len;

    dot_len = 0;
    dot[0] = '\0';
    ck_assert_int_eq(rb_dot_snapshot_take(t, &d, snap), 0);
    labels_made = 0;
    ck_assert_int_eq(rb_dot_snapshot_write(snap, &d), 0);
    ck_assert_int_eq(labels_made, 0);
    ck_assert_uint_eq(dot_len, want_len);
    ck_assert_msg(memcmp(dot, want, want_len) == 0,
                  "depth %d nil %d: the phases drew other bytes", depth, nil);
}

/* Every depth, with and without nil leaves and checking, on the fixture's
 * tree, the empty tree, and trees broken the ways the marks test: a red
 * root, a link back up (a cycle), a wrong count, children shared. */
START_TEST(test_dot_phases_same_bytes)
{
    struct rb_dot_snapshot *snap = rb_dot_snapshot_new(RB_DOT_MAX_DEPTH);
    struct rb_tree empty = RB_TREE_INIT;
    struct rb_node *leaf;
    enum { D = 30 };
    static struct item chain[D];
    struct rb_tree shared = { &chain[0].node, D };

    ck_assert_ptr_nonnull(snap);
    for (int depth = 1; depth <= RB_DOT_MAX_DEPTH; depth++)
        for (int v = 0; v < 4; v++) {
            assert_phases_same(&tree, snap, depth, v & 1,
                               v & 2 ? item_cmp : NULL);
            assert_phases_same(&empty, snap, depth, v & 1,
                               v & 2 ? item_cmp : NULL);
        }
    ck_assert_ptr_nonnull(strstr(dot, "all invariants hold"));

    tree.root->red = 1;
    for (int depth = 1; depth <= RB_DOT_MAX_DEPTH; depth += 3)
        assert_phases_same(&tree, snap, depth, 1, item_cmp);
    ck_assert_ptr_nonnull(strstr(dot, "broken: root is red"));
    tree.root->red = 0;

    leaf = find_node(deep_leaf);
    leaf->left = tree.root;
    tree.count = N + 3;
    for (int depth = 1; depth <= RB_DOT_MAX_DEPTH; depth++)
        assert_phases_same(&tree, snap, depth, depth & 1, item_cmp);
    ck_assert_ptr_nonnull(strstr(dot, "broken: tree too deep or cyclic"));
    ck_assert_ptr_nonnull(strstr(dot, "label=\"again\""));

    for (int i = 0; i < D; i++) {
        struct rb_node *next = i + 1 < D ? &chain[i + 1].node : NULL;

        chain[i].key = D - i;
        chain[i].node = (struct rb_node){ i ? &chain[i - 1].node : NULL,
                                          next, next, 0 };
    }
    for (int depth = 1; depth <= RB_DOT_MAX_DEPTH; depth++)
        assert_phases_same(&shared, snap, depth, 1, item_cmp);
    ck_assert_ptr_nonnull(strstr(dot, "\"+?\\nmore\""));
    rb_dot_snapshot_free(snap);
}
END_TEST

/* The write reads the snapshot alone: a tree of heap nodes, broken so that
 * every kind of mark is drawn, is snapshotted, then its nodes are
 * scribbled over and freed and the tree emptied, and the write still gives
 * the drawing rb_dot_write made of the tree as it was. */
START_TEST(test_dot_phases_write_touches_no_tree)
{
    enum { M = 40 };
    struct item *heap[M];
    struct rb_tree t = RB_TREE_INIT;
    struct rb_dot d = { .depth = 4, .nil_leaves = 1, .cmp = item_cmp,
                        .label = label_cb, .out = out_cb };
    struct rb_dot_snapshot *snap = rb_dot_snapshot_new(d.depth);
    struct rb_node *n;

    ck_assert_ptr_nonnull(snap);
    for (int i = 0; i < M; i++) {
        heap[i] = calloc(1, sizeof(*heap[i]));
        ck_assert_ptr_nonnull(heap[i]);
        heap[i]->key = (i * 17) % M;
        ck_assert_ptr_null(insert_node(&t, &heap[i]->node));
    }
    t.root->red = 1;                            /* marked at the root */
    for (n = t.root->right; n->right; n = n->right)
        ;
    n->right = t.root->left;                    /* a shared subtree */

    dot_len = 0;
    ck_assert_int_eq(rb_dot_write(&t, &d), 0);
    memcpy(want, dot, dot_len + 1);
    want_len = dot_len;
    ck_assert_ptr_nonnull(strstr(want, "broken: root is red"));
    ck_assert_ptr_nonnull(strstr(want, "penwidth=4"));
    ck_assert_ptr_nonnull(strstr(want, "more\""));

    ck_assert_int_eq(rb_dot_snapshot_take(&t, &d, snap), 0);
    for (int i = 0; i < M; i++) {
        memset(heap[i], 0xa5, sizeof(*heap[i]));
        free(heap[i]);
    }
    memset(&t, 0xa5, sizeof(t));

    dot_len = 0;
    labels_made = 0;
    ck_assert_int_eq(rb_dot_snapshot_write(snap, &d), 0);
    ck_assert_int_eq(labels_made, 0);
    ck_assert_uint_eq(dot_len, want_len);
    ck_assert(memcmp(dot, want, want_len) == 0);
    rb_dot_snapshot_free(snap);
}
END_TEST

/* Depths out of range, a take deeper than the snapshot (which then keeps
 * what it held), a write before any take or with no out, an out that
 * stops the write. */
START_TEST(test_dot_phases_errors)
{
    struct rb_dot d = { .depth = 3, .nil_leaves = 1, .cmp = item_cmp,
                        .label = label_cb, .out = out_cb };
    struct rb_dot_snapshot *snap;

    errno = 0;
    ck_assert_ptr_null(rb_dot_snapshot_new(0));
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_ptr_null(rb_dot_snapshot_new(RB_DOT_MAX_DEPTH + 1));
    ck_assert_int_eq(errno, EINVAL);
    rb_dot_snapshot_free(NULL);

    snap = rb_dot_snapshot_new(3);
    ck_assert_ptr_nonnull(snap);
    ck_assert_int_eq(rb_dot_snapshot_write(snap, &d), -EINVAL);  /* untaken */
    ck_assert_int_eq(rb_dot_snapshot_take(&tree, &d, snap), 0);
    d.out = NULL;
    ck_assert_int_eq(rb_dot_snapshot_write(snap, &d), -EINVAL);
    d.out = out_cb;

    d.depth = 4;
    ck_assert_int_eq(rb_dot_snapshot_take(&tree, &d, snap), -EINVAL);
    d.depth = 0;
    ck_assert_int_eq(rb_dot_snapshot_take(&tree, &d, snap), -EINVAL);
    d.depth = 3;
    assert_phases_same(&tree, snap, 3, 1, item_cmp);    /* still depth 3 */

    stop_after = 2;
    dot_lines = 0;
    ck_assert_int_eq(rb_dot_snapshot_write(snap, &d), 7);
    ck_assert_int_eq(dot_lines, 2);
    stop_after = 0;
    rb_dot_snapshot_free(snap);
}
END_TEST

static Suite *rbtree_dot_suite(void)
{
    Suite *s = suite_create("rbtree_dot");
    TCase *tc;

    tc = tcase_create("draw");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_dot_every_node_in_its_slot);
    tcase_add_test(tc, test_dot_depth_bound_and_hidden_counts);
    tcase_add_test(tc, test_dot_edge_cases);
    suite_add_tcase(s, tc);
    tc = tcase_create("marks");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_dot_marks_root_red);
    tcase_add_test(tc, test_dot_marks_red_pair_both);
    tcase_add_test(tc, test_dot_marks_misplaced_node);
    tcase_add_test(tc, test_dot_marks_black_height);
    tcase_add_test(tc, test_dot_marks_broken_links);
    tcase_add_test(tc, test_dot_marks_box_above_hidden_fault);
    tcase_add_test(tc, test_dot_count_mismatch_and_budget);
    tcase_add_test(tc, test_dot_shared_children_bounded);
    suite_add_tcase(s, tc);
    tc = tcase_create("faults");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_faults_random_damage_same_answer);
    suite_add_tcase(s, tc);
    tc = tcase_create("phases");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_dot_phases_same_bytes);
    tcase_add_test(tc, test_dot_phases_write_touches_no_tree);
    tcase_add_test(tc, test_dot_phases_errors);
    suite_add_tcase(s, tc);
    return s;
}

SUITE_REGISTER(rbtree_dot_suite)
