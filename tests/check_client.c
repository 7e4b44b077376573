/* check_client.c -- the client side's moving parts without a real server:
 * the latency histogram (common/hist.c), reply framing (client/lib/frame.c),
 * the pipelined session (client/lib/pipeline.c, client/lib/source.c) and the
 * control queries (client/lib/ctl.c) against a small fake server in a thread,
 * which can answer well, slowly, with garbage, not at all, or hang up.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "suites.h"
#include "fdio.h"
#include "hist.h"
#include "linereader.h"
#include "outbuf.h"
#include "proto.h"
#include "timeutil.h"
#include "../client/lib/ctl.h"
#include "../client/lib/frame.h"
#include "../client/lib/gen.h"
#include "../client/lib/pipeline.h"
#include "../client/lib/preload.h"
#include "../client/lib/replykind.h"

/* ---- hist --------------------------------------------------------------- */

START_TEST(test_hist_buckets)
{
    for (uint64_t v = 0; v < 100000; v += 7) {
        unsigned b = hist_bucket_of(v);
        ck_assert_uint_lt(b, HIST_BUCKETS);
        ck_assert_uint_le(hist_bucket_low(b), v);
        ck_assert_uint_ge(hist_bucket_high(b), v);
    }
    ck_assert_uint_lt(hist_bucket_of(UINT64_MAX), HIST_BUCKETS);
    ck_assert_uint_eq(hist_bucket_high(hist_bucket_of(UINT64_MAX)), UINT64_MAX);
    for (unsigned b = 1; b < HIST_BUCKETS; b++)
        ck_assert_uint_eq(hist_bucket_low(b), hist_bucket_high(b - 1) + 1);
}
END_TEST

START_TEST(test_hist_percentiles)
{
    static struct hist h, g;
    hist_init(&h);
    ck_assert_uint_eq(hist_percentile(&h, 50), 0);
    for (uint64_t v = 1; v <= 10; v++)
        hist_record(&h, v);
    ck_assert_uint_eq(hist_percentile(&h, 50), 5);   /* exact below 32 */
    ck_assert_uint_eq(hist_percentile(&h, 100), 10);
    ck_assert_uint_eq(hist_percentile(&h, 0), 1);
    ck_assert(hist_mean(&h) == 5.5);

    hist_init(&g);
    for (uint64_t v = 1000; v < 1000000; v += 997)
        hist_record(&g, v);
    uint64_t p50 = hist_percentile(&g, 50), p90 = hist_percentile(&g, 90);
    uint64_t p99 = hist_percentile(&g, 99);
    ck_assert(p50 <= p90 && p90 <= p99 && p99 <= g.max);
    ck_assert(p50 > 500000 * 0.96 && p50 < 500000 * 1.04);
    hist_merge(&h, &g);
    ck_assert_uint_eq(h.count, 10 + g.count);
    ck_assert_uint_eq(h.min, 1);
    ck_assert_uint_eq(h.max, g.max);
}
END_TEST

/* ---- framing ------------------------------------------------------------ */

static int feed(struct framer *f, const char *line)
{
    return frame_line(f, line, strlen(line));
}

START_TEST(test_frame_single_lines)
{
    struct framer f;
    frame_init(&f);
    frame_begin(&f, PROTO_ADD);
    ck_assert_int_eq(feed(&f, "OK"), 1);
    ck_assert(!f.error && !f.bad);
    frame_begin(&f, PROTO_DELETE);
    ck_assert_int_eq(feed(&f, "Error: Amy Smith not found"), 1);
    ck_assert(f.error && !f.bad);
    frame_begin(&f, PROTO_COUNT);
    ck_assert_int_eq(feed(&f, "12x"), 1);
    ck_assert_int_eq(f.bad, 1);
    frame_begin(&f, PROTO_DIGEST);
    ck_assert_int_eq(feed(&f, "0123456789abcdef0123456789abcdef"
                              "0123456789abcdef0123456789abcdef"), 1);
    ck_assert_int_eq(f.bad, 0);
    frame_begin(&f, PROTO_FIND);
    ck_assert_int_eq(feed(&f, "Smith, Amy                     --"
                              " 123-45-6789   30"), 1);
    ck_assert_int_eq(f.bad, 0);
    frame_begin(&f, PROTO_QUIT);
    ck_assert_int_eq(feed(&f, "Bye"), 1);
    ck_assert_int_eq(f.state, FRAME_IDLE);
}
END_TEST

