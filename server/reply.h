/* reply.h -- building one reply per request in a session's output buffer,
 * for session.c, commands.c and print.c.
 *
 * The session brackets each request with reply_begin and reply_end. Between
 * them, parts are appended; if any part cannot be, reply_end cuts the reply
 * back to where it began and puts one error line in its place: "Error: out
 * of memory", or "Error: output limit exceeded" (and the session ends). So
 * a client never sees a truncated block that looks complete and never loses
 * count of replies.
 */
#ifndef SSN_REPLY_H
#define SSN_REPLY_H

#include <stddef.h>

struct listing;
struct session;

void reply_begin(struct session *s);
void reply_end(struct session *s);

void reply_put(struct session *s, const void *data, size_t len);
void reply_puts(struct session *s, const char *str);
void reply_printf(struct session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* 1 when a part of the current reply has been lost (stop producing it). */
int reply_failed(const struct session *s);

/* The current reply is over the session's output limit: reply_end
 * replaces it with the limit's error and ends the session. */
void reply_limit_exceeded(struct session *s);

/* Sends everything buffered now, through the driver (session_flush): the
 * one way out, never with the store lock held for an operation. */
int reply_send_now(struct session *s);

/* Sends the replies buffered, then listing l (taking over the caller's
 * reference), the same way out. Returns 0 or -errno. */
int reply_send_listing(struct session *s, struct listing *l);

/* 1 when every reply so far has reached the socket: nothing is buffered,
 * and the driver has nothing queued (io.drained). */
int reply_drained(const struct session *s);

/* fine's streamed PRINT only: sends everything buffered now while the
 * calling thread holds the store lock, through io.send_locked, blocking
 * until the client has taken it. Nothing buffered may wait for the
 * journal (asserted): the PRINT sent what did before taking the lock. */
int reply_send_locked(struct session *s);

#endif
