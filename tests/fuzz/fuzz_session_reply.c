/* fuzz_session_reply.c -- the check of each request's reply, for the
 * session fuzz target (the rules are listed at the top of
 * fuzz_session.c). Replies are read as lines from the bytes the client
 * received, telnet answers taken out; each check_ function below keeps
 * the rule for one command or a group of them, and asks the reference
 * model (fuzz_session_model.c) what the reply must be. fs_check_request,
 * which fuzz_session_check.c calls once per request in the order they
 * were typed, hands each reply to the right one.
 */
#include <string.h>
#include "fuzz.h"
#include "fuzz_session.h"
#include "commands.h"
#include "lockmode.h"
#include "proto.h"
#include "server.h"
#include "stats.h"

#define DOT_LINE_MAX    1024        /* rbtree_dot.c: one statement's bytes */

/* ---- the replies, read line by line ------------------------------------- */

/* The next line, without its '\n': 1; 0 when none is left; -1 when the
 * bytes end inside one. */
static int next_line(struct replies *r, const char **line, size_t *len)
{
    if (r->at == r->len)
        return 0;
    const char *p = r->buf + r->at;
    const char *nl = memchr(p, '\n', r->len - r->at);
    if (!nl)
        return -1;
    *line = p;
    *len = (size_t)(nl - p);
    r->at += *len + 1;
    return 1;
}

/* The line is want, exactly. */
static int line_is(const char *line, size_t len, const char *want)
{
    return strlen(want) == len && memcmp(line, want, len) == 0;
}

/* The line begins with prefix. */
static int line_starts(const char *line, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(line, prefix, n) == 0;
}

/* Finds needle in line[0..len). */
static int line_has(const char *line, size_t len, const char *needle)
{
    return memmem(line, len, needle, strlen(needle)) != NULL;
}

/* The next reply line, or 0 when the replies ran out (allowed only when
 * a send failed: what was not sent is lost). */
static int reply_line(struct conv *cv, const char **line, size_t *len)
{
    int rc = next_line(&cv->r, line, len);

    if (rc == 1)
        return 1;
    FUZZ_CHECK(cv->run->client.failed,
               "every request gets its whole reply");
    cv->lost = 1;
    return 0;
}

/* A multi-line reply's lines up to its terminator: how many, or -1 when
 * they ran out. */
static long lines_until(struct conv *cv, const char *end, size_t max_bytes)
{
    const char *line;
    size_t len, from = cv->r.at;
    long n = 0;

    for (;;) {
        if (!reply_line(cv, &line, &len))
            return -1;
        if (line_is(line, len, end))
            break;
        n++;
    }
    FUZZ_CHECK(cv->r.at - from <= max_bytes, "a reply within its bound");
    return n;
}

/* A line that must be want: else says what came and breaks rule. */
static void expect(const char *line, size_t len, const char *want,
                   const char *rule)
{
    if (!line_is(line, len, want)) {
        fprintf(stderr, "fuzz: got \"%.*s\", want \"%s\"\n", (int)len, line,
                want);
        FUZZ_CHECK(0, rule);
    }
}

/* ---- the multi-line replies --------------------------------------------- */

/* PRINT: a line of _, the model's people in tree order, a line of -. */
static void check_print(struct conv *cv, const char *first, size_t len)
{
    char want[ENTRY_LINE_MAX];
    const char *line;
    size_t n;

    expect(first, len, "__________________________________________________",
           "PRINT begins with its line of _");
    for (size_t i = 0; i < cv->m.n; i++) {
        if (!reply_line(cv, &line, &n))
            return;
        fs_person_line(&cv->m.p[i], want, sizeof(want));
        expect(line, n, want, "PRINT lists the people in tree order");
    }
    if (reply_line(cv, &line, &n))
        expect(line, n, "--------------------------------------------------",
               "PRINT ends with its line of -");
}

/* TREE: a DOT digraph labelled with the count and the levels drawn, all
 * invariants holding, within its bound for those levels; then END. */
