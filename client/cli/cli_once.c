/* cli_once.c -- ssn-cli's requests for scripts (cli.h): the request of the
 * command line, sent once or -r times every -i seconds; and, when standard
 * input is no terminal, one request per line of it. One connection for the
 * run, one request at a time, each reply printed whole before the next
 * request leaves. The exit status says whether any reply was an error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include "cli.h"
#include "proto.h"

/* After an "authentication required" reply: what to do about it, once. */
static void hint_password(const struct cli_conn *k, int *hinted)
{
    if (*hinted || k->password)
        return;
    *hinted = 1;
    fprintf(stderr, "%s: the server wants a password: give "
            "--password-file FILE or set SSN_PASSWORD\n", CLI_NAME);
}

int cli_run_once(const struct cli_opts *o, const char *password)
{
    char req[PROTO_MAX_LINE + 2];
    struct cli_conn k;
    struct cli_reply r;
    int errors = 0, hinted = 0;

    int n = cli_join(o->words, o->nwords, req, sizeof(req));
    if (n < 0)
        return cli_usage_error(CLI_NAME, n == -EINVAL
                               ? "a word of the request holds a line break"
                               : "the request is over 1024 bytes", NULL);
    cli_conn_init(&k, o, password);
    if (cli_conn_open(&k) < 0) {
        fprintf(stderr, "%s: %s\n", CLI_NAME, k.err);
        return 1;
    }
    if (o->repeat != 1)
        cli_stop_on_sigint();
    double interval = cli_interval(o);
    for (long long i = 0; o->repeat < 0 || i < o->repeat; i++) {
        if (i > 0)
            cli_nap(interval);
        if (cli_stopped())
            break;
        int rc = cli_conn_request(&k, req, (size_t)n, stdout, &r);
        if (rc < 0) {
            fprintf(stderr, "%s: %s\n", CLI_NAME, k.err);
            errors++;
            break;
        }
        errors += r.error;
        if (r.auth_required)
            hint_password(&k, &hinted);
        if (r.cmd == PROTO_QUIT)
            break;                      /* nothing more can be asked */
    }
    OPENSSL_cleanse(req, sizeof(req));
    cli_conn_close(&k);
    return errors ? 1 : 0;
}

int cli_run_lines(const struct cli_opts *o, const char *password, FILE *in)
{
    struct cli_conn k;
    struct cli_reply r;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int errors = 0, hinted = 0;

    cli_conn_init(&k, o, password);
    if (cli_conn_open(&k) < 0) {
        fprintf(stderr, "%s: %s\n", CLI_NAME, k.err);
        return 1;
    }
    while ((len = getline(&line, &cap, in)) >= 0) {
        int rc = cli_conn_request(&k, line, (size_t)len, stdout, &r);
        if (rc > 0)
            continue;                   /* a blank line: no request */
        if (rc < 0) {
            fprintf(stderr, "%s: %s\n", CLI_NAME, k.err);
            errors++;
            break;
        }
        errors += r.error;
        if (r.auth_required)
            hint_password(&k, &hinted);
        if (r.cmd == PROTO_QUIT)
            break;
    }
    if (line)
        OPENSSL_cleanse(line, cap);     /* it may have held an AUTH */
    free(line);
    cli_conn_close(&k);
    return errors ? 1 : 0;
}
