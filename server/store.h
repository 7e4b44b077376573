/* store.h -- the people: entries in a red-black tree keyed by (last, first),
 * and the lock that guards them.
 *
 * The store owns its lock but does not decide when it is taken: the lock
 * policy does (lockmode.h), through store_lock/store_unlock. Every function
 * ending in _locked expects the caller to hold the store as the policy
 * defines it, and asserts so (in nolock and serial no lock exists, and the
 * assertion knows it). Pointers a _locked lookup returns are borrowed while
 * the store is held: copy what you need before leaving it.
 *
 * Every change goes through store_apply_locked: the one place a journal will
 * hook in.
 */
#ifndef SSN_STORE_H
#define SSN_STORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "digest.h"
#include "entry.h"
#include "hist.h"
#include "rbtree.h"
#include "store_index.h"

struct journal;
struct listing;
struct lock_policy;

/* What a store operation does to the people, for the lock hooks. */
enum store_access {
    STORE_READ,
    STORE_WRITE,
};

/* The store lock measured from inside: every acquisition's wait (0 when
 * nobody held it) and hold, in nanoseconds. Protected by the store lock
 * itself: only its holder updates them, and STATS reads them holding it;
 * the holder writes them with relaxed atomic stores (hist_record_relaxed)
 * so that /metrics may read them without the lock (store_lock_figures),
 * which coarse's sessions hold for their whole life. */
struct store_lock_stats {
    uint64_t acquisitions;
    uint64_t contended;         /* the lock was held or queued for */
    uint64_t acquired_at;       /* time_now_ns() when the holder got it */
    int conn_hold;              /* the hold is an event loop's connection's
                                   (store_lock_nowait, _adopt), not its
                                   thread's: for --trace */
    struct hist wait, hold;     /* totals, maxima and percentiles */
};

/* What STATS reports of them, in microseconds; wait and hold in full,
 * in nanoseconds (p50, p90, p99, p99.9, max). */
struct store_lock_figures {
    uint64_t acquisitions, contended;
    uint64_t wait_us, hold_us;          /* totals */
    uint64_t wait_max_us, hold_max_us;
    uint64_t wait_p99_us, hold_p99_us;
    struct hist_summary wait, hold;
};

/* A waiter for the store lock, queued in arrival order: a blocked thread
 * (woken through wake), or a parked connection of an event loop (notify is
 * called, by the thread that hands the lock over, with handoff held: it
 * must only wake the loop, then the loop calls store_lock_adopt). */
struct store_waiter {
    pthread_cond_t wake;        /* blocked thread: signalled on hand-over */
    void (*notify)(void *arg);  /* parked connection: called on hand-over */
    void *arg;
    uint64_t asked;             /* time_now_ns() when it asked */
    uint64_t ticket;            /* its place in arrival order; kept when a
                                   woken waiter that lost goes back to the
                                   head of the queue */
    int granted;                /* protected by handoff */
    struct store_waiter *next;  /* protected by handoff */
};

/* In what order the store lock goes to those who ask (--lock-order).
 * bounded: a thread that finds it free takes it, waiters or not, until
 *   the holds since the oldest waiter queued (the one in progress then
 *   included) add up to STORE_PASS_BUDGET_NS; from then on nobody passes
 *   that waiter. So the oldest waiter waits for no more than that budget
 *   of the others' holding, or one long hold, and each one behind it for
 *   as much again per waiter ahead; a thread that asks again at once
 *   usually keeps going (no convoy).
 * fifo: store_unlock hands it straight to the longest waiter, so a thread
 *   that releases it and asks again queues behind everyone waiting; no
 *   waiter waits for more than one hold of each other thread, and every
 *   hand-over to a sleeping thread stalls the lock (the convoy).
 * unfair: whoever finds it free takes it; no bound at all.
 * Event loops' parked waiters are handed it in their turn in every order. */
enum store_lock_order {
    STORE_LOCK_BOUNDED,
    STORE_LOCK_FIFO,
    STORE_LOCK_UNFAIR,
};

/* How much lock holding, in nanoseconds and in total over all threads,
 * may pass the oldest waiter in the bounded order (store_lock.c says why
 * 100 us): a request of the everyday kind holds the lock 1 to 20 us, a
 * DIGEST or a fine PRINT of 10^6 people 100 ms and more. */
#ifndef STORE_PASS_BUDGET_NS
#define STORE_PASS_BUDGET_NS (100 * 1000)
#endif

/* How many ADDs wait to be linked into the tree together. */
#define STORE_PENDING_MAX 8

