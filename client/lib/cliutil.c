/* cliutil.c -- argument parsing and its complaints (cliutil.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <openssl/crypto.h>
#include "cliutil.h"
#include "version.h"

#define STR_(x) #x              /* a macro's value as a string literal */
#define STR(x)  STR_(x)

/* The decimal digits at s's start (at least one, below 2^64) into *v:
 * how many, or 0. */
static size_t digits(const char *s, uint64_t *v)
{
    size_t i = 0;

    *v = 0;
    for (; s && s[i] >= '0' && s[i] <= '9'; i++) {
        uint64_t d = (uint64_t)(s[i] - '0');
        if (*v > (UINT64_MAX - d) / 10)
            return 0;
        *v = *v * 10 + d;
    }
    return i;
}

int cli_parse_count(const char *s, uint64_t *out)
{
    uint64_t v;
    size_t i = digits(s, &v);

    if (i == 0 || s[i] != '\0')
        return -EINVAL;
    *out = v;
    return 0;
}

int cli_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v, mult = 1;
    size_t i = digits(s, &v);

    if (i == 0)
        return -EINVAL;
    if (s[i] == 'k' || s[i] == 'K')
        mult = 1000, i++;
    else if (s[i] == 'm' || s[i] == 'M')
        mult = 1000000, i++;
    if (s[i] != '\0' || v > max / mult)
        return -EINVAL;
    *out = v * mult;
    return 0;
}

int cli_parse_seconds(const char *s, double *out)
{
    char *end;
    if (!s || !*s || !strchr("0123456789.", s[0]))
        return -EINVAL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !(v >= 0) || v > CLI_SECONDS_MAX)
        return -EINVAL;
    *out = v;
    return 0;
}

int cli_parse_shard(const char *s, unsigned *k, unsigned *n)
{
    uint64_t a, b;
    const char *slash = s ? strchr(s, '/') : NULL;
    char left[24];

    if (!slash || (size_t)(slash - s) >= sizeof(left))
        return -EINVAL;
    memcpy(left, s, (size_t)(slash - s));
    left[slash - s] = '\0';
    if (cli_parse_u64(left, GEN_SHARD_MAX, &a) ||
        cli_parse_u64(slash + 1, GEN_SHARD_MAX, &b) || b == 0 || a >= b ||
        strpbrk(s, "kKmM"))
        return -EINVAL;
    *k = (unsigned)a;
    *n = (unsigned)b;
    return 0;
}

int cli_parse_named_mix(const char *s, const char *const *names, int n,
                        unsigned max, unsigned *w)
{
    unsigned v[CLI_MIX_NAMES_MAX] = { 0 }, sum = 0;
    int seen[CLI_MIX_NAMES_MAX] = { 0 };

    if (!s || n > CLI_MIX_NAMES_MAX || !strchr(s, '='))
        return -EINVAL;
    while (*s) {
        size_t len = strcspn(s, "=,");
        int k;
        for (k = 0; k < n; k++)
            if (strlen(names[k]) == len && strncasecmp(s, names[k], len) == 0)
                break;
        if (k == n)
            return len && s[len] == '=' ? -ENOENT : -EINVAL;
        if (s[len] != '=' || seen[k])
            return -EINVAL;
        s += len + 1;
        char part[16];
        len = strcspn(s, ",");
        uint64_t x;
        if (len == 0 || len >= sizeof(part))
            return -EINVAL;
        memcpy(part, s, len);
        part[len] = '\0';
        if (strpbrk(part, "kKmM") || cli_parse_u64(part, max, &x))
            return -EINVAL;
        v[k] = (unsigned)x;
        seen[k] = 1;
        sum += v[k];
        s += len;
        if (*s == ',' && *++s == '\0')
            return -EINVAL;         /* a trailing comma */
    }
    if (sum == 0)
        return -EINVAL;
    memcpy(w, v, (size_t)n * sizeof(*w));
    return 0;
}

