/* ctl.h -- a short synchronous conversation with the server, for the
 * questions kill_it asks before and after a run (COUNT, CHECK, DIGEST),
 * for the AUTH that opens every connection to a server with a
 * password (kill_it's and inclient's, pipeline.c's too), and for ssn-cli's
 * requests, whose replies may be many lines (ctl_request).
 * One request, one reply, every wait bounded by the time limit
 * given at ctl_open. Close it before other clients need the server: a
 * coarse server holds its lock, and a serial one its only slot, for as long
 * as a connection lives.
 */
#ifndef SSN_CLIENT_CTL_H
#define SSN_CLIENT_CTL_H

#include <stddef.h>
#include <stdint.h>
#include "frame.h"
#include "linereader.h"

#define CTL_REPLY_MAX 1024      /* longest reply line accepted */
#define CTL_CLOSE_MS  2000      /* ctl_close's wait for Bye and the close */

struct ctl {
    int fd;
    int timeout_ms;             /* per request */
    struct linereader lr;
    char lr_mem[LR_BUF_SIZE];   /* lr's buffer */
    char err[200];              /* why the last call failed */
    /* hint(hint_arg) is called once when a ctl_request's reply has not
     * begun after hint_ms (0: never): a prompt's word to its person. Set
     * after ctl_adopt, which clears them. */
    int hint_ms;
    void (*hint)(void *arg);
    void *hint_arg;
    uint64_t hint_at;           /* when, for the request under way; 0: no */
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
 * is an Error: reply or not a "name value" line (c->err quotes it); or
 * ctl_query's errors. The whole block shares one time limit. */
int ctl_query_block(struct ctl *c, const char *req,
                    void (*line_cb)(void *arg, const char *line), void *arg);

/* What ctl_request hands each reply line to: len bytes at line, without
 * the '\n', NUL-terminated, exactly as the server sent them (the callee
 * makes them safe for a terminal if it prints them). */
typedef void (*ctl_line_fn)(void *arg, const char *line, size_t len);

/* Sends req, one request line of len bytes with its '\n', whose kind is
 * cmd (an enum proto_cmd; never PROTO_BLANK, which gets no reply), and
 * reads its whole reply: the lines f (frame.h) says belong to it, each
 * passed to line_cb (may be NULL) as it comes. The whole reply shares one
 * time limit. Returns 0 with f->error, f->kind and f->bad saying what the
 * reply was; or -errno with the reason in c->err: -ETIMEDOUT, -EPIPE when
 * the server closed before the reply ended, -ECONNRESET, -EPROTO for a
 * line over CTL_REPLY_MAX. The request is never quoted in c->err (it may
 * be an AUTH). */
int ctl_request(struct ctl *c, const char *req, size_t len, int cmd,
                struct framer *f, ctl_line_fn line_cb, void *arg);

/* Says DONE, waits for Bye and the server's close (CTL_CLOSE_MS at most, or
 * the time limit when shorter), then closes. */
void ctl_close(struct ctl *c);

/* Closes without a word: for a server that stopped answering. */
void ctl_abandon(struct ctl *c);

#endif
