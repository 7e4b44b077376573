/* check_store.c -- unit tests for server/store.c: add, duplicate add
 * (-EEXIST, the stored entry unchanged), delete (-ENOENT; the unlinked entry
 * handed back), find, count, in-order foreach and the tree check; the
 * race-window pause. The store uses the serial policy: one thread owns it
 * and no lock exists (the fixture and helpers are in storetest.h). The
 * limits and random runs are check_store_limits.c's, the held() assertion
 * of every _locked function check_store_held.c's. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "suites.h"
#include "../server/store.h"
#include "storetest.h"

struct collect {
    char text[4096];
    size_t len;
    int calls, stop_at;
};

static int collect_one(const struct entry *e, void *arg)
{
    struct collect *c = arg;

    c->len += (size_t)snprintf(c->text + c->len, sizeof(c->text) - c->len,
                               "%s,%s;", entry_last(e), entry_first(e));
    c->calls++;
    return c->calls == c->stop_at ? 7 : 0;
}

/* ---- core ------------------------------------------------------------- */

START_TEST(test_store_empty)
{
    struct collect c = { .stop_at = -1 };

    ck_assert_uint_eq(store_count_locked(&st), 0);
    ck_assert_ptr_null(find("John", "Doe"));
    ck_assert_ptr_null(store_check_locked(&st));
    ck_assert_int_eq(store_foreach_locked(&st, collect_one, &c), 0);
    ck_assert_int_eq(c.calls, 0);
}
END_TEST

START_TEST(test_store_add_then_find)
{
    struct entry *e = new_entry("John", "Doe", 42, "123-45-6789");
    char ssn[ENTRY_SSN_LEN + 1];

    ck_assert_int_eq(add(e), 0);
    ck_assert_uint_eq(store_count_locked(&st), 1);
    const struct entry *f = find("John", "Doe");
    ck_assert_ptr_eq(f, e);                     /* the store keeps e itself */
    ck_assert_int_eq(entry_age(f), 42);
    ck_assert_str_eq(entry_ssn_text(f, ssn), "123-45-6789");
    ck_assert_ptr_null(find("john", "Doe"));    /* names are case-sensitive */
    ck_assert_ptr_null(find("John", "Do"));
    ck_assert_ptr_null(store_check_locked(&st));
}
END_TEST

START_TEST(test_store_add_duplicate)
{
    struct entry *e = new_entry("John", "Doe", 42, "123-45-6789");
    struct entry *dup = new_entry("John", "Doe", 99, "999-99-9999");
    char ssn[ENTRY_SSN_LEN + 1];

    ck_assert_int_eq(add(e), 0);
    ck_assert_int_eq(add(dup), -EEXIST);
    ck_assert_uint_eq(store_count_locked(&st), 1);
    const struct entry *f = find("John", "Doe");
    ck_assert_ptr_eq(f, e);                     /* the first one stays */
    ck_assert_int_eq(entry_age(f), 42);
    ck_assert_str_eq(entry_ssn_text(f, ssn), "123-45-6789");
    /* The caller still owns dup, untouched. */
    ck_assert_int_eq(entry_age(dup), 99);
    ck_assert_str_eq(entry_ssn_text(dup, ssn), "999-99-9999");
    ck_assert_ptr_null(store_check_locked(&st));
    entry_free(dup);
}
END_TEST

/* An ADD whose caller says its key likely sorts last (replay's hint,
 * store_slot_hint.after_last). */
static int add_after_last(struct entry *e)
{
    struct store_mutation m = { .op = STORE_ADD, .entry = e,
                                .hint.after_last = 1 };
    return store_apply_locked(&st, &m);
}

/* Ascending keys take add_locked's shortcut (right of the last node) when
 * the caller asks: the tree stays valid and ordered, the last key again is
 * a duplicate, and keys below the last, asked the same way, still go
 * through the search. With the name index (serial) and without (nolock,
 * where only the tree finds a duplicate). */
START_TEST(test_store_ascending_adds)
{
    static const enum lock_mode modes[] = { LOCK_MODE_SERIAL,
                                            LOCK_MODE_NOLOCK };
    char first[16];
    struct entry *dup;

    store_destroy(&st);
    ck_assert_int_eq(store_init(&st, &lock_policies[modes[_i]]), 0);
    for (int i = 0; i < 2000; i++) {
        snprintf(first, sizeof(first), "a%05d", i);
        ck_assert_int_eq(add_after_last(new_entry(first, "Asc", 1,
                                                  "111-11-1111")), 0);
    }
    ck_assert_ptr_null(store_check_locked(&st));
    dup = new_entry("a01999", "Asc", 2, "222-22-2222");
    ck_assert_int_eq(add_after_last(dup), -EEXIST);     /* the last */
    entry_free(dup);
    dup = new_entry("a00500", "Asc", 2, "222-22-2222");
    ck_assert_int_eq(add_after_last(dup), -EEXIST);     /* below: searched */
    entry_free(dup);
    ck_assert_int_eq(add_after_last(new_entry("a00500x", "Asc", 3,
                                              "333-33-3333")), 0);
    ck_assert_int_eq(add(new_entry("a00501x", "Asc", 3, "333-33-3333")), 0);
    ck_assert_uint_eq(store_count_locked(&st), 2002);
    ck_assert_ptr_null(store_check_locked(&st));
    ck_assert_str_eq(entry_first(RB_ENTRY(rb_last(&st.tree), struct entry,
                                          node)), "a01999");
}
END_TEST

