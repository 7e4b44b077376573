/* check_rbtree_checker.c -- unit tests for rb_check() of common/rbtree.c
 * (the rest of the tree is in check_rbtree.c and check_rbtree_random.c).
 *
 *   checker: valid trees corrupted by hand in one way each, for which
 *            rb_check() must return the exact documented string, and
 *            promptly even for cycles and shared children; the comparator
 *            it is given is the one it orders by.
 * The race-window pause lives in server/store.c and is tested with it.
 */
#include "suites.h"
#include "rbtest.h"

/* ---- checker ---------------------------------------------------------- */

/* Each test builds a valid tree of CK_N nodes, keys 10..10*CK_N, breaks one
 * rule by hand, checks the exact answer, and where it can, repairs the tree
 * and checks it passes again (so the answer came from that one change). */
enum { CK_N = 63 };

static struct item ck_items[CK_N + 1];  /* + 1: a node hung on by hand */
static struct rb_tree ck_tree;

static void ck_setup(void)
{
    build_spaced(&ck_tree, ck_items, CK_N, 2024);
}

typedef bool (*node_pred)(const struct rb_node *n);

static struct rb_node *find_node(node_pred pred)
{
    for (struct rb_node *p = rb_first(&ck_tree); p; p = rb_next(p))
        if (pred(p))
            return p;
    ck_abort_msg("test tree has no node of the kind needed");
    return NULL;
}

static bool is_red_node(const struct rb_node *n)
{
    return n && n->red;
}

static bool red_leaf(const struct rb_node *n)
{
    return n->red && !n->left && !n->right;
}

static bool black_leaf(const struct rb_node *n)
{
    return !n->red && !n->left && !n->right;
}

static bool black_under_red(const struct rb_node *n)
{
    return !n->red && n->parent && n->parent->red;
}

/* Black, with a black parent and no red child: painting it red breaks only
 * the black height. */
static bool black_safe_to_redden(const struct rb_node *n)
{
    return !n->red && n->parent && !n->parent->red
        && !is_red_node(n->left) && !is_red_node(n->right);
}

static bool has_sibling(const struct rb_node *n)
{
    return n->parent && n->parent->left && n->parent->right;
}

/* A leaf at depth 4 or more: its grandparent is not the root. */
static bool deep_leaf(const struct rb_node *n)
{
    return !n->left && !n->right && n->parent && n->parent->parent
        && n->parent->parent->parent;
}

/* Hangs ck_items[CK_N] as the right child of leaf with key leaf + 1, which
 * keeps the order; count follows. */
static struct rb_node *hang_right(struct rb_node *leaf, int red)
{
    struct rb_node *x = &ck_items[CK_N].node;

    ck_items[CK_N].key = key_of(leaf) + 1;
    x->parent = leaf;
    x->left = x->right = NULL;
    x->red = red;
    leaf->right = x;
    ck_tree.count++;
    return x;
}

static void unhang_right(struct rb_node *leaf)
{
    leaf->right = NULL;
    ck_tree.count--;
}

START_TEST(test_rb_check_valid_and_empty)
{
    struct rb_tree t;

    assert_valid(&ck_tree);
    rb_init(&t);
    assert_valid(&t);
    t.count = 1;                        /* empty, but says one node */
    assert_check(&t, "count mismatch");
}
END_TEST

static void swap_keys(struct rb_node *a, struct rb_node *b)
{
    struct item *x = RB_ENTRY(a, struct item, node);
    struct item *y = RB_ENTRY(b, struct item, node);
    int tmp = x->key;

    x->key = y->key;
    y->key = tmp;
}

START_TEST(test_rb_check_order_swapped_keys)
{
    struct rb_node *first = rb_first(&ck_tree), *second = rb_next(first);

    swap_keys(first, second);           /* neighbours in order */
    assert_check(&ck_tree, "order violated");
    swap_keys(first, second);
    assert_valid(&ck_tree);
    swap_keys(first, ck_tree.root);     /* the smallest and the root */
    assert_check(&ck_tree, "order violated");
    swap_keys(first, ck_tree.root);
    assert_valid(&ck_tree);
}
END_TEST

/* Order is global and strict: a key larger than its parent but on the left
 * of the root, or equal to its neighbour, is caught too. */
