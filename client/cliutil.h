/* cliutil.h -- argument parsing shared by inputgen, inclient and kill_it,
 * so the three accept the same spellings and reject bad input with the same
 * clear messages: value parsers (cli_parse_*), and on top of them the
 * options and operands more than one tool takes (cli_opt_*, cli_arg_*),
 * each with the complaint it prints. (JSON strings: common/jsonw.h.)
 */
#ifndef SSN_CLIENT_CLIUTIL_H
#define SSN_CLIENT_CLIUTIL_H

#include <stdint.h>
#include "gen.h"

#define CLIENT_VERSION  "1.0.0"     /* --version of every client tool */
#define CLI_EVENTS_MAX  1000000000ull   /* largest NEVENTS accepted */
#define CLI_RATE_MAX    10000000000ull  /* largest --rate (10 GB/s) */
#define CLI_SECONDS_MAX 86400.0     /* largest time limit in seconds */

/* Decimal digits with an optional k (x1000) or m (x1000000) suffix, no
 * sign, at most max. Returns 0, or -EINVAL with *out unchanged. */
int cli_parse_u64(const char *s, uint64_t max, uint64_t *out);

/* A non-negative decimal number of seconds (e.g. "2.5") up to
 * CLI_SECONDS_MAX. Returns 0 or -EINVAL. */
int cli_parse_seconds(const char *s, double *out);

/* "K/N" with 0 <= K < N <= GEN_SHARD_MAX. Returns 0 or -EINVAL. */
int cli_parse_shard(const char *s, unsigned *k, unsigned *n);

/* "ADD:DELETE:PRINT" or "ADD:DELETE:PRINT:FIND" weights, each 0 to
 * GEN_MIX_MAX, not all zero. Returns 0 or -EINVAL. */
int cli_parse_mix(const char *s, struct gen_mix *m);

/* The options and operands the tools share. Each sets *out and returns
 * NULL, or returns the complaint to print (cli_usage_error, with arg). */
const char *cli_opt_rate(const char *arg, uint64_t *out);      /* --rate */
const char *cli_opt_rcvbuf(const char *arg, int *out);         /* --rcvbuf */
const char *cli_opt_mss(const char *arg, int *out);            /* --mss */
const char *cli_opt_hang(const char *arg, double *out);        /* --hang */
const char *cli_opt_mix(const char *arg, struct gen_mix *out); /* --mix */
const char *cli_opt_shard(const char *arg, unsigned *k, unsigned *n);
const char *cli_arg_port(const char *arg);                     /* PORT */
const char *cli_arg_events(const char *arg, uint64_t *out);    /* NEVENTS */
const char *cli_arg_seed(const char *arg, uint64_t *out);      /* SEED */

/* Prints "PROG: MSG[: ARG]" and "Try 'PROG --help'." on stderr; returns 2,
 * the exit status for bad arguments. */
int cli_usage_error(const char *prog, const char *msg, const char *arg);

#endif