START_TEST(test_store_delete_returns_entry)
{
    struct entry *a = new_entry("Ann", "Smith", 30, "111-11-1111");
    struct entry *b = new_entry("Bob", "Smith", 31, "222-22-2222");
    struct entry *removed = NULL;

    ck_assert_int_eq(add(a), 0);
    ck_assert_int_eq(add(b), 0);
    ck_assert_int_eq(del("Ann", "Smith", &removed), 0);
    ck_assert_ptr_eq(removed, a);               /* the caller owns it now */
    ck_assert_str_eq(entry_first(removed), "Ann");
    ck_assert_int_eq(entry_age(removed), 30);
    ck_assert_uint_eq(store_count_locked(&st), 1);
    ck_assert_ptr_null(find("Ann", "Smith"));
    ck_assert_ptr_eq(find("Bob", "Smith"), b);
    ck_assert_ptr_null(store_check_locked(&st));
    entry_free(removed);

    /* The name can be added again afterwards. */
    ck_assert_int_eq(add(new_entry("Ann", "Smith", 5, "333-33-3333")), 0);
    ck_assert_int_eq(entry_age(find("Ann", "Smith")), 5);
}
END_TEST

START_TEST(test_store_delete_missing)
{
    struct entry *removed = NULL;

    ck_assert_int_eq(del("No", "Body", &removed), -ENOENT);
    ck_assert_ptr_null(removed);
    ck_assert_int_eq(add(new_entry("Some", "Body", 1, "123-45-6789")), 0);
    ck_assert_int_eq(del("No", "Body", &removed), -ENOENT);
    ck_assert_ptr_null(removed);
    ck_assert_int_eq(del("some", "Body", &removed), -ENOENT);
    ck_assert_uint_eq(store_count_locked(&st), 1);
    ck_assert_int_eq(del("Some", "Body", &removed), 0);
    entry_free(removed);
    ck_assert_int_eq(del("Some", "Body", &removed), -ENOENT);
    ck_assert_uint_eq(store_count_locked(&st), 0);
}
END_TEST

START_TEST(test_store_foreach_tree_order)
{
    static const char *const names[][2] = {     /* first, last */
        { "Zed", "Adams" }, { "bob", "Doe" }, { "John", "Doe" },
        { "Ann", "Smith" }, { "Amy", "Baker" }, { "x", "alpha" },
        { "Ann", "Doe" }, { "x", "Zulu" },
    };
    struct collect c = { .stop_at = -1 };

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        ck_assert_int_eq(add(new_entry(names[i][0], names[i][1], (int)i,
                                       "123-45-6789")), 0);
    ck_assert_int_eq(store_foreach_locked(&st, collect_one, &c), 0);
    ck_assert_int_eq(c.calls, 8);
    ck_assert_str_eq(c.text, "Adams,Zed;Baker,Amy;Doe,Ann;Doe,John;Doe,bob;"
                             "Smith,Ann;Zulu,x;alpha,x;");
}
END_TEST

START_TEST(test_store_foreach_stops_early)
{
    struct collect c = { .stop_at = 3 };
    char first[16];

    for (int i = 0; i < 10; i++) {
        snprintf(first, sizeof(first), "p%d", i);
        ck_assert_int_eq(add(new_entry(first, "Same", i, "123-45-6789")), 0);
    }
    ck_assert_int_eq(store_foreach_locked(&st, collect_one, &c), 7);
    ck_assert_int_eq(c.calls, 3);
    ck_assert_str_eq(c.text, "Same,p0;Same,p1;Same,p2;");
}
END_TEST

static int count_one(const struct entry *e, void *arg)
{
    (void)e;
    ++*(size_t *)arg;
    return 0;
}

/* A cycle (nolock's races can make one): the walk stops, bounded, instead
 * of calling fn for ever (a PRINT that never ended kept the demo's nolock
 * run going until kill_it's 60 s timeout). */
