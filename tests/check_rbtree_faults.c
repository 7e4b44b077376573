/* check_rbtree_faults.c -- rb_check_faults() of common/rbtree.c: on the
 * fixture's tree and on trees randomly corrupted from a fixed seed it
 * answers exactly as rb_check() does, whatever its callback says (go on,
 * stop at the first fault, or no callback), and the drawing of such a tree
 * ends and names the same answer. The fixture and drawing helpers are in
 * rbdottest.h. */
#include <stdint.h>
#include <string.h>
#include "suites.h"
#include "rbtest.h"
#include "rbdottest.h"

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

static Suite *rbtree_faults_suite(void)
{
    Suite *s = suite_create("rbtree_faults");
    TCase *tc;

    tc = tcase_create("faults");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 60);          /* 3000 trees: 7 s under ASan */
    tcase_add_test(tc, test_faults_random_damage_same_answer);
    suite_add_tcase(s, tc);
    return s;
}

SUITE_REGISTER(rbtree_faults_suite)
