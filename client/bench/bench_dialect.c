/* bench_dialect.c -- what every dialect of ssn-bench shares (keys, values,
 * lines, the table of dialects) and the ssn dialect itself: ssnserver's
 * line protocol (docs/PROTOCOL.md). Redis is in bench_resp.c, memcached in
 * bench_memcache.c. Pure functions: no I/O, no state (bench.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "bench.h"
#include "proto.h"
#include "replykind.h"
#include "termsafe.h"

#define SSN_AGE  30                     /* every person's age */
#define SSN_SSN  "123-45-6789"          /* and SSN */

const struct bench_dialect *bench_dialect_find(const char *name)
{
    static const struct bench_dialect *const all[] = {
        &bench_dialect_ssn, &bench_dialect_redis, &bench_dialect_memcache,
    };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

const char *bench_op_name(enum bench_op op)
{
    static const char *const names[] = { "ADD", "FIND", "DELETE", "AUTH" };
    return (unsigned)op < 4 ? names[op] : "?";
}

const char *bench_kind_name(enum bench_kind k)
{
    static const char *const names[BK_KINDS] = {
        "stored", "exists", "found", "deleted", "missing", "error",
    };
    return (unsigned)k < BK_KINDS ? names[k] : "?";
}

size_t bench_key(uint64_t k, char *buf)
{
    int n = snprintf(buf, BENCH_KEY_MAX, "L%" PRIu64 ":f%" PRIu64, k, k);
    return n > 0 ? (size_t)n : 0;
}

void bench_value(uint64_t k, char *buf)
{
    char tmp[BENCH_VALUE_LEN + 1];
    int n = snprintf(tmp, sizeof(tmp), "v%" PRIu64, k);
    memset(buf, '-', BENCH_VALUE_LEN);
    memcpy(buf, tmp, (size_t)n);
}

uint64_t bench_new_key(uint64_t base, uint64_t i)
{
    /* Chris Wellons' lowbias32: each step (xor with a right shift, times an
     * odd number, modulo 2^32) can be undone, so the whole is a bijection. */
    uint32_t x = (uint32_t)i;
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return base + x;
}

long bench_line(const char *buf, size_t len, size_t *linelen, char *err,
                size_t errlen)
{
    size_t scan = len < BENCH_REPLY_MAX ? len : BENCH_REPLY_MAX;
    const char *nl = memchr(buf, '\n', scan);
    if (!nl) {
        if (len < BENCH_REPLY_MAX)
            return 0;
        snprintf(err, errlen, "a reply line longer than %d bytes",
                 BENCH_REPLY_MAX);
        return -1;
    }
    size_t n = (size_t)(nl - buf);
    *linelen = n > 0 && buf[n - 1] == '\r' ? n - 1 : n;
    return (long)(n + 1);
}

const char *bench_show(const char *s, size_t n, char *out, size_t cap)
{
    size_t room = cap - 1, i;
    if (n > room)
        room = room > 3 ? room - 3 : 0;
    i = term_safe(s, n < room ? n : room, out);
    if (n > room)
        for (; i < cap - 1; i++)
            out[i] = '.';
    out[i] = '\0';
    return out;
}

long bench_unexpected(const struct bench_dialect *d, enum bench_op op,
                      uint64_t key, const char *line, size_t len, char *err,
                      size_t errlen)
{
    char what[2 * BENCH_KEY_MAX], shown[64];
    if (op == BOP_AUTH)
        what[0] = '\0';
    else if (d == &bench_dialect_ssn)
        snprintf(what, sizeof(what), " f%" PRIu64 " L%" PRIu64, key, key);
    else {
        what[0] = ' ';
        bench_key(key, what + 1);
    }
    snprintf(err, errlen, "%s: unexpected reply to %s%s: '%s'", d->name,
             d->verb[op], what, bench_show(line, len, shown, sizeof(shown)));
    return -1;
}

/* ---- ssn: docs/PROTOCOL.md ----------------------------------------------- */

static size_t ssn_build(enum bench_op op, uint64_t key, const char *password,
                        char *buf)
{
    int n = 0;
    switch (op) {
    case BOP_ADD:
        n = snprintf(buf, BENCH_REQ_MAX, "ADD f%" PRIu64 " L%" PRIu64
                     " %d " SSN_SSN "\n", key, key, SSN_AGE);
        break;
    case BOP_FIND:
        n = snprintf(buf, BENCH_REQ_MAX, "FIND f%" PRIu64 " L%" PRIu64 "\n",
                     key, key);
        break;
    case BOP_DELETE:
        n = snprintf(buf, BENCH_REQ_MAX, "DELETE f%" PRIu64 " L%" PRIu64
                     "\n", key, key);
        break;
    case BOP_AUTH:
        n = snprintf(buf, BENCH_REQ_MAX, "AUTH %s\n", password);
        break;
    }
    return n > 0 && n < BENCH_REQ_MAX ? (size_t)n : 0;
}

/* An "Error: " line: which kind it is for op, as every client counts
 * them (replykind.h): "Error: f L not found" to FIND and DELETE is a
 * missing key,
 * "Error: f L already exists" to ADD an existing one; anything else (bad
 * fields, out of memory, too many connections) is an error. */
static enum bench_kind ssn_error_kind(enum bench_op op, const char *line,
                                      size_t len)
{
    static const int cmd[] = {
        [BOP_ADD] = PROTO_ADD, [BOP_FIND] = PROTO_FIND,
        [BOP_DELETE] = PROTO_DELETE, [BOP_AUTH] = PROTO_AUTH,
    };
    switch (replykind_of(cmd[op], line, len)) {
    case RK_NOT_FOUND: return BK_MISSING;
    case RK_EXISTS: return BK_EXISTS;
    default: return BK_ERROR;
    }
}

/* FIND's answer for key: PRINT's entry line (docs/PROTOCOL.md). */
static int ssn_is_record(uint64_t key, const char *line, size_t len)
{
    char name[2 * BENCH_KEY_MAX], want[3 * BENCH_KEY_MAX];
    snprintf(name, sizeof(name), "L%" PRIu64 ", f%" PRIu64, key, key);
    int n = snprintf(want, sizeof(want), "%-30s -- %11s %4d", name, SSN_SSN,
                     SSN_AGE);
    return n > 0 && proto_line_is(line, len, want);
}

static long ssn_parse(enum bench_op op, uint64_t key, const char *buf,
                      size_t len, struct bench_reply *r, char *err,
                      size_t errlen)
{
    size_t n;
    long took = bench_line(buf, len, &n, err, errlen);
    if (took <= 0)
        return took;
    r->text = buf;
    r->text_len = n;
    r->is_error = proto_line_starts(buf, n, PROTO_ERR_PREFIX);
    if (r->is_error && op != BOP_AUTH &&
        proto_line_is(buf, n, PROTO_ERR_PREFIX "authentication required")) {
        snprintf(err, errlen, "the server wants a password (--password-file)"
                 ": it answered 'Error: authentication required'");
        return -1;
    }
    if (r->is_error)
        r->kind = ssn_error_kind(op, buf, n);
    else if (op == BOP_FIND && ssn_is_record(key, buf, n))
        r->kind = BK_FOUND;
    else if (op != BOP_FIND && proto_line_is(buf, n, "OK"))
        r->kind = op == BOP_DELETE ? BK_DELETED : BK_STORED;
    else
        return bench_unexpected(&bench_dialect_ssn, op, key, buf, n, err,
                                errlen);
    return took;
}

const struct bench_dialect bench_dialect_ssn = {
    .name = "ssn",
    .has_auth = 1,
    .verb = { "ADD", "FIND", "DELETE", "AUTH" },
    .build = ssn_build,
    .parse = ssn_parse,
};
