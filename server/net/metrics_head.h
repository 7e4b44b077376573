/* metrics_head.h -- the parts of an HTTP/1.x request to --metrics-port
 * that come from the client as bytes: the request line and headers
 * (metrics_conn.c reads them), and the credentials of an Authorization
 * header (metrics_http.c checks them). Pure functions on buffers, no
 * state, no libevent: unit-tested (check_metrics_head.c) and fuzzed
 * (tests/fuzz/fuzz_http.c).
 */
#ifndef SSN_METRICS_HEAD_H
#define SSN_METRICS_HEAD_H

#include <stddef.h>

/* A request as the handler (metrics_http.c) sees it: every string
 * NUL-terminated, valid during the call only. */
struct metrics_request {
    int head_only;              /* HEAD: the answer's headers alone */
    const char *path;           /* the target up to '?' */
    const char *authorization;  /* the first Authorization header's value
                                   (leading blanks skipped), or NULL */
    const char *peer;           /* "addr:port", for the log */
};

/* The request line and headers of head (NUL-terminated, cut in place)
 * into rq's head_only, path and authorization, which point into head.
 * Returns 0, or the HTTP status to refuse it with: 400 (malformed, or a
 * control byte in a line: a bare CR, a DEL; tabs only in headers), 405
 * (neither GET nor HEAD) or 505 (not HTTP/1.x). */
int metrics_head_parse(char *head, struct metrics_request *rq);

/* After "SCHEME " (any case, then any run of spaces) at the start of the
 * header value h, or NULL. */
const char *metrics_auth_scheme(const char *h, const char *scheme);

/* Basic's base64 "user:password" (b64, trailing spaces ignored) decoded
 * into buf of cap bytes; returns the password's length, *secret pointing
 * at it inside buf, or -1 (not base64, too long for buf, no colon). */
int metrics_basic_password(const char *b64, unsigned char *buf, size_t cap,
                           const char **secret);

#endif