START_TEST(test_rb_check_order_global_and_strict)
{
    struct rb_node *n = ck_tree.root->left;
    struct item *it, *next;
    int saved;

    while (n->right)
        n = n->right;               /* the root's predecessor */
    it = RB_ENTRY(n, struct item, node);
    saved = it->key;
    it->key = key_of(ck_tree.root) + 5;
    assert_check(&ck_tree, "order violated");
    it->key = saved;
    assert_valid(&ck_tree);

    next = RB_ENTRY(rb_next(n), struct item, node);
    it->key = next->key;
    assert_check(&ck_tree, "order violated");
    it->key = saved;
    assert_valid(&ck_tree);
}
END_TEST

START_TEST(test_rb_check_root_red)
{
    ck_tree.root->red = 1;
    assert_check(&ck_tree, "root is red");
    ck_tree.root->red = 0;
    assert_valid(&ck_tree);
}
END_TEST

/* A red child hung under a red leaf adds no black: only rule 2 breaks. */
START_TEST(test_rb_check_red_child_of_red)
{
    struct rb_node *leaf = find_node(red_leaf);

    hang_right(leaf, 1);
    assert_check(&ck_tree, "red node with red child");
    unhang_right(leaf);
    assert_valid(&ck_tree);
}
END_TEST

/* Painting a red node's black child red also shortens its paths; the red
 * pair is met first, on the way down (documented in rbtree.c). */
START_TEST(test_rb_check_red_child_painted)
{
    struct rb_node *n = find_node(black_under_red);

    n->red = 1;
    assert_check(&ck_tree, "red node with red child");
    n->red = 0;
    assert_valid(&ck_tree);
}
END_TEST

START_TEST(test_rb_check_black_height)
{
    struct rb_node *n = find_node(black_safe_to_redden);
    struct rb_node *leaf;

    n->red = 1;                         /* one black fewer below n */
    assert_check(&ck_tree, "black height differs");
    n->red = 0;
    assert_valid(&ck_tree);

    n = find_node(is_red_node);
    n->red = 0;                         /* one black more below n */
    assert_check(&ck_tree, "black height differs");
    n->red = 1;
    assert_valid(&ck_tree);

    leaf = find_node(black_leaf);
    hang_right(leaf, 0);                /* a black leaf hung on a leaf */
    assert_check(&ck_tree, "black height differs");
    unhang_right(leaf);
    assert_valid(&ck_tree);
}
END_TEST

START_TEST(test_rb_check_parent_link)
{
    struct rb_node *leaf = find_node(deep_leaf), *lp = leaf->parent;
    struct rb_node *n = find_node(has_sibling), *np = n->parent;
    struct rb_node *sib = np->left == n ? np->right : np->left;

    leaf->parent = NULL;
    assert_check(&ck_tree, "parent link broken");
    leaf->parent = leaf;                /* itself: no child link loops */
    assert_check(&ck_tree, "parent link broken");
    leaf->parent = ck_tree.root;        /* an ancestor, not the parent */
    assert_check(&ck_tree, "parent link broken");
    leaf->parent = lp;
    assert_valid(&ck_tree);

    n->parent = sib;
    assert_check(&ck_tree, "parent link broken");
    n->parent = np;
    assert_valid(&ck_tree);

    ck_tree.root->parent = leaf;        /* the root must have none */
    assert_check(&ck_tree, "parent link broken");
    ck_tree.root->parent = NULL;
    assert_valid(&ck_tree);
}
END_TEST

START_TEST(test_rb_check_count)
{
    ck_tree.count = CK_N + 1;           /* fewer nodes than counted */
    assert_check(&ck_tree, "count mismatch");
    ck_tree.count = CK_N - 1;           /* more nodes than counted */
    assert_check(&ck_tree, "count mismatch");
    ck_tree.count = 0;
    assert_check(&ck_tree, "count mismatch");
    ck_tree.count = CK_N;
    assert_valid(&ck_tree);
}
END_TEST

static int cmp_calls;

static int counting_cmp(const struct rb_node *a, const struct rb_node *b)
{
    cmp_calls++;
    return item_cmp(a, b);
}

/* The walk passes at most count + 1 nodes in order, so a count far too low
 * stops it early rather than after the whole (perhaps huge) tree. The
 * checker compares each node with the one before it in order. */
START_TEST(test_rb_check_count_bounds_walk)
{
    cmp_calls = 0;
    ck_assert_ptr_null(rb_check(&ck_tree, counting_cmp));
    ck_assert_int_ge(cmp_calls, CK_N - 1);

    ck_tree.count = 5;
    cmp_calls = 0;
    ck_assert_str_eq(rb_check(&ck_tree, counting_cmp), "count mismatch");
    ck_assert_int_le(cmp_calls, 5);
}
END_TEST