static void check_tree(struct conv *cv, const char *first, size_t len,
                       int depth)
{
    char label[64];
    const char *line;
    size_t n, drawn = (size_t)1 << depth;

    drawn = cv->m.n < drawn - 1 ? cv->m.n : drawn - 1;
    expect(first, len, "digraph rbtree {", "TREE is a DOT digraph");
    if (!reply_line(cv, &line, &n))
        return;
    snprintf(label, sizeof(label), "label=\"%zu nodes, top %d level", cv->m.n,
             depth);
    FUZZ_CHECK(line_starts(line, n, "  graph [") && line_has(line, n, label) &&
               line_has(line, n, "\\nall invariants hold\""),
               "TREE's label gives the count and all invariants hold");
    /* The default node and edge lines, then a line for each drawn node,
     * nil and cut box, and one per link: 4 per drawn node, and 1. */
    long body = lines_until(cv, "}", (4 * drawn + 8) * DOT_LINE_MAX);
    if (body < 0)
        return;
    FUZZ_CHECK((size_t)body <= 2 + 4 * drawn + 1,
               "TREE draws at most the top levels");
    if (reply_line(cv, &line, &n))
        expect(line, n, "END", "TREE ends with END");
}

/* STATS: the mode, name value lines, one of them the model's entries,
 * then END, all within STATS_MAX. */
static void check_stats(struct conv *cv, const char *first, size_t len)
{
    char want[64];
    const char *line;
    size_t n, from = cv->r.at - len - 1;
    int entries = 0;

    snprintf(want, sizeof(want), "mode %s", srv.store.policy->name);
    expect(first, len, want, "STATS begins with the mode");
    snprintf(want, sizeof(want), "entries %zu", cv->m.n);
    for (;;) {
        if (!reply_line(cv, &line, &n))
            return;
        if (line_is(line, n, "END"))
            break;
        FUZZ_CHECK(memchr(line, ' ', n) != NULL, "STATS lines are name value");
        entries += line_is(line, n, want);
    }
    FUZZ_CHECK(entries == 1, "STATS' entries is the count");
    FUZZ_CHECK(cv->r.at - from <= STATS_MAX, "STATS fits STATS_MAX");
}

/* ---- one request's reply ------------------------------------------------ */

/* A request and its reply's first line, as the checks below see them. */
struct turn {
    enum proto_cmd cmd;
    const struct proto_req *req;    /* NULL: a line over the limit */
    const struct person *p;         /* ADD's, DELETE's and FIND's */
    size_t at;                      /* where p is in the model, or would go */
    int found;                      /* p is in the model */
    const char *line;               /* the reply's first line, no '\n' */
    size_t len;
};

/* --quiet: no OK to an ADD or DELETE that did it, no Bye. Returns 1 when
 * t gets no reply, after changing the model as the store changed. */
static int quiet_turn(struct conv *cv, const struct turn *t)
{
    enum proto_cmd cmd = t->cmd;

    if (!cv->run->quiet ||
        !((cv->authed && t->found == (cmd == PROTO_DELETE) &&
           (cmd == PROTO_ADD || cmd == PROTO_DELETE)) || cmd == PROTO_QUIT))
        return 0;
    if (cmd == PROTO_ADD)
        fs_model_insert(&cv->m, t->at, t->p);
    else if (cmd == PROTO_DELETE)
        fs_model_erase(&cv->m, t->at);
    return 1;
}

/* What may come instead of any request's reply: "Error: output limit
 * exceeded", only under a limit lower than the default, which ends the
 * session (returns 1); never "Error: out of memory". */
static int over_limit(const struct conv *cv, const struct turn *t)
{
    const struct run *run = cv->run;
    const char *line = t->line;
    size_t len = t->len;

    if (line_is(line, len, "Error: output limit exceeded")) {
        FUZZ_CHECK(run->limit < SSN_DEFAULT_MAX_OUTPUT,
                   "only a reply over the limit is refused");
        return 1;
    }
    /* PROTOCOL.md allows "Error: out of memory" for any request, but here
     * no allocation fails (ASan aborts instead of returning NULL): such a
     * reply would be an error mistaken for one. */
    FUZZ_CHECK(!line_is(line, len, "Error: out of memory"),
               "no out of memory reply where no allocation fails");
    return 0;
}

