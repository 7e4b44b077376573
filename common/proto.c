/* proto.c -- tokenising and validating request lines (proto.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "bytewords.h"
#include "proto.h"

#define MAX_TOKENS 6            /* one more than the longest command needs,
                                   so extra arguments are seen */

struct token {
    const char *s;
    size_t len;
};

#define W(word) word, sizeof(word) - 1

static const struct {
    const char *word;           /* upper case */
    size_t len;
    enum proto_cmd cmd;
    int nargs;                  /* arguments required */
    int optional;               /* one more allowed (STATS RESET, TREE N,
                                   TRACE START) */
    const char *usage;
} commands[] = {
    { W("ADD"),      PROTO_ADD,     4, 0, "ADD first last age ssn" },
    { W("DELETE"),   PROTO_DELETE,  2, 0, "DELETE first last" },
    { W("FIND"),     PROTO_FIND,    2, 0, "FIND first last" },
    { W("PRINT"),    PROTO_PRINT,   0, 0, "PRINT" },
    { W("COUNT"),    PROTO_COUNT,   0, 0, "COUNT" },
    { W("CHECK"),    PROTO_CHECK,   0, 0, "CHECK" },
    { W("DIGEST"),   PROTO_DIGEST,  0, 0, "DIGEST" },
    { W("STATS"),    PROTO_STATS,   0, 1, "STATS [RESET]" },
    { W("TREE"),     PROTO_TREE,    0, 1, "TREE [DEPTH]" },
    { W("AUTH"),     PROTO_AUTH,    1, 0, "AUTH password" },
    { W("COMPACT"),  PROTO_COMPACT, 0, 0, "COMPACT" },
    { W("TRACE"),    PROTO_TRACE,   0, 1, "TRACE [START|STOP]" },
    { W("HELP"),     PROTO_HELP,    0, 0, "HELP" },
    { W("DONE"),     PROTO_QUIT,    0, 0, "DONE" },
    { W("QUIT"),     PROTO_QUIT,    0, 0, "QUIT" },
};

const char proto_help_text[] =
    "ADD first last age ssn   add a person (age 0-150, ssn DDD-DD-DDDD)\n"
    "DELETE first last        remove a person\n"
    "FIND first last          show one person\n"
    "PRINT                    list everyone in name order\n"
    "COUNT                    number of people\n"
    "CHECK                    verify the tree's invariants\n"
    "DIGEST                   SHA-256 of the canonical dump\n"
    "STATS [RESET]            server counters; RESET zeroes them\n"
    "TREE [DEPTH]             the tree's top levels as Graphviz DOT\n"
    "AUTH password            authenticate (when the server has a password)\n"
    "COMPACT                  rewrite the journal as the people it holds\n"
    "TRACE [START|STOP]       lock timeline: state; START records, STOP writes it\n"
    "HELP                     this text\n"
    "DONE or QUIT             close this connection\n"
    "END\n";

/* A high bit in each byte of w that is a space or a tab, exact for the
 * lowest (bytewords.h). */
static inline uint64_t separators(uint64_t w)
{
    return bytes_below(w ^ (BYTES_ONES * ' '), 1) |
           bytes_below(w ^ (BYTES_ONES * '\t'), 1);
}

/* Where the token at s[i] ends: the first space or tab in s[i, len), or
 * len. Eight bytes at a time (a byte at a time took seven instructions a
 * byte of every request line, callgrind), the last few from the line's
 * last 8 bytes; byte by byte only in a line shorter than 8. */
static size_t token_end(const char *s, size_t i, size_t len)
{
    uint64_t sep;

    for (; i + 8 <= len; i += 8)
        if ((sep = separators(bytes_load(s + i))))  /* s[i] the lowest */
            return i + (size_t)__builtin_ctzll(sep) / 8;
    if (i == len || len < 8) {
        while (i < len && s[i] != ' ' && s[i] != '\t')
            i++;
        return i;
    }
    /* Shifted so that s[i] is the lowest byte: the zeros shifted in are no
     * separator. */
    sep = separators(bytes_load(s + len - 8) >> (8 * (i - (len - 8))));
    return sep ? i + (size_t)__builtin_ctzll(sep) / 8 : len;
}

static int split(const char *s, size_t len, struct token *tok)
{
    int n = 0;
    size_t i = 0;

    while (i < len) {
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i == len)
            break;
        size_t start = i;
        i = token_end(s, i, len);
        if (n == MAX_TOKENS)
            return n + 1;       /* too many: the count is all that matters */
        tok[n].s = s + start;
        tok[n].len = i - start;
        n++;
    }
    return n;
}

static enum proto_cmd fail(struct proto_req *req, const char *msg)
{
    snprintf(req->err, sizeof(req->err), "Error: %s", msg);
    return req->cmd = PROTO_INVALID;
}

/* Copies an unknown command word into the error, printable bytes only:
 * the reply must not carry a client's control characters back. */
static enum proto_cmd bad_command(struct proto_req *req, const struct token *t)
{
    char word[33];
    size_t n = t->len < sizeof(word) - 1 ? t->len : sizeof(word) - 1;

    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t->s[i];
        word[i] = (c < ' ' || c == 0x7f || c >= 0xfe) ? '?' : (char)c;
    }
    entry_unsafe_mask(word, n);         /* C1 and bytes not UTF-8 */
    word[n] = '\0';
    snprintf(req->err, sizeof(req->err), "Error: Bad command: %s%s",
             word, t->len > n ? "..." : "");
    return req->cmd = PROTO_INVALID;
}

