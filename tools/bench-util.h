/* bench-util.h -- small helpers shared by the tools/bench-* programs: a
 * monotonic clock, option parsing for counts and comma lists, the median of
 * repeated runs and a description of the machine for the table header (JSON
 * strings come from common/jsonw.h). Nothing here knows about threads or
 * locks; the benchmarks link it, the server never does.
 */
#ifndef SSN_BENCH_UTIL_H
#define SSN_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#define BENCH_MAX_LIST  64      /* most entries bench_parse_list accepts */
#define BENCH_MAX_OPTS  16      /* most entries in one bench_getopt table */

/* A comma list of positive integers, as --threads 1,2,4 gives it. */
struct bench_list {
    int v[BENCH_MAX_LIST];
    int n;
};

/* What one option takes, and the type its dest points to. */
enum bench_opt_kind {
    BENCH_OPT_FLAG,             /* bool: set to true; no argument */
    BENCH_OPT_COUNT,            /* unsigned long: bench_parse_count in [min, max] */
    BENCH_OPT_LIST,             /* struct bench_list: entries at most max */
    BENCH_OPT_VARIANTS,         /* int[nvariants]: bench_parse_names selection */
    BENCH_OPT_VARIANT,          /* int: the index of one variant name */
    BENCH_OPT_STRING,           /* const char *: the argument as given */
};

/* One row of a benchmark's option table; a row with name NULL ends it.
 * --help (-h) is always there and needs no row. */
struct bench_opt {
    const char *name;           /* the long name, without "--" */
    int key;                    /* the short letter; 0 for long only */
    enum bench_opt_kind kind;
    void *dest;
    unsigned long min, max;     /* COUNT: the range; LIST: largest entry */
};

/* The variant names that BENCH_OPT_VARIANTS and BENCH_OPT_VARIANT check
 * their arguments against. */
struct bench_variants {
    const char *const *names;
    int n;
};

/* Seconds on CLOCK_MONOTONIC, as a double. */
double bench_now(void);

/* A timespec from CLOCK_MONOTONIC converted to seconds. */
double bench_ts_sec(const struct timespec *ts);

/* Parses a positive count: digits with an optional k/K (x1000) or m/M
 * (x1000000) suffix, e.g. "10M", "100k". Returns 0, or -EINVAL with *out
 * unchanged. */
int bench_parse_count(const char *s, unsigned long *out);

/* Parses a comma list of positive integers ("1,2,4") into out[0..max).
 * Returns the number parsed, or -EINVAL on bad input or more than max. */
int bench_parse_list(const char *s, int *out, int max);

/* Splits a comma list of names and checks each against known[0..nknown).
 * Sets sel[k] = 1 for each named entry (others 0). Returns the number
 * selected, or -EINVAL after printing "unknown variant" to stderr. */
int bench_parse_names(const char *s, const char *const *known, int nknown,
                      int *sel);

/* Parses argv against the table opts (at most BENCH_MAX_OPTS rows) with
 * getopt_long; no operands are accepted. Returns 0; 1 when --help was
 * asked for; -EINVAL on a bad option or argument (getopt or
 * bench_parse_names may have said why on stderr). Either way the caller
 * prints its usage: on stdout for 1, on stderr for -EINVAL. */
int bench_getopt(int argc, char **argv, const struct bench_opt *opts,
                 const struct bench_variants *variants);

/* Median of v[0..n); sorts v in place. Returns 0 for n == 0. */
double bench_median(double *v, int n);

/* Fills buf with the CPU model ("model name" in /proc/cpuinfo), or "unknown". */
void bench_cpu_model(char *buf, size_t len);

/* Online CPUs. */
int bench_ncpus(void);

/* Today's date as YYYY-MM-DD into buf (at least 11 bytes). */
void bench_date(char *buf, size_t len);

/* Prints "# <tool> on <cpu>, <n> CPUs, <date>" to f. */
void bench_print_machine(FILE *f, const char *tool);

/* Prints the "machine" JSON members (no braces, trailing comma included):
 * "cpu": "...", "cpus": n, "date": "...", */
void bench_json_machine(FILE *f);

#endif
