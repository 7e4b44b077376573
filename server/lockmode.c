/* lockmode.c -- the five lock policies, one row each (lockmode.h).
 *
 * The store's mutex (struct store, store.h) guards the tree and every entry
 * in it; which hooks take it, and for how long, is the whole difference
 * between the modes. Read a row across to know a mode:
 *
 *   serial    admits one session at a time and so needs no lock;
 *   nolock    admits everyone and locks nothing: racy on purpose; its
 *             store keeps no hash index (hash_index 0), so every race
 *             is the tree's;
 *   coarse    takes the mutex when a session begins and keeps it to its end;
 *   fine      takes it around each store operation, and PRINT writes to
 *             the client while holding it (a slow reader stalls everyone);
 *   buffered  like fine, but PRINT is formatted under the mutex and written
 *             after it is released.
 */
#include "lockmode.h"
#include "print.h"

/* ---- the hooks the rows are made of ---------------------------------- */

static enum lock_admit admit_everyone(struct store *st)
{
    (void)st;
    return LOCK_ADMIT_MORE;
}

/* serial: the session just accepted is the only one until it ends. */
static enum lock_admit admit_one(struct store *st)
{
    (void)st;
    return LOCK_ADMIT_PAUSE;
}

static int nothing(struct store *st)
{
    (void)st;
    return 0;
}

static int nothing_nowait(struct store *st, struct store_waiter *w)
{
    (void)st; (void)w;
    return 0;
}

static int op_nothing(struct store *st, enum store_access how)
{
    (void)st; (void)how;
    return 0;
}

static int op_lock(struct store *st, enum store_access how)
{
    (void)how;
    return store_lock(st);
}

static int op_unlock(struct store *st, enum store_access how)
{
    (void)how;
    return store_unlock(st);
}

/* No lock exists in this mode: say so rather than pretend it is held. */
static enum lock_held held_nothing(const struct store *st)
{
    (void)st;
    return LOCK_NONE;
}

static enum lock_held held_mutex(const struct store *st)
{
    return store_lock_owned(st) ? LOCK_HELD : LOCK_NOT_HELD;
}

/* ---- the table --------------------------------------------------------- */

const struct lock_policy lock_policies[LOCK_MODES] = {
    [LOCK_MODE_SERIAL] = {
        .name = "serial", .number = 1,
        .summary = "one connection at a time, no lock needed",
        .admit = admit_one, .dismiss = admit_everyone,
        .session_begin = nothing, .session_end = nothing,
        .session_begin_nowait = nothing_nowait,
        .op_enter = op_nothing, .op_leave = op_nothing,
        .print = print_while_walking,
        .held = held_nothing,
        .hash_index = 1,
    },
    [LOCK_MODE_NOLOCK] = {
        .name = "nolock", .number = 2,
        .summary = "a thread per connection and NO LOCK: deliberately racy, "
                   "for race-condition demos only",
        .warning = "nolock mode: the tree is NOT protected; concurrent "
                   "clients will corrupt it",
        .admit = admit_everyone, .dismiss = admit_everyone,
        .session_begin = nothing, .session_end = nothing,
        .session_begin_nowait = nothing_nowait,
        .op_enter = op_nothing, .op_leave = op_nothing,
        .print = print_while_walking,
        .held = held_nothing,
        .journal_refusal = "nolock mode cannot keep a journal: no lock "
                           "orders the mutations, so the records could not "
                           "be in the order the tree changed",
        .hash_index = 0,        /* the lab's races stay in the tree */
    },
    [LOCK_MODE_COARSE] = {
        .name = "coarse", .number = 3,
        .summary = "a thread per connection, one mutex held for the "
                   "connection's whole life",
        .admit = admit_everyone, .dismiss = admit_everyone,
        .session_begin = store_lock, .session_end = store_unlock,
        .session_begin_nowait = store_lock_nowait,
        .op_enter = op_nothing, .op_leave = op_nothing,
        .print = print_while_walking,
        .held = held_mutex,
        .lock_per_session = 1,
        .hash_index = 1,
    },
    [LOCK_MODE_FINE] = {
        .name = "fine", .number = 4,
        .summary = "a thread per connection, the mutex held around each "
                   "tree operation; PRINT writes while holding it",
        .admit = admit_everyone, .dismiss = admit_everyone,
        .session_begin = nothing, .session_end = nothing,
        .session_begin_nowait = nothing_nowait,
        .op_enter = op_lock, .op_leave = op_unlock,
        .print = print_while_walking,
        .held = held_mutex,
        .hash_index = 1,
    },
    [LOCK_MODE_BUFFERED] = {
        .name = "buffered", .number = 5,
        .summary = "like fine, but PRINT is formatted under the mutex and "
                   "written after unlocking",
        .admit = admit_everyone, .dismiss = admit_everyone,
        .session_begin = nothing, .session_end = nothing,
        .session_begin_nowait = nothing_nowait,
        .op_enter = op_lock, .op_leave = op_unlock,
        .print = print_after_unlock,
        .held = held_mutex,
        .hash_index = 1,
    },
};

/* serial with a password: everyone is accepted, and the session that
 * authenticates first has the turn until it ends. The turn is the store's
 * mutex held for the session's life, as in coarse; no operation locks. */
static const struct lock_policy serial_turn = {
    .name = "serial", .number = 1,
    .summary = "one connection at a time, no lock needed",
    .admit = admit_everyone, .dismiss = admit_everyone,
    .session_begin = store_lock, .session_end = store_unlock,
    .session_begin_nowait = store_lock_nowait,
    .op_enter = op_nothing, .op_leave = op_nothing,
    .print = print_while_walking,
    .held = held_nothing,
    .lock_per_session = 1,
    .hash_index = 1,
};

const struct lock_policy *lock_policy_with_password(
    const struct lock_policy *p)
{
    return p == &lock_policies[LOCK_MODE_SERIAL] ? &serial_turn : p;
}
