/* cli_pipe.c -- ssn-cli --pipe (cli.h): standard input's requests sent
 * pipelined, as fast as the server takes them, by the same session engine
 * inclient runs (pipeline.h), then one line of counts: the replies, and
 * how many were ok, not found, exists and real errors (replykind.h). The
 * replies themselves are not printed, as with redis-cli --pipe.
 */
#include <stdio.h>
#include <unistd.h>
#include "cli.h"
#include "pipeline.h"
#include "proto.h"
#include "replykind.h"

/* A session that makes no progress for this long fails, unless --timeout
 * says otherwise: a server that stopped answering should not hold a script
 * for ever. */
#define CLI_PIPE_HANG_S 60.0

static void print_counts(const struct pl_result *r)
{
    printf("replies: %llu, ok: %llu, not found: %llu, exists: %llu, "
           "errors: %llu", (unsigned long long)r->replies,
           (unsigned long long)r->kinds[RK_OK],
           (unsigned long long)r->kinds[RK_NOT_FOUND],
           (unsigned long long)r->kinds[RK_EXISTS],
           (unsigned long long)r->kinds[RK_ERROR]);
    if (r->bad)
        printf(", malformed: %llu", (unsigned long long)r->bad);
    putchar('\n');
    fflush(stdout);
}

int cli_run_pipe(const struct cli_opts *o, const char *password)
{
    struct pl_opts po = {
        .host = o->host, .port = o->port, .password = password,
        .echo = NULL,
        .hang_s = o->timeout_s > 0 ? o->timeout_s : CLI_PIPE_HANG_S,
        .stop = cli_stop_flag(),
    };
    struct pl_fdsource fs;
    struct pl_source src;
    struct pl_result r;

    cli_stop_on_sigint();
    pl_source_fd(&src, &fs, STDIN_FILENO);
    int rc = pl_run(&po, &src, &r, NULL);
    if (rc && r.fail == PL_ERR_CONNECT)
        fprintf(stderr, "%s: %s\n", CLI_NAME, r.what);
    else if (rc)
        fprintf(stderr, "%s: --pipe failed (%s) after %llu replies to %llu "
                "requests: %s\n", CLI_NAME, pl_fail_name(r.fail),
                (unsigned long long)r.replies,
                (unsigned long long)r.requests, r.what);
    if (fs.dropped > 1)
        fprintf(stderr, "%s: %zu requests over %d bytes dropped\n", CLI_NAME,
                fs.dropped, PROTO_MAX_LINE);
    if (r.fail != PL_ERR_CONNECT)
        print_counts(&r);
    return rc || r.kinds[RK_ERROR] || r.bad ? 1 : 0;
}