struct store {
    /* The store lock guards tree, version, the caches below and every entry
     * linked into the tree or pending a link. When it is taken and for how
     * long is the policy's choice; in what order, store_set_lock_order's.
     * handoff, a short-held (adaptive) mutex, guards only the lock's own
     * state: held, the waiter queue and the tickets. In the fifo order held
     * stays 1 while anyone is queued (store_unlock hands over without
     * clearing it), so held == 0 means free with nobody waiting; in the
     * others held may be 0 with threads queued (store_lock.c says what
     * that buys and costs). */
    pthread_mutex_t handoff;
    atomic_int held;            /* written under handoff; store_lock's
                                   spin also reads it without handoff, as
                                   a hint it re-checks under handoff */
    atomic_uint queued;         /* waiters in the queue: written under
                                   handoff, read by the spin like held */
    enum store_lock_order order;    /* set before any session */
    uint64_t tickets;           /* the last ticket given; under handoff */
    uint64_t woken;             /* bounded: the ticket of the thread woken
                                   and not yet running, 0 when none; under
                                   handoff */
    uint64_t pass_for;          /* bounded: the oldest waiter's ticket at
                                   the last release, 0 when none ... */
    uint64_t passed_ns;         /* ... and the holds that ended since it
                                   queued, summed; both under handoff */
    uint64_t pass_budget_ns;    /* STORE_PASS_BUDGET_NS; a unit test may
                                   set it before any thread takes the lock */
    struct store_waiter *first, *last;  /* waiters; protected by handoff */
    atomic_ulong owner;         /* the pthread_t holding the store lock, 0
                                   when none; written only by the holder */
    struct store_lock_stats stats;      /* protected by the store lock */
    const struct lock_policy *policy;   /* set once by store_init */

    struct rb_tree tree;        /* protected by the store lock */
    /* ADDs in the index but not linked into the tree yet, linked together
     * when there are STORE_PENDING_MAX or a reader of the tree's order
     * comes (store_pending.c); protected by the store lock. */
    struct entry *pending[STORE_PENDING_MAX];
    unsigned npending;
    struct store_index index;   /* the tree's people by name, for FIND,
                                   DELETE and ADD's duplicate check; off
                                   when the policy's hash_index is 0
                                   (nolock); protected by the store lock */
    unsigned long version;      /* changes with every applied mutation;
                                   protected by the store lock */
    unsigned long erases;       /* entries unlinked so far: a slot found
                                   before (store_slot_hint) names no freed
                                   node while it has not moved; protected
                                   by the store lock */
    atomic_size_t entries;      /* tree.count, copied under the lock after
                                   each mutation, for readers that must not
                                   wait for the lock (SIGUSR1's STATS) */

    /* Results that stay true while version does not change; protected by
     * the store lock. Repeated DIGESTs of an unchanged store do not rehash
     * it, and buffered PRINTs share one formatted listing (listing.h). */
    int digest_valid;
    unsigned long digest_version;
    char digest_hex[DIGEST_HEX_LEN + 1];
    struct listing *listing;    /* one reference is the store's */

    /* --journal: every applied mutation is appended to it, under the
     * store lock (journal.h). NULL without a journal, and while the
     * journal is replayed into the store at start-up. Set once before any
     * session starts. */
    struct journal *journal;

    /* The race window of docs/RACES.md: called, when set, inside every
     * insert and delete between finding the place and relinking. Set once
     * before any session starts; NULL in normal runs. */
    void (*pause)(void *arg);
    void *pause_arg;
};

enum store_op {
    STORE_ADD,                  /* link m->entry (caller-allocated,
                                   entry_new, outside the lock) */
    STORE_DELETE,               /* unlink the entry named by m->key */
};

/* Where a batch's look-ahead walk found an ADD's place (store_prefetch.c):
 * parent's left or right, empty then. add_locked links there without a
 * second walk when it is still right: no entry unlinked since (erases),
 * that side still empty, and the key between parent and its neighbour on
 * that side. Otherwise, and when parent is NULL, it walks. */
struct store_slot_hint {
    struct rb_node *parent;
    int left;
    int after_last;             /* the key likely sorts after everyone's
                                   (a compacted journal's replay adds in
                                   order): try right of the last node
                                   before a walk, and never wait to link
                                   (store_pending.c) */
    unsigned long erases;       /* st->erases when it was found */
    uint64_t hash;              /* the names' sindex_hash (0: not known) */
};

struct store_mutation {
    enum store_op op;
    struct entry *entry;        /* ADD: the new entry */
    struct store_slot_hint hint;    /* ADD: where it may go (zero: walk) */
    struct entry_key key;       /* DELETE: the names */
    uint64_t key_hash;          /* DELETE: their sindex_hash (0: not known) */
    struct entry *removed;      /* DELETE: the unlinked entry, for the
                                   caller to free after leaving the store */
    uint64_t seq;               /* out: the journal record's sequence
                                   number (0 without a journal); the reply
                                   waits until it is durable */
    int compact_due;            /* out: 1 when the journal passed twice
                                   its live size: the caller starts the
                                   automatic compaction once it has left
                                   the store (journal.h says how) */
};

