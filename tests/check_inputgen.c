/* check_inputgen.c -- the request generator (client/lib/gen.c), the name lists
 * (client/lib/names.c) and the expected-state dump (client/lib/expect.c).
 * The argument parsers the client tools share (client/lib/cliutil.c) are
 * check_cliutil.c's.
 *
 * Streams are checked by replaying them into a small reference model (an
 * array of live names), so "a DELETE names a live person" and "an ADD never
 * names a live one" are tested on the bytes the tools actually print.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "digest.h"
#include "../client/lib/expect.h"
#include "../client/lib/gen.h"
#include "../client/lib/names.h"

#define MODEL_MAX 4096          /* live people the reference model holds */

static const char small_list[] =
    "# a comment\n"
    "Smith\nJones\r\n\nBrown\nTaylor\nSmith\nWilson\nDavies\nEvans\n";

/* The reference model: live "first last" keys with their dump lines. */
struct model {
    char key[MODEL_MAX][2 * ENTRY_NAME_MAX + 2];
    char dump[MODEL_MAX][ENTRY_LINE_MAX];
    int n;
    int max_live, min_live_after_warmup;
    unsigned long counts[GEN_NOPS];
};

static int model_find(const struct model *m, const char *key)
{
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->key[i], key) == 0)
            return i;
    return -1;
}

/* Applies one generated line; fails the test on any broken promise. */
static void model_apply(struct model *m, const char *line, enum gen_op op,
                        unsigned long index)
{
    char cmd[16], first[64], last[64], ssn[16], key[130];
    int age = -1;

    ck_assert_int_gt(sscanf(line, "%15s", cmd), 0);
    if (op == GEN_ADD) {
        ck_assert_int_eq(sscanf(line, "ADD %63s %63s %d %15s", first, last,
                                &age, ssn), 4);
        ck_assert(age >= 0 && age <= 99);
        ck_assert(entry_ssn_ok(ssn, strlen(ssn)));
        snprintf(key, sizeof(key), "%s %s", first, last);
        ck_assert_msg(model_find(m, key) < 0, "ADD of a live name: %s", line);
        ck_assert_int_lt(m->n, MODEL_MAX);
        strcpy(m->key[m->n], key);
        snprintf(m->dump[m->n], ENTRY_LINE_MAX, "%s %s %d %s\n", last, first,
                 age, ssn);
        m->n++;
    } else if (op == GEN_DELETE || op == GEN_FIND) {
        ck_assert_int_eq(sscanf(line, "%15s %63s %63s", cmd, first, last), 3);
        ck_assert_str_eq(cmd, op == GEN_DELETE ? "DELETE" : "FIND");
        snprintf(key, sizeof(key), "%s %s", first, last);
        int i = model_find(m, key);
        ck_assert_msg(i >= 0, "%s of a name not live: %s", cmd, line);
        if (op == GEN_DELETE) {
            m->n--;
            memmove(m->key[i], m->key[m->n], sizeof(m->key[i]));
            memmove(m->dump[i], m->dump[m->n], sizeof(m->dump[i]));
        }
    } else {
        ck_assert_str_eq(line, op == GEN_PRINT ? "PRINT\n" : "DONE\n");
    }
    m->counts[op]++;
    if (m->n > m->max_live)
        m->max_live = m->n;
    if (index >= GEN_WARMUP && op != GEN_DONE &&
        (m->min_live_after_warmup < 0 || m->n < m->min_live_after_warmup))
        m->min_live_after_warmup = m->n;
}

/* Runs a whole stream through the model; returns a 64-bit FNV-1a hash of
 * its bytes. */
static uint64_t run_stream(struct gen *g, struct model *m)
{
    char line[GEN_LINE_MAX];
    enum gen_op op;
    size_t n;
    unsigned long i = 0;
    uint64_t h = 1469598103934665603ull;

    memset(m, 0, sizeof(*m));
    m->min_live_after_warmup = -1;
    while ((n = gen_next(g, line, &op)) > 0) {
        ck_assert_uint_eq(strlen(line), n);
        ck_assert(line[n - 1] == '\n');
        if (i < GEN_WARMUP && i < g->opt.nevents)
            ck_assert_msg(op == GEN_ADD, "event %lu is not an ADD", i);
        model_apply(m, line, op, i++);
        for (size_t k = 0; k < n; k++)
            h = (h ^ (unsigned char)line[k]) * 1099511628211ull;
    }
    ck_assert_int_ne(op, GEN_NOPS);
    return h;
}