int cli_parse_mix(const char *s, struct gen_mix *m)
{
    static const char *const names[] = { "add", "delete", "print", "find" };
    struct gen_mix r = { { 0, 0, 0, 0 } };
    unsigned sum = 0;
    int n = 0;
    const char *p = s;

    if (s && strchr(s, '='))
        return cli_parse_named_mix(s, names, 4, GEN_MIX_MAX, m->w) ? -EINVAL
                                                                   : 0;
    if (!s || strpbrk(s, "kKmM"))
        return -EINVAL;
    while (n < 4) {
        char part[16];
        size_t len = strcspn(p, ":");
        uint64_t v;
        if (len == 0 || len >= sizeof(part))
            return -EINVAL;
        memcpy(part, p, len);
        part[len] = '\0';
        if (cli_parse_u64(part, GEN_MIX_MAX, &v))
            return -EINVAL;
        r.w[n++] = (unsigned)v;
        sum += (unsigned)v;
        p += len;
        if (*p == '\0')
            break;
        p++;                        /* the ':' */
    }
    if (*p != '\0' || n < 3 || sum == 0)
        return -EINVAL;
    *m = r;
    return 0;
}

const char *cli_opt_rate(const char *arg, uint64_t *out)
{
    uint64_t v;
    if (cli_parse_u64(arg, CLI_RATE_MAX, &v) || v == 0)
        return "a rate from 1 to 10000000000 bytes per second "
               "(k and m suffixes allowed)";
    *out = v;
    return NULL;
}

const char *cli_opt_rcvbuf(const char *arg, int *out)
{
    uint64_t v;
    if (cli_parse_u64(arg, 1u << 30, &v) || v == 0)
        return "a size from 1 to 1073741824 bytes";
    *out = (int)v;
    return NULL;
}

const char *cli_opt_mss(const char *arg, int *out)
{
    uint64_t v;
    if (cli_parse_u64(arg, 32767, &v) || v < 88)  /* Linux's TCP_MAXSEG range */
        return "a size from 88 to 32767 bytes";
    *out = (int)v;
    return NULL;
}

const char *cli_opt_hang(const char *arg, double *out)
{
    return cli_parse_seconds(arg, out) ? "a number of seconds from 0 to 86400"
                                       : NULL;
}

const char *cli_opt_mix(const char *arg, struct gen_mix *out)
{
    return cli_parse_mix(arg, out) ? "weights from 0 to 1000, not all 0, "
                                     "as add=N,delete=N,print=N,find=N or "
                                     "ADD:DELETE:PRINT[:FIND]" : NULL;
}

const char *cli_opt_shard(const char *arg, unsigned *k, unsigned *n)
{
    return cli_parse_shard(arg, k, n) ? "K/N with 0 <= K < N <= 65536"
                                      : NULL;
}

const char *cli_arg_port(const char *arg)
{
    uint64_t v;
    return cli_parse_u64(arg, 65535, &v) || v == 0 ? "a port from 1 to 65535"
                                                   : NULL;
}

const char *cli_arg_events(const char *arg, uint64_t *out)
{
    return cli_parse_u64(arg, CLI_EVENTS_MAX, out)
           ? "a number from 0 to 1000000000" : NULL;
}

const char *cli_arg_seed(const char *arg, uint64_t *out)
{
    return cli_parse_u64(arg, UINT64_MAX, out)
           ? "a non-negative integer below 2^64" : NULL;
}

const char *cli_password_check(const char *pw, size_t n)
{
    if (n == 0)
        return "is empty";
    if (memchr(pw, ' ', n) || memchr(pw, '\t', n))
        return "has a space or tab (AUTH takes one word)";
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)pw[i] < 0x20 || pw[i] == 0x7f)
            return "has a control character";
    if (n > CLI_PASSWORD_MAX)
        return "is too long (\"AUTH password\" must fit in one request "
               "line of " STR(PROTO_MAX_LINE) " bytes)";
    return NULL;
}

int cli_password_load(const char *path, char *out, size_t cap, char *err,
                      size_t errlen)
{
    char line[CLI_PASSWORD_MAX + 3];    /* the password, "\r\n" and NUL */
    FILE *f = fopen(path, "r");
    int rc = -1;

    if (!f) {
        snprintf(err, errlen, "--password-file: cannot read %s: %s", path,
                 strerror(errno));
        return -1;
    }
    if (!fgets(line, sizeof(line), f)) {
        if (ferror(f))
            snprintf(err, errlen, "--password-file: cannot read %s: %s",
                     path, strerror(errno));
        else
            snprintf(err, errlen, "--password-file: %s has no password on "
                     "its first line", path);
        goto out;
    }
    size_t n = strcspn(line, "\r\n");
    const char *bad = n ? cli_password_check(line, n) : NULL;
    if (n == 0)
        snprintf(err, errlen, "--password-file: %s has no password on its "
                 "first line", path);
    else if (bad)
        snprintf(err, errlen, "--password-file: the password in %s %s", path,
                 bad);
    else if (n >= cap)
        snprintf(err, errlen, "--password-file: the password in %s does "
                 "not fit in %zu bytes", path, cap - 1);
    else {
        memcpy(out, line, n);
        out[n] = '\0';
        rc = 0;
    }
out:
    OPENSSL_cleanse(line, sizeof(line));
    fclose(f);
    return rc;
}