/* Returns 0, or -errno when the lock cannot be made. */
int store_init(struct store *st, const struct lock_policy *policy);

/* The lock's part of store_init and store_destroy (store_lock.c). */
int store_lock_init(struct store *st);
void store_lock_destroy(struct store *st);

/* Frees every entry. Only when no session can touch the store. */
void store_destroy(struct store *st);

/* The store lock, for the lock policy's hooks: bounded unless set
 * otherwise, not recursive. Each returns 0 or -errno. */
int store_lock(struct store *st);
int store_unlock(struct store *st);

/* The order of the lock (enum store_lock_order); only before any session
 * starts (--lock-order, --unfair-lock). */
void store_set_lock_order(struct store *st, enum store_lock_order order);

/* "bounded", "fifo", "unfair"; and back: -1 for an unknown name. */
const char *store_lock_order_name(enum store_lock_order order);
int store_lock_order_parse(const char *name);

/* 1 when the calling thread holds the store lock. */
int store_lock_owned(const struct store *st);

/* The event driver's way to take the lock without blocking: returns 0 when
 * the caller got it, or -EAGAIN when w (with notify and arg set) is queued;
 * when the lock is handed to w, w->notify(w->arg) runs and the waiting loop
 * calls store_lock_adopt(st, w) on its own thread. */
int store_lock_nowait(struct store *st, struct store_waiter *w);
void store_lock_adopt(struct store *st, struct store_waiter *w);

/* Takes w out of the queue (its connection is going away). Returns 0 when
 * it was still waiting, or 1 when the lock had already been handed to it:
 * then the caller adopts and unlocks it. */
int store_lock_cancel(struct store *st, struct store_waiter *w);

/* The lock's figures so far, and their reset (STATS RESET). The caller
 * holds the store as its policy requires (in serial and nolock, where no
 * lock is ever taken, they are all 0). */
void store_lock_figures_locked(const struct store *st,
                               struct store_lock_figures *f);

/* The same read without the store lock, for /metrics: relaxed loads of
 * figures their writer may be changing, so a figure may miss the records
 * in progress. Returns 0, or -ENOMEM (a scratch histogram). */
int store_lock_figures(const struct store *st, struct store_lock_figures *f);
void store_lock_reset_locked(struct store *st);

/* Applies one mutation. Returns 0; -EEXIST for an ADD whose name is present
 * (the store is unchanged and the caller still owns m->entry); -ENOENT for a
 * DELETE of an absent name. On success of an ADD the store owns m->entry; on
 * success of a DELETE the caller owns m->removed. Never allocates.
 * With a journal, the record is appended here (m->seq says which, and
 * m->compact_due whether the automatic compaction is due) and a
 * mutation that cannot be journaled is refused before it is applied:
 * -EROFS (read-only after a failed write or sync) or the -errno of the
 * space reservation (-ENOSPC), the store unchanged. */
int store_apply_locked(struct store *st, struct store_mutation *m);

/* The names' hash in st's index (sindex_hash), made before the request
 * takes the store lock so that its hold need not (a batch's hold may be
 * on already): for store_find_hashed_locked, a DELETE's key_hash or an
 * ADD's hint.hash. 0 when the mode keeps no index. Needs no lock: the
 * index's key is written once, by store_init. */
uint64_t store_key_hash(const struct store *st, const struct entry_key *key);

/* The entry with key's names, or NULL. */
const struct entry *store_find_locked(const struct store *st,
                                      const struct entry_key *key);
/* The same with the names' sindex_hash, when the caller has it (0: not). */
const struct entry *store_find_hashed_locked(const struct store *st,
                                             const struct entry_key *key,
                                             uint64_t h);

size_t store_count_locked(const struct store *st);

/* About n people are coming into an empty store (a journal's replay): the
 * index is sized for them now instead of doubling on the way. */
void store_reserve_locked(struct store *st, size_t n);

/* A hint before a batch of pipelined requests runs under one hold of the
 * store lock (store_prefetch.c): the cache is asked for the tree paths of
 * the ADDs and the index slots of the ADDs, FINDs and DELETEs among the
 * whole lines of the input (at most STORE_PREFETCH_MAX), their walks side
 * by side so that their misses overlap. parse, before the lock: the names
 * and their hashes into pf; returns how many (0 in nolock, which has no
 * index). locked, once the batch holds the lock: the walks and the
 * slots; an ADD of a name the index holds stops walking after the top
 * levels. Returns how many ADDs the index does not refuse (a lone one is
 * not walked). Changes nothing in the store. parse also makes the entries
 * of the first `make` ADDs, in input order (made[], nmade): with a thread
 * per connection their mallocs, and a growing arena's page faults, then
 * happen before the hold instead of inside it; the caller owns them. */
