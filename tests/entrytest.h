/* entrytest.h -- what check_entry.c and check_entry_new.c share: the
 * validators on literals, a stored entry and a plain person made from
 * literals, and the tree order of two people checked three ways. static
 * inline so each test file takes only what it uses.
 */
#ifndef SSN_TESTS_ENTRYTEST_H
#define SSN_TESTS_ENTRYTEST_H

#include <stdio.h>
#include <string.h>
#include <check.h>
#include "entry.h"

/* Runs a validator on a NUL-terminated literal. */
#define NAME_OK(s)  entry_name_ok((s), strlen(s))
#define SSN_OK(s)   entry_ssn_ok((s), strlen(s))

/* A stored entry from literals, which must be valid (entry_new checks
 * nothing: the caller validates). The caller frees it. */
static inline struct entry *make_entry(const char *first, const char *last,
                                       int age, const char *ssn)
{
    ck_assert(NAME_OK(first) && NAME_OK(last) && SSN_OK(ssn));
    struct entry *e = entry_new(last, strlen(last), first, strlen(first),
                                entry_ssn_pack(ssn), age);
    ck_assert_ptr_nonnull(e);
    return e;
}

static inline void make_person(struct person *p, const char *first,
                               const char *last, int age, const char *ssn)
{
    memset(p, 0, sizeof(*p));
    snprintf(p->first, sizeof(p->first), "%s", first);
    snprintf(p->last, sizeof(p->last), "%s", last);
    snprintf(p->ssn, sizeof(p->ssn), "%s", ssn);
    p->age = age;
}

static inline int sign(int v)
{
    return (v > 0) - (v < 0);
}

/* entry_cmp's order of two people; entry_key_cmp and person_cmp must
 * agree with it. */
static inline int cmp_names(const char *first_a, const char *last_a,
                            const char *first_b, const char *last_b)
{
    struct entry *a = make_entry(first_a, last_a, 1, "123-45-6789");
    struct entry *b = make_entry(first_b, last_b, 1, "123-45-6789");
    struct entry_key ka = { .last = last_a, .first = first_a };
    struct person pa, pb;

    make_person(&pa, first_a, last_a, 1, "123-45-6789");
    make_person(&pb, first_b, last_b, 1, "123-45-6789");
    int c = entry_cmp(&a->node, &b->node);
    ck_assert_int_eq(sign(entry_key_cmp(&ka, &b->node)), sign(c));
    ck_assert_int_eq(sign(person_cmp(&pa, &pb)), sign(c));
    entry_free(a);
    entry_free(b);
    return c;
}

#endif
