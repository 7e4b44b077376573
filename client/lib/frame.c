/* frame.c -- reply framing and shape checks (frame.h). Pure: no I/O. */
#include <string.h>
#include "entry.h"
#include "frame.h"
#include "proto.h"
#include "replykind.h"

/* The length of PRINT's frame lines without their '\n'. */
#define PRINT_RULE_LEN (sizeof(ENTRY_PRINT_HEAD) - 2)

void frame_init(struct framer *f)
{
    memset(f, 0, sizeof(*f));
}

void frame_begin(struct framer *f, int cmd)
{
    f->state = FRAME_FIRST;
    f->cmd = cmd;
    f->error = 0;
    f->kind = RK_OK;
    f->bad = 0;
    f->lines = 0;
}

int frame_is_print_head(const char *line, size_t len)
{
    return len == PRINT_RULE_LEN &&
           memcmp(line, ENTRY_PRINT_HEAD, PRINT_RULE_LEN) == 0;
}

int frame_is_print_tail(const char *line, size_t len)
{
    return len == PRINT_RULE_LEN &&
           memcmp(line, ENTRY_PRINT_TAIL, PRINT_RULE_LEN) == 0;
}

static int all_of(const char *s, size_t len, const char *set)
{
    for (size_t i = 0; i < len; i++)
        if (!s[i] || !strchr(set, s[i]))
            return 0;
    return 1;
}

/* A PRINT/FIND line: "%-30s -- %11s %4d" of "last, first", the SSN and
 * the age, so at least 50 bytes: the names with their ", ", then " -- ",
 * a DDD-DD-DDDD SSN, a space and an age of 0 to 150 right-aligned in 4. */
static int print_line_ok(const char *line, size_t len)
{
    size_t pad = 0;
    int age;

    if (len < 50 || !memmem(line, len - 20, ", ", 2))
        return 0;
    const char *a = line + len - 4, *ssn = a - 1 - ENTRY_SSN_LEN;
    while (pad < 3 && a[pad] == ' ')
        pad++;
    return memcmp(ssn - 4, " -- ", 4) == 0 && a[-1] == ' ' &&
           entry_ssn_ok(ssn, ENTRY_SSN_LEN) &&
           entry_age_parse(a + pad, 4 - pad, &age);
}

int frame_check_ok(const char *line, size_t len)
{
    static const char tail[] = ", all invariants hold";
    size_t n, t = sizeof(tail) - 1;

    if (len < 3 + t || memcmp(line, "OK ", 3) != 0 ||
        memcmp(line + len - t, tail, t) != 0)
        return 0;
    for (n = 3; n < len - t && line[n] >= '0' && line[n] <= '9'; n++)
        ;
    const char *word = line + n;
    size_t wlen = len - t - n;
    return n > 3 && ((wlen == 6 && memcmp(word, " entry", 6) == 0) ||
                     (wlen == 8 && memcmp(word, " entries", 8) == 0));
}

static int first_line_ok(int cmd, const char *line, size_t len)
{
    switch (cmd) {
    case PROTO_ADD:
    case PROTO_DELETE:
    case PROTO_COMPACT:
        return proto_line_is(line, len, PROTO_OK);
    case PROTO_FIND:
        return print_line_ok(line, len);
    case PROTO_COUNT:               /* 19 digits: below 2^64 */
        return len > 0 && len <= 19 && all_of(line, len, "0123456789");
    case PROTO_CHECK:
        return frame_check_ok(line, len);
    case PROTO_DIGEST:
        return len == 64 && all_of(line, len, "0123456789abcdef");
    case PROTO_QUIT:
        return proto_line_is(line, len, PROTO_BYE);
    case PROTO_INVALID:
        return 0;               /* only an error reply fits */
    default:
        return 1;
    }
}

int frame_line(struct framer *f, const char *line, size_t len)
{
    f->lines++;
    switch (f->state) {
    case FRAME_IDLE:            /* a caller bug; treat as a one-line reply */
    case FRAME_FIRST:
        if (proto_line_starts(line, len, PROTO_ERR_PREFIX)) {
            f->error = 1;
            f->kind = replykind_of(f->cmd, line, len);
            break;
        }
        if (frame_is_print_head(line, len)) {
            /* Framed by content, not by request: a PRINT listing is always
             * read to its end, so a surprise one cannot desynchronise us. */
            if (f->cmd != PROTO_PRINT)
                f->bad++;
            f->state = FRAME_PRINT;
            return 0;
        }
        if (f->cmd == PROTO_STATS || f->cmd == PROTO_HELP ||
            f->cmd == PROTO_TREE) {
            if (proto_line_is(line, len, PROTO_END))
                break;
            f->state = FRAME_LIST;
            return 0;
        }
        if (!first_line_ok(f->cmd, line, len))
            f->bad++;
        break;
    case FRAME_PRINT:
        if (frame_is_print_tail(line, len))
            break;
        if (!print_line_ok(line, len))
            f->bad++;
        return 0;
    case FRAME_LIST:
        if (proto_line_is(line, len, PROTO_END))
            break;
        return 0;
    }
    f->state = FRAME_IDLE;
    return 1;
}
