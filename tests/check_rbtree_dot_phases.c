/* check_rbtree_dot_phases.c -- TREE's drawing in two phases
 * (common/rbtree_dot.c): a snapshot taken, then written, gives
 * rb_dot_write's bytes at every depth, healthy or corrupted, and its write
 * reads nothing of the tree (the nodes are scribbled over and freed before
 * it); bad depths, a write before any take, an out that stops. The
 * fixture and drawing helpers are in rbdottest.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "rbtree_dot.h"
#include "suites.h"
#include "rbtest.h"
#include "rbdottest.h"

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

static Suite *rbtree_dot_phases_suite(void)
{
    Suite *s = suite_create("rbtree_dot_phases");
    TCase *tc;

    tc = tcase_create("phases");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_dot_phases_same_bytes);
    tcase_add_test(tc, test_dot_phases_write_touches_no_tree);
    tcase_add_test(tc, test_dot_phases_errors);
    suite_add_tcase(s, tc);
    return s;
}

SUITE_REGISTER(rbtree_dot_phases_suite)
