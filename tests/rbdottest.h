/* rbdottest.h -- the fixture and helpers shared by the unit tests of TREE's
 * drawing (check_rbtree_dot.c, check_rbtree_dot_phases.c) and of
 * rb_check_faults() (check_rbtree_faults.c): a tree of N items with spaced
 * keys, a drawing collected line by line into dot (an out callback that
 * can stop it), labels "k<key>", and lookups in the drawing and in the
 * tree by heap slot (root 1, children 2i and 2i+1). static inline so each
 * test file takes only what it uses; each file gets its own copy of the
 * fixture.
 */
#ifndef SSN_TESTS_RBDOTTEST_H
#define SSN_TESTS_RBDOTTEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <check.h>
#include "rbtree.h"
#include "rbtree_dot.h"
#include "rbtest.h"

enum { N = 63 };

static struct item items[N + 1];        /* + 1: a node hung on by hand */
static struct rb_tree tree;

static char dot[1 << 20];               /* the last drawing */
static size_t dot_len;
static int dot_lines, stop_after, labels_made;

static inline void setup(void)
{
    build_spaced(&tree, items, N, 2024);
}

static inline int out_cb(void *arg, const char *line, size_t len)
{
    (void)arg;
    ck_assert_uint_lt(dot_len + len, sizeof(dot));
    ck_assert_int_eq(line[len - 1], '\n');
    ck_assert_ptr_null(memchr(line, '\n', len - 1));   /* one line each */
    memcpy(dot + dot_len, line, len);
    dot_len += len;
    dot[dot_len] = '\0';
    return ++dot_lines == stop_after ? 7 : 0;
}

static inline void label_cb(const struct rb_node *n, char *buf,
                            size_t size)
{
    labels_made++;
    snprintf(buf, size, "k%d", key_of(n));
}

static inline int draw(const struct rb_tree *t, int depth, int nil)
{
    struct rb_dot d = { .depth = depth, .nil_leaves = nil, .cmp = item_cmp,
                        .label = label_cb, .out = out_cb };

    dot_len = 0;
    dot[0] = '\0';
    dot_lines = labels_made = 0;
    return rb_dot_write(t, &d);
}

/* The line "  " + fmt's text starts, without its '\n'; or NULL. */
static inline __attribute__((format(printf, 1, 2)))
const char *line_of(const char *fmt, ...)
{
    static char line[1024];
    char want[256] = "\n  ";
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(want + 3, sizeof(want) - 3, fmt, ap);
    va_end(ap);
    const char *p = strstr(dot, want);
    if (!p)
        return NULL;
    p += 3;
    size_t n = strcspn(p, "\n");
    ck_assert_uint_lt(n, sizeof(line));
    memcpy(line, p, n);
    line[n] = '\0';
    return line;
}

static inline int count_of(const char *needle)
{
    int n = 0;

    for (const char *p = dot; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* The node in heap slot i of t (root 1, children 2i and 2i+1), or NULL. */
static inline struct rb_node *at_slot(const struct rb_tree *t, size_t i)
{
    if (i == 0)
        return NULL;            /* no slot 0 (and clz(0) is undefined) */
    int top = 63 - __builtin_clzll(i);
    struct rb_node *n = t->root;

    for (int b = top - 1; b >= 0 && n; b--)
        n = (i >> b) & 1 ? n->right : n->left;
    return n;
}

/* The first slot (breadth first) of the top 10 levels holding n, or 0. */
static inline size_t slot_of(const struct rb_tree *t, const struct rb_node *n)
{
    for (size_t i = 1; i < 1024; i++)
        if (at_slot(t, i) == n)
            return i;
    return 0;
}

static inline size_t subtree_size(const struct rb_node *n)
{
    return n ? 1 + subtree_size(n->left) + subtree_size(n->right) : 0;
}

/* The first node in key order that pred accepts and that lies in the top
 * 10 levels; the test fails if there is none. */
static inline struct rb_node *find_node(bool (*pred)(const struct rb_node *))
{
    for (struct rb_node *p = rb_first(&tree); p; p = rb_next(p))
        if (pred(p) && slot_of(&tree, p))
            return p;
    ck_abort_msg("test tree has no node of the kind needed");
    return NULL;
}

/* A leaf at depth 4 or deeper. */
static inline bool deep_leaf(const struct rb_node *n)
{
    return !n->left && !n->right && n->parent && n->parent->parent
        && n->parent->parent->parent;
}

#endif
