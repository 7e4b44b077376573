/* check_rbtree.c -- unit tests for common/rbtree.c.
 *
 *   core:    insert, find, erase and traversal on small known sets;
 *   place:   the caller's half of an insert: rb_find_slot names the place
 *            (or returns the equal node and leaves the place alone),
 *            rb_link_node hangs the node there and rb_insert_color
 *            rebalances and counts it, in an empty tree and at the
 *            leftmost, rightmost and every inner place; the count kept by
 *            rb_insert_color and rb_erase.
 * Inserts go through insert_node() (rbtest.h): search, link, colour. The
 * long random and sorted runs are in check_rbtree_random.c, the checker is
 * tested in check_rbtree_checker.c.
 */
#include <stdint.h>
#include <string.h>
#include "rbtree.h"
#include "suites.h"
#include "rbtest.h"

/* ---- core ------------------------------------------------------------- */

START_TEST(test_rb_empty_tree)
{
    struct rb_tree t;

    struct rb_tree s = RB_TREE_INIT;

    memset(&t, 0xa5, sizeof t);         /* rb_init must not rely on zeros */
    rb_init(&t);
    ck_assert_ptr_null(t.root);
    ck_assert_uint_eq(t.count, 0);
    ck_assert_ptr_null(rb_first(&t));
    ck_assert_ptr_null(find_key(&t, 1));
    assert_valid(&t);
    ck_assert_ptr_null(s.root);
    ck_assert_uint_eq(s.count, 0);
    assert_valid(&s);
}
END_TEST

START_TEST(test_rb_insert_find_small)
{
    static const int keys[] = { 5, 3, 8, 1, 4, 7, 9, 2, 6 };
    enum { N = sizeof keys / sizeof keys[0] };
    struct item items[N];
    struct rb_tree t;
    int out[N + 1];

    rb_init(&t);
    for (int i = 0; i < N; i++) {
        items[i].key = keys[i];
        ck_assert_ptr_null(insert_node(&t, &items[i].node));
        ck_assert_uint_eq(t.count, (size_t)i + 1);
        assert_valid(&t);
        for (int j = 0; j <= i; j++)
            ck_assert_ptr_eq(find_key(&t, keys[j]), &items[j].node);
    }
    ck_assert_ptr_null(find_key(&t, 0));
    ck_assert_ptr_null(find_key(&t, 10));
    ck_assert_ptr_null(find_key(&t, -1));
    ck_assert_uint_eq(inorder_keys(&t, out, N + 1), N);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(out[i], i + 1);
}
END_TEST

START_TEST(test_rb_insert_duplicate_changes_nothing)
{
    enum { N = 31 };
    struct item items[N], dup = { .key = 160 };
    struct rb_node saved[N], *saved_root;
    struct rb_tree t;

    build_spaced(&t, items, N, 7);
    for (int i = 0; i < N; i++)
        saved[i] = items[i].node;
    saved_root = t.root;
    /* Poison dup's links: a duplicate insert must not write them. */
    dup.node.parent = dup.node.left = dup.node.right = &dup.node;
    dup.node.red = 42;

    ck_assert_ptr_eq(insert_node(&t, &dup.node), &items[15].node);
    ck_assert_uint_eq(t.count, N);
    ck_assert_ptr_eq(t.root, saved_root);
    for (int i = 0; i < N; i++) {
        ck_assert_ptr_eq(items[i].node.parent, saved[i].parent);
        ck_assert_ptr_eq(items[i].node.left, saved[i].left);
        ck_assert_ptr_eq(items[i].node.right, saved[i].right);
        ck_assert_int_eq(items[i].node.red, saved[i].red);
    }
    ck_assert_ptr_eq(dup.node.parent, &dup.node);
    ck_assert_ptr_eq(dup.node.left, &dup.node);
    ck_assert_ptr_eq(dup.node.right, &dup.node);
    ck_assert_int_eq(dup.node.red, 42);
    ck_assert_ptr_eq(find_key(&t, 160), &items[15].node);
    assert_valid(&t);
}
END_TEST

