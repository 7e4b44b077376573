/* store_prefetch.c -- the cache lines a batch of pipelined requests will
 * touch, asked for all at once when the batch takes the store lock
 * (store.h, store_prefetch_parse and _locked). An insert's walk down the
 * tree is a chain of cache misses, one per level below the top ones, each
 * waiting for the last; the walks of a batch's requests do not depend on
 * each other, so this walks them side by side, one level each in turn,
 * asking for the next node of each before comparing the key with the
 * next: the misses overlap. The index's slots and entries are asked for
 * the same way, and an ADD of a name the index already holds stops
 * walking (it will be refused). The requests then run as before and find
 * their lines in the cache.
 *
 * Where the caller gives room (pf->kept: an event worker's round, on its
 * stack), each line's parse is kept with a copy of its bytes, and the
 * session that runs a line of the same bytes takes it instead of parsing
 * again (cmd_kept_take): a second parse was an eighth of an insert's
 * instructions.
 *
 * Only a hint: it reads the tree and the index and changes nothing; a
 * line the session would refuse (proto_parse) is skipped. The input is
 * parsed and hashed before the lock is taken; only the walks and the
 * index's slots wait for it (a batch's hold). Never in nolock, whose tree
 * may be changing under it (no hash index there).
 */
#include <string.h>
#include "lockmode.h"
#include "proto.h"
#include "store.h"

/* The parse of line (len bytes), kept for the session that will run it
 * when there is room: it need not parse it again (cmd_kept_take). */
static void keep_line(struct store_kept *kept, const char *line, size_t len,
                      int cmd, const struct person *who, uint64_t hash)
{
    if (!kept || kept->n == STORE_PREFETCH_MAX ||
        len > sizeof(kept->l[0].line))
        return;
    struct store_kept_line *l = &kept->l[kept->n++];
    l->cmd = cmd;
    l->len = (unsigned)len;
    l->hash = hash;
    memcpy(l->line, line, len);
    l->who = *who;
}

void store_kept_wipe_line(struct store_kept_line *l)
{
    explicit_bzero(l->line, l->len);
    if (l->cmd == PROTO_ADD)            /* the only one with an SSN */
        explicit_bzero(l->who.ssn, sizeof(l->who.ssn));
    l->len = 0;
}

void store_kept_wipe(struct store_kept *kept)
{
    for (int i = kept->next; i < kept->n; i++)   /* those before: taken */
        store_kept_wipe_line(&kept->l[i]);
    kept->n = kept->next = 0;
}

/* A whole line [p, end), without its '\n': an ADD, FIND or DELETE as the
 * session will parse it (proto_parse), its names and their hash in ix
 * into k. Returns 1 with *walk set (ADD: the only one that walks the
 * tree; the others are the index's), 0 for any other line. An ADD's
 * entry is made into pf->made while fewer than make are. */
static int parse_line(const struct store_index *ix, const char *p,
                      const char *end, struct store_prefetch_key *k,
                      int *walk, struct store_prefetch *pf, int make)
{
    struct proto_req req;
    struct person who;
    size_t len = (size_t)(end - p);

    if (len && p[len - 1] == '\r')
        len--;
    switch (proto_parse(p, len, &req, &who)) {
    case PROTO_ADD:
        *walk = 1;
        break;
    case PROTO_FIND:
    case PROTO_DELETE:
        *walk = 0;
        break;
    default:
        return 0;
    }
    size_t ll = strlen(who.last), fl = strlen(who.first);
    memcpy(k->last, who.last, ll + 1);
    memcpy(k->first, who.first, fl + 1);
    k->h = sindex_hash_len(ix, k->last, ll, k->first, fl);
    if (*walk && pf->nmade < make &&
        (pf->made[pf->nmade] = entry_from_person(&who)) != NULL)
        pf->nmade++;
    keep_line(pf->kept, p, len, req.cmd, &who, k->h);
    explicit_bzero(who.ssn, sizeof(who.ssn));
    return 1;
}