START_TEST(test_frame_multi_line)
{
    static const char head[] = "__________________________________________________";
    static const char tail[] = "--------------------------------------------------";
    struct framer f;
    frame_init(&f);
    frame_begin(&f, PROTO_PRINT);
    ck_assert_int_eq(feed(&f, head), 0);
    ck_assert_int_eq(feed(&f, "Smith, Amy                     --"
                              " 123-45-6789   30"), 0);
    ck_assert_int_eq(feed(&f, "OK"), 0);           /* garbage inside */
    ck_assert_int_eq(feed(&f, tail), 1);
    ck_assert_int_eq(f.bad, 1);
    ck_assert_uint_eq(f.lines, 4);

    frame_begin(&f, PROTO_PRINT);                  /* an error instead */
    ck_assert_int_eq(feed(&f, "Error: busy"), 1);

    frame_begin(&f, PROTO_STATS);
    ck_assert_int_eq(feed(&f, "mode fine"), 0);
    ck_assert_int_eq(feed(&f, "END"), 1);
    frame_begin(&f, PROTO_HELP);
    ck_assert_int_eq(feed(&f, "END"), 1);

    /* TREE's DOT runs to its END too, its "}" included. */
    frame_begin(&f, PROTO_TREE);
    ck_assert_int_eq(feed(&f, "digraph rbtree {"), 0);
    ck_assert_int_eq(feed(&f, "}"), 0);
    ck_assert_int_eq(feed(&f, "END"), 1);
    ck_assert(!f.error && !f.bad);
    frame_begin(&f, PROTO_TREE);
    ck_assert_int_eq(feed(&f, "Error: bad depth: a whole number from 1 "
                              "to 10"), 1);
    ck_assert(f.error);

    /* A listing where none was asked for is still read to its end. */
    frame_begin(&f, PROTO_ADD);
    ck_assert_int_eq(feed(&f, head), 0);
    ck_assert_int_eq(feed(&f, tail), 1);
    ck_assert_int_eq(f.bad, 1);
}
END_TEST

/* ---- reply kinds --------------------------------------------------------- */

static int kind(int cmd, const char *line)
{
    return replykind_of(cmd, line, strlen(line));
}

START_TEST(test_replykind_outcomes)
{
    ck_assert_int_eq(kind(PROTO_ADD, "OK"), RK_OK);
    ck_assert_int_eq(kind(PROTO_COUNT, "0"), RK_OK);
    ck_assert_int_eq(kind(PROTO_FIND, "Smith, Amy                     --"
                                      " 123-45-6789   30"), RK_OK);
    ck_assert_int_eq(kind(PROTO_FIND, "Error: Amy Smith not found"),
                     RK_NOT_FOUND);
    ck_assert_int_eq(kind(PROTO_FIND, "Error: No Amy Smith"), RK_NOT_FOUND);
    ck_assert_int_eq(kind(PROTO_DELETE, "Error: No Amy Smith"),
                     RK_NOT_FOUND);
    ck_assert_int_eq(kind(PROTO_ADD, "Error: Amy Smith already exists"),
                     RK_EXISTS);
}
END_TEST

START_TEST(test_replykind_errors)
{
    /* The same words are real errors to the wrong request. */
    ck_assert_int_eq(kind(PROTO_ADD, "Error: No Amy Smith"), RK_ERROR);
    ck_assert_int_eq(kind(PROTO_FIND, "Error: Amy Smith already exists"),
                     RK_ERROR);
    ck_assert_int_eq(kind(PROTO_INVALID, "Error: Bad command: No"),
                     RK_ERROR);
    ck_assert_int_eq(kind(PROTO_ADD, "Error: bad SSN: must be DDD-DD-DDDD"),
                     RK_ERROR);
    ck_assert_int_eq(kind(PROTO_FIND, "Error: authentication required"),
                     RK_ERROR);
    ck_assert_int_eq(kind(PROTO_FIND, "Error: "), RK_ERROR);
    ck_assert_int_eq(kind(PROTO_FIND, "Error"), RK_OK);   /* no ": " */
    ck_assert_str_eq(replykind_name(RK_NOT_FOUND), "not found");
    ck_assert_str_eq(replykind_name(RK_KINDS), "?");

    /* The framer tags each reply with its kind. */
    struct framer f;
    frame_init(&f);
    frame_begin(&f, PROTO_DELETE);
    ck_assert_int_eq(feed(&f, "Error: No Amy Smith"), 1);
    ck_assert_int_eq(f.kind, RK_NOT_FOUND);
    frame_begin(&f, PROTO_DELETE);
    ck_assert_int_eq(feed(&f, "OK"), 1);
    ck_assert_int_eq(f.kind, RK_OK);
}
END_TEST