/* Every size up to 40, every position: root, leaves, one child, two
 * children with the successor next to or far below the erased node. */
START_TEST(test_rb_erase_each_position)
{
    enum { MAX = 40 };
    struct item items[MAX];
    struct rb_tree t;
    int out[MAX + 1];

    for (int n = 1; n <= MAX; n++) {
        for (int k = 0; k < n; k++) {
            build_spaced(&t, items, n, (uint64_t)n * 1000 + 1);
            rb_erase(&t, &items[k].node);
            assert_valid(&t);
            ck_assert_uint_eq(t.count, (size_t)n - 1);
            ck_assert_ptr_null(find_key(&t, 10 * (k + 1)));
            ck_assert_uint_eq(inorder_keys(&t, out, MAX + 1), (size_t)n - 1);
            for (int i = 0, want = 0; i < n - 1; i++, want++) {
                if (want == k)
                    want++;
                ck_assert_int_eq(out[i], 10 * (want + 1));
                ck_assert_ptr_eq(find_key(&t, out[i]), &items[want].node);
            }
        }
    }
}
END_TEST

START_TEST(test_rb_erase_all_then_reuse)
{
    enum { N = 50 };
    struct item items[N];
    struct rb_tree t;
    int order[N];

    build_spaced(&t, items, N, 3);
    for (int i = 0; i < N; i++)
        order[i] = i;
    shuffle(order, N, 99);
    for (int i = 0; i < N; i++) {
        rb_erase(&t, &items[order[i]].node);
        assert_valid(&t);
    }
    ck_assert_ptr_null(t.root);
    ck_assert_uint_eq(t.count, 0);
    ck_assert_ptr_null(rb_first(&t));
    /* Erased nodes go back in with stale links and must be relinked. */
    for (int i = 0; i < N; i++)
        ck_assert_ptr_null(insert_node(&t, &items[order[i]].node));
    ck_assert_uint_eq(t.count, N);
    assert_valid(&t);
}
END_TEST

START_TEST(test_rb_traversal_sorted)
{
    enum { N = 1000 };
    static struct item items[N];
    static int keys[N], out[N + 1];
    struct rb_tree t;
    struct rb_node *last = NULL;

    rb_init(&t);
    for (int i = 0; i < N; i++)
        keys[i] = 3 * i - 1500;         /* negative keys too */
    shuffle(keys, N, 12345);
    for (int i = 0; i < N; i++) {
        items[i].key = keys[i];
        ck_assert_ptr_null(insert_node(&t, &items[i].node));
    }
    ck_assert_uint_eq(inorder_keys(&t, out, N + 1), N);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(out[i], 3 * i - 1500);
    for (struct rb_node *p = rb_first(&t); p; p = rb_next(p))
        last = p;
    ck_assert_int_eq(key_of(last), 3 * (N - 1) - 1500);
    ck_assert_ptr_null(rb_next(last));
    ck_assert_ptr_eq(rb_last(&t), last);
    /* rb_prev walks the same nodes backwards. */
    int i = N - 1;
    for (struct rb_node *p = last; p; p = rb_prev(p), i--)
        ck_assert_int_eq(key_of(p), 3 * i - 1500);
    ck_assert_int_eq(i, -1);
    assert_balanced(&t);
}
END_TEST

/* ---- place ------------------------------------------------------------ */

/* On a duplicate rb_find_slot returns the equal node and writes neither
 * *parent nor *link; the search changes nothing in the tree. */