START_TEST(test_store_foreach_stops_on_a_cycle)
{
    size_t calls = 0;

    ck_assert_int_eq(add(new_entry("a", "a", 1, "123-45-6789")), 0);
    ck_assert_int_eq(add(new_entry("b", "b", 1, "123-45-6789")), 0);
    ck_assert_int_eq(add(new_entry("c", "c", 1, "123-45-6789")), 0);
    store_settle_locked(&st);           /* in the tree, to be broken */
    struct rb_node *last = rb_last(&st.tree);
    last->right = st.tree.root;         /* rb_next(last) starts over */
    ck_assert_int_eq(store_foreach_locked(&st, count_one, &calls), -ELOOP);
    ck_assert_uint_le(calls, 2 * 3 + RB_MAX_DEPTH);
    last->right = NULL;
    calls = 0;
    ck_assert_int_eq(store_foreach_locked(&st, count_one, &calls), 0);
    ck_assert_uint_eq(calls, 3);
}
END_TEST

START_TEST(test_store_check_reports_corruption)
{
    ck_assert_int_eq(add(new_entry("a", "a", 1, "123-45-6789")), 0);
    ck_assert_int_eq(add(new_entry("b", "b", 1, "123-45-6789")), 0);
    ck_assert_ptr_null(store_check_locked(&st));
    store_settle_locked(&st);           /* in the tree, to be broken */
    st.tree.root->red = 1;
    ck_assert_str_eq(store_check_locked(&st), "root is red");
    st.tree.root->red = 0;
    st.tree.count++;
    ck_assert_str_eq(store_check_locked(&st), "count mismatch");
    st.tree.count--;
    ck_assert_ptr_null(store_check_locked(&st));
}
END_TEST

/* What the race window saw: it runs after the place is found and before
 * anything is relinked, so the tree is still whole and unchanged then. */
struct pause_probe {
    int pauses;
    const char *first, *last;   /* the name being added or deleted */
    int found;                  /* was it in the tree during the pause? */
    size_t count;               /* the count during the pause */
    const char *check;          /* rb_check during the pause */
};

static void probe_pause(void *arg)
{
    struct pause_probe *p = arg;

    p->pauses++;
    p->found = find(p->first, p->last) != NULL;
    p->count = store_count_locked(&st);
    p->check = store_check_locked(&st);
}

START_TEST(test_store_pause_hook_runs_in_add_and_delete)
{
    struct pause_probe p = { .first = "a", .last = "b" };
    struct entry *removed;

    st.pause = probe_pause;
    st.pause_arg = &p;
    ck_assert_int_eq(add(new_entry("a", "b", 1, "123-45-6789")), 0);
    ck_assert_int_eq(p.pauses, 1);
    ck_assert_int_eq(p.found, 0);               /* not linked yet */
    ck_assert_uint_eq(p.count, 0);
    ck_assert_ptr_null(p.check);
    p.first = "c";
    p.last = "d";
    ck_assert_int_eq(add(new_entry("c", "d", 1, "123-45-6789")), 0);
    ck_assert_int_eq(p.pauses, 2);
    ck_assert_uint_eq(p.count, 1);
    p.first = "a";
    p.last = "b";
    ck_assert_int_eq(del("a", "b", &removed), 0);
    ck_assert_int_eq(p.pauses, 3);
    ck_assert_int_eq(p.found, 1);               /* not unlinked yet */
    ck_assert_uint_eq(p.count, 2);
    ck_assert_ptr_null(p.check);
    entry_free(removed);
    ck_assert_ptr_nonnull(find("c", "d"));      /* finds never pause */
    struct entry *dup = new_entry("c", "d", 1, "123-45-6789");
    ck_assert_int_eq(add(dup), -EEXIST);
    entry_free(dup);
    ck_assert_int_eq(del("x", "y", &removed), -ENOENT);
    ck_assert_int_eq(p.pauses, 3);              /* nor do failed changes */
}
END_TEST

static Suite *store_suite(void)
{
    Suite *s = suite_create("store");
    TCase *core = tcase_create("core");
    TCase *errors = tcase_create("errors");

    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_checked_fixture(errors, setup, teardown);

    tcase_add_test(core, test_store_empty);
    tcase_add_test(core, test_store_add_then_find);
    tcase_add_test(core, test_store_delete_returns_entry);
    tcase_add_test(core, test_store_foreach_tree_order);
    tcase_add_test(core, test_store_foreach_stops_early);
    tcase_add_test(core, test_store_foreach_stops_on_a_cycle);
    tcase_add_test(core, test_store_pause_hook_runs_in_add_and_delete);

    tcase_add_test(errors, test_store_add_duplicate);
    tcase_add_loop_test(errors, test_store_ascending_adds, 0, 2);
    tcase_add_test(errors, test_store_delete_missing);
    tcase_add_test(errors, test_store_check_reports_corruption);

    suite_add_tcase(s, core);
    suite_add_tcase(s, errors);
    return s;
}

SUITE_REGISTER(store_suite)
