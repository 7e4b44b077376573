/* check_lend.c -- unit tests for lending buffers (issue 26, lean
 * connections): the line reader's lr_attach/lr_detach rules (a stream
 * reads the same with its buffer changed between requests; `dirty` counts
 * what a wipe must cover), outbuf's lazy start and ob_attach/ob_detach,
 * and bufpool (spares kept up to the bound, the rest and odd sizes freed,
 * whatever comes back wiped).
 *
 *   linereader: detach only with nothing buffered, state kept across it;
 *   outbuf:     no allocation before the first append, dirty marks;
 *   bufpool:    get/put, the bound, wiping.
 */
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "bufpool.h"
#include "linereader.h"
#include "outbuf.h"

/* ---- the line reader ---------------------------------------------------- */

static char *take_line(struct linereader *lr, int *st)
{
    char *line = NULL;
    size_t len;

    *st = lr_next(lr, &line, &len);
    return line;
}

/* A fresh reader holds no buffer and nothing is pending; what was lent
 * comes back with the count of bytes written into it. */
START_TEST(test_lr_detach_gives_back_what_was_lent)
{
    struct linereader lr;
    char *a = malloc(LR_BUF_SIZE);
    size_t dirty = 99;
    int st;

    lr_init(&lr, 100);
    ck_assert_ptr_null(lr.buf);
    ck_assert_uint_eq(lr_pending(&lr), 0);
    ck_assert_ptr_null(lr_detach(&lr, &dirty));
    ck_assert_uint_eq(dirty, 0);
    lr_attach(&lr, a);
    ck_assert_uint_eq(lr_feed(&lr, "FIND a b\n", 9), 9);
    ck_assert_str_eq(take_line(&lr, &st), "FIND a b");
    ck_assert_int_eq(st, LR_LINE);
    take_line(&lr, &st);
    ck_assert_int_eq(st, LR_AGAIN);
    ck_assert_ptr_eq(lr_detach(&lr, &dirty), a);
    ck_assert_uint_eq(dirty, 9);
    ck_assert_ptr_null(lr.buf);
    free(a);
}
END_TEST

/* An over-long line being discarded stays known across a detach: its rest,
 * arriving in another buffer, is dropped, and the next line comes. */
START_TEST(test_lr_discarding_survives_detach)
{
    struct linereader lr;
    char *a = malloc(LR_BUF_SIZE), *b = malloc(LR_BUF_SIZE);
    size_t dirty;
    int st;

    lr_init(&lr, 4);
    lr_attach(&lr, a);
    lr_feed(&lr, "abcdefgh", 8);
    take_line(&lr, &st);
    ck_assert_int_eq(st, LR_TOOLONG);
    ck_assert_uint_eq(lr_pending(&lr), 0);
    ck_assert_ptr_eq(lr_detach(&lr, &dirty), a);
    memset(a, 'x', LR_BUF_SIZE);        /* the owner wipes it */
    lr_attach(&lr, b);
    lr_feed(&lr, "ijk\nok\n", 7);
    ck_assert_str_eq(take_line(&lr, &st), "ok");
    take_line(&lr, &st);
    ck_assert_int_eq(st, LR_AGAIN);
    lr_detach(&lr, &dirty);
    ck_assert_uint_eq(dirty, 7);        /* b's own bytes only */
    free(a);
    free(b);
}
END_TEST

/* dirty is the most the buffer ever held, not what it holds now. */
START_TEST(test_lr_dirty_is_the_high_water)
{
    struct linereader lr;
    char *a = malloc(LR_BUF_SIZE);
    size_t dirty;
    int st;

    lr_init(&lr, 100);
    lr_attach(&lr, a);
    lr_feed(&lr, "one\ntwo\nthree\n", 14);
    for (int i = 0; i < 3; i++)
        take_line(&lr, &st);
    lr_feed(&lr, "x\n", 2);             /* compacted to the start */
    take_line(&lr, &st);
    ck_assert_str_eq(a, "x");
    ck_assert_ptr_eq(lr_detach(&lr, &dirty), a);
    ck_assert_uint_eq(dirty, 14);
    free(a);
}
END_TEST

/* ---- outbuf --------------------------------------------------------------- */

START_TEST(test_ob_lazy_until_first_append)
{
    struct outbuf ob;

    ck_assert_int_eq(ob_init(&ob, 0), 0);
    ck_assert_ptr_null(ob.buf);
    ck_assert_int_eq(ob_append(&ob, "", 0), 0);
    ck_assert_ptr_null(ob.buf);
    ck_assert_int_eq(ob_printf(&ob, "%d\n", 42), 0);
    ck_assert_ptr_nonnull(ob.buf);
    ck_assert_uint_eq(ob.len, 3);
    ck_assert_int_eq(memcmp(ob.buf, "42\n", 3), 0);
    ob_destroy(&ob);
    ck_assert_ptr_null(ob.buf);
}
END_TEST

START_TEST(test_ob_attach_detach)
{
    struct outbuf ob;
    char *mem = malloc(64);
    size_t cap, dirty;

    ob_init(&ob, 0);
    ob.limit = 32;
    ob_attach(&ob, mem, 64);
    ck_assert_int_eq(ob_puts(&ob, "0123456789"), 0);
    ck_assert_ptr_eq(ob.buf, mem);              /* no allocation */
    ob_consume(&ob, 4);
    ob_consume(&ob, 6);
    ck_assert_ptr_eq(ob_detach(&ob, &cap, &dirty), mem);
    ck_assert_uint_eq(cap, 64);
    ck_assert_uint_eq(dirty, 10);
    ck_assert_ptr_null(ob.buf);
    ck_assert_uint_eq(ob.limit, 32);            /* the limit stays */
    free(mem);
    ob_destroy(&ob);
}
END_TEST