START_TEST(test_rb_find_slot_duplicate_leaves_place)
{
    enum { N = 31 };
    struct item items[N];
    struct rb_node saved[N], *saved_root, *parent, **link;
    struct rb_node poison_parent, *poison_link_target = NULL;
    struct rb_tree t;

    build_spaced(&t, items, N, 11);
    for (int i = 0; i < N; i++)
        saved[i] = items[i].node;
    saved_root = t.root;

    for (int i = 0; i < N; i++) {
        int key = 10 * (i + 1);

        parent = &poison_parent;
        link = &poison_link_target;
        ck_assert_ptr_eq(rb_find_slot(&t, &key, item_key_cmp, &parent, &link),
                         &items[i].node);
        ck_assert_ptr_eq(parent, &poison_parent);
        ck_assert_ptr_eq(link, &poison_link_target);
    }
    ck_assert_ptr_null(poison_link_target);
    ck_assert_uint_eq(t.count, N);
    ck_assert_ptr_eq(t.root, saved_root);
    for (int i = 0; i < N; i++) {
        ck_assert_ptr_eq(items[i].node.parent, saved[i].parent);
        ck_assert_ptr_eq(items[i].node.left, saved[i].left);
        ck_assert_ptr_eq(items[i].node.right, saved[i].right);
        ck_assert_int_eq(items[i].node.red, saved[i].red);
    }
    assert_valid(&t);
}
END_TEST

START_TEST(test_rb_link_into_empty_tree)
{
    struct rb_tree t;
    struct item it = { .key = 7 };
    struct rb_node *parent = &it.node, **link = NULL;

    rb_init(&t);
    ck_assert_ptr_null(rb_find_slot(&t, &it.key, item_key_cmp, &parent,
                                    &link));
    ck_assert_ptr_null(parent);
    ck_assert_ptr_eq(link, &t.root);

    /* Stale links and colour: rb_link_node must set them all. */
    it.node.parent = it.node.left = it.node.right = &it.node;
    it.node.red = 0;
    rb_link_node(&it.node, parent, link);
    ck_assert_ptr_eq(t.root, &it.node);
    ck_assert_ptr_null(it.node.parent);
    ck_assert_ptr_null(it.node.left);
    ck_assert_ptr_null(it.node.right);
    ck_assert_int_eq(it.node.red, 1);
    ck_assert_uint_eq(t.count, 0);      /* linked, not yet counted */

    rb_insert_color(&t, &it.node);
    ck_assert_uint_eq(t.count, 1);
    ck_assert_int_eq(it.node.red, 0);   /* the root is black */
    ck_assert_ptr_eq(rb_first(&t), &it.node);
    ck_assert_ptr_null(rb_next(&it.node));
    ck_assert_ptr_eq(find_key(&t, 7), &it.node);
    assert_valid(&t);
}
END_TEST

enum { GAP_MAX = 40 };

/* Builds the spaced tree of n nodes (keys 10..10n), and inserts key
 * 10 * gap + 5 by hand: gap 0 is before the smallest node, gap n after the
 * largest. The place rb_find_slot names is an empty link under one of the
 * key's in-order neighbours: the right child of its predecessor or the left
 * child of its successor. */
static void link_at_gap(int n, int gap)
{
    struct item items[GAP_MAX], extra;
    struct rb_node *pred, *succ, *parent, **link, *poison = &extra.node;
    struct rb_tree t;
    int key = 10 * gap + 5, out[GAP_MAX + 2];

    ck_assert_int_le(n, GAP_MAX);
    build_spaced(&t, items, n, (uint64_t)n * 31 + (uint64_t)gap);
    pred = gap > 0 ? &items[gap - 1].node : NULL;
    succ = gap < n ? &items[gap].node : NULL;
    parent = poison;
    link = &poison;
    ck_assert_ptr_null(rb_find_slot(&t, &key, item_key_cmp, &parent, &link));
    ck_assert_ptr_nonnull(parent);
    ck_assert_ptr_null(*link);
    if (parent == pred) {
        ck_assert_ptr_eq(link, &pred->right);
    } else {
        ck_assert_ptr_eq(parent, succ);
        ck_assert_ptr_eq(link, &succ->left);
    }

    extra.key = key;
    rb_link_node(&extra.node, parent, link);
    ck_assert_ptr_eq(*link, &extra.node);
    ck_assert_ptr_eq(extra.node.parent, parent);
    ck_assert_uint_eq(t.count, (size_t)n);
    rb_insert_color(&t, &extra.node);
    ck_assert_uint_eq(t.count, (size_t)n + 1);
    assert_valid(&t);
    assert_balanced(&t);

    ck_assert_ptr_eq(find_key(&t, key), &extra.node);
    ck_assert_uint_eq(inorder_keys(&t, out, GAP_MAX + 2), (size_t)n + 1);
    for (int i = 0; i <= n; i++)
        ck_assert_int_eq(out[i], i < gap ? 10 * (i + 1)
                                 : i == gap ? key : 10 * i);
    for (int i = 0; i < n; i++)
        ck_assert_ptr_eq(find_key(&t, 10 * (i + 1)), &items[i].node);
}

