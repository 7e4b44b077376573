/* check_rbtree_dot.c -- unit tests for common/rbtree_dot.c (TREE's
 * drawing), written in one go by rb_dot_write.
 *   draw:   each node of a known tree in its slot with its label and colour,
 *           nil leaves, the depth bound, the exact count under each cut;
 *   marks:  a tree broken by hand one way each: the node that breaks the
 *           rule (only it) is marked, or the cut box above it; cycles end.
 * The fixture and drawing helpers are in rbdottest.h; the drawing in two
 * phases is check_rbtree_dot_phases.c's, rb_check_faults()
 * check_rbtree_faults.c's. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "rbtree_dot.h"
#include "suites.h"
#include "rbtest.h"
#include "rbdottest.h"

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
    return s;
}

SUITE_REGISTER(rbtree_dot_suite)