/* ---- a fake server ---------------------------------------------------------- */

enum fake_mode {
    FAKE_GOOD,                  /* answers like ssnserver */
    FAKE_SLOW,                  /* the same, 300 us per reply */
    FAKE_SILENT,                /* reads, never answers */
    FAKE_HANGUP,                /* answers 5 requests, then closes */
    FAKE_GARBAGE,               /* answers every line with junk */
};

struct fake {
    int lfd;
    char port[8];
    enum fake_mode mode;
    size_t print_lines;         /* lines in a PRINT listing */
    pthread_t thread;
};

static void fake_reply(struct fake *f, struct outbuf *ob, const char *line,
                       size_t n)
{
    if (f->mode == FAKE_SLOW)
        time_sleep_ns(300000);
    if (f->mode == FAKE_GARBAGE) {
        static const char junk[] = "\x01\x02 garbage \xff";
        ob_append(ob, junk, sizeof(junk) - 1);
        if (n % 3 == 0)
            for (int i = 0; i < 600; i++)       /* an over-long line too */
                ob_puts(ob, "xxxxxxxxxx");
        ob_puts(ob, "\n");
        return;
    }
    if (strncmp(line, "ADD", 3) == 0 || strncmp(line, "DELETE", 6) == 0) {
        ob_puts(ob, PROTO_OK_LINE);
    } else if (strncmp(line, "PRINT", 5) == 0) {
        ob_puts(ob, ENTRY_PRINT_HEAD);
        for (size_t i = 0; i < f->print_lines; i++)
            ob_printf(ob, "%-30s -- %11s %4d\n", "Smith, Amy", "123-45-6789",
                      (int)(i % 100));
        ob_puts(ob, ENTRY_PRINT_TAIL);
    } else if (strncmp(line, "COUNT", 5) == 0) {
        ob_puts(ob, "3\n");
    } else if (strncmp(line, "DONE", 4) == 0) {
        ob_puts(ob, PROTO_BYE_LINE);
    } else {
        ob_puts(ob, PROTO_ERR_PREFIX "unknown command\n");
    }
}

/* Sends what the fake has buffered. Returns 0 or -errno. */
static int fake_flush(struct outbuf *ob, int fd)
{
    int rc = fd_write_all(fd, ob->buf, ob->len);
    ob_consume(ob, ob->len);
    return rc;
}

static void *fake_main(void *arg)
{
    struct fake *f = arg;
    static struct linereader lr;
    static char lr_mem[LR_BUF_SIZE];
    struct outbuf ob;
    int fd = accept(f->lfd, NULL, NULL);
    size_t answered = 0;
    int done = 0;

    if (fd < 0 || ob_init(&ob, 4096))
        return NULL;
    lr_init(&lr, PROTO_MAX_LINE);
    lr_attach(&lr, lr_mem);
    while (!done && lr_read(&lr, fd) > 0) {
        char *line;
        size_t n;
        while (!done && lr_next(&lr, &line, &n) == LR_LINE) {
            if (f->mode == FAKE_SILENT)
                continue;
            if (f->mode == FAKE_HANGUP && answered == 5) {
                done = 1;
                break;
            }
            fake_reply(f, &ob, line, answered++);
            done = strncmp(line, "DONE", 4) == 0;
            if (f->mode == FAKE_SLOW && fake_flush(&ob, fd))
                done = 1;
        }
        if (fake_flush(&ob, fd))
            break;
    }
    ob_destroy(&ob);
    close(fd);
    return NULL;
}

static void fake_start(struct fake *f, enum fake_mode mode)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t len = sizeof(a);

    f->mode = mode;
    if (!f->print_lines)
        f->print_lines = 3;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(f->lfd, 0);
    ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(f->lfd, 4), 0);
    ck_assert_int_eq(getsockname(f->lfd, (struct sockaddr *)&a, &len), 0);
    snprintf(f->port, sizeof(f->port), "%u", ntohs(a.sin_port));
    ck_assert_int_eq(pthread_create(&f->thread, NULL, fake_main, f), 0);
}

static void fake_stop(struct fake *f)
{
    shutdown(f->lfd, SHUT_RDWR);
    close(f->lfd);
    pthread_detach(f->thread);
}

