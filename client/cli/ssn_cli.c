/* ssn_cli.c -- ssn-cli's main (cli.h): the command line, the password
 * (--password-file, else $SSN_PASSWORD; never an option's value, which ps
 * would show to everyone), then the mode. man/ssn-cli.1 is its manual.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include "cli.h"

#define CLI_PASSWORD_ENV "SSN_PASSWORD"

/* The password into buf: --password-file's, else $SSN_PASSWORD's (unset
 * or empty: none), held to the server's rules. Returns 1 with one, 0
 * without, -1 after saying on stderr what is wrong (never the password). */
static int get_password(const struct cli_opts *o, char *buf, size_t cap)
{
    char err[400];

    if (o->password_file) {
        if (cli_password_load(o->password_file, buf, cap, err, sizeof(err))) {
            fprintf(stderr, "%s: %s\n", CLI_NAME, err);
            return -1;
        }
        return 1;
    }
    const char *env = getenv(CLI_PASSWORD_ENV);
    if (!env || !*env)
        return 0;
    const char *bad = cli_password_check(env, strlen(env));
    if (bad || strlen(env) >= cap) {
        fprintf(stderr, "%s: %s: the password %s\n", CLI_NAME,
                CLI_PASSWORD_ENV, bad ? bad : "is too long");
        return -1;
    }
    snprintf(buf, cap, "%s", env);
    return 1;
}

static int run(const struct cli_opts *o, const char *password)
{
    switch (o->mode) {
    case CLI_MODE_ONCE: return cli_run_once(o, password);
    case CLI_MODE_PIPE: return cli_run_pipe(o, password);
    case CLI_MODE_STAT: return cli_run_stat(o, password);
    case CLI_MODE_LATENCY: return cli_run_latency(o, password);
    case CLI_MODE_AUTO:
        break;
    }
    if (isatty(STDIN_FILENO))
        return cli_run_repl(o, password);
    return cli_run_lines(o, password, stdin);
}

int main(int argc, char **argv)
{
    struct cli_opts o;
    char password[CLI_PASSWORD_MAX + 1];

    int rc = cli_parse(&o, argc, argv);
    if (rc)
        return rc;
    int have = get_password(&o, password, sizeof(password));
    if (have < 0)
        return 1;
    signal(SIGPIPE, SIG_IGN);   /* a closed server is an error, not a death */
    rc = run(&o, have ? password : NULL);
    OPENSSL_cleanse(password, sizeof(password));
    return rc;
}
