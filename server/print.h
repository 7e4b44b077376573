/* print.h -- the two ways PRINT reaches the client; each lock policy row
 * (lockmode.c) names one. Both walk the tree inside the policy's op_enter
 * and op_leave and produce exactly one reply: the framed listing, or an
 * error line.
 */
#ifndef SSN_PRINT_H
#define SSN_PRINT_H

struct session;

/* Streams the listing to the client while walking the tree, a buffer's
 * worth at a time, without allocating: under fine's lock a slow reader
 * stalls every other client (reply_send_locked). Returns 0; -EINPROGRESS,
 * having done nothing, while a driver still holds earlier replies (run it
 * again once they are sent: session_waiting); or -errno when the client
 * could not be written to (the session then ends). */
int print_while_walking(struct session *s);

/* Formats the whole listing under the lock (or takes the one already
 * formatted, when the store has not changed), and sends it after the lock
 * is released. Returns 0, or -errno when the client could not be written
 * to. A listing larger than the session's output limit is refused with the
 * limit's error. */
int print_after_unlock(struct session *s);

#endif