static int reverse_cmp(const struct rb_node *a, const struct rb_node *b)
{
    return item_cmp(b, a);
}

/* The tree keeps no comparator: rb_check orders by the one it is given. */
START_TEST(test_rb_check_uses_given_cmp)
{
    ck_assert_ptr_null(rb_check(&ck_tree, item_cmp));
    ck_assert_str_eq(rb_check(&ck_tree, reverse_cmp), "order violated");
    ck_assert_ptr_null(rb_check(&ck_tree, item_cmp));
}
END_TEST

/* A child pointer back to an ancestor or to the node itself: the walk must
 * stop (the test would time out otherwise) and name the cycle. */
START_TEST(test_rb_check_cycle)
{
    struct rb_node *leaf = find_node(deep_leaf);

    leaf->left = ck_tree.root;
    assert_check(&ck_tree, "tree too deep or cyclic");
    leaf->left = NULL;
    leaf->right = leaf->parent;
    assert_check(&ck_tree, "tree too deep or cyclic");
    leaf->right = leaf->parent->parent;
    assert_check(&ck_tree, "tree too deep or cyclic");
    leaf->right = leaf;
    assert_check(&ck_tree, "tree too deep or cyclic");
    leaf->right = NULL;
    assert_valid(&ck_tree);

    ck_tree.root->right->left = ck_tree.root->right;   /* inner self-loop */
    assert_check(&ck_tree, "tree too deep or cyclic");
}
END_TEST

/* A chain of black nodes linked by right pointers, depth nodes long. */
static void build_chain(struct rb_tree *t, struct item *items, int depth)
{
    rb_init(t);
    for (int i = 0; i < depth; i++) {
        items[i].key = i;
        items[i].node.parent = i ? &items[i - 1].node : NULL;
        items[i].node.left = NULL;
        items[i].node.right = i + 1 < depth ? &items[i + 1].node : NULL;
        items[i].node.red = 0;
    }
    t->root = &items[0].node;
    t->count = (size_t)depth;
}

START_TEST(test_rb_check_too_deep)
{
    static struct item chain[RB_MAX_DEPTH + 1];
    struct rb_tree t;

    /* At the limit the walk goes all the way and finds the real fault. */
    build_chain(&t, chain, RB_MAX_DEPTH);
    assert_check(&t, "black height differs");
    /* One deeper is refused before anything else is looked at. */
    build_chain(&t, chain, RB_MAX_DEPTH + 1);
    assert_check(&t, "tree too deep or cyclic");
}
END_TEST

/* Every node's two children are the same node: 2^100 paths, all black and
 * with good parent links. The walk must stop at the second visit. */
START_TEST(test_rb_check_shared_child_prompt)
{
    enum { N = 100 };
    static struct item items[N];
    struct rb_tree t;

    rb_init(&t);
    for (int i = 0; i < N; i++) {
        items[i].key = N - i;       /* each child is smaller: left is fine */
        items[i].node.parent = i ? &items[i - 1].node : NULL;
        items[i].node.left = items[i].node.right =
            i + 1 < N ? &items[i + 1].node : NULL;
        items[i].node.red = 0;
    }
    t.root = &items[0].node;
    t.count = N;
    assert_check(&t, "order violated");
}
END_TEST

static Suite *rbtree_checker_suite(void)
{
    Suite *s = suite_create("rbtree_checker");
    TCase *tc;

    tc = tcase_create("checker");
    tcase_add_checked_fixture(tc, ck_setup, NULL);
    tcase_add_test(tc, test_rb_check_valid_and_empty);
    tcase_add_test(tc, test_rb_check_order_swapped_keys);
    tcase_add_test(tc, test_rb_check_order_global_and_strict);
    tcase_add_test(tc, test_rb_check_root_red);
    tcase_add_test(tc, test_rb_check_red_child_of_red);
    tcase_add_test(tc, test_rb_check_red_child_painted);
    tcase_add_test(tc, test_rb_check_black_height);
    tcase_add_test(tc, test_rb_check_parent_link);
    tcase_add_test(tc, test_rb_check_count);
    tcase_add_test(tc, test_rb_check_count_bounds_walk);
    tcase_add_test(tc, test_rb_check_uses_given_cmp);
    tcase_add_test(tc, test_rb_check_cycle);
    tcase_add_test(tc, test_rb_check_too_deep);
    tcase_add_test(tc, test_rb_check_shared_child_prompt);
    suite_add_tcase(s, tc);

    return s;
}

SUITE_REGISTER(rbtree_checker_suite)
