/* cliutil.h -- argument parsing and output helpers shared by inputgen,
 * inclient and kill_it, so the three accept the same spellings and reject
 * bad input with the same clear messages.
 */
#ifndef SSN_CLIENT_CLIUTIL_H
#define SSN_CLIENT_CLIUTIL_H

#include <stdint.h>
#include <stdio.h>
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

/* Writes s as a JSON string literal, quotes included. */
void cli_json_str(FILE *f, const char *s);

#endif
