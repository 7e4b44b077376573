/* bench_resp.c -- ssn-bench's redis dialect: inline commands (SET, GET,
 * DEL, AUTH, one line each) and the RESP replies to them: "+OK", "-ERR
 * ...", ":n", "$len\r\n<bytes>\r\n" and "$-1" (bench.h). A GET's value must
 * be the one ssn-bench stores for that key, so a reply matched to the
 * wrong request is a failure, not a number.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "bench.h"

static size_t resp_build(enum bench_op op, uint64_t key, const char *password,
                         char *buf)
{
    char k[BENCH_KEY_MAX], v[BENCH_VALUE_LEN];
    int n = 0;

    bench_key(key, k);
    switch (op) {
    case BOP_ADD:
        bench_value(key, v);
        n = snprintf(buf, BENCH_REQ_MAX, "SET %s %.*s\r\n", k,
                     BENCH_VALUE_LEN, v);
        break;
    case BOP_FIND:
        n = snprintf(buf, BENCH_REQ_MAX, "GET %s\r\n", k);
        break;
    case BOP_DELETE:
        n = snprintf(buf, BENCH_REQ_MAX, "DEL %s\r\n", k);
        break;
    case BOP_AUTH:
        n = snprintf(buf, BENCH_REQ_MAX, "AUTH %s\r\n", password);
        break;
    }
    return n > 0 && n < BENCH_REQ_MAX ? (size_t)n : 0;
}

/* The decimal after a type byte: "-1", "0", "30". Returns 0 or -1. */
static int resp_int(const char *s, size_t len, long long *out)
{
    long long v = 0;
    size_t i = 0;
    int neg = len > 0 && s[0] == '-';

    i = (size_t)neg;
    if (i == len || len - i > 18)
        return -1;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return 0;
}

/* "$len\r\n" whose line took `took` bytes: the bulk string after it. */
static long resp_bulk(uint64_t key, const char *buf, size_t len, size_t took,
                      long long blen, struct bench_reply *r, char *err,
                      size_t errlen)
{
    if (blen == -1) {               /* the null bulk string: no such key */
        r->kind = BK_MISSING;
        return (long)took;
    }
    if (blen > BENCH_REPLY_MAX) {
        snprintf(err, errlen, "redis: a bulk reply of %lld bytes (at most "
                 "%d expected)", blen, BENCH_REPLY_MAX);
        return -1;
    }
    size_t need = took + (size_t)blen + 2;
    if (len < need)
        return 0;
    if (buf[need - 2] != '\r' || buf[need - 1] != '\n') {
        snprintf(err, errlen, "redis: a bulk reply of %lld bytes not "
                 "followed by \\r\\n", blen);
        return -1;
    }
    char want[BENCH_VALUE_LEN];
    bench_value(key, want);
    if (blen != BENCH_VALUE_LEN || memcmp(buf + took, want, blen) != 0)
        return bench_unexpected(&bench_dialect_redis, BOP_FIND, key,
                                buf + took, (size_t)blen, err, errlen);
    r->kind = BK_FOUND;
    return (long)need;
}

static long resp_parse(enum bench_op op, uint64_t key, const char *buf,
                       size_t len, struct bench_reply *r, char *err,
                       size_t errlen)
{
    size_t n;
    long long v = 0;
    long took = bench_line(buf, len, &n, err, errlen);
    if (took <= 0)
        return took;
    r->text = buf;
    r->text_len = n;
    r->is_error = n > 0 && buf[0] == '-';
    if (r->is_error && op != BOP_AUTH && n >= 7 &&
        memcmp(buf, "-NOAUTH", 7) == 0) {
        char shown[80];
        snprintf(err, errlen, "the server wants a password "
                 "(--password-file): it answered '%s'",
                 bench_show(buf, n, shown, sizeof(shown)));
        return -1;
    }
    if (r->is_error) {
        r->kind = BK_ERROR;
        return took;
    }
    int is_int = n > 1 && resp_int(buf + 1, n - 1, &v) == 0;
    if ((op == BOP_ADD || op == BOP_AUTH) && n == 3 &&
        memcmp(buf, "+OK", 3) == 0) {
        r->kind = BK_STORED;
        return took;
    }
    if (op == BOP_DELETE && buf[0] == ':' && is_int && (v == 0 || v == 1)) {
        r->kind = v ? BK_DELETED : BK_MISSING;
        return took;
    }
    if (op == BOP_FIND && buf[0] == '$' && is_int && v >= -1)
        return resp_bulk(key, buf, len, (size_t)took, v, r, err, errlen);
    return bench_unexpected(&bench_dialect_redis, op, key, buf, n, err,
                            errlen);
}

const struct bench_dialect bench_dialect_redis = {
    .name = "redis",
    .has_auth = 1,
    .verb = { "SET", "GET", "DEL", "AUTH" },
    .build = resp_build,
    .parse = resp_parse,
};
