/* store_prefetch.c -- the cache lines a batch of pipelined requests will
 * touch, asked for all at once when the batch takes the store lock
 * (store.h, store_prefetch_batch). An insert's walk down the tree is a
 * chain of cache misses, one per level below the top ones, each waiting
 * for the last; the walks of a batch's requests do not depend on each
 * other, so this walks them side by side, one level each in turn, asking
 * for the next node of each before comparing the key with the next: the
 * misses overlap. The index's slots are asked for the same way. The
 * requests then run as before and find their lines in the cache.
 *
 * Only a hint: it reads the tree and the index and changes nothing, and a
 * line it misreads (a name it cannot parse, an unknown command) is only
 * skipped. It runs with the store lock held (a batch's), and never in
 * nolock, whose tree may be changing under it (no hash index there).
 */
#include <string.h>
#include <strings.h>
#include "lockmode.h"
#include "store.h"

#define PREFETCH_MAX 16         /* requests looked ahead at most */

struct pf_key {
    const char *last, *first;   /* in the input, not NUL-terminated */
    size_t last_len, first_len;
    const struct rb_node *at;   /* where its walk is; NULL: done */
    uint64_t h;                 /* its hash in the index */
};

/* The next word of [*p, end): its start and length, *p moved past it; 0
 * at the end of the line. */
static size_t word(const char **p, const char *end, const char **w)
{
    const char *s = *p;

    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    *w = s;
    while (s < end && *s != ' ' && *s != '\t' && *s != '\r')
        s++;
    *p = s;
    return (size_t)(s - *w);
}

/* ADD, FIND and DELETE name a person by their next two words; "ADD" is
 * the only one that walks the tree (the others are the index's). Returns
 * 1 with k filled, 0 for any other line. */
static int parse_line(const char *p, const char *end, struct pf_key *k,
                      int *walk)
{
    const char *cmd;
    size_t n = word(&p, end, &cmd);

    if (n == 3 && strncasecmp(cmd, "ADD", 3) == 0)
        *walk = 1;
    else if ((n == 4 && strncasecmp(cmd, "FIND", 4) == 0) ||
             (n == 6 && strncasecmp(cmd, "DELETE", 6) == 0))
        *walk = 0;
    else
        return 0;
    k->first_len = word(&p, end, &k->first);
    k->last_len = word(&p, end, &k->last);
    return k->first_len && k->last_len && k->first_len <= ENTRY_NAME_MAX &&
           k->last_len <= ENTRY_NAME_MAX;
}

/* a (len bytes, no NUL) against the NUL-terminated b, as strcmp orders
 * them. */
static int name_cmp(const char *a, size_t len, const char *b)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x != y || y == '\0')
            return x < y ? -1 : 1;
    }
    return b[len] ? -1 : 0;
}

static int key_cmp(const struct pf_key *k, const struct rb_node *n)
{
    const struct entry *e = RB_ENTRY(n, const struct entry, node);
    int c = name_cmp(k->last, k->last_len, entry_last(e));

    return c ? c : name_cmp(k->first, k->first_len, entry_first(e));
}

/* A node and the line its names begin on. */
static void fetch_node(const struct rb_node *n)
{
    const struct entry *e = RB_ENTRY(n, const struct entry, node);

    __builtin_prefetch(e);
    __builtin_prefetch(e->names);
}

static void walk_side_by_side(const struct store *st, struct pf_key *k,
                              int nk)
{
    for (int level = 0; level < RB_MAX_DEPTH; level++) {
        int live = 0;
        for (int i = 0; i < nk; i++) {
            const struct rb_node *n = k[i].at;
            if (!n)
                continue;
            int c = key_cmp(&k[i], n);
            n = c < 0 ? n->left : c > 0 ? n->right : NULL;
            k[i].at = n;
            if (n) {
                fetch_node(n);
                live++;
            }
        }
        if (!live)
            break;
    }
    (void)st;
}

void store_prefetch_batch(const struct store *st, const char *buf,
                          size_t len)
{
    struct pf_key k[PREFETCH_MAX];
    int nk = 0, nwalk = 0;
    const char *p = buf, *end = buf + len;

    if (!st->policy->hash_index || !sindex_on(&st->index))
        return;
    while (nk < PREFETCH_MAX && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        int walk;
        if (!nl)
            break;              /* not a whole line yet */
        if (parse_line(p, nl, &k[nk], &walk)) {
            char last[ENTRY_NAME_MAX + 1], first[ENTRY_NAME_MAX + 1];
            memcpy(last, k[nk].last, k[nk].last_len);
            last[k[nk].last_len] = '\0';
            memcpy(first, k[nk].first, k[nk].first_len);
            first[k[nk].first_len] = '\0';
            k[nk].h = sindex_hash(last, first);
            sindex_prefetch(&st->index, k[nk].h);
            /* Walkers first: the index-only keys stay after them. */
            if (walk) {
                struct pf_key t = k[nk];
                k[nk] = k[nwalk];
                k[nwalk] = t;
                k[nwalk++].at = st->tree.root;
            }
            nk++;
        }
        p = nl + 1;
    }
    if (nwalk > 1)
        walk_side_by_side(st, k, nwalk);
    /* The slots have come in meanwhile: the entries they point to. */
    for (int i = 0; i < nk; i++)
        sindex_prefetch_entry(&st->index, k[i].h);
}
