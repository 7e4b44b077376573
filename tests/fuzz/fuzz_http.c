/* fuzz_http.c -- what a client of --metrics-port sends, on any bytes: the
 * request's head (metrics_head_parse) and then, when it has one, its
 * Authorization header (metrics_auth_scheme, metrics_basic_password),
 * as metrics_conn.c and metrics_http.c run them (server/net/
 * metrics_head.c).
 *
 * The input is a head as metrics_conn.c hands it over: at most
 * METRICS_HEAD_MAX bytes (a longer one is refused with 431 unread) with
 * no NUL (refused with 400 first), copied into a buffer of exactly its
 * size plus the NUL, so that ASan sees a read past it. The oracle:
 *   - the status is 0, 400, 405 or 505, and parsing the same bytes again
 *     gives the same status, path and credentials (no hidden state);
 *   - 0 only for a request line of GET or HEAD (after blank lines), the
 *     path inside the buffer, starting with '/', holding no space, CR,
 *     LF, '?', '#', other control byte or DEL (a bare CR is refused, as
 *     RFC 9112 asks); head_only says HEAD;
 *   - the credentials, when there are some, inside the buffer, trimmed of
 *     blanks, holding no control byte but tabs;
 *   - Basic credentials decode to -1, or to a password inside the 512
 *     bytes of the decoding buffer (HTTP_AUTH_MAX), just after a ':',
 *     never longer than what base64 of that length can hold.
 */
#include <string.h>
#include "fuzz.h"
#include "net/metrics_conn.h"
#include "net/metrics_head.h"

#define AUTH_MAX 512            /* metrics_http.c's HTTP_AUTH_MAX */

static int inside(const char *p, const char *buf, size_t len)
{
    return p >= buf && p <= buf + len;
}

/* No control byte (nor DEL) in s, but for tabs where tab_ok. */
static int clean(const char *s, int tab_ok)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        if ((*c < ' ' && !(tab_ok && *c == '\t')) || *c == 0x7f)
            return 0;
    return 1;
}

static void check_basic(const char *cred)
{
    unsigned char out[AUTH_MAX];
    const char *secret = NULL;
    int n = metrics_basic_password(cred, out, sizeof(out), &secret);

    if (n < 0)
        return;
    FUZZ_CHECK(secret != NULL && (const unsigned char *)secret > out &&
               (const unsigned char *)secret + n <= out + sizeof(out),
               "the password lies inside the decoding buffer");
    FUZZ_CHECK(secret[-1] == ':', "the password follows the user's ':'");
    FUZZ_CHECK((size_t)n < strlen(cred) / 4 * 3,
               "the password is shorter than its base64");
}

static void check_ok(const struct metrics_request *rq, const char *buf,
                     const char *raw, size_t len)
{
    const char *p = raw;

    while (p < raw + len && (*p == '\r' || *p == '\n'))
        p++;
    size_t left = (size_t)(raw + len - p);
    FUZZ_CHECK(rq->head_only ? left >= 5 && memcmp(p, "HEAD ", 5) == 0
                             : left >= 4 && memcmp(p, "GET ", 4) == 0,
               "accepted: a GET or HEAD request line, head_only saying which");
    FUZZ_CHECK(rq->path && inside(rq->path, buf, len) && rq->path[0] == '/',
               "the path lies in the head and starts with '/'");
    FUZZ_CHECK(strpbrk(rq->path, " ?#") == NULL && clean(rq->path, 0),
               "the path holds no space, '?', '#', control byte or DEL");
    if (!rq->authorization)
        return;
    const char *a = rq->authorization;
    size_t n = strlen(a);
    FUZZ_CHECK(inside(a, buf, len), "the credentials lie in the head");
    FUZZ_CHECK(clean(a, 1), "the credentials hold no control byte but tabs");
    FUZZ_CHECK(n == 0 || (a[0] != ' ' && a[0] != '\t' && a[n - 1] != ' ' &&
                          a[n - 1] != '\t'),
               "the credentials are trimmed");
    const char *cred = metrics_auth_scheme(a, "Basic");
    if (cred) {
        FUZZ_CHECK(inside(cred, a, n) && *cred != ' ',
                   "Basic's credentials follow the scheme and its spaces");
        check_basic(cred);
    }
    cred = metrics_auth_scheme(a, "Bearer");
    FUZZ_CHECK(!cred || (inside(cred, a, n) && *cred != ' '),
               "Bearer's token follows the scheme and its spaces");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > METRICS_HEAD_MAX || (size && memchr(data, '\0', size)))
        return 0;
    char *a = malloc(size + 1), *b = malloc(size + 1);
    FUZZ_CHECK(a && b, "the head's copies are allocated");
    if (size)
        memcpy(a, data, size);
    a[size] = '\0';
    memcpy(b, a, size + 1);

    struct metrics_request ra = { 0 }, rb = { 0 };
    int code = metrics_head_parse(a, &ra);
    FUZZ_CHECK(code == 0 || code == 400 || code == 405 || code == 505,
               "the status is 0, 400, 405 or 505");
    FUZZ_CHECK(metrics_head_parse(b, &rb) == code &&
               ra.head_only == rb.head_only &&
               !ra.path == !rb.path &&
               (!ra.path || strcmp(ra.path, rb.path) == 0) &&
               !ra.authorization == !rb.authorization &&
               (!ra.authorization ||
                strcmp(ra.authorization, rb.authorization) == 0),
               "the same bytes parse the same way");
    if (code == 0)
        check_ok(&ra, a, (const char *)data, size);
    free(a);
    free(b);
    return 0;
}