/* 1 when option token opt (argv[i - 1]) takes the next token as its
 * value: "--name" without "=" (or a prefix of one, as getopt_long allows)
 * of a required argument, or "-x" with "x:" in shortopts. */
static int takes_next(const char *opt, const char *shortopts,
                      const struct option *longopts)
{
    if (opt[0] != '-' || opt[1] == '\0')
        return 0;
    if (opt[1] == '-') {
        size_t n = strlen(opt + 2);
        if (n == 0 || strchr(opt, '='))
            return 0;
        for (const struct option *o = longopts; o && o->name; o++)
            if (strncmp(o->name, opt + 2, n) == 0 &&
                o->has_arg == required_argument)
                return 1;
        return 0;
    }
    const char *x = opt[2] == '\0' ? strchr(shortopts, opt[1]) : NULL;
    return x && x[1] == ':' && x[2] != ':';
}

/* A negative number where an operand goes ("kill_it HOST PORT 10 -2"),
 * which getopt_long would call an unknown option: that token, or NULL.
 * With "+" options end at the first operand, and after "--" too. */
static const char *negative_operand(int argc, char **argv,
                                    const char *shortopts,
                                    const struct option *longopts)
{
    if (shortopts[0] == '+')
        return NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return NULL;
        if (argv[i][0] == '-' && isdigit((unsigned char)argv[i][1]) &&
            !strchr(shortopts, argv[i][1]) &&
            !(i > 1 && takes_next(argv[i - 1], shortopts, longopts)))
            return argv[i];
    }
    return NULL;
}

int cli_getopt(const struct cli_prog *p, int argc, char **argv,
               const char *shortopts, const struct option *longopts)
{
    const char *neg = optind <= 1 ? negative_operand(argc, argv, shortopts,
                                                     longopts) : NULL;
    if (neg) {
        fprintf(stderr, "%s: '%s' is not a valid operand: no count, port "
                "or size is negative\n", p->name, neg);
        fprintf(stderr, "Try '%s --help'.\n", p->name);
        return '?';
    }

    /* getopt_long names argv[0] in its complaints; lend it the program's
     * short name for the call, so every line starts the same way whatever
     * path the program was run by. */
    char *argv0 = argv[0];
    int idx = -1;               /* set only when a long option matched */
    argv[0] = (char *)p->name;
    int c = getopt_long(argc, argv, shortopts, longopts, &idx);
    argv[0] = argv0;

    const char *h = strchr(shortopts, 'h');
    if (c == 'h' && h && h[1] == ':' &&
        !(idx >= 0 && strcmp(longopts[idx].name, "help") == 0))
        return c;               /* -h VALUE, or a long form of it */
    switch (c) {
    case 'h':
        p->usage(stdout);
        exit(0);
    case 'V':
        cli_version(p->name);
        exit(0);
    case '?':
    case ':':
        fprintf(stderr, "Try '%s --help'.\n", p->name);
        return '?';
    }
    return c;
}

void cli_version(const char *prog)
{
    printf("%s %s (%s)\n", prog, SSN_VERSION, SSN_SUITE);
}

int cli_bad_value(const char *prog, const char *name, const char *value,
                  const char *want)
{
    fprintf(stderr, "%s: %s: '%s' is not %s\n", prog, name, value, want);
    fprintf(stderr, "Try '%s --help'.\n", prog);
    return CLI_EXIT_USAGE;
}

int cli_bad_opt(const char *prog, const struct option *longopts, int val,
                const char *value, const char *want)
{
    char name[64] = "an option";

    for (const struct option *o = longopts; o->name; o++)
        if (o->val == val && !o->flag) {
            snprintf(name, sizeof(name), "--%s", o->name);
            break;
        }
    return cli_bad_value(prog, name, value, want);
}

int cli_usage_error(const char *prog, const char *msg, const char *arg)
{
    fprintf(stderr, "%s: %s%s%s\n", prog, msg, arg ? ": " : "",
            arg ? arg : "");
    fprintf(stderr, "Try '%s --help'.\n", prog);
    return CLI_EXIT_USAGE;
}