/* A generated stream of n events over a tiny name list. */
static struct namelist names;
static struct gen gen;

static void gen_source(struct pl_source *src, uint64_t n)
{
    char err[100];
    static const char list[] = "Smith\nJones\nBrown\nTaylor\n";
    struct gen_opts o = { .nevents = n, .seed = 1, .shard_n = 1,
                          .mix = GEN_MIX_DEFAULT };
    ck_assert_int_eq(names_parse(&names, list, strlen(list), err,
                                 sizeof(err)), 0);
    ck_assert_int_eq(gen_init(&gen, &names, &o), 0);
    pl_source_gen(src, &gen);
}

/* A source reading text from a pipe. */
static int pipe_text(const char *text)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(write(p[1], text, strlen(text)), (ssize_t)strlen(text));
    close(p[1]);
    return p[0];
}

START_TEST(test_pipeline_pipelines)
{
    struct fake f = { 0 };
    struct pl_source src;
    struct pl_result r;
    fake_start(&f, FAKE_SLOW);
    gen_source(&src, 400);
    struct pl_opts o = { .host = "127.0.0.1", .port = f.port,
                         .timeout_s = 20, .hang_s = 5 };
    ck_assert_int_eq(pl_run(&o, &src, &r, NULL), 0);
    ck_assert_uint_eq(r.requests, 402);
    ck_assert_uint_eq(r.replies, 402);
    ck_assert_uint_eq(r.errors + r.bad, 0);
    /* The fake takes 300 us per reply; the sender does not wait. */
    ck_assert_uint_gt(r.inflight_max, 100);
    ck_assert_uint_gt(r.lat_min, 0);
    ck_assert(r.lat_p50 <= r.lat_p90 && r.lat_p90 <= r.lat_p99 &&
              r.lat_p99 <= r.lat_max);
    ck_assert_uint_ge(r.service_ns, r.lat_max);
    fake_stop(&f);
}
END_TEST

START_TEST(test_pipeline_fd_source)
{
    struct fake f = { 0 };
    struct pl_source src;
    struct pl_fdsource fs;
    struct pl_result r;
    fake_start(&f, FAKE_GOOD);
    /* blanks are not sent; the last line has no newline */
    int fd = pipe_text("COUNT\n\n   \nPRINT\r\nBOGUS\nDONE");
    pl_source_fd(&src, &fs, fd);
    struct pl_opts o = { .host = "127.0.0.1", .port = f.port,
                         .timeout_s = 10 };
    ck_assert_int_eq(pl_run(&o, &src, &r, NULL), 0);
    ck_assert_uint_eq(r.requests, 4);
    ck_assert_uint_eq(r.replies, 4);
    ck_assert_uint_eq(r.errors, 1);            /* BOGUS */
    ck_assert_uint_eq(r.kinds[RK_ERROR], 1);
    ck_assert_uint_eq(r.kinds[RK_OK], 3);
    ck_assert_uint_eq(r.bad, 0);
    close(fd);
    fake_stop(&f);
}
END_TEST

START_TEST(test_pipeline_rate)
{
    struct fake f = { .print_lines = 1000 };    /* ~51 KB per PRINT */
    struct pl_source src;
    struct pl_fdsource fs;
    struct pl_result r;
    fake_start(&f, FAKE_GOOD);
    int fd = pipe_text("PRINT\nPRINT\nDONE\n");
    pl_source_fd(&src, &fs, fd);
    struct pl_opts o = { .host = "127.0.0.1", .port = f.port,
                         .rate = 200000, .timeout_s = 10 };
    ck_assert_int_eq(pl_run(&o, &src, &r, NULL), 0);
    ck_assert_uint_gt(r.bytes_in, 100000);
    double secs = time_ns_to_s(r.service_ns);
    double want = (double)r.bytes_in / 200000.0;
    ck_assert_msg(secs >= want * 0.9, "%.0f bytes in %.3f s: over the rate",
                  (double)r.bytes_in, secs);
    close(fd);
    fake_stop(&f);
}
END_TEST

