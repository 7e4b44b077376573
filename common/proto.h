/* proto.h -- the request side of the line protocol (docs/PROTOCOL.md):
 * one line in, one parsed and validated request out, or the exact error
 * reply to send. Pure functions: no I/O, no allocation, no locks.
 */
#ifndef SSN_PROTO_H
#define SSN_PROTO_H

#include <stddef.h>
#include <string.h>
#include "entry.h"

#define PROTO_MAX_LINE  1024    /* longest request, without its \r\n */
#define PROTO_ERR_MAX   128     /* longest error reply, with "Error: " */
#define PROTO_TREE_DEPTH     5  /* TREE's levels when none is given */
#define PROTO_TREE_MAX_DEPTH 10 /* TREE's most levels (1023 nodes drawn) */

/* The fixed reply shapes, shared by the server that sends them and the
 * clients that check them. Each *_LINE form ends in '\n'. */
#define PROTO_OK            "OK"        /* ADD and DELETE succeeded */
#define PROTO_OK_LINE       "OK\n"
#define PROTO_BYE           "Bye"       /* DONE or QUIT */
#define PROTO_BYE_LINE      "Bye\n"
#define PROTO_END           "END"       /* closes HELP and STATS */
#define PROTO_END_LINE      "END\n"
#define PROTO_ERR_PREFIX    "Error: "   /* every error reply starts so */
#define PROTO_ERR_NOMEM_LINE "Error: out of memory\n"
#define PROTO_ERR_LIMIT_LINE "Error: output limit exceeded\n"

enum proto_cmd {
    PROTO_BLANK,                /* empty or all blanks: no reply at all */
    PROTO_INVALID,              /* req->err holds the error reply */
    PROTO_ADD,
    PROTO_DELETE,
    PROTO_FIND,
    PROTO_PRINT,
    PROTO_COUNT,
    PROTO_CHECK,
    PROTO_DIGEST,
    PROTO_STATS,
    PROTO_STATS_RESET,          /* STATS RESET */
    PROTO_TREE,                 /* req->depth holds the depth */
    PROTO_AUTH,                 /* req->secret holds the password */
    PROTO_COMPACT,              /* rewrite the journal as the live set */
    PROTO_TRACE,                /* TRACE: the timeline's state */
    PROTO_TRACE_START,          /* TRACE START */
    PROTO_TRACE_STOP,           /* TRACE STOP */
    PROTO_HELP,
    PROTO_QUIT,                 /* DONE or QUIT */
};

struct proto_req {
    enum proto_cmd cmd;
    char err[PROTO_ERR_MAX];    /* for PROTO_INVALID: "Error: ...", no \n */
    int depth;                  /* for PROTO_TREE: levels to draw */
    const char *secret;         /* for PROTO_AUTH: the password, pointing
                                   into the request line (not copied) */
    size_t secret_len;
};

/* Parses line (len bytes, no terminator needed). For ADD it fills every
 * field of *e; for DELETE and FIND the two names (enough for a lookup key);
 * for other commands *e is untouched. On any error *e may be partly written
 * but nothing else changes. Returns req->cmd. */
enum proto_cmd proto_parse(const char *line, size_t len,
                           struct proto_req *req, struct person *e);

/* Matching a reply line (len bytes, no '\n') against a shape: the line
 * is exactly want, or starts with prefix. For clients checking replies. */
static inline int proto_line_is(const char *line, size_t len,
                                const char *want)
{
    return strlen(want) == len && memcmp(line, want, len) == 0;
}

static inline int proto_line_starts(const char *line, size_t len,
                                    const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(line, prefix, n) == 0;
}

/* HELP's reply, ending with "END\n". */
extern const char proto_help_text[];

#endif
