/* bench-util.h -- small helpers shared by the tools/bench-* programs: a
 * monotonic clock, option parsing for counts and comma lists, the median of
 * repeated runs and a description of the machine for the table header (JSON
 * strings come from common/jsonw.h). Nothing here knows about threads or
 * locks; the benchmarks link it, the server never does.
 *
 * The command line follows the suite's conventions (as client/lib/cliutil.h
 * does for the load clients): -h/--help prints the usage on stdout and
 * exits 0; -V/--version prints "PROG VERSION (SUITE)" (common/version.h)
 * and exits 0; a bad option or value prints one line naming it, then
 * "Try 'PROG --help'.", and exits BENCH_EXIT_USAGE; failures at run time
 * exit 1.
 */
#ifndef SSN_BENCH_UTIL_H
#define SSN_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#define BENCH_MAX_LIST  64      /* most entries bench_parse_list accepts */
#define BENCH_MAX_OPTS  16      /* most entries in one bench_getopt table */
#define BENCH_EXIT_USAGE 2      /* exit status for bad arguments */

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
 * --help (-h) and --version (-V) are always there and need no row. */
struct bench_opt {
    const char *name;           /* the long name, without "--" */
    int key;                    /* the short letter (not h or V); 0: none */
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

/* A benchmark's name and usage text, for bench_getopt. */
struct bench_prog {
    const char *name;           /* "bench-hash": what messages start with */
    void (*usage)(FILE *f);     /* prints the --help text to f */
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
 * selected, or -EINVAL for an unknown name or an empty list. */
int bench_parse_names(const char *s, const char *const *known, int nknown,
                      int *sel);

/* Parses argv against the table opts (at most BENCH_MAX_OPTS rows) with
 * getopt_long; no operands are accepted. --help and --version print on
 * stdout and exit 0 here. Returns 0, or BENCH_EXIT_USAGE after saying on
 * stderr which option or value is wrong ("bench-hash: --count: 'abc' is
 * not a positive number ..."); the destinations of the options before the
 * bad one may have been set. */
int bench_getopt(const struct bench_prog *p, int argc, char **argv,
                 const struct bench_opt *opts,
                 const struct bench_variants *variants);

/* Prints "PROG VERSION (SUITE)" on stdout (common/version.h). */
void bench_version(const char *prog);

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
