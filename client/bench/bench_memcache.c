/* bench_memcache.c -- ssn-bench's memcache dialect: memcached's text
 * protocol. "set KEY 0 0 30\r\n<value>\r\n" answers STORED (or NOT_STORED),
 * "get KEY\r\n" answers "VALUE KEY FLAGS BYTES\r\n<data>\r\nEND\r\n" or just
 * "END", "delete KEY\r\n" answers DELETED or NOT_FOUND; ERROR,
 * CLIENT_ERROR and SERVER_ERROR are error replies (bench.h). A VALUE must
 * name the key asked for and hold ssn-bench's value for it. The text
 * protocol has no AUTH.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "proto.h"

static size_t mc_build(enum bench_op op, uint64_t key, const char *password,
                       char *buf)
{
    char k[BENCH_KEY_MAX], v[BENCH_VALUE_LEN];
    int n = 0;

    (void)password;
    bench_key(key, k);
    switch (op) {
    case BOP_ADD:
        bench_value(key, v);
        n = snprintf(buf, BENCH_REQ_MAX, "set %s 0 0 %d\r\n%.*s\r\n", k,
                     BENCH_VALUE_LEN, BENCH_VALUE_LEN, v);
        break;
    case BOP_FIND:
        n = snprintf(buf, BENCH_REQ_MAX, "get %s\r\n", k);
        break;
    case BOP_DELETE:
        n = snprintf(buf, BENCH_REQ_MAX, "delete %s\r\n", k);
        break;
    case BOP_AUTH:
        break;                      /* none in the text protocol */
    }
    return n > 0 && n < BENCH_REQ_MAX ? (size_t)n : 0;
}

/* "VALUE KEY FLAGS BYTES[ CAS]": 1 when it names key with BYTES ==
 * BENCH_VALUE_LEN (the only size ssn-bench stores), else 0. */
static int mc_value_line_ok(uint64_t key, const char *line, size_t len)
{
    char copy[BENCH_REPLY_MAX + 1], k[BENCH_KEY_MAX];
    char *save, *tok[5];
    int n = 0;

    memcpy(copy, line, len);
    copy[len] = '\0';
    for (char *t = strtok_r(copy, " ", &save); t && n < 5;
         t = strtok_r(NULL, " ", &save))
        tok[n++] = t;
    bench_key(key, k);
    if (n < 4 || strcmp(tok[0], "VALUE") != 0 || strcmp(tok[1], k) != 0)
        return 0;
    char *end;
    if (tok[3][0] < '0' || tok[3][0] > '9')
        return 0;                       /* strtoul would take "-N" */
    unsigned long bytes = strtoul(tok[3], &end, 10);
    return *end == '\0' && bytes == BENCH_VALUE_LEN;
}

/* A VALUE line that took `took` bytes: its data block, then END. */
static long mc_value(uint64_t key, const char *buf, size_t len, size_t took,
                     struct bench_reply *r, char *err, size_t errlen)
{
    static const char end[] = "\r\nEND\r\n";
    size_t need = took + BENCH_VALUE_LEN + sizeof(end) - 1;
    char want[BENCH_VALUE_LEN];

    if (len < need)
        return 0;
    bench_value(key, want);
    if (memcmp(buf + took, want, BENCH_VALUE_LEN) != 0)
        return bench_unexpected(&bench_dialect_memcache, BOP_FIND, key,
                                buf + took, BENCH_VALUE_LEN, err, errlen);
    if (memcmp(buf + took + BENCH_VALUE_LEN, end, sizeof(end) - 1) != 0) {
        snprintf(err, errlen, "memcache: a VALUE's data block not followed "
                 "by \\r\\nEND\\r\\n");
        return -1;
    }
    r->kind = BK_FOUND;
    return (long)need;
}

static long mc_parse(enum bench_op op, uint64_t key, const char *buf,
                     size_t len, struct bench_reply *r, char *err,
                     size_t errlen)
{
    size_t n;
    long took = bench_line(buf, len, &n, err, errlen);
    if (took <= 0)
        return took;
    r->text = buf;
    r->text_len = n;
    r->is_error = proto_line_is(buf, n, "ERROR") || proto_line_starts(buf, n, "CLIENT_ERROR ") ||
                  proto_line_starts(buf, n, "SERVER_ERROR ");
    if (r->is_error) {
        r->kind = BK_ERROR;
        return took;
    }
    if (op == BOP_ADD && (proto_line_is(buf, n, "STORED") || proto_line_is(buf, n, "NOT_STORED"))) {
        r->kind = buf[0] == 'S' ? BK_STORED : BK_EXISTS;
        return took;
    }
    if (op == BOP_DELETE && (proto_line_is(buf, n, "DELETED") ||
                             proto_line_is(buf, n, "NOT_FOUND"))) {
        r->kind = buf[0] == 'D' ? BK_DELETED : BK_MISSING;
        return took;
    }
    if (op == BOP_FIND && proto_line_is(buf, n, "END")) {
        r->kind = BK_MISSING;
        return took;
    }
    if (op == BOP_FIND && mc_value_line_ok(key, buf, n))
        return mc_value(key, buf, len, (size_t)took, r, err, errlen);
    return bench_unexpected(&bench_dialect_memcache, op, key, buf, n, err,
                            errlen);
}

const struct bench_dialect bench_dialect_memcache = {
    .name = "memcache",
    .has_auth = 0,
    .verb = { "set", "get", "delete", "auth" },
    .build = mc_build,
    .parse = mc_parse,
};
