/* bench-util.c -- helpers shared by the tools/bench-* programs (see
 * bench-util.h): clock, option parsing, median, machine description, JSON
 * strings. No shared state, so nothing here locks.
 */
#include "bench-util.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

double bench_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return bench_ts_sec(&ts);
}

double bench_ts_sec(const struct timespec *ts)
{
    return (double)ts->tv_sec + (double)ts->tv_nsec / 1e9;
}

int bench_parse_count(const char *s, unsigned long *out)
{
    char *end;
    unsigned long v, mul = 1;

    if (s == NULL || !isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno != 0)
        return -EINVAL;
    if (*end == 'k' || *end == 'K')
        mul = 1000, end++;
    else if (*end == 'm' || *end == 'M')
        mul = 1000000, end++;
    if (*end != '\0' || v == 0 || v > (unsigned long)-1 / mul)
        return -EINVAL;
    *out = v * mul;
    return 0;
}

int bench_parse_list(const char *s, int *out, int max)
{
    int n = 0;

    if (s == NULL || *s == '\0')
        return -EINVAL;
    for (;;) {
        char *end;
        long v;

        if (!isdigit((unsigned char)*s))
            return -EINVAL;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno != 0 || v <= 0 || v > 1000000 || n == max)
            return -EINVAL;
        out[n++] = (int)v;
        if (*end == '\0')
            return n;
        if (*end != ',')
            return -EINVAL;
        s = end + 1;
    }
}

int bench_parse_names(const char *s, const char *const *known, int nknown,
                      int *sel)
{
    int count = 0;

    for (int k = 0; k < nknown; k++)
        sel[k] = 0;
    while (s != NULL && *s != '\0') {
        size_t len = strcspn(s, ",");
        int found = 0;

        for (int k = 0; k < nknown; k++) {
            if (strlen(known[k]) == len && strncmp(s, known[k], len) == 0) {
                count += !sel[k];
                sel[k] = found = 1;
            }
        }
        if (!found) {
            fprintf(stderr, "unknown variant '%.*s'; known:", (int)len, s);
            for (int k = 0; k < nknown; k++)
                fprintf(stderr, " %s", known[k]);
            fputc('\n', stderr);
            return -EINVAL;
        }
        s += len;
        if (*s == ',')
            s++;
    }
    return count > 0 ? count : -EINVAL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bench_cpu_model(char *buf, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];

    snprintf(buf, len, "unknown");
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        char *colon = strchr(line, ':');

        if (strncmp(line, "model name", 10) != 0 || colon == NULL)
            continue;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(buf, len, "%s", colon);
        break;
    }
    fclose(f);
}

int bench_ncpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    return n > 0 ? (int)n : 1;
}

void bench_date(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;

    localtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%d", &tm);
}

void bench_print_machine(FILE *f, const char *tool)
{
    char cpu[256], date[16];

    bench_cpu_model(cpu, sizeof cpu);
    bench_date(date, sizeof date);
    fprintf(f, "# %s on %s, %d CPUs, %s\n", tool, cpu, bench_ncpus(), date);
}

void bench_json_machine(FILE *f)
{
    char cpu[256], date[16];

    bench_cpu_model(cpu, sizeof cpu);
    bench_date(date, sizeof date);
    fputs("\"cpu\": ", f);
    bench_json_str(f, cpu);
    fprintf(f, ", \"cpus\": %d, \"date\": ", bench_ncpus());
    bench_json_str(f, date);
    fputs(", ", f);
}

void bench_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}
