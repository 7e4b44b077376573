/* ctl.h -- a short synchronous conversation with the server, for the
 * questions kill_it asks before and after a run (COUNT, CHECK, DIGEST).
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

/* Sends req (no '\n') and reads one reply line into out (NUL-terminated,
 * truncated to outlen, bytes outside printable ASCII replaced by '?'). Returns 0, or -errno with the reason in c->err:
 * -ETIMEDOUT, -ECONNRESET, -EPIPE when the server closed, -EPROTO for a
 * reply line over CTL_REPLY_MAX. */
int ctl_query(struct ctl *c, const char *req, char *out, size_t outlen);

/* Says DONE, waits (bounded) for the server to close, then closes. */
void ctl_close(struct ctl *c);

/* Closes without a word: for a server that stopped answering. */
void ctl_abandon(struct ctl *c);

#endif
