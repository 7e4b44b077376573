/* ctl.h -- a short synchronous conversation with the server, for the
 * questions kill_it asks before and after a run (COUNT, CHECK, DIGEST),
 * and for the AUTH that opens every connection to a server with a
 * password (kill_it's and inclient's, pipeline.c's too).
 * One request, one single-line reply, every wait bounded by the time limit
 * given at ctl_open. Close it before other clients need the server: a
 * coarse server holds its lock, and a serial one its only slot, for as long
 * as a connection lives.
 */
#ifndef SSN_CLIENT_CTL_H
#define SSN_CLIENT_CTL_H

#include <stddef.h>
#include "linereader.h"

#define CTL_REPLY_MAX 1024      /* longest reply line accepted */

struct ctl {
    int fd;
    int timeout_ms;             /* per request */
    struct linereader lr;
    char err[200];              /* why the last call failed */
};

/* Connects. Returns 0, or -errno with the reason in c->err. */
int ctl_open(struct ctl *c, const char *host, const char *port,
             int timeout_ms);

/* Takes over fd, a socket already connected (and non-blocking: net.h),
 * as ctl_open would have left it; ctl_close or ctl_abandon closes it. */
void ctl_adopt(struct ctl *c, int fd, int timeout_ms);

/* Sends "AUTH password" and reads the reply. Returns 0 when it was "OK";
 * -EACCES when it was anything else (c->err: "the server refused AUTH:
 * it answered 'REPLY'"); -EINVAL for a password that cannot fit in one
 * request line; or ctl_query's errors. The password never appears in
 * c->err, and the request's copy of it is wiped. */
int ctl_auth(struct ctl *c, const char *password);

/* Sends req (no '\n') and reads one reply line into out (NUL-terminated,
 * truncated to outlen, bytes outside printable ASCII replaced by '?'). Returns 0, or -errno with the reason in c->err:
 * -ETIMEDOUT, -ECONNRESET, -EPIPE when the server closed, -EPROTO for a
 * reply line over CTL_REPLY_MAX. */
int ctl_query(struct ctl *c, const char *req, char *out, size_t outlen);

/* Sends req and reads a block of reply lines up to "END" (STATS), calling
 * line_cb with each line before it (NUL-terminated, as ctl_query leaves
 * it; END itself is not passed). Returns 0; -EPROTO when the first line
 * is an Error: reply (c->err quotes it); or ctl_query's errors. The whole
 * block shares one time limit. */
int ctl_query_block(struct ctl *c, const char *req,
                    void (*line_cb)(void *arg, const char *line), void *arg);

/* Says DONE, waits (bounded) for the server to close, then closes. */
void ctl_close(struct ctl *c);

/* Closes without a word: for a server that stopped answering. */
void ctl_abandon(struct ctl *c);

#endif