static void copy_token(char *dst, const struct token *t)
{
    memcpy(dst, t->s, t->len);
    dst[t->len] = '\0';
}

/* t is word (upper case, len bytes) in any case: ASCII letters only, as
 * strncasecmp in the C locale, with no call. */
static int word_eq(const struct token *t, const char *word, size_t len)
{
    if (t->len != len)
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)t->s[i];
        if (c >= 'a' && c <= 'z')
            c = (unsigned char)(c - ('a' - 'A'));
        if (c != (unsigned char)word[i])
            return 0;
    }
    return 1;
}

static int word_is(const struct token *t, const char *word)
{
    return word_eq(t, word, strlen(word));
}

/* STATS [RESET], TRACE [START|STOP] and TREE [DEPTH]: arg is the optional
 * argument or NULL. */
static enum proto_cmd parse_optional(struct proto_req *req, enum proto_cmd cmd,
                                     const struct token *arg,
                                     const char *usage)
{
    int depth = 0;

    if (cmd == PROTO_STATS || cmd == PROTO_TRACE) {
        if (!arg)
            return req->cmd = cmd;
        if (cmd == PROTO_STATS && word_is(arg, "RESET"))
            return req->cmd = PROTO_STATS_RESET;
        if (cmd == PROTO_TRACE && word_is(arg, "START"))
            return req->cmd = PROTO_TRACE_START;
        if (cmd == PROTO_TRACE && word_is(arg, "STOP"))
            return req->cmd = PROTO_TRACE_STOP;
        snprintf(req->err, sizeof(req->err), "Error: usage: %s", usage);
        return req->cmd = PROTO_INVALID;
    }
    req->depth = PROTO_TREE_DEPTH;
    if (arg) {
        for (size_t i = 0; i < arg->len && depth <= PROTO_TREE_MAX_DEPTH; i++)
            depth = arg->s[i] >= '0' && arg->s[i] <= '9'
                  ? depth * 10 + (arg->s[i] - '0') : PROTO_TREE_MAX_DEPTH + 1;
        if (depth < 1 || depth > PROTO_TREE_MAX_DEPTH || arg->len > 2) {
            snprintf(req->err, sizeof(req->err), "Error: bad depth: a whole "
                     "number from 1 to %d", PROTO_TREE_MAX_DEPTH);
            return req->cmd = PROTO_INVALID;
        }
        req->depth = depth;
    }
    return req->cmd = PROTO_TREE;
}

enum proto_cmd proto_parse(const char *line, size_t len,
                           struct proto_req *req, struct person *e)
{
    struct token tok[MAX_TOKENS];
    int n = split(line, len, tok);
    size_t i;

    if (n == 0)
        return req->cmd = PROTO_BLANK;
    for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (word_eq(&tok[0], commands[i].word, commands[i].len))
            break;
    }
    if (i == sizeof(commands) / sizeof(commands[0]))
        return bad_command(req, &tok[0]);
    if (n - 1 != commands[i].nargs &&
        !(commands[i].optional && n - 1 == commands[i].nargs + 1)) {
        snprintf(req->err, sizeof(req->err), "Error: usage: %s",
                 commands[i].usage);
        return req->cmd = PROTO_INVALID;
    }
    if (commands[i].optional)
        return parse_optional(req, commands[i].cmd, n > 1 ? &tok[1] : NULL,
                              commands[i].usage);
    if (commands[i].cmd == PROTO_AUTH) {
        req->secret = tok[1].s;             /* points into line */
        req->secret_len = tok[1].len;
        return req->cmd = PROTO_AUTH;
    }
    int first_is = 0, last_is = 0;      /* entry_name_check's say */
    if (commands[i].nargs >= 2) {
        if (!(first_is = entry_name_check(tok[1].s, tok[1].len)))
            return fail(req, "bad first name: 1 to 63 bytes, "
                             "no spaces or control characters");
        if (!(last_is = entry_name_check(tok[2].s, tok[2].len)))
            return fail(req, "bad last name: 1 to 63 bytes, "
                             "no spaces or control characters");
    }
    if (commands[i].nargs == 4) {
        /* What ADD stores, PRINT shows to every client: well-formed
         * UTF-8 with no C1 control, nothing a terminal would act on. FIND
         * and DELETE take any name an older journal may hold. */
        if (first_is == 2 && entry_name_unsafe(tok[1].s, tok[1].len))
            return fail(req, "bad first name: UTF-8 text only, "
                             "no control characters");
        if (last_is == 2 && entry_name_unsafe(tok[2].s, tok[2].len))
            return fail(req, "bad last name: UTF-8 text only, "
                             "no control characters");
        if (!entry_age_parse(tok[3].s, tok[3].len, &e->age))
            return fail(req, "bad age: a whole number from 0 to 150");
        if (!entry_ssn_ok(tok[4].s, tok[4].len))
            return fail(req, "bad SSN: must be DDD-DD-DDDD");
        copy_token(e->ssn, &tok[4]);
    }
    if (commands[i].nargs >= 2) {
        copy_token(e->first, &tok[1]);
        copy_token(e->last, &tok[2]);
    }
    return req->cmd = commands[i].cmd;
}
