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
#include "version.h"

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
        if (!found)
            return -EINVAL;
        s += len;
        if (*s == ',')
            s++;
    }
    return count > 0 ? count : -EINVAL;
}

/* Writes "NAME1,NAME2,..." (sep between names) into buf. */
static void join_names(char *buf, size_t len, const struct bench_variants *v,
                       const char *sep)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int k = 0; k < v->n && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                 k ? sep : "", v->names[k]);
}

/* What a good value for o is, to complete "'ARG' is not ...", into buf. */
static const char *opt_want(const struct bench_opt *o,
                            const struct bench_variants *variants,
                            char *buf, size_t len)
{
    char names[512];

    switch (o->kind) {
    case BENCH_OPT_COUNT:
        if (o->max == (unsigned long)-1 && o->min <= 1)
            snprintf(buf, len, "a positive number (k and M suffixes allowed)");
        else if (o->max == (unsigned long)-1)
            snprintf(buf, len, "a number of at least %lu (k and M suffixes "
                     "allowed)", o->min);
        else
            snprintf(buf, len, "a number from %lu to %lu", o->min, o->max);
        break;
    case BENCH_OPT_LIST:
        snprintf(buf, len, "a comma list of at most %d numbers from 1 to %lu",
                 BENCH_MAX_LIST, o->max);
        break;
    case BENCH_OPT_VARIANTS:
        join_names(names, sizeof names, variants, ",");
        snprintf(buf, len, "a comma list of variants from: %s", names);
        break;
    case BENCH_OPT_VARIANT:
        join_names(names, sizeof names, variants, ", ");
        snprintf(buf, len, "one of: %s", names);
        break;
    default:                    /* flags and strings cannot be wrong */
        snprintf(buf, len, "a value for --%s", o->name);
    }
    return buf;
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

/* Prints the "Try" line that follows every complaint; returns the status. */
static int usage_error(const struct bench_prog *p)
{
    fprintf(stderr, "Try '%s --help'.\n", p->name);
    return BENCH_EXIT_USAGE;
}

int bench_getopt(const struct bench_prog *p, int argc, char **argv,
                 const struct bench_opt *opts,
                 const struct bench_variants *variants)
{
    struct option lo[BENCH_MAX_OPTS + 3];
    char so[3 * BENCH_MAX_OPTS + 3] = "";
    char want[640];
    char *argv0 = argv[0];
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
    lo[n + 1] = (struct option){ "version", no_argument, NULL, 'V' };
    lo[n + 2] = (struct option){ NULL, 0, NULL, 0 };
    strcpy(so + slen, "hV");
    for (;;) {
        int i = 0;

        /* getopt_long names argv[0] in its complaints; lend it the short
         * name, so every line starts the same way whatever the path. */
        argv[0] = (char *)p->name;
        c = getopt_long(argc, argv, so, lo, NULL);
        argv[0] = argv0;
        if (c == -1)
            break;
        if (c == 'h') {
            p->usage(stdout);
            exit(0);
        }
        if (c == 'V') {
            bench_version(p->name);
            exit(0);
        }
        while (i < n && opt_val(opts, i) != c)
            i++;
        if (i == n)             /* getopt has said what was wrong */
            return usage_error(p);
        if (opt_store(&opts[i], optarg, variants) < 0) {
            fprintf(stderr, "%s: --%s: '%s' is not %s\n", p->name,
                    opts[i].name, optarg,
                    opt_want(&opts[i], variants, want, sizeof want));
            return usage_error(p);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", p->name,
                argv[optind]);
        return usage_error(p);
    }
    return 0;
}

void bench_version(const char *prog)
{
    printf("%s %s (%s)\n", prog, SSN_VERSION, SSN_SUITE);
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