START_TEST(test_pipeline_hang_and_timeout)
{
    struct fake f = { 0 };
    struct pl_source src;
    struct pl_result r;
    fake_start(&f, FAKE_SILENT);
    gen_source(&src, 100);
    struct pl_opts o = { .host = "127.0.0.1", .port = f.port,
                         .hang_s = 0.3 };
    uint64_t t0 = time_now_ns();
    ck_assert_int_eq(pl_run(&o, &src, &r, NULL), -1);
    ck_assert_int_eq(r.fail, PL_ERR_HUNG);
    ck_assert_ptr_nonnull(strstr(r.what, "hung"));
    ck_assert(time_now_ns() - t0 < 3 * TIME_NS_PER_SEC);
    fake_stop(&f);
    gen_destroy(&gen);
    names_free(&names);

    struct fake g = { 0 };
    fake_start(&g, FAKE_SILENT);
    gen_source(&src, 100);
    struct pl_opts t = { .host = "127.0.0.1", .port = g.port,
                         .timeout_s = 0.3 };
    ck_assert_int_eq(pl_run(&t, &src, &r, NULL), -1);
    ck_assert_int_eq(r.fail, PL_ERR_TIMEOUT);
    fake_stop(&g);
}
END_TEST

START_TEST(test_pipeline_hangup)
{
    struct fake f = { 0 };
    struct pl_source src;
    struct pl_result r;
    fake_start(&f, FAKE_HANGUP);
    gen_source(&src, 200);
    struct pl_opts o = { .host = "127.0.0.1", .port = f.port,
                         .timeout_s = 10 };
    ck_assert_int_eq(pl_run(&o, &src, &r, NULL), -1);
    ck_assert_msg(r.fail == PL_ERR_CLOSED || r.fail == PL_ERR_RESET,
                  "fail %s: %s", pl_fail_name(r.fail), r.what);
    ck_assert_uint_eq(r.replies, 5);
    fake_stop(&f);
}
END_TEST

START_TEST(test_pipeline_garbage)
{
    struct fake f = { 0 };
    struct pl_source src;
    struct pl_result r;
    fake_start(&f, FAKE_GARBAGE);
    gen_source(&src, 200);
    struct pl_opts o = { .host = "127.0.0.1", .port = f.port,
                         .timeout_s = 10, .hang_s = 2 };
    pl_run(&o, &src, &r, NULL);         /* any ending, but an ending */
    ck_assert_uint_gt(r.bad, 0);
    ck_assert_uint_le(r.replies, r.requests);
    fake_stop(&f);
}
END_TEST

START_TEST(test_pipeline_refused)
{
    struct fake f = { 0 };
    struct pl_source src;
    struct pl_result r;
    fake_start(&f, FAKE_GOOD);
    fake_stop(&f);                      /* nobody listens there now */
    gen_source(&src, 10);
    struct pl_opts o = { .host = "127.0.0.1", .port = f.port,
                         .timeout_s = 5 };
    ck_assert_int_eq(pl_run(&o, &src, &r, NULL), -1);
    ck_assert_int_eq(r.fail, PL_ERR_CONNECT);
    struct pl_opts bad = { .host = "no-such-host.invalid", .port = "1" };
    ck_assert_int_eq(pl_run(&bad, &src, &r, NULL), -1);
    ck_assert_int_eq(r.fail, PL_ERR_CONNECT);
}
END_TEST

START_TEST(test_ctl_query)
{
    struct fake f = { 0 };
    struct ctl c;
    char reply[64];
    fake_start(&f, FAKE_GOOD);
    ck_assert_int_eq(ctl_open(&c, "127.0.0.1", f.port, 2000), 0);
    ck_assert_int_eq(ctl_query(&c, "COUNT", reply, sizeof(reply)), 0);
    ck_assert_str_eq(reply, "3");
    ctl_close(&c);
    fake_stop(&f);

    struct fake g = { 0 };
    fake_start(&g, FAKE_SILENT);
    ck_assert_int_eq(ctl_open(&c, "127.0.0.1", g.port, 300), 0);
    ck_assert_int_eq(ctl_query(&c, "COUNT", reply, sizeof(reply)),
                     -ETIMEDOUT);
    close(c.fd);
    fake_stop(&g);
}
END_TEST

/* ctl_request's line callback: counts the lines and keeps the last. */
struct got_lines {
    int n;
    char last[64];
};

static void got_line(void *arg, const char *line, size_t len)
{
    struct got_lines *g = arg;
    g->n++;
    snprintf(g->last, sizeof(g->last), "%.*s", (int)len, line);
}

