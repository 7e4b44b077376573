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

/* A PRINT/FIND line: "%-30s -- %11s %4d", so at least 50 bytes with the
 * separator and a DDD-DD-DDDD SSN in front of the age. */
static int print_line_ok(const char *line, size_t len)
{
    if (len < 50 || !memmem(line, len, " -- ", 4))
        return 0;
    const char *ssn = line + len - 4 - 1 - ENTRY_SSN_LEN;
    return entry_ssn_ok(ssn, ENTRY_SSN_LEN);
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
    case PROTO_COUNT:
        return len > 0 && len <= 20 && all_of(line, len, "0123456789");
    case PROTO_CHECK:
        return proto_line_starts(line, len, PROTO_OK);
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