START_TEST(test_rb_link_leftmost)
{
    for (int n = 1; n <= GAP_MAX; n++)
        link_at_gap(n, 0);
}
END_TEST

START_TEST(test_rb_link_rightmost)
{
    for (int n = 1; n <= GAP_MAX; n++)
        link_at_gap(n, n);
}
END_TEST

START_TEST(test_rb_link_every_inner_place)
{
    for (int n = 2; n <= GAP_MAX; n++)
        for (int gap = 1; gap < n; gap++)
            link_at_gap(n, gap);
}
END_TEST

/* count: +1 in rb_insert_color (not in rb_find_slot or rb_link_node), -1 in
 * rb_erase, nothing on a duplicate. */
START_TEST(test_rb_count_kept_by_insert_color_and_erase)
{
    enum { N = 200 };
    static struct item items[N];
    struct rb_node *parent, **link;
    struct rb_tree t;
    int order[N];

    rb_init(&t);
    for (int i = 0; i < N; i++)
        order[i] = i;
    shuffle(order, N, 77);
    for (int i = 0; i < N; i++) {
        struct item *it = &items[order[i]];

        it->key = order[i];
        ck_assert_ptr_null(rb_find_slot(&t, &it->key, item_key_cmp, &parent,
                                        &link));
        ck_assert_uint_eq(t.count, (size_t)i);
        rb_link_node(&it->node, parent, link);
        ck_assert_uint_eq(t.count, (size_t)i);
        rb_insert_color(&t, &it->node);
        ck_assert_uint_eq(t.count, (size_t)i + 1);
        assert_valid(&t);

        ck_assert_ptr_eq(rb_find_slot(&t, &it->key, item_key_cmp, &parent,
                                      &link), &it->node);
        ck_assert_uint_eq(t.count, (size_t)i + 1);
    }
    shuffle(order, N, 78);
    for (int i = 0; i < N; i++) {
        rb_erase(&t, &items[order[i]].node);
        ck_assert_uint_eq(t.count, (size_t)(N - i - 1));
        assert_valid(&t);
    }
    ck_assert_ptr_null(t.root);
}
END_TEST

static Suite *rbtree_suite(void)
{
    Suite *s = suite_create("rbtree");
    TCase *tc;

    tc = tcase_create("core");
    tcase_add_test(tc, test_rb_empty_tree);
    tcase_add_test(tc, test_rb_insert_find_small);
    tcase_add_test(tc, test_rb_insert_duplicate_changes_nothing);
    tcase_add_test(tc, test_rb_erase_each_position);
    tcase_add_test(tc, test_rb_erase_all_then_reuse);
    tcase_add_test(tc, test_rb_traversal_sorted);
    suite_add_tcase(s, tc);

    tc = tcase_create("place");
    tcase_add_test(tc, test_rb_find_slot_duplicate_leaves_place);
    tcase_add_test(tc, test_rb_link_into_empty_tree);
    tcase_add_test(tc, test_rb_link_leftmost);
    tcase_add_test(tc, test_rb_link_rightmost);
    tcase_add_test(tc, test_rb_link_every_inner_place);
    tcase_add_test(tc, test_rb_count_kept_by_insert_color_and_erase);
    suite_add_tcase(s, tc);

    return s;
}

SUITE_REGISTER(rbtree_suite)