static struct namelist names;
static struct model model;

static void load_default(void)
{
    char err[200];
    ck_assert_msg(names_load(&names, NULL, err, sizeof(err)) == 0, "%s", err);
}

static void unload(void)
{
    names_free(&names);
}

static void start(struct gen *g, uint64_t nevents, uint64_t seed,
                  unsigned k, unsigned n)
{
    struct gen_opts o = { .nevents = nevents, .seed = seed, .shard_k = k,
                          .shard_n = n, .mix = GEN_MIX_DEFAULT };
    ck_assert_int_eq(gen_init(g, &names, &o), 0);
}

START_TEST(test_gen_deterministic)
{
    struct gen a, b, c;
    start(&a, 2000, 42, 0, 1);
    start(&b, 2000, 42, 0, 1);
    start(&c, 2000, 43, 0, 1);
    uint64_t ha = run_stream(&a, &model), hb = run_stream(&b, &model);
    uint64_t hc = run_stream(&c, &model);
    ck_assert_uint_eq(ha, hb);
    ck_assert_uint_ne(ha, hc);
    gen_destroy(&a);
    gen_destroy(&b);
    gen_destroy(&c);
}
END_TEST

/* The same stream on every machine: a fixed list, a recorded hash. If this
 * fails, the generator's output format or PRNG order changed. */
START_TEST(test_gen_golden_stream)
{
    struct namelist nl;
    char err[200];
    ck_assert_int_eq(names_parse(&nl, small_list, strlen(small_list), err,
                                 sizeof(err)), 0);
    struct gen_opts o = { .nevents = 500, .seed = 7, .shard_n = 1,
                          .mix = GEN_MIX_DEFAULT };
    struct gen g;
    ck_assert_int_eq(gen_init(&g, &nl, &o), 0);
    uint64_t h = run_stream(&g, &model);
    ck_assert_msg(h == 0xda1dc53400be5919ull, "stream hash %016llx changed",
                  (unsigned long long)h);
    gen_destroy(&g);
    names_free(&nl);
}
END_TEST

START_TEST(test_gen_ratio_and_warmup)
{
    struct gen g;
    const unsigned blocks = 300;
    start(&g, GEN_WARMUP + 11 * blocks, 5, 0, 1);
    run_stream(&g, &model);
    ck_assert_uint_eq(model.counts[GEN_ADD], GEN_WARMUP + 5 * blocks);
    ck_assert_uint_eq(model.counts[GEN_DELETE], 5 * blocks);
    ck_assert_uint_eq(model.counts[GEN_PRINT], blocks + 1);   /* + closing */
    ck_assert_uint_eq(model.counts[GEN_DONE], 1);
    /* Exact blocks keep the live set near GEN_WARMUP. */
    ck_assert_int_le(model.max_live, GEN_WARMUP + 5);
    ck_assert_int_ge(model.min_live_after_warmup, GEN_WARMUP - 5);
    ck_assert_uint_eq(gen_live_count(&g), (size_t)model.n);
    gen_destroy(&g);
}
END_TEST

START_TEST(test_gen_short_stream)
{
    struct gen g;
    start(&g, 3, 1, 0, 1);
    run_stream(&g, &model);
    ck_assert_uint_eq(model.counts[GEN_ADD], 3);
    ck_assert_uint_eq(model.counts[GEN_PRINT], 1);
    gen_destroy(&g);
    start(&g, 0, 1, 0, 1);
    run_stream(&g, &model);
    ck_assert_uint_eq(model.counts[GEN_PRINT] + model.counts[GEN_DONE], 2);
    gen_destroy(&g);
}
END_TEST

