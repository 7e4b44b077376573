/* expect.c -- expected final state of generated streams (expect.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "expect.h"

void expect_init(struct expect *x)
{
    memset(x, 0, sizeof(*x));
}

void expect_free(struct expect *x)
{
    free(x->e);
    expect_init(x);
}

static int reserve(struct expect *x, size_t add)
{
    if (x->n + add > x->cap) {
        size_t cap = x->cap ? x->cap : 64;
        while (cap < x->n + add)
            cap *= 2;
        struct person *e = realloc(x->e, cap * sizeof(*e));
        if (!e)
            return -ENOMEM;
        x->e = e;
        x->cap = cap;
    }
    return 0;
}

int expect_add_entry(struct expect *x, const struct person *e)
{
    if (reserve(x, 1))
        return -ENOMEM;
    x->e[x->n++] = *e;
    return 0;
}

int expect_add(struct expect *x, const struct gen *g)
{
    size_t add = gen_live_count(g);
    if (reserve(x, add))
        return -ENOMEM;
    for (size_t i = 0; i < add; i++)
        gen_live_entry(g, i, &x->e[x->n + i]);
    x->n += add;
    return 0;
}

static int cmp_entry(const void *a, const void *b)
{
    return person_cmp(a, b);
}

void expect_sort(struct expect *x)
{
    if (x->n)
        qsort(x->e, x->n, sizeof(*x->e), cmp_entry);
    x->dups = 0;
    for (size_t i = 1; i < x->n; i++)
        x->dups += cmp_entry(&x->e[i - 1], &x->e[i]) == 0;
}

int expect_write(const struct expect *x, FILE *f)
{
    char line[ENTRY_LINE_MAX];
    for (size_t i = 0; i < x->n; i++) {
        size_t len = person_format_dump(&x->e[i], line);
        if (fwrite(line, 1, len, f) != len)
            return -EIO;
    }
    return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}

int expect_digest(const struct expect *x, char hex[DIGEST_HEX_LEN + 1])
{
    char buf[8192];
    size_t len = 0;
    struct digest *d = digest_new();
    int rc = d ? digest_begin(d) : -1;

    for (size_t i = 0; rc == 0 && i < x->n; i++) {
        if (len + ENTRY_LINE_MAX > sizeof(buf)) {
            rc = digest_update(d, buf, len);
            len = 0;
        }
        len += person_format_dump(&x->e[i], buf + len);
    }
    if (rc == 0)
        rc = digest_update(d, buf, len);
    if (rc == 0)
        rc = digest_end(d, hex);
    digest_free(d);
    return rc ? -1 : 0;
}
