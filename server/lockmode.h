/* lockmode.h -- the lock policy seam: what each of the five modes locks.
 *
 * The session and the store never test which mode they are in; they call
 * these hooks, and server/lockmode.c (compiled once per mode with
 * -DSSN_LOCK_MODE=...) says what each hook does, all five side by side.
 *
 *   mode      sessions at once   held around              PRINT writes
 *   serial    one                nothing                  while serving
 *   nolock    many               nothing (racy!)          while serving
 *   coarse    many               the whole connection     under the lock
 *   fine      many               each tree operation      under the lock
 *   buffered  many               each tree operation      after unlocking
 */
#ifndef SSN_LOCKMODE_H
#define SSN_LOCKMODE_H

struct lock_policy {
    const char *name;           /* "serial", "nolock", ... */
    int number;                 /* the classic ssnserver1..5 numbering */
    const char *summary;        /* one line for --help and the start-up line */
    int one_at_a_time;          /* serial: the listener pauses while a
                                   session runs, others wait in the backlog */
    int racy;                   /* nolock: the tree is not protected */
    int print_under_lock;       /* PRINT writes to the client while the
                                   store lock (if any) is held */
    void (*session_enter)(void);    /* when a connection starts */
    void (*session_leave)(void);    /* when it ends */
    void (*op_enter)(void);         /* around each store operation */
    void (*op_leave)(void);
};

/* The policy this binary was built with. */
extern const struct lock_policy *const lock_policy;

#endif
