/* bench-util.h -- small helpers shared by the tools/bench-* programs: a
 * monotonic clock, option parsing for counts and comma lists, the median of
 * repeated runs, a description of the machine for the table header, and JSON
 * string output. Nothing here knows about threads or locks; the benchmarks
 * link it, the server never does.
 */
#ifndef SSN_BENCH_UTIL_H
#define SSN_BENCH_UTIL_H

#include <stddef.h>
#include <stdio.h>
#include <time.h>

#define BENCH_MAX_LIST  64      /* most entries bench_parse_list accepts */

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

/* Writes s as a JSON string literal (with quotes) to f. */
void bench_json_str(FILE *f, const char *s);

#endif
