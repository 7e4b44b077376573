/* check_store_prefetch.c -- store_prefetch_parse and _locked
 * (server/store_prefetch.c),
 * the hint a batch of pipelined requests gives before it runs: it reads
 * whatever the input holds, whole lines or not, known commands or not,
 * names of any length, without reading past the buffer (ASan's runs) and
 * without changing the tree or the index; an ADD the index refuses stops
 * walking. Each buffer is copied into one
 * of exactly its length, so that a read past it is ASan's to see.
 */
#include <stdio.h>
#include <stdlib.h>
#include "suites.h"
#include "storetest.h"

/* Runs the hint on a copy of text (len bytes) and checks the store is as
 * it was. */
static void hint(const char *text, size_t len)
{
    char *copy = malloc(len ? len : 1);

    ck_assert_ptr_nonnull(copy);
    memcpy(copy, text, len);
    size_t before = store_count_locked(&st);
    struct store_prefetch pf;
    if (store_prefetch_parse(&st, &pf, copy, len, STORE_PREFETCH_MAX))
        store_prefetch_locked(&st, &pf);
    ck_assert_int_le(pf.nmade, pf.nwalk);
    for (int i = 0; i < pf.nmade; i++)
        entry_free(pf.made[i]);
    ck_assert_uint_eq(store_count_locked(&st), before);
    ck_assert_ptr_null(store_check_locked(&st));
    free(copy);
}

#define HINT(s) hint((s), sizeof(s) - 1)

static void fill(int n)
{
    char first[16], last[16];

    for (int i = 0; i < n; i++) {
        snprintf(first, sizeof(first), "f%d", (i * 7919) % n);
        snprintf(last, sizeof(last), "L%d", (i * 7919) % n);
        ck_assert_int_eq(add(new_entry(first, last, 30, "123-45-6789")), 0);
    }
}

START_TEST(test_prefetch_empty_store)
{
    HINT("ADD a b 1 123-45-6789\nFIND a b\nDELETE a b\n");
    HINT("");
}
END_TEST