/* The requests refused before any command runs: a line over 1024 bytes
 * (line too long), one the parser refuses (its error), and anything but
 * AUTH, HELP and QUIT before AUTH. Returns 1 when t was one of them. */
static int refused(const struct conv *cv, const struct turn *t)
{
    enum proto_cmd cmd = t->cmd;

    if (!t->req) {
        expect(t->line, t->len, "Error: line too long",
               "a line over 1024 bytes gets line too long");
        return 1;
    }
    if (cmd == PROTO_INVALID) {
        expect(t->line, t->len, t->req->err, "a bad request gets its error");
        return 1;
    }
    if (!cv->authed && cmd != PROTO_AUTH && cmd != PROTO_HELP &&
        cmd != PROTO_QUIT) {
        expect(t->line, t->len, "Error: authentication required",
               "nothing but AUTH, HELP and QUIT before AUTH");
        return 1;
    }
    return 0;
}

/* ADD and DELETE: OK when they did it, the model changed likewise; an
 * error for an ADD of someone present or a DELETE of someone absent. */
static int check_add_delete(struct conv *cv, const struct turn *t)
{
    char want[2 * PROTO_MAX_LINE];
    const struct person *p = t->p;

    if (t->found == (t->cmd == PROTO_ADD)) {
        char first[ENTRY_NAME_MAX + 1], last[ENTRY_NAME_MAX + 1];
        /* A name an error shows has its bytes outside UTF-8 text as '?'
         * (ADD's names have none: proto.c refuses them). */
        snprintf(want, sizeof(want), "Error: %s %s %s",
                 entry_name_shown(p->first, first),
                 entry_name_shown(p->last, last),
                 t->found ? "already exists" : "not found");
        expect(t->line, t->len, want, "ADD of someone present, DELETE of "
               "someone absent: an error");
        return 0;
    }
    if (t->cmd == PROTO_ADD)
        fs_model_insert(&cv->m, t->at, p);
    else
        fs_model_erase(&cv->m, t->at);
    expect(t->line, t->len, "OK", "ADD and DELETE say OK");
    return 0;
}

/* FIND: the model's line for the person, or not found. */
static int check_find(struct conv *cv, const struct turn *t)
{
    char want[2 * PROTO_MAX_LINE];
    char first[ENTRY_NAME_MAX + 1], last[ENTRY_NAME_MAX + 1];

    if (t->found)
        fs_person_line(&cv->m.p[t->at], want, sizeof(want));
    else
        snprintf(want, sizeof(want), "Error: %s %s not found",
                 entry_name_shown(t->p->first, first),
                 entry_name_shown(t->p->last, last));
    expect(t->line, t->len, want, "FIND's line, or not found");
    return 0;
}

/* COUNT, CHECK and DIGEST: the model's count, every invariant holding
 * for that many, and the SHA-256 of the model's dump. */
static int check_summary(struct conv *cv, const struct turn *t)
{
    char want[2 * PROTO_MAX_LINE];

    if (t->cmd == PROTO_COUNT) {
        snprintf(want, sizeof(want), "%zu", cv->m.n);
        expect(t->line, t->len, want, "COUNT is the model's count");
    } else if (t->cmd == PROTO_CHECK) {
        snprintf(want, sizeof(want), "OK %zu %s, all invariants hold",
                 cv->m.n, cv->m.n == 1 ? "entry" : "entries");
        expect(t->line, t->len, want, "CHECK finds every invariant holds");
    } else {
        fs_model_digest(&cv->m, want);
        expect(t->line, t->len, want, "DIGEST is the SHA-256 of the dump");
    }
    return 0;
}

/* AUTH: refused without a password; OK for the right one, which opens the
 * gate; refused for a wrong one, and the third wrong one closes the
 * connection. */
