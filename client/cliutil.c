/* cliutil.c -- argument parsing and JSON strings (cliutil.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cliutil.h"

int cli_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0, mult = 1;
    size_t i = 0;

    if (!s || s[0] < '0' || s[0] > '9')
        return -EINVAL;
    for (; s[i] >= '0' && s[i] <= '9'; i++) {
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -EINVAL;
        v = v * 10 + d;
    }
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

int cli_parse_mix(const char *s, struct gen_mix *m)
{
    struct gen_mix r = { { 0, 0, 0, 0 } };
    unsigned sum = 0;
    int n = 0;
    const char *p = s;

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

void cli_json_str(FILE *f, const char *s)
{
    putc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            putc(c, f);
    }
    putc('"', f);
}