START_TEST(test_gen_shards_disjoint)
{
    const unsigned n = 4;
    static char seen[8192];         /* which shard used each last name */
    memset(seen, 0, sizeof(seen));
    ck_assert_uint_le(names.n, sizeof(seen));
    for (unsigned k = 0; k < n; k++) {
        struct gen g;
        char line[GEN_LINE_MAX], last[64];
        enum gen_op op;
        start(&g, 3000, 100 + k, k, n);
        while (gen_next(&g, line, &op) > 0) {
            if (op != GEN_ADD)
                continue;
            ck_assert_int_eq(sscanf(line, "ADD %*s %63s", last), 1);
            size_t idx = 0;
            while (idx < names.n && strcmp(names.name[idx], last) != 0)
                idx++;
            ck_assert_uint_lt(idx, names.n);
            ck_assert_uint_eq(idx % n, k);
            ck_assert(seen[idx] == 0 || seen[idx] == (char)(k + 1));
            seen[idx] = (char)(k + 1);
        }
        gen_destroy(&g);
    }
}
END_TEST

START_TEST(test_gen_mix_with_find)
{
    struct gen_opts o = { .nevents = 3000, .seed = 9, .shard_n = 1,
                          .mix = { { 2, 1, 1, 3 } } };
    struct gen g;
    ck_assert_int_eq(gen_init(&g, &names, &o), 0);
    run_stream(&g, &model);          /* FINDs must name live people */
    ck_assert_uint_gt(model.counts[GEN_FIND], 1000);
    ck_assert_uint_gt(model.counts[GEN_ADD], model.counts[GEN_DELETE]);
    gen_destroy(&g);

    /* Deletes only: the set drains, and DELETE turns into ADD when empty. */
    struct gen_opts d = { .nevents = 500, .seed = 9, .shard_n = 1,
                          .mix = { { 0, 1, 0, 0 } } };
    ck_assert_int_eq(gen_init(&g, &names, &d), 0);
    run_stream(&g, &model);
    ck_assert_int_le(model.n, 1);
    gen_destroy(&g);
}
END_TEST

START_TEST(test_gen_tiny_name_space)
{
    /* One last name, 65 first names: the stream must still never add a
     * live name, by deleting when every name is taken. */
    struct namelist nl;
    char err[100];
    ck_assert_int_eq(names_parse(&nl, "Solo\n", 5, err, sizeof(err)), 0);
    struct gen_opts o = { .nevents = 2000, .seed = 3, .shard_n = 1,
                          .mix = { { 10, 1, 1, 0 } } };
    struct gen g;
    ck_assert_int_eq(gen_init(&g, &nl, &o), 0);
    run_stream(&g, &model);
    ck_assert_int_le(model.max_live, NAMES_NFIRST);
    gen_destroy(&g);
    names_free(&nl);
}
END_TEST

START_TEST(test_gen_bad_options)
{
    struct gen g;
    struct gen_opts o = { .nevents = 10, .shard_k = 4, .shard_n = 4,
                          .mix = GEN_MIX_DEFAULT };
    ck_assert_int_eq(gen_init(&g, &names, &o), -EINVAL);
    o.shard_k = 0;
    o.shard_n = 0;
    ck_assert_int_eq(gen_init(&g, &names, &o), -EINVAL);
    o.shard_n = 1;
    o.mix = (struct gen_mix){ { 0, 0, 0, 0 } };
    ck_assert_int_eq(gen_init(&g, &names, &o), -EINVAL);
    /* more shards than names: an empty shard */
    struct namelist nl;
    char err[100];
    ck_assert_int_eq(names_parse(&nl, "A\nB\n", 4, err, sizeof(err)), 0);
    struct gen_opts e = { .nevents = 10, .shard_k = 2, .shard_n = 3,
                          .mix = GEN_MIX_DEFAULT };
    ck_assert_int_eq(gen_init(&g, &nl, &e), -EINVAL);
    names_free(&nl);
}
END_TEST

static int cmp_dump(const void *a, const void *b)
{
    char la[64], fa[64], lb[64], fb[64];
    sscanf(a, "%63s %63s", la, fa);
    sscanf(b, "%63s %63s", lb, fb);
    int c = strcmp(la, lb);
    return c ? c : strcmp(fa, fb);
}