START_TEST(test_ctl_request)
{
    struct fake f = { .print_lines = 5 };
    struct ctl c;
    struct framer fr;
    struct got_lines g = { 0 };
    fake_start(&f, FAKE_GOOD);
    ck_assert_int_eq(ctl_open(&c, "127.0.0.1", f.port, 2000), 0);
    /* A listing: the head, five people and the tail, and nothing more. */
    ck_assert_int_eq(ctl_request(&c, "PRINT\n", 6, PROTO_PRINT, &fr,
                                 got_line, &g), 0);
    ck_assert_int_eq(g.n, 7);
    ck_assert_str_eq(g.last, "--------------------------------------------------");
    ck_assert(!fr.error && !fr.bad && fr.kind == RK_OK);
    /* The next reply is the next request's: COUNT's "3". */
    g.n = 0;
    ck_assert_int_eq(ctl_request(&c, "COUNT\n", 6, PROTO_COUNT, &fr,
                                 got_line, &g), 0);
    ck_assert_int_eq(g.n, 1);
    ck_assert_str_eq(g.last, "3");
    ck_assert_int_eq(ctl_request(&c, "BOGUS\n", 6, PROTO_INVALID, &fr,
                                 NULL, NULL), 0);
    ck_assert(fr.error && fr.kind == RK_ERROR);
    ctl_close(&c);
    fake_stop(&f);

    /* The server closes after five replies: the sixth request fails. */
    struct fake h = { 0 };
    fake_start(&h, FAKE_HANGUP);
    ck_assert_int_eq(ctl_open(&c, "127.0.0.1", h.port, 2000), 0);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(ctl_request(&c, "COUNT\n", 6, PROTO_COUNT, &fr,
                                     NULL, NULL), 0);
    int rc = ctl_request(&c, "COUNT\n", 6, PROTO_COUNT, &fr, NULL, NULL);
    ck_assert(rc == -EPIPE || rc == -ECONNRESET);
    ck_assert(strstr(c.err, "closed") || strstr(c.err, "reset"));
    ctl_abandon(&c);
    fake_stop(&h);
}
END_TEST

START_TEST(test_preload_people)
{
    struct person a, b;
    for (uint64_t i = 0; i < 5000; i += 13) {
        preload_entry(i, &a);
        preload_entry(i + 1, &b);
        ck_assert(entry_name_ok(a.last, strlen(a.last)));
        ck_assert(entry_name_ok(a.first, strlen(a.first)));
        ck_assert(entry_ssn_ok(a.ssn, strlen(a.ssn)));
        ck_assert(a.age >= 0 && a.age <= 99);
        ck_assert(strcmp(a.last, b.last) || strcmp(a.first, b.first));
        ck_assert_ptr_nonnull(strchr(a.last, PRELOAD_MARK));
    }
    preload_entry(0, &a);
    preload_entry(NAMES_NFIRST, &b);    /* same first name, next last name */
    ck_assert_str_eq(a.first, b.first);
    ck_assert_str_ne(a.last, b.last);
    ck_assert_str_eq(a.last, "Adams-Adams");    /* names that read as names */
    ck_assert_str_eq(b.last, "Baker-Adams");
    preload_entry(999999, &a);                  /* the largest --preload */
    ck_assert(entry_name_ok(a.last, strlen(a.last)));
}
END_TEST

static Suite *client_suite(void)
{
    Suite *s = suite_create("client");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_hist_buckets);
    tcase_add_test(core, test_hist_percentiles);
    tcase_add_test(core, test_frame_single_lines);
    tcase_add_test(core, test_frame_multi_line);
    tcase_add_test(core, test_replykind_outcomes);
    tcase_add_test(core, test_replykind_errors);
    tcase_add_test(core, test_preload_people);
    suite_add_tcase(s, core);

    TCase *net = tcase_create("network");
    tcase_set_timeout(net, 20);
    tcase_add_test(net, test_pipeline_pipelines);
    tcase_add_test(net, test_pipeline_fd_source);
    tcase_add_test(net, test_pipeline_rate);
    tcase_add_test(net, test_ctl_query);
    tcase_add_test(net, test_ctl_request);
    suite_add_tcase(s, net);

    TCase *errors = tcase_create("errors");
    tcase_set_timeout(errors, 20);
    tcase_add_test(errors, test_pipeline_hang_and_timeout);
    tcase_add_test(errors, test_pipeline_hangup);
    tcase_add_test(errors, test_pipeline_garbage);
    tcase_add_test(errors, test_pipeline_refused);
    suite_add_tcase(s, errors);
    return s;
}

SUITE_REGISTER(client_suite)
