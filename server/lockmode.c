/* lockmode.c -- the five lock policies, side by side (see lockmode.h).
 *
 * store_lock protects the store (server/store.c: the tree and every entry
 * in it). Which hooks take it is the whole difference between the modes.
 * This is the only file compiled once per mode.
 */
#include <pthread.h>
#include "lockmode.h"

static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;

static void lock(void)    { pthread_mutex_lock(&store_lock); }
static void unlock(void)  { pthread_mutex_unlock(&store_lock); }
static void nothing(void) { }

static const struct lock_policy policies[] = {
    {
        .name = "serial", .number = 1,
        .summary = "one connection at a time, no lock needed",
        .one_at_a_time = 1, .print_under_lock = 1,
        .session_enter = nothing, .session_leave = nothing,
        .op_enter = nothing, .op_leave = nothing,
    },
    {
        .name = "nolock", .number = 2,
        .summary = "a thread per connection and NO LOCK: deliberately racy, "
                   "for race-condition demos only",
        .racy = 1, .print_under_lock = 1,
        .session_enter = nothing, .session_leave = nothing,
        .op_enter = nothing, .op_leave = nothing,
    },
    {
        .name = "coarse", .number = 3,
        .summary = "a thread per connection, one mutex held for the "
                   "connection's whole life",
        .print_under_lock = 1,
        .session_enter = lock, .session_leave = unlock,
        .op_enter = nothing, .op_leave = nothing,
    },
    {
        .name = "fine", .number = 4,
        .summary = "a thread per connection, the mutex held around each "
                   "tree operation; PRINT writes while holding it",
        .print_under_lock = 1,
        .session_enter = nothing, .session_leave = nothing,
        .op_enter = lock, .op_leave = unlock,
    },
    {
        .name = "buffered", .number = 5,
        .summary = "like fine, but PRINT is formatted under the mutex and "
                   "written after unlocking",
        .print_under_lock = 0,
        .session_enter = nothing, .session_leave = nothing,
        .op_enter = lock, .op_leave = unlock,
    },
};

#define SSN_MODE_SERIAL   1
#define SSN_MODE_NOLOCK   2
#define SSN_MODE_COARSE   3
#define SSN_MODE_FINE     4
#define SSN_MODE_BUFFERED 5

#ifndef SSN_LOCK_MODE
#error "build with -DSSN_LOCK_MODE=SSN_MODE_<name> (see the Makefile)"
#endif

const struct lock_policy *const lock_policy = &policies[SSN_LOCK_MODE - 1];
