/* store.c -- people kept in a red-black tree keyed by (last, first).
 * Nothing here locks: callers hold the store lock (see lockmode.h) around
 * every call ending in _locked. Nothing here allocates under that lock
 * either: entries are made and freed by the session, outside it. */
#include <errno.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include "store.h"

void store_init(struct store *s, rb_pause_fn pause, void *arg)
{
    rb_init(&s->tree, entry_cmp);
    s->tree.pause = pause;
    s->tree.pause_arg = arg;
}

void store_destroy(struct store *s)
{
    struct rb_node *n = rb_first(&s->tree);

    s->tree.pause = NULL;
    while (n) {
        struct rb_node *next = rb_next(n);
        rb_erase(&s->tree, n);
        store_entry_free(RB_ENTRY(n, struct entry, node));
        n = next;
    }
}

int store_apply_locked(struct store *s, struct store_mutation *m)
{
    struct rb_node *n;

    switch (m->op) {
    case STORE_ADD:
        return rb_insert(&s->tree, &m->entry->node) ? -EEXIST : 0;
    case STORE_DELETE:
        n = rb_find(&s->tree, &m->entry->node);
        if (!n)
            return -ENOENT;
        rb_erase(&s->tree, n);
        m->removed = RB_ENTRY(n, struct entry, node);
        return 0;
    }
    return -EINVAL;
}

const struct entry *store_find_locked(const struct store *s,
                                      const struct entry *probe)
{
    struct rb_node *n = rb_find(&s->tree, &probe->node);
    return n ? RB_ENTRY(n, struct entry, node) : NULL;
}

size_t store_count_locked(const struct store *s)
{
    return s->tree.count;
}

const char *store_check_locked(const struct store *s)
{
    return rb_check(&s->tree);
}

int store_foreach_locked(const struct store *s,
                         int (*fn)(const struct entry *e, void *arg),
                         void *arg)
{
    for (struct rb_node *n = rb_first(&s->tree); n; n = rb_next(n)) {
        int rc = fn(RB_ENTRY(n, struct entry, node), arg);
        if (rc)
            return rc;
    }
    return 0;
}

struct entry *store_entry_new(void)
{
    return calloc(1, sizeof(struct entry));
}

void store_entry_free(struct entry *e)
{
    if (!e)
        return;
    OPENSSL_cleanse(e->ssn, sizeof(e->ssn));
    free(e);
}
