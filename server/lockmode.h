/* lockmode.h -- the lock policy: what each of the five modes locks, as a
 * table of functions (SQLite's mutex methods are the model). Nothing
 * outside lockmode.c knows which mode it runs in: the drivers and the
 * session call these hooks, and each mode's row in lockmode.c says what
 * the hook does. A reader who wants one mode's whole locking story reads
 * its row there.
 *
 *   mode      sessions at once   store lock held around   PRINT reaches the
 *                                                         client
 *   serial    one                nothing (no lock)        while walking
 *   nolock    many               nothing (racy!)          while walking
 *   coarse    many               a session's whole life   while walking
 *   fine      many               each store operation     while walking,
 *                                                         lock held
 *   buffered  many               each store operation     after unlocking
 */
#ifndef SSN_LOCKMODE_H
#define SSN_LOCKMODE_H

#include <assert.h>
#include "store.h"

struct session;

/* Whether the driver may accept another connection while this one runs. */
enum lock_admit {
    LOCK_ADMIT_MORE,            /* keep accepting */
    LOCK_ADMIT_PAUSE,           /* stop accepting until this session's
                                   dismiss answers LOCK_ADMIT_MORE: the
                                   others wait, unread, in the backlog */
};

/* The answer of held(): LOCK_NONE is the honest answer of a mode that has
 * no store lock at all, so an assertion can tell "not held" (a bug) from
 * "nothing to hold" (serial's design, nolock's point). */
enum lock_held {
    LOCK_NOT_HELD,
    LOCK_HELD,
    LOCK_NONE,
};

struct lock_policy {
    const char *name;           /* "serial", "nolock", ... */
    int number;                 /* the classic ssnserver1..5 numbering */
    const char *summary;        /* one line for --help and the start-up line */
    const char *warning;        /* logged at start-up, or NULL */

    /* On the accepting thread, for each connection accepted, and when its
     * session has ended. */
    enum lock_admit (*admit)(struct store *st);
    enum lock_admit (*dismiss)(struct store *st);

    /* On the session's thread, before its first request and after its last.
     * Each returns 0 or -errno. */
    int (*session_begin)(struct store *st);
    int (*session_end)(struct store *st);

    /* session_begin for an event loop, which must not block: 0 when the
     * session may begin, -EAGAIN when w is queued and w->notify will say
     * when (then store_lock_adopt), or another -errno. */
    int (*session_begin_nowait)(struct store *st, struct store_waiter *w);

    /* Around each store operation. Each returns 0 or -errno; after a
     * failed op_enter the operation must not run. */
    int (*op_enter)(struct store *st, enum store_access how);
    int (*op_leave)(struct store *st, enum store_access how);

    /* Answers PRINT into the session: the whole listing as one reply, or
     * the session ends. Returns 0; -EINPROGRESS when it must run again
     * later (print.h); or -errno when the client could not be written
     * to. */
    int (*print)(struct session *s);

    /* Whether the calling thread holds the store as this mode requires. */
    enum lock_held (*held)(const struct store *st);

    /* 1 when the store lock is held from session_begin to session_end
     * (coarse): around the session's sends, logging and waits too, since
     * serialising whole sessions is that mode's lesson. The rule "no I/O
     * under the store lock" (STORE_ASSERT_NOT_HELD) is about the holds of
     * store operations, which this one is not. */
    int lock_per_session;

    /* Why this mode cannot keep a journal (--journal is refused with this
     * line), or NULL when it can: a journal's records must be in the order
     * the tree changed, which only a lock (or one session) gives. */
    const char *journal_refusal;

    /* 1: the store keeps a hash index by name beside its tree
     * (store_index.h) for FIND, DELETE and ADD's duplicate check; 0: only
     * the tree (nolock, whose sessions share the store with no lock), so
     * that the races stay the tree's, the ones the lab teaches. */
    int hash_index;
};

enum lock_mode {
    LOCK_MODE_SERIAL,
    LOCK_MODE_NOLOCK,
    LOCK_MODE_COARSE,
    LOCK_MODE_FINE,
    LOCK_MODE_BUFFERED,
    LOCK_MODES,
};

/* Every mode's row, indexed by enum lock_mode. */
extern const struct lock_policy lock_policies[LOCK_MODES];

/* The policy this binary was built with (lockmode_build.c, compiled once per
 * mode by the Makefile). */
extern const struct lock_policy *const lock_policy_built;

/* The policy p follows when clients must authenticate: p itself, but for
 * serial, whose one-at-a-time rule becomes a turn taken after AUTH (the
 * store's mutex for the session's life, as coarse) instead of a pause of
 * the listener, so that a client that never authenticates cannot hold
 * the only place. */
const struct lock_policy *lock_policy_with_password(
    const struct lock_policy *p);

/* Asserts, in builds with assertions, that the store is held as its policy
 * requires. Every _locked store function starts with it. */
#define STORE_ASSERT_HELD(st) \
    assert((st)->policy->held(st) != LOCK_NOT_HELD)

/* 1 when the calling thread holds the store lock for a store operation
 * (op_enter to op_leave, or a batch of them): then it must not send to a
 * client, log or wait. coarse's session-long hold does not count. */
static inline int store_op_held(const struct store *st)
{
    return store_lock_owned(st) && !st->policy->lock_per_session;
}

/* Asserts, in builds with assertions, that the calling thread may send,
 * log or wait: the session's one way out (session.c's emit), log_msg and
 * the blocking waits start with it. */
#define STORE_ASSERT_NOT_HELD(st) assert(!store_op_held(st))

#endif
