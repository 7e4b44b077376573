/* cliutil.h -- argument parsing shared by inputgen, inclient and kill_it,
 * so the three accept the same spellings and reject bad input with the same
 * clear messages: value parsers (cli_parse_*), and on top of them the
 * options and operands more than one tool takes (cli_opt_*, cli_arg_*),
 * each with the complaint it prints; cli_getopt runs getopt_long with
 * --help, --version and the messages every tool of the suite shares
 * (tools/bench-util.c keeps the same conventions for the benchmarks).
 * (JSON strings: common/jsonw.h.)
 *
 * The conventions: -h/--help prints the usage on stdout and exits 0;
 * -V/--version prints "PROG VERSION (SUITE)" (common/version.h) and exits
 * 0; a bad option or value prints one line naming it, then "Try 'PROG
 * --help'.", and exits CLI_EXIT_USAGE; failures at run time exit 1.
 */
#ifndef SSN_CLIENT_CLIUTIL_H
#define SSN_CLIENT_CLIUTIL_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include "gen.h"
#include "proto.h"

#define CLI_EXIT_USAGE  2           /* exit status for bad arguments */
#define CLI_EVENTS_MAX  1000000000ull   /* largest NEVENTS accepted */
#define CLI_RATE_MAX    10000000000ull  /* largest --rate (10 GB/s) */
#define CLI_SECONDS_MAX 86400.0     /* largest time limit in seconds */
#define CLI_PASSWORD_MAX (PROTO_MAX_LINE - 5)   /* "AUTH " + it is one request */

/* Decimal digits with an optional k (x1000) or m (x1000000) suffix, no
 * sign, at most max. Returns 0, or -EINVAL with *out unchanged. */
int cli_parse_u64(const char *s, uint64_t max, uint64_t *out);

/* A count as a server prints one (STATS): decimal digits only, below
 * 2^64, nothing after them. Returns 0, or -EINVAL with *out unchanged. */
int cli_parse_count(const char *s, uint64_t *out);

/* A non-negative decimal number of seconds (e.g. "2.5") up to
 * CLI_SECONDS_MAX. Returns 0 or -EINVAL. */
int cli_parse_seconds(const char *s, double *out);

/* "K/N" with 0 <= K < N <= GEN_SHARD_MAX. Returns 0 or -EINVAL. */
int cli_parse_shard(const char *s, unsigned *k, unsigned *n);

#define CLI_MIX_NAMES_MAX 8     /* request kinds a --mix may name */

/* --mix in its named form, the same in every tool: "add=1,find=8,delete=1"
 * (any order, names in either case, each at most once, the ones left out
 * 0). names[0..n) are the request kinds a tool knows; the weights go to
 * w[0..n), each 0 to max, not all zero. Returns 0; -ENOENT for a name the
 * tool does not know; -EINVAL for anything else. */
int cli_parse_named_mix(const char *s, const char *const *names, int n,
                        unsigned max, unsigned *w);

/* kill_it's and inclient's --mix: the named form (add, delete, print,
 * find), or the positional one, "ADD:DELETE:PRINT" or
 * "ADD:DELETE:PRINT:FIND"; weights 0 to GEN_MIX_MAX, not all zero.
 * Returns 0 or -EINVAL. */
int cli_parse_mix(const char *s, struct gen_mix *m);

/* The options and operands the tools share. Each sets *out and returns
 * NULL, or returns what a good value is, to complete "'ARG' is not ..."
 * (cli_bad_value and cli_bad_opt print it). */
const char *cli_opt_rate(const char *arg, uint64_t *out);      /* --rate */
const char *cli_opt_rcvbuf(const char *arg, int *out);         /* --rcvbuf */
const char *cli_opt_mss(const char *arg, int *out);            /* --mss */
const char *cli_opt_hang(const char *arg, double *out);        /* --hang */
const char *cli_opt_mix(const char *arg, struct gen_mix *out); /* --mix */
const char *cli_opt_shard(const char *arg, unsigned *k, unsigned *n);
const char *cli_arg_port(const char *arg);                     /* PORT */
const char *cli_arg_events(const char *arg, uint64_t *out);    /* NEVENTS */
const char *cli_arg_seed(const char *arg, uint64_t *out);      /* SEED */

/* Whether the n bytes at pw can be a password: 1 to CLI_PASSWORD_MAX
 * bytes, one word (no space or tab) and no control byte, so that
 * "AUTH password" is one request line. Returns NULL, or what is wrong,
 * to complete "the password ...": "is empty", "has a space or tab (AUTH
 * takes one word)", "has a control character", "is too long (...)".
 * Never quotes the password. */
const char *cli_password_check(const char *pw, size_t n);

/* --password-file: the password is the first line of path without its
 * "\r\n", one word (no space or tab), 1 to CLI_PASSWORD_MAX bytes: the
 * server's own rules for its --password-file, so one file serves both.
 * Writes it NUL-terminated into out (cap bytes, CLI_PASSWORD_MAX + 1 is
 * enough). Returns 0, or -1 with a one-line reason naming the file in err
 * (out is then untouched). The copy read is wiped; out is the caller's to
 * wipe (OPENSSL_cleanse). */
int cli_password_load(const char *path, char *out, size_t cap, char *err,
                      size_t errlen);

/* A program's name and usage text, for cli_getopt and the complaints. */
struct cli_prog {
    const char *name;           /* "inputgen": what messages start with */
    void (*usage)(FILE *f);     /* prints the --help text to f */
};

/* getopt_long over argv with the suite's conventions: "-h", "--help",
 * "-V" and "--version" are handled here (add 'h' and 'V' to shortopts and
 * rows for "help" and "version" to longopts, with those values) and exit
 * 0 (with "h:" in shortopts, -h takes a value and is the program's own,
 * as ssn-cli's -h HOST is redis-cli's: only --help prints the usage); getopt's own complaints (unknown option, missing value) start with
 * p->name rather than argv[0]. Returns the next option's value, -1 after
 * the last option, or '?' once a bad option was reported on stderr
 * (the caller then returns CLI_EXIT_USAGE). */
int cli_getopt(const struct cli_prog *p, int argc, char **argv,
               const char *shortopts, const struct option *longopts);

/* Prints "PROG VERSION (SUITE)" on stdout (common/version.h). */
void cli_version(const char *prog);

/* Prints "PROG: NAME: 'VALUE' is not WANT" and "Try 'PROG --help'." on
 * stderr; returns CLI_EXIT_USAGE. NAME is an option ("--rate") or an
 * operand ("PORT"). */
int cli_bad_value(const char *prog, const char *name, const char *value,
                  const char *want);

/* cli_bad_value for the option whose getopt value is val in longopts,
 * named by its long form. */
int cli_bad_opt(const char *prog, const struct option *longopts, int val,
                const char *value, const char *want);

/* Prints "PROG: MSG[: ARG]" and "Try 'PROG --help'." on stderr; returns
 * CLI_EXIT_USAGE. For what is wrong with the command line as a whole
 * (operands missing or too many). */
int cli_usage_error(const char *prog, const char *msg, const char *arg);

#endif