START_TEST(test_expect_matches_model)
{
    struct gen g;
    struct expect x;
    start(&g, 1500, 11, 0, 1);
    run_stream(&g, &model);
    expect_init(&x);
    ck_assert_int_eq(expect_add(&x, &g), 0);
    expect_sort(&x);
    ck_assert_uint_eq(x.n, (size_t)model.n);
    ck_assert_uint_eq(x.dups, 0);

    /* The model's dump lines, sorted by (last, first), must be the file. */
    qsort(model.dump, (size_t)model.n, sizeof(model.dump[0]), cmp_dump);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_int_eq(expect_write(&x, f), 0);
    fclose(f);
    size_t off = 0;
    for (int i = 0; i < model.n; i++) {
        size_t l = strlen(model.dump[i]);
        ck_assert_msg(off + l <= len && memcmp(text + off, model.dump[i], l)
                      == 0, "line %d differs", i);
        off += l;
    }
    ck_assert_uint_eq(off, len);

    /* Its digest is SHA-256 of exactly those bytes. */
    char h1[DIGEST_HEX_LEN + 1], h2[DIGEST_HEX_LEN + 1];
    ck_assert_int_eq(digest_global_init(), 0);
    ck_assert_int_eq(expect_digest(&x, h1), 0);
    struct digest *d = digest_new();
    ck_assert_int_eq(digest_hex(d, text, len, h2), 0);
    ck_assert_str_eq(h1, h2);
    digest_free(d);
    free(text);
    expect_free(&x);
    gen_destroy(&g);
}
END_TEST

START_TEST(test_names_parse)
{
    struct namelist nl;
    char err[200];
    ck_assert_int_eq(names_parse(&nl, small_list, strlen(small_list), err,
                                 sizeof(err)), 0);
    ck_assert_uint_eq(nl.n, 7);             /* Smith once; no blanks */
    ck_assert_uint_eq(nl.duplicates, 1);
    ck_assert_str_eq(nl.name[0], "Smith");
    ck_assert_str_eq(nl.name[1], "Jones");  /* \r dropped */
    ck_assert_str_eq(nl.name[6], "Evans");
    names_free(&nl);

    const char bad[] = "Ok\nNot ok\n";
    ck_assert_int_eq(names_parse(&nl, bad, strlen(bad), err, sizeof(err)),
                     -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "line 2"));
    /* A name the server's ADD would refuse: Latin-1, not UTF-8. */
    const char latin1[] = "Zo\xc3\xab\nZo\xeb\n";
    ck_assert_int_eq(names_parse(&nl, latin1, strlen(latin1), err,
                                 sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "line 2"));
    ck_assert_int_eq(names_parse(&nl, "# only\n\n", 8, err, sizeof(err)),
                     -EINVAL);
    ck_assert_int_eq(names_load(&nl, "/nonexistent/names", err, sizeof(err)),
                     -ENOENT);
}
END_TEST

START_TEST(test_names_bundled)
{
    ck_assert_uint_ge(names.n, 2000);
    ck_assert_uint_eq(names.duplicates, 0);
    for (size_t i = 0; i < names.n; i++) {
        ck_assert(entry_name_ok(names.name[i], strlen(names.name[i])));
        for (const char *p = names.name[i]; *p; p++)
            ck_assert(((*p | 32) >= 'a' && (*p | 32) <= 'z'));
    }
    for (int i = 0; i < NAMES_NFIRST; i++)
        ck_assert(entry_name_ok(names_first[i], strlen(names_first[i])));
}
END_TEST

static Suite *inputgen_suite(void)
{
    Suite *s = suite_create("inputgen");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, load_default, unload);
    tcase_add_test(core, test_gen_deterministic);
    tcase_add_test(core, test_gen_golden_stream);
    tcase_add_test(core, test_gen_ratio_and_warmup);
    tcase_add_test(core, test_gen_short_stream);
    tcase_add_test(core, test_gen_shards_disjoint);
    tcase_add_test(core, test_gen_mix_with_find);
    tcase_add_test(core, test_gen_tiny_name_space);
    tcase_add_test(core, test_expect_matches_model);
    suite_add_tcase(s, core);

    TCase *errors = tcase_create("errors");
    tcase_add_checked_fixture(errors, load_default, unload);
    tcase_add_test(errors, test_gen_bad_options);
    tcase_add_test(errors, test_names_parse);
    tcase_add_test(errors, test_names_bundled);
    suite_add_tcase(s, errors);
    return s;
}

SUITE_REGISTER(inputgen_suite)