START_TEST(test_prefetch_reads_any_input)
{
    static char names63[200], names64[200];

    fill(2000);
    HINT("ADD f1 L1 30 123-45-6789\nADD fx Lx 30 123-45-6789\n"
         "find f5 L5\nDELETE f7 L7\nCOUNT\nPRINT\n");
    HINT("ADD f1 L1 30 123-45-6789");               /* no newline */
    HINT("ADD\nADD f1\nFIND\nDELETE   \n\n\n");    /* words missing */
    HINT("ADDX f1 L1\nFINDER a b\nAD a b\n\r\n");   /* other commands */
    HINT("ADD f1 L1\r\nFIND\tf2\tL2\r\n");         /* CRLF and tabs */
    HINT("\xff\xfe\x00\x01 ADD \x80 \x81\n");       /* bytes */
    /* Names at the limit and over it (skipped, never copied past it). */
    memset(names63, 'a', 63);
    snprintf(names63 + 63, sizeof(names63) - 63, " %.*s\n", 63,
             "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    char line[300];
    snprintf(line, sizeof(line), "ADD %s", names63);
    hint(line, strlen(line));
    memset(names64, 'a', 64);
    snprintf(line, sizeof(line), "FIND %.*s b\nADD b %.*s 1 1\n", 64, names64,
             64, names64);
    hint(line, strlen(line));
    /* More lines than it looks at. */
    char many[4096];
    size_t n = 0;
    for (int i = 0; i < 40; i++)
        n += (size_t)snprintf(many + n, sizeof(many) - n,
                              "ADD g%d M%d 30 123-45-6789\n", i, i);
    hint(many, n);
}
END_TEST

START_TEST(test_prefetch_parse_counts)
{
    struct store_prefetch pf;
    static const char in[] = "FIND a b\nADD c d 1 111-11-1111\nCOUNT\n"
                             "delete e f\nADD g\nADD h i 1 1";  /* no \n */

    ck_assert_int_eq(store_prefetch_parse(&st, &pf, in, sizeof(in) - 1, 0), 3);
    ck_assert_int_eq(pf.nwalk, 1);                  /* the ADD, first */
    ck_assert_str_eq(pf.k[0].last, "d");
    ck_assert_str_eq(pf.k[0].first, "c");
    ck_assert_uint_eq(pf.k[0].h, sindex_hash(&st.index, "d", "c"));
    ck_assert_str_eq(pf.k[2].last, "f");
    /* nolock keeps no index: nothing is read ahead. */
    struct store nl;
    ck_assert_int_eq(store_init(&nl, &lock_policies[LOCK_MODE_NOLOCK]), 0);
    ck_assert_int_eq(store_prefetch_parse(&nl, &pf, in, sizeof(in) - 1, 0), 0);
    store_destroy(&nl);
}
END_TEST

/* The entries of the first `make` ADDs are made before the lock, in
 * input order, each as cmd_add would make it from its line; FINDs,
 * DELETEs and lines proto_parse refuses make none. */
START_TEST(test_prefetch_makes_adds)
{
    struct store_prefetch pf;
    static const char in[] = "FIND a b\nADD c d 41 111-11-1111\n"
                             "ADD e f 150 123-45-6789\nDELETE g h\n"
                             "ADD i j 1 12-345-6789\nADD k l 7 321-54-9876\n";
    char ssn[ENTRY_SSN_LEN + 1];

    ck_assert_int_eq(store_prefetch_parse(&st, &pf, in, sizeof(in) - 1, 0), 5);
    ck_assert_int_eq(pf.nmade, 0);
    ck_assert_int_eq(store_prefetch_parse(&st, &pf, in, sizeof(in) - 1, 16), 5);
    ck_assert_int_eq(pf.nmade, 3);
    ck_assert_str_eq(pf.made[0]->names, "d");
    ck_assert_str_eq(entry_first(pf.made[0]), "c");
    ck_assert_int_eq(entry_age(pf.made[0]), 41);
    ck_assert_str_eq(entry_ssn_unpack(pf.made[0]->ssn, ssn), "111-11-1111");
    ck_assert_str_eq(pf.made[1]->names, "f");
    ck_assert_int_eq(entry_age(pf.made[1]), 150);
    ck_assert_str_eq(pf.made[2]->names, "l");
    ck_assert_str_eq(entry_ssn_unpack(pf.made[2]->ssn, ssn), "321-54-9876");
    for (int i = 0; i < pf.nmade; i++)
        entry_free(pf.made[i]);
    /* No more than asked for (the batch's own bound). */
    ck_assert_int_eq(store_prefetch_parse(&st, &pf, in, sizeof(in) - 1, 2), 5);
    ck_assert_int_eq(pf.nmade, 2);
    ck_assert_str_eq(pf.made[1]->names, "f");
    for (int i = 0; i < pf.nmade; i++)
        entry_free(pf.made[i]);
}
END_TEST

static int add_hinted(struct entry *e, const struct store_slot_hint *hint)
{
    struct store_mutation m = { .op = STORE_ADD, .entry = e, .hint = *hint };
    return store_apply_locked(&st, &m);
}

/* The walk of each ADD ends at its empty place, and an ADD linked there
 * (add_locked's hint) leaves a valid tree: also when an earlier ADD of
 * the batch took that place (f100a then f100b, neighbours), when an
 * entry was unlinked since, and when the hint is wrong outright, which
 * the store must refuse and walk instead (fails when hints are trusted). */
START_TEST(test_prefetch_slot_hints)
{
    struct store_prefetch pf;
    static const char in[] = "ADD f100a L100 1 111-11-1111\n"
                             "ADD f100b L100 1 111-11-1111\n"
                             "ADD zz zz 1 111-11-1111\n"
                             "ADD f7a L7 1 111-11-1111\n";
    struct entry *gone;

    fill(2000);
    ck_assert_int_eq(store_prefetch_parse(&st, &pf, in, sizeof(in) - 1, 4), 4);
    ck_assert_int_eq(store_prefetch_locked(&st, &pf), 4);
    for (int i = 0; i < 4; i++)
        ck_assert_ptr_nonnull(pf.k[i].slot.parent);
    /* Neighbours: the first takes the place both walks ended at. */
    ck_assert_int_eq(add_hinted(pf.made[0], &pf.k[0].slot), 0);
    ck_assert_int_eq(add_hinted(pf.made[1], &pf.k[1].slot), 0);
    ck_assert_ptr_null(store_check_locked(&st));
    /* An entry unlinked since: the hint is not used. */
    ck_assert_int_eq(del("f5", "L5", &gone), 0);
    entry_free(gone);
    ck_assert_int_eq(add_hinted(pf.made[2], &pf.k[2].slot), 0);
    /* A wrong hint: the first node's left side, for a key after it. */
    struct store_slot_hint wrong = { .parent = rb_first(&st.tree),
                                     .left = 1, .erases = st.erases };
    ck_assert_int_eq(add_hinted(pf.made[3], &wrong), 0);
    ck_assert_ptr_null(store_check_locked(&st));
    /* Wrong in the other way: an empty left side whose key is after the
     * new one, but so is the node before it (rotations can leave such a
     * place behind a walk's). */
    struct rb_node *n = rb_next(rb_first(&st.tree));
    while (n->left || !rb_prev(n))
        n = rb_next(n);
    wrong.parent = n;
    ck_assert_int_eq(add_hinted(new_entry("a", "A", 1, "111-11-1111"),
                                &wrong), 0);
    ck_assert_ptr_null(store_check_locked(&st));
    store_settle_locked(&st);           /* refused: walked, maybe later */
    ck_assert_ptr_null(store_check_locked(&st));
    ck_assert_ptr_eq(rb_first(&st.tree)->left, NULL);
    ck_assert_str_eq(entry_last(RB_ENTRY(rb_first(&st.tree), struct entry,
                                         node)), "A");
    ck_assert_uint_eq(store_count_locked(&st), 2000 + 5 - 1);
    ck_assert_ptr_nonnull(find("f100a", "L100"));
    ck_assert_ptr_nonnull(find("f100b", "L100"));
    ck_assert_ptr_nonnull(find("zz", "zz"));
    ck_assert_ptr_nonnull(find("f7a", "L7"));
}
END_TEST

/* An ADD of a name the store holds stops walking once the index is
 * asked; a new name walks on (fails when every ADD walks the tree). */
START_TEST(test_prefetch_refused_add_stops)
{
    struct store_prefetch pf;
    static const char in[] = "ADD f3 L3 1 111-11-1111\n"
                             "ADD new one 1 111-11-1111\n"
                             "FIND f4 L4\nADD f5 L5 1 111-11-1111\n";

    fill(2000);
    ck_assert_int_eq(store_prefetch_parse(&st, &pf, in, sizeof(in) - 1, 0), 4);
    ck_assert_int_eq(pf.nwalk, 3);
    ck_assert_int_eq(store_prefetch_locked(&st, &pf), 1);
}
END_TEST

static void setup_buffered(void)
{
    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_BUFFERED]), 0);
    store_lock(&st);
}

static void teardown_buffered(void)
{
    store_unlock(&st);
    store_destroy(&st);
}

static Suite *store_prefetch_suite(void)
{
    Suite *s = suite_create("store_prefetch");
    TCase *tc = tcase_create("hint");

    tcase_add_checked_fixture(tc, setup_buffered, teardown_buffered);
    tcase_add_test(tc, test_prefetch_empty_store);
    tcase_add_test(tc, test_prefetch_reads_any_input);
    tcase_add_test(tc, test_prefetch_makes_adds);
    tcase_add_test(tc, test_prefetch_slot_hints);
    tcase_add_test(tc, test_prefetch_parse_counts);
    tcase_add_test(tc, test_prefetch_refused_add_stops);
    suite_add_tcase(s, tc);
    return s;
}
SUITE_REGISTER(store_prefetch_suite)
