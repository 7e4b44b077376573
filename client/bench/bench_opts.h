/* bench_opts.h -- ssn-bench's command line (bench_opts.c): the options,
 * checked one by one and together, turned into the workers' plan
 * (bench_conn.h) and the report's summary of it (bench.h).
 */
#ifndef SSN_CLIENT_BENCH_OPTS_H
#define SSN_CLIENT_BENCH_OPTS_H

#include <stdint.h>
#include "bench.h"
#include "bench_conn.h"
#include "cliutil.h"

#define BENCH_EXIT_INT  130         /* exit status after SIGINT */

extern const struct cli_prog bench_prog;    /* "ssn-bench" and its usage */

/* Everything the command line says. */
struct bench_args {
    struct bench_plan plan;
    struct bench_config cf;
    const char *password_file;
    char password[CLI_PASSWORD_MAX + 1];
    long server_pid;            /* 0: no --server-pid */
    uint64_t cpu0;              /* its CPU time when the run began, us */
    int json, csv;
    int have_n;                 /* -n was given */
    double hang_s;              /* --hang */
};

/* Fills a from the defaults and argv, and reads --password-file. Returns
 * 0, or the exit status: CLI_EXIT_USAGE for bad arguments, 1 when the
 * password file cannot be used (the reason is printed). --help and
 * --version exit here (cli_getopt). The password in a is the caller's to
 * wipe. */
int bench_args_parse(struct bench_args *a, int argc, char **argv);

#endif
