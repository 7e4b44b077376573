/* metrics_conn.h -- the connections of --metrics-port: a small HTTP/1.x
 * server of its own, bounded in what any client can hold of it, unlike
 * libevent 2.1's evhttp, which bounds neither the connections nor their
 * life. One request a connection, answered with "Connection: close"; an
 * answer the handler holds back (a wrong password's delay) waits on a
 * timer of its connection, never in the loop. Everything runs on the
 * metrics thread (metrics_http.c), no lock. */
#ifndef SSN_METRICS_CONN_H
#define SSN_METRICS_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <event2/event.h>
#include "metrics_head.h"

struct evbuffer;

#define METRICS_CONNS_MAX   16      /* open at once; one more closes the
                                       oldest idle (or done, or held) one,
                                       or is closed at accept when each is
                                       being answered */
#define METRICS_DEADLINE_S  10      /* a connection's whole life, from its
                                       accept, whatever it sends */
#define METRICS_HEAD_MAX    8192    /* a request's line and headers; a GET
                                       needs far less */

/* Appends the whole answer to out (metrics_conn_answer) and returns how
 * long, in ns, it is held before any of it is sent: 0 for at once. A held
 * answer's connection waits on its own timer (the loop goes on serving
 * the others) and counts as done: a new connection may take its place,
 * closing it unanswered. */
typedef uint64_t (*metrics_handler)(const struct metrics_request *rq,
                                    struct evbuffer *out);

/* Serves the listening socket fd on base with h; fd is closed by
 * metrics_conn_stop. Returns 0, or -1 (out of memory). */
int metrics_conn_start(struct event_base *base, evutil_socket_t fd,
                       metrics_handler h);

/* Closes every connection and the listening socket; once base's loop has
 * ended (or before it ever ran). */
void metrics_conn_stop(void);

/* Since start-up: connections closed at accept because METRICS_CONNS_MAX
 * were open and each was being answered (refused); open ones closed to
 * make room for a new one, being idle, done or held (evicted). */
unsigned long metrics_conn_refused(void);
unsigned long metrics_conn_evicted(void);

/* Empties in, each byte overwritten first: a request head may carry the
 * password (Authorization), and libevent frees its chunks as they are. */
void metrics_wipe_drain(struct evbuffer *in);

/* Appends an answer to out: the status line, Content-Type ctype,
 * Content-Length, "Connection: close", the header lines in extra (each
 * ending in "\r\n"; NULL for none), a blank line, and the body: body's
 * bytes (moved out of it) when body is not NULL, else text. HEAD's answer
 * (head_only) has the same headers and no body. Returns 0, or -1. */
int metrics_conn_answer(struct evbuffer *out, int head_only, int code,
                        const char *reason, const char *ctype,
                        const char *extra, struct evbuffer *body,
                        const char *text);

#endif
