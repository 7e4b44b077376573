/* bench-util.c -- helpers shared by the tools/bench-* programs (see
 * bench-util.h): clock, option parsing (values, and whole command lines
 * from a table), median, machine description. No shared state, so nothing
 * here locks.
 */
#include "bench-util.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonw.h"

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

/* Stores one option's argument; 0 or -EINVAL. */
static int opt_store(const struct bench_opt *o, const char *arg,
                     const struct bench_variants *variants)
{
    unsigned long ul;
    int n;

    switch (o->kind) {
    case BENCH_OPT_FLAG:
        *(bool *)o->dest = true;
        return 0;
    case BENCH_OPT_COUNT:
        if (bench_parse_count(arg, &ul) < 0 || ul < o->min || ul > o->max)
            return -EINVAL;
        *(unsigned long *)o->dest = ul;
        return 0;
    case BENCH_OPT_LIST: {
        struct bench_list *l = o->dest;
        int v[BENCH_MAX_LIST];

        if ((n = bench_parse_list(arg, v, BENCH_MAX_LIST)) < 0)
            return -EINVAL;
        for (int i = 0; i < n; i++)
            if ((unsigned long)v[i] > o->max)
                return -EINVAL;
        memcpy(l->v, v, sizeof v);
        l->n = n;
        return 0;
    }
    case BENCH_OPT_VARIANTS:
        return bench_parse_names(arg, variants->names, variants->n, o->dest) < 0
               ? -EINVAL : 0;
    case BENCH_OPT_VARIANT:
        for (n = 0; n < variants->n; n++)
            if (strcmp(arg, variants->names[n]) == 0) {
                *(int *)o->dest = n;
                return 0;
            }
        return -EINVAL;
    case BENCH_OPT_STRING:
        *(const char **)o->dest = arg;
        return 0;
    }
    return -EINVAL;
}

/* getopt_long's value for row i: its letter, or past any char if none. */
static int opt_val(const struct bench_opt *opts, int i)
{
    return opts[i].key ? opts[i].key : 256 + i;
}

int bench_getopt(int argc, char **argv, const struct bench_opt *opts,
                 const struct bench_variants *variants)
{
    struct option lo[BENCH_MAX_OPTS + 2];
    char so[3 * BENCH_MAX_OPTS + 2] = "";
    size_t slen = 0;
    int n = 0, c;

    for (; n < BENCH_MAX_OPTS && opts[n].name != NULL; n++) {
        bool arg = opts[n].kind != BENCH_OPT_FLAG;

        lo[n] = (struct option){ opts[n].name, arg ? required_argument
                                 : no_argument, NULL, opt_val(opts, n) };
        if (opts[n].key) {
            so[slen++] = (char)opts[n].key;
            if (arg)
                so[slen++] = ':';
        }
    }
    lo[n] = (struct option){ "help", no_argument, NULL, 'h' };
    lo[n + 1] = (struct option){ NULL, 0, NULL, 0 };
    so[slen++] = 'h';
    so[slen] = '\0';
    while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
        int i = 0;

        if (c == 'h')
            return 1;
        while (i < n && opt_val(opts, i) != c)
            i++;
        if (i == n || opt_store(&opts[i], optarg, variants) < 0)
            return -EINVAL;
    }
    return optind == argc ? 0 : -EINVAL;
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
    json_write_str(f, cpu);
    fprintf(f, ", \"cpus\": %d, \"date\": ", bench_ncpus());
    json_write_str(f, date);
    fputs(", ", f);
}
