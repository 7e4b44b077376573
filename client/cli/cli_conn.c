/* cli_conn.c -- ssn-cli's connection (cli.h): connect and AUTH, then one
 * request at a time through ctl_request, each reply line printed as it
 * comes. A connection that fails is closed and opened again by the next
 * request, as redis-cli does after a server restart.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <openssl/crypto.h>
#include "cli.h"
#include "net.h"
#include "pipeline.h"
#include "proto.h"
#include "replykind.h"
#include "termsafe.h"
#include "timeutil.h"

void cli_conn_init(struct cli_conn *k, const struct cli_opts *o,
                   const char *password)
{
    memset(k, 0, sizeof(*k));
    k->c.fd = -1;
    k->host = o->host;
    k->port = o->port;
    k->password = password;
    k->timeout_ms = o->timeout_s > 0 ? (int)(o->timeout_s * 1000) + 1
                                     : INT_MAX;     /* 24 days: never */
}

int cli_conn_open(struct cli_conn *k)
{
    char err[sizeof(k->err)];
    /* Not ctl_open: its one time limit would bound the replies too, and
     * ours may be "never"; a connect gets CLI_CONNECT_MS at most. */
    int ms = k->timeout_ms < CLI_CONNECT_MS ? k->timeout_ms : CLI_CONNECT_MS;
    int fd = net_connect(k->host, k->port, 0, 0, ms, err, sizeof(err));

    if (fd < 0) {
        snprintf(k->err, sizeof(k->err), "%s", err);
        return -1;
    }
    ctl_adopt(&k->c, fd, k->timeout_ms);
    if (k->password && ctl_auth(&k->c, k->password) != 0) {
        snprintf(k->err, sizeof(k->err), "%s", k->c.err);
        ctl_abandon(&k->c);
        return -1;
    }
    k->open = 1;
    return 0;
}

/* Where a reply's lines go, and what the first one said. */
struct printer {
    FILE *out;
    size_t lines;
    int auth_required;
};

/* Prints one reply line. Names and replies never hold control bytes from
 * a sound server, but a broken one could move a terminal's cursor: those,
 * and bytes that are not UTF-8, become '?' (termsafe.h). */
static void print_line(void *arg, const char *line, size_t len)
{
    struct printer *p = arg;

    if (p->lines++ == 0)
        p->auth_required = len == strlen(PL_AUTH_REQUIRED) &&
                           memcmp(line, PL_AUTH_REQUIRED, len) == 0;
    if (!p->out)
        return;
    term_fwrite(p->out, line, len);
    putc('\n', p->out);
}

/* Lines the server sent before this request was: a broken server's, or
 * more lines than the last reply had, which would pass for this one's
 * reply and shift every later answer by one. Then the connection is
 * closed, -1 with k->err saying why. */
static int unasked(struct cli_conn *k)
{
    char b;

    if (lr_pending(&k->c.lr) == 0 &&
        recv(k->c.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) <= 0)
        return 0;                       /* nothing, or the close to come */
    snprintf(k->err, sizeof(k->err), "%s:%s: the server sent lines no "
             "request asked for", k->host, k->port);
    ctl_abandon(&k->c);
    k->open = 0;
    return -1;
}

int cli_conn_request(struct cli_conn *k, const char *line, size_t len,
                     FILE *out, struct cli_reply *r)
{
    char req[PROTO_MAX_LINE + 2];   /* with its '\n'; longer lines are cut
                                       by the server anyway */
    struct proto_req pr;
    struct person scratch;
    struct framer f;
    struct printer p = { .out = out };

    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    memset(r, 0, sizeof(*r));
    r->cmd = proto_parse(line, len, &pr, &scratch);
    if (r->cmd == PROTO_BLANK)
        return 1;
    if (len > PROTO_MAX_LINE) {
        /* What the server would answer, without sending it a line it
         * would only throw away. */
        print_line(&p, "Error: line too long", 20);
        r->error = 1;
        r->kind = RK_ERROR;
        return 0;
    }
    if (!k->open && cli_conn_open(k) < 0)
        return -1;
    if (unasked(k))
        return -1;
    memcpy(req, line, len);
    req[len] = '\n';
    k->c.hint = k->hint;
    k->c.hint_ms = k->hint ? CLI_HINT_MS : 0;
    uint64_t t0 = time_now_ns();
    int rc = ctl_request(&k->c, req, len + 1, r->cmd, &f, print_line, &p);
    r->ns = time_now_ns() - t0;
    OPENSSL_cleanse(req, len + 1);
    if (out)
        fflush(out);
    if (rc) {
        snprintf(k->err, sizeof(k->err), "%s:%s: %s", k->host, k->port,
                 k->c.err);
        ctl_abandon(&k->c);
        k->open = 0;
        return -1;
    }
    r->malformed = f.bad > 0;
    r->error = f.error || r->malformed;
    r->kind = f.kind;
    r->auth_required = p.auth_required;
    if (r->cmd == PROTO_QUIT) {         /* the server closes after Bye */
        ctl_abandon(&k->c);
        k->open = 0;
    }
    return 0;
}

void cli_conn_close(struct cli_conn *k)
{
    if (k->open)
        ctl_close(&k->c);
    k->open = 0;
}