/* A printf that does not fit wrote a truncated part first: dirty covers
 * it, and after growing, the copy holds only the contents. */
START_TEST(test_ob_dirty_covers_truncated_printf)
{
    struct outbuf ob;
    size_t cap, dirty;

    ob_init(&ob, 0);
    ob_attach(&ob, malloc(8), 8);
    ck_assert_int_eq(ob_printf(&ob, "%s", "ab"), 0);
    ck_assert_uint_eq(ob.dirty, 3);             /* its NUL too */
    ck_assert_int_eq(ob_printf(&ob, "%s", "0123456789"), 0);
    ck_assert_uint_ge(ob.cap, 12);
    ck_assert_uint_ge(ob.dirty, 12);
    ck_assert_uint_le(ob.dirty, ob.cap);
    ck_assert_int_eq(memcmp(ob.buf, "ab0123456789", 12), 0);
    ob_consume(&ob, ob.len);
    char *b = ob_detach(&ob, &cap, &dirty);
    ck_assert_uint_le(dirty, cap);
    free(b);
}
END_TEST

/* ---- bufpool ---------------------------------------------------------------- */

START_TEST(test_bufpool_reuses_spares)
{
    struct bufpool p;

    bufpool_init(&p, 128, 2);
    char *a = bufpool_get(&p), *b = bufpool_get(&p), *c = bufpool_get(&p);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(p.allocs, 3);
    bufpool_put(&p, a, 128, 0);
    bufpool_put(&p, b, 128, 0);
    bufpool_put(&p, c, 128, 0);         /* over the bound: freed */
    ck_assert_int_eq(p.nspare, 2);
    ck_assert_uint_eq(p.frees, 1);
    ck_assert_ptr_eq(bufpool_get(&p), b);       /* last in, first out */
    ck_assert_ptr_eq(bufpool_get(&p), a);
    ck_assert_uint_eq(p.allocs, 3);
    bufpool_put(&p, a, 128, 0);
    bufpool_put(&p, b, 128, 0);
    bufpool_destroy(&p);
    ck_assert_int_eq(p.nspare, 0);
}
END_TEST

START_TEST(test_bufpool_wipes_what_comes_back)
{
    struct bufpool p;
    char *a;

    bufpool_init(&p, 64, 4);
    a = bufpool_get(&p);
    memset(a, 0, 64);
    memcpy(a, "123-45-6789", 11);
    bufpool_put(&p, a, 64, 11);
    ck_assert_ptr_eq(bufpool_get(&p), a);
    for (int i = 0; i < 64; i++)
        ck_assert_int_eq(a[i], 0);
    bufpool_put(&p, a, 64, 64);
    bufpool_destroy(&p);
}
END_TEST

/* A buffer of another size (a reply buffer that grew) is never kept, nor
 * NULL; a pool of 0 keeps nothing. */
START_TEST(test_bufpool_frees_odd_sizes)
{
    struct bufpool p;

    bufpool_init(&p, 64, 4);
    bufpool_put(&p, malloc(256), 256, 256);
    bufpool_put(&p, NULL, 64, 0);
    ck_assert_int_eq(p.nspare, 0);
    ck_assert_uint_eq(p.frees, 1);
    bufpool_destroy(&p);
    bufpool_init(&p, 64, 0);
    bufpool_put(&p, bufpool_get(&p), 64, 0);
    ck_assert_int_eq(p.nspare, 0);
    bufpool_init(&p, 64, 1000);
    ck_assert_int_eq(p.max, BUFPOOL_MAX_SPARE);
}
END_TEST

/* take and keep, the halves a shared pool uses under its owner's lock,
 * allocate and free nothing themselves: take says when the caller must
 * malloc, keep when it must free, and both count as get and put do. */
START_TEST(test_bufpool_take_and_keep_leave_malloc_to_the_caller)
{
    struct bufpool p;
    char *a = malloc(64), *big = malloc(256);

    bufpool_init(&p, 64, 1);
    ck_assert_ptr_null(bufpool_take(&p));           /* empty */
    ck_assert_uint_eq(p.allocs, 1);
    ck_assert_int_eq(bufpool_keep(&p, a, 64), 1);
    ck_assert_int_eq(bufpool_keep(&p, big, 256), 0);    /* not its size */
    ck_assert_uint_eq(p.frees, 1);
    ck_assert_ptr_eq(bufpool_take(&p), a);
    ck_assert_uint_eq(p.allocs, 1);
    ck_assert_int_eq(p.nspare, 0);
    free(a);
    free(big);
}
END_TEST

static Suite *lend_suite(void)
{
    Suite *s = suite_create("lend");
    TCase *lr = tcase_create("linereader");
    TCase *ob = tcase_create("outbuf");
    TCase *pool = tcase_create("bufpool");

    tcase_add_test(lr, test_lr_detach_gives_back_what_was_lent);
    tcase_add_test(lr, test_lr_discarding_survives_detach);
    tcase_add_test(lr, test_lr_dirty_is_the_high_water);
    tcase_add_test(ob, test_ob_lazy_until_first_append);
    tcase_add_test(ob, test_ob_attach_detach);
    tcase_add_test(ob, test_ob_dirty_covers_truncated_printf);
    tcase_add_test(pool, test_bufpool_reuses_spares);
    tcase_add_test(pool, test_bufpool_wipes_what_comes_back);
    tcase_add_test(pool, test_bufpool_frees_odd_sizes);
    tcase_add_test(pool, test_bufpool_take_and_keep_leave_malloc_to_the_caller);
    suite_add_tcase(s, lr);
    suite_add_tcase(s, ob);
    suite_add_tcase(s, pool);
    return s;
}

SUITE_REGISTER(lend_suite)