#define STORE_PREFETCH_MAX 16
struct store_prefetch_key {
    char last[ENTRY_NAME_MAX + 1];      /* copied from the input */
    char first[ENTRY_NAME_MAX + 1];
    uint64_t h;                 /* its hash in the index */
    struct store_slot_hint slot;    /* an ADD walked to its empty place:
                                       parent set (else NULL) */
};
/* A line the look-ahead parsed, kept for the session that will run it
 * (cmd_hold.c, cmd_kept_take): the bytes it was, to be matched with the
 * line the session takes, and what proto_parse made of them (with an
 * ADD's SSN: wiped once taken or given up, store_kept_wipe). */
#define STORE_KEPT_LINE_MAX 160
struct store_kept_line {
    int cmd;                    /* enum proto_cmd: ADD, FIND or DELETE */
    unsigned len;
    uint64_t hash;              /* the names' sindex_hash, for FIND's and
                                   DELETE's lookup (session.h, req_hash) */
    struct person who;
    char line[STORE_KEPT_LINE_MAX];
};
struct store_kept {
    int n, next;                /* lines kept; the first not taken yet */
    struct store_kept_line l[STORE_PREFETCH_MAX];
};
/* Wipes what kept holds and empties it; one line only, once taken. */
void store_kept_wipe(struct store_kept *kept);
void store_kept_wipe_line(struct store_kept_line *l);

struct store_prefetch {
    int n, nwalk;               /* keys, and of them the ADDs (first) */
    int nmade;                  /* entries made ahead, in made[] */
    struct store_kept *kept;    /* where the lines' parses are kept (NULL:
                                   nowhere) */
    struct store_prefetch_key k[STORE_PREFETCH_MAX];
    struct entry *made[STORE_PREFETCH_MAX];
};
int store_prefetch_parse(const struct store *st, struct store_prefetch *pf,
                         const char *buf, size_t len, int make);
/* No keys yet: what store_prefetch_parse begins with. */
static inline void store_prefetch_clear(struct store_prefetch *pf)
{
    pf->n = pf->nwalk = pf->nmade = 0;
    pf->kept = NULL;
}
/* The same for more input after what pf holds (another session's, in the
 * order the requests will run): appends while there is room. */
int store_prefetch_parse_more(const struct store *st,
                              struct store_prefetch *pf, const char *buf,
                              size_t len, int make);
int store_prefetch_locked(const struct store *st, struct store_prefetch *pf);

/* One of several walks down the tree made side by side
 * (store_walk_side_by_side): its key, where it is (NULL: done), and where
 * the empty place it ends at is written (slot's parent and left; parent
 * stays as it was when the walk meets an equal key). */
struct store_walk {
    struct entry_key key;
    const struct rb_node *at;
    struct store_slot_hint *slot;
};
/* Walks levels [from, to) of the n walks, one level of each in turn,
 * asking for each next node before comparing the next walk's key, so
 * that their cache misses overlap (store_prefetch.c). Reads the tree
 * only; the store is held. */
void store_walk_side_by_side(struct store_walk *w, int n, int from, int to);

/* Links every pending ADD into the tree (store_pending.c), for a walk of
 * the tree itself (TREE, the tests); store_foreach_locked settles first.
 * A reader's hold may settle: every policy's hold is exclusive. */
void store_settle_locked(struct store *st);
/* store.c's: where key goes by hint, when the hint is still right (its
 * parent not freed since, that side empty, key between the parent and
 * its neighbour on that side), else NULL. */
struct rb_node **store_hinted_link(const struct store *st,
                                   const struct store_slot_hint *hint,
                                   const struct entry_key *key);
/* add_locked's, for an ADD the index does not refuse and hint does not
 * place: e goes on the pending list and returns 1, or 0 when it must be
 * linked now (store_pending.c says when); the list has room. */
int store_pending_push(struct store *st, struct entry *e,
                       const struct store_slot_hint *hint);
/* Takes e off the pending list: 1, or 0 when it was not on it. */
int store_pending_drop(struct store *st, const struct entry *e);

/* NULL when every tree invariant holds, else the broken one's name. */
const char *store_check_locked(const struct store *st);

/* Calls fn on every entry in tree order, pending ADDs settled first;
 * stops early when fn returns non-zero and returns that value, else 0;
 * -ELOOP when the walk meets more nodes than the tree can hold (a cycle:
 * nolock's races only). */
int store_foreach_locked(struct store *st,
                         int (*fn)(const struct entry *e, void *arg),
                         void *arg);

#endif