static int check_auth(struct conv *cv, const struct turn *t)
{
    const struct proto_req *req = t->req;
    char want[2 * PROTO_MAX_LINE];

    if (!cv->run->password) {
        expect(t->line, t->len, "Error: no password is set",
               "AUTH without a password");
    } else if (req->secret_len == strlen(FUZZ_PASSWORD) &&
               memcmp(req->secret, FUZZ_PASSWORD, req->secret_len) == 0) {
        expect(t->line, t->len, "OK", "the right password is OK");
        cv->authed = 1;
    } else if (++cv->failures < AUTH_MAX_FAILURES) {
        expect(t->line, t->len, "Error: invalid password",
               "a wrong password is refused");
    } else {
        snprintf(want, sizeof(want), "Error: invalid password (%d wrong; "
                 "closing the connection)", cv->failures);
        expect(t->line, t->len, want, "the third wrong password closes");
        return cv->ended = 1;
    }
    return 0;
}

/* The replies that depend on nothing: STATS RESET's OK, and what COMPACT
 * and TRACE say on a server with no journal and no trace file. */
static int check_fixed(const struct turn *t)
{
    const char *line = t->line;
    size_t len = t->len;

    if (t->cmd == PROTO_STATS_RESET)
        expect(line, len, "OK", "STATS RESET says OK");
    else if (t->cmd == PROTO_COMPACT)
        expect(line, len, "Error: no journal (start the server with "
               "--journal FILE)", "COMPACT without a journal");
    else if (t->cmd == PROTO_TRACE)
        expect(line, len, "trace off: no trace file (start the server "
               "with --trace-file FILE)", "TRACE without a trace file");
    else
        expect(line, len, "Error: no trace file (start the server with "
               "--trace-file FILE)", "TRACE START and STOP without a file");
    return 0;
}

/* HELP: the help text, whole, from its first line on. */
static int check_help(struct conv *cv, const struct turn *t)
{
    size_t from = cv->r.at - t->len - 1, help = strlen(proto_help_text);

    FUZZ_CHECK(cv->r.len - from >= help &&
               memcmp(cv->r.buf + from, proto_help_text, help) == 0,
               "HELP is the help text");
    cv->r.at = from + help;
    return 0;
}

/* QUIT: Bye, and the session has ended. */
static int check_quit(struct conv *cv, const struct turn *t)
{
    expect(t->line, t->len, "Bye", "QUIT says Bye");
    return cv->ended = 1;
}

/* A command's own reply, to the checker of its command. Returns as
 * fs_check_request does. */
static int check_reply(struct conv *cv, const struct turn *t)
{
    switch (t->cmd) {
    case PROTO_ADD:
    case PROTO_DELETE:
        return check_add_delete(cv, t);
    case PROTO_FIND:
        return check_find(cv, t);
    case PROTO_PRINT:
        check_print(cv, t->line, t->len);
        return cv->lost;
    case PROTO_COUNT:
    case PROTO_CHECK:
    case PROTO_DIGEST:
        return check_summary(cv, t);
    case PROTO_STATS:
        check_stats(cv, t->line, t->len);
        return cv->lost;
    case PROTO_TREE:
        check_tree(cv, t->line, t->len, t->req->depth);
        return cv->lost;
    case PROTO_AUTH:
        return check_auth(cv, t);
    case PROTO_STATS_RESET:
    case PROTO_COMPACT:
    case PROTO_TRACE:
    case PROTO_TRACE_START:
    case PROTO_TRACE_STOP:
        return check_fixed(t);
    case PROTO_HELP:
        return check_help(cv, t);
    case PROTO_QUIT:
        return check_quit(cv, t);
    case PROTO_BLANK:               /* no reply: fs_check_request's */
    case PROTO_INVALID:             /* refused() took it */
        break;
    }
    return 0;
}

int fs_check_request(struct conv *cv, enum proto_cmd cmd,
                     const struct proto_req *req, const struct person *p)
{
    struct turn t = { .cmd = cmd, .req = req, .p = p };

    if (req && cmd == PROTO_BLANK)
        return 0;                       /* no reply at all */
    if (req && (cmd == PROTO_ADD || cmd == PROTO_DELETE || cmd == PROTO_FIND))
        t.at = fs_model_find(&cv->m, p->first, p->last, &t.found);
    if (req && quiet_turn(cv, &t))
        return cv->ended = cmd == PROTO_QUIT;
    if (!reply_line(cv, &t.line, &t.len))
        return 1;
    if (over_limit(cv, &t))
        return cv->ended = 1;
    if (refused(cv, &t))
        return 0;
    return check_reply(cv, &t);
}
