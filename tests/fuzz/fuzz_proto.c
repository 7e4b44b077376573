/* fuzz_proto.c -- the request parser (common/proto.c) on any bytes.
 *
 * The input is one request line as proto_parse gets it (the session hands
 * it lines without their "\r\n"; here any bytes at all, '\n' and NUL
 * included). The oracle:
 *   - the result is req->cmd, and parsing the same bytes again gives the
 *     same result (no hidden state);
 *   - a blank result means the line held nothing but spaces and tabs;
 *   - an error reply starts with "Error: ", fits PROTO_ERR_MAX, and holds no
 *     control byte, DEL, 0xFE, 0xFF or byte outside well-formed UTF-8: it
 *     goes back to a terminal as is;
 *   - ADD's fields are all valid (names pass entry_name_ok and are UTF-8
 *     text, not entry_name_unsafe; the age is 0..150, the SSN passes
 *     entry_ssn_ok), and DELETE's and FIND's names pass entry_name_ok;
 *   - AUTH's secret is one non-empty word inside the line;
 *   - TREE's depth is 1..PROTO_TREE_MAX_DEPTH.
 */
#include <string.h>
#include "entry.h"
#include "fuzz.h"
#include "proto.h"

static int blank_only(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t')
            return 0;
    return 1;
}

static void check_error(const struct proto_req *req)
{
    size_t n = strnlen(req->err, sizeof(req->err));

    FUZZ_CHECK(n < sizeof(req->err), "error reply is NUL-terminated");
    FUZZ_CHECK(strncmp(req->err, PROTO_ERR_PREFIX,
                       strlen(PROTO_ERR_PREFIX)) == 0,
               "error reply starts with 'Error: '");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)req->err[i];
        FUZZ_CHECK(c >= ' ' && c != 0x7f && c < 0xfe,
                   "error reply holds no control byte, DEL, 0xFE or 0xFF");
    }
    FUZZ_CHECK(!entry_name_unsafe(req->err, n),
               "error reply is UTF-8 text, no C1 control");
}

/* A NUL-terminated name field of struct person. */
static void check_name(const char *name, size_t cap)
{
    size_t n = strnlen(name, cap);
    FUZZ_CHECK(n < cap, "name is NUL-terminated within its field");
    FUZZ_CHECK(entry_name_ok(name, n), "parsed name passes entry_name_ok");
}

static void check_entry(enum proto_cmd cmd, const struct person *e)
{
    if (cmd != PROTO_ADD && cmd != PROTO_DELETE && cmd != PROTO_FIND)
        return;
    check_name(e->first, sizeof(e->first));
    check_name(e->last, sizeof(e->last));
    if (cmd != PROTO_ADD)
        return;
    FUZZ_CHECK(!entry_name_unsafe(e->first, strlen(e->first)) &&
               !entry_name_unsafe(e->last, strlen(e->last)),
               "ADD's names are UTF-8 text, no C1 control");
    FUZZ_CHECK(e->age >= 0 && e->age <= ENTRY_AGE_MAX, "ADD's age is 0..150");
    size_t n = strnlen(e->ssn, sizeof(e->ssn));
    FUZZ_CHECK(n == ENTRY_SSN_LEN && entry_ssn_ok(e->ssn, n),
               "ADD's SSN is DDD-DD-DDDD");

    /* What the server stores: the compact entry made from it holds the
     * same person, and prints and dumps the same bytes. */
    char a[ENTRY_LINE_MAX], b[ENTRY_LINE_MAX];
    struct entry *stored = entry_from_person(e);
    FUZZ_CHECK(stored != NULL, "entry_from_person allocates");
    FUZZ_CHECK(strcmp(entry_last(stored), e->last) == 0 &&
               strcmp(entry_first(stored), e->first) == 0 &&
               entry_age(stored) == e->age &&
               strcmp(entry_ssn_text(stored, a), e->ssn) == 0,
               "the stored entry holds the parsed fields");
    size_t la = entry_format_print(stored, a), lb = person_format_print(e, b);
    FUZZ_CHECK(la == lb && memcmp(a, b, la) == 0,
               "stored and plain forms print the same line");
    la = entry_format_dump(stored, a);
    lb = person_format_dump(e, b);
    FUZZ_CHECK(la == lb && memcmp(a, b, la) == 0,
               "stored and plain forms dump the same line");
    entry_free(stored);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *line = (const char *)data;
    struct proto_req req, again;
    struct person e, e2;

    memset(&req, 0, sizeof(req));
    memset(&e, 0, sizeof(e));
    enum proto_cmd cmd = proto_parse(line, size, &req, &e);
    FUZZ_CHECK(cmd == req.cmd, "the result is req->cmd");
    FUZZ_CHECK(cmd >= PROTO_BLANK && cmd <= PROTO_QUIT, "a known command");
    FUZZ_CHECK((cmd == PROTO_BLANK) == blank_only(data, size),
               "blank exactly when only spaces and tabs");

    switch (cmd) {
    case PROTO_INVALID:
        check_error(&req);
        break;
    case PROTO_AUTH:
        FUZZ_CHECK(req.secret >= line && req.secret_len > 0 &&
                   req.secret_len <= size &&
                   req.secret + req.secret_len <= line + size,
                   "AUTH's secret lies inside the line");
        FUZZ_CHECK(!memchr(req.secret, ' ', req.secret_len) &&
                   !memchr(req.secret, '\t', req.secret_len),
                   "AUTH's secret is one word");
        break;
    case PROTO_TREE:
        FUZZ_CHECK(req.depth >= 1 && req.depth <= PROTO_TREE_MAX_DEPTH,
                   "TREE's depth is 1..PROTO_TREE_MAX_DEPTH");
        break;
    default:
        check_entry(cmd, &e);
        break;
    }

    memset(&again, 0, sizeof(again));
    memset(&e2, 0, sizeof(e2));
    FUZZ_CHECK(proto_parse(line, size, &again, &e2) == cmd,
               "the same line parses the same way twice");
    if (cmd == PROTO_INVALID)
        FUZZ_CHECK(strcmp(req.err, again.err) == 0,
                   "the same line gets the same error twice");
    return 0;
}