/* A node and the line its names begin on. */
static void fetch_node(const struct rb_node *n)
{
    const struct entry *e = RB_ENTRY(n, const struct entry, node);

    __builtin_prefetch(e);
    __builtin_prefetch(e->names);
}

void store_walk_side_by_side(struct store_walk *w, int n, int from, int to)
{
    int live = n;

    for (int level = from; level < to && live; level++) {
        live = 0;
        for (int i = 0; i < n; i++) {
            const struct rb_node *at = w[i].at;
            if (!at)
                continue;
            int c = entry_key_cmp(&w[i].key, at);
            const struct rb_node *child = c < 0 ? at->left
                                        : c > 0 ? at->right : NULL;
            w[i].at = child;
            if (child) {
                fetch_node(child);
                live++;
            } else if (c) {             /* its empty place, for add_locked */
                w[i].slot->parent = (struct rb_node *)at;
                w[i].slot->left = c < 0;
            }
        }
    }
}

int store_prefetch_parse(const struct store *st, struct store_prefetch *pf,
                         const char *buf, size_t len, int make)
{
    store_prefetch_clear(pf);
    return store_prefetch_parse_more(st, pf, buf, len, make);
}

int store_prefetch_parse_more(const struct store *st,
                              struct store_prefetch *pf, const char *buf,
                              size_t len, int make)
{
    struct store_prefetch_key *k = pf->k;
    const char *p = buf, *end = buf + len;

    if (make > STORE_PREFETCH_MAX)
        make = STORE_PREFETCH_MAX;
    if (!st->policy->hash_index)
        return 0;
    while (pf->n < STORE_PREFETCH_MAX && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        int walk;
        if (!nl)
            break;              /* not a whole line yet */
        if (parse_line(&st->index, p, nl, &k[pf->n], &walk, pf, make)) {
            /* No place until it is walked; the hash add_locked's too. */
            k[pf->n].slot = (struct store_slot_hint){ .hash = k[pf->n].h };
            /* Walkers first: the index-only keys stay after them. */
            if (walk) {
                struct store_prefetch_key t = k[pf->n];
                k[pf->n] = k[pf->nwalk];
                k[pf->nwalk++] = t;
            }
            pf->n++;
        }
        p = nl + 1;
    }
    return pf->n;
}

/* Levels walked before the index is asked which ADDs it refuses: the top
 * of the tree is in the cache, and meanwhile the slots come in. */
#define WALK_BEFORE_INDEX 4

int store_prefetch_locked(const struct store *st, struct store_prefetch *pf)
{
    struct store_prefetch_key *k = pf->k;
    struct store_walk w[STORE_PREFETCH_MAX];

    if (!sindex_on(&st->index))
        return 0;
    for (int i = 0; i < pf->n; i++) {
        sindex_prefetch(&st->index, k[i].h);
        k[i].slot.parent = NULL;
        k[i].slot.erases = st->erases;
    }
    for (int i = 0; i < pf->nwalk; i++)
        w[i] = (struct store_walk){ { k[i].last, k[i].first },
                                    st->tree.root, &k[i].slot };
    if (pf->nwalk > 1)
        store_walk_side_by_side(w, pf->nwalk, 0, WALK_BEFORE_INDEX);
    /* The slots have come in meanwhile: the entries they point to, and an
     * ADD of a name the index holds walks no further (it is refused). */
    for (int i = 0; i < pf->n; i++)
        sindex_prefetch_entry(&st->index, k[i].h);
    int walkers = 0;
    for (int i = 0; i < pf->nwalk; i++) {
        if (w[i].at && sindex_find(&st->index, &w[i].key, k[i].h))
            w[i].at = NULL;
        walkers += w[i].at != NULL;
    }
    if (pf->nwalk > 1 && walkers)
        store_walk_side_by_side(w, pf->nwalk, WALK_BEFORE_INDEX,
                                RB_MAX_DEPTH);
    return walkers;
}
