/* check_cli.c -- ssn-cli's pure parts (client/cli/cli.h): the command line
 * and the checks between its options, the words joined into one request,
 * AUTH lines told apart for the history, and the --stat line made from two
 * STATS samples. The conversations with a real server are
 * tests/test-ssn-cli.sh's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "suites.h"
#include "proto.h"
#include "timeutil.h"
#include "../client/cli/cli.h"

/* ---- the command line ----------------------------------------------------- */

/* The complaints of bad command lines go to /dev/null while the options'
 * tests run: the exit status is what they check. */
static int saved_stderr = -1;

static void quiet_stderr(void)
{
    int fd = open("/dev/null", O_WRONLY);
    fflush(stderr);
    saved_stderr = dup(STDERR_FILENO);
    if (fd >= 0) {
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
}

static void restore_stderr(void)
{
    fflush(stderr);
    if (saved_stderr >= 0) {
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
        saved_stderr = -1;
    }
}

#define ARGV(...) ((char *[]){ "ssn-cli", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "ssn-cli", __VA_ARGS__ }) / \
                         sizeof(char *)))
/* cli_parse keeps pointers into argv (the host, the request's words), and
 * ARGV's compound literal ends with the block ck_assert_* opens around
 * PARSE: the pointers are copied to an array that outlives the check (the
 * strings themselves are literals). */
static char **kept_argv(char **argv, int argc)
{
    static char *saved[8][32];
    static unsigned next;
    char **s = saved[next++ % 8];

    ck_assert_int_lt(argc, 32);
    memcpy(s, argv, (size_t)(argc + 1) * sizeof(*s));
    return s;
}

#define PARSE(o, ...) cli_parse((o), ARGC(__VA_ARGS__), \
                                kept_argv(ARGV(__VA_ARGS__), ARGC(__VA_ARGS__)))

START_TEST(test_cli_parse_defaults)
{
    struct cli_opts o;
    char *argv[] = { "ssn-cli", NULL };

    ck_assert_int_eq(cli_parse(&o, 1, argv), 0);
    ck_assert_str_eq(o.host, "127.0.0.1");
    ck_assert_str_eq(o.port, "7777");
    ck_assert_int_eq(o.mode, CLI_MODE_AUTO);
    ck_assert_int_eq(o.repeat, 1);
    ck_assert_int_eq(o.nwords, 0);
    ck_assert_ptr_null(o.password_file);
    ck_assert(o.timeout_s == 0);
    ck_assert(cli_interval(&o) == 0);
}
END_TEST

START_TEST(test_cli_parse_request)
{
    struct cli_opts o;

    /* -h is the host here, as in redis-cli; the request's words follow. */
    ck_assert_int_eq(PARSE(&o, "-h", "db.example", "-p", "7000", "FIND",
                           "John", "Smith"), 0);
    ck_assert_str_eq(o.host, "db.example");
    ck_assert_str_eq(o.port, "7000");
    ck_assert_int_eq(o.mode, CLI_MODE_ONCE);
    ck_assert_int_eq(o.nwords, 3);
    ck_assert_str_eq(o.words[0], "FIND");
    ck_assert_str_eq(o.words[2], "Smith");

    /* The options end at the first word: a later "-p" is a word. */
    ck_assert_int_eq(PARSE(&o, "FIND", "-p", "x"), 0);
    ck_assert_int_eq(o.nwords, 3);
    ck_assert_str_eq(o.port, "7777");

    ck_assert_int_eq(PARSE(&o, "--host=::1", "--port", "1", "COUNT"), 0);
    ck_assert_str_eq(o.host, "::1");
    ck_assert_str_eq(o.port, "1");

    ck_assert_int_eq(PARSE(&o, "-r", "3", "-i", "0.1", "COUNT"), 0);
    ck_assert_int_eq(o.repeat, 3);
    ck_assert(cli_interval(&o) == 0.1);
    ck_assert_int_eq(PARSE(&o, "-r", "-1", "COUNT"), 0);
    ck_assert_int_eq(o.repeat, -1);
    ck_assert(cli_interval(&o) == 0);
    ck_assert_int_eq(PARSE(&o, "-r", "1", "COUNT"), 0);
    ck_assert_int_eq(o.repeat, 1);
}
END_TEST

START_TEST(test_cli_parse_modes)
{
    struct cli_opts o;

    ck_assert_int_eq(PARSE(&o, "--pipe"), 0);
    ck_assert_int_eq(o.mode, CLI_MODE_PIPE);
    ck_assert_int_eq(PARSE(&o, "--stat"), 0);
    ck_assert_int_eq(o.mode, CLI_MODE_STAT);
    ck_assert(cli_interval(&o) == CLI_STAT_INTERVAL);
    ck_assert_int_eq(PARSE(&o, "--stat", "-i", "0.5", "--count", "4"), 0);
    ck_assert(cli_interval(&o) == 0.5);
    ck_assert_uint_eq(o.count, 4);
    ck_assert_int_eq(PARSE(&o, "--latency", "--count", "50"), 0);
    ck_assert_int_eq(o.mode, CLI_MODE_LATENCY);
    ck_assert(cli_interval(&o) == CLI_LAT_INTERVAL);
    ck_assert_int_eq(PARSE(&o, "--password-file", "pw", "--timeout", "2.5",
                           "COUNT"), 0);
    ck_assert_str_eq(o.password_file, "pw");
    ck_assert(o.timeout_s == 2.5);
}
END_TEST

START_TEST(test_cli_parse_bad_values)
{
    struct cli_opts o;

    ck_assert_int_eq(PARSE(&o, "-p", "99999", "COUNT"), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "-p", "0", "COUNT"), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "-p", "abc"), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "-h", ""), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "-r", "0", "COUNT"), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "-r", "-2", "COUNT"), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "-r", "x", "COUNT"), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "-r", "2", "-i", "-1", "COUNT"),
                     CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "-r", "2", "-i", "soon", "COUNT"),
                     CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "--latency", "--count", "0"), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "--timeout", "forever", "COUNT"),
                     CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "--no-such-option"), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "-p"), CLI_EXIT_USAGE);    /* no value */
}
END_TEST

START_TEST(test_cli_parse_bad_combinations)
{
    struct cli_opts o;

    ck_assert_int_eq(PARSE(&o, "--pipe", "--stat"), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "--stat", "--latency"), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "--pipe", "COUNT"), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "--stat", "COUNT"), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "-r", "3"), CLI_EXIT_USAGE);  /* no request */
    ck_assert_int_eq(PARSE(&o, "-r", "3", "--latency"), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "-i", "1", "COUNT"), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "-i", "1"), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "--count", "5", "COUNT"), CLI_EXIT_USAGE);
    ck_assert_int_eq(PARSE(&o, "--count", "5", "--pipe"), CLI_EXIT_USAGE);
    /* The same option twice is no conflict. */
    ck_assert_int_eq(PARSE(&o, "--stat", "--stat"), 0);
}
END_TEST

/* ---- request text ------------------------------------------------------- */

START_TEST(test_cli_join)
{
    char buf[PROTO_MAX_LINE + 2];
    char *find[] = { "FIND", "John", "Smith" };
    char *count[] = { "COUNT" };
    char *split[] = { "FIND", "John\nDELETE", "Smith" };
    char *cr[] = { "COUNT\r" };
    static char big[PROTO_MAX_LINE + 1];

    ck_assert_int_eq(cli_join(find, 3, buf, sizeof(buf)), 16);
    ck_assert_str_eq(buf, "FIND John Smith\n");
    ck_assert_int_eq(cli_join(count, 1, buf, sizeof(buf)), 6);
    ck_assert_str_eq(buf, "COUNT\n");
    ck_assert_int_eq(cli_join(split, 3, buf, sizeof(buf)), -EINVAL);
    ck_assert_int_eq(cli_join(cr, 1, buf, sizeof(buf)), -EINVAL);

    /* Exactly PROTO_MAX_LINE bytes is one request; one more is not. */
    memset(big, 'x', PROTO_MAX_LINE);
    char *one[] = { big };
    ck_assert_int_eq(cli_join(one, 1, buf, sizeof(buf)), PROTO_MAX_LINE + 1);
    big[PROTO_MAX_LINE - 1] = '\0';
    char *two[] = { big, "y" };
    ck_assert_int_eq(cli_join(two, 2, buf, sizeof(buf)), -E2BIG);
    ck_assert_int_eq(cli_join(find, 3, buf, 10), -E2BIG);   /* small buf */
}
END_TEST

static int is_auth(const char *s)
{
    return cli_is_auth(s, strlen(s));
}

START_TEST(test_cli_is_auth)
{
    ck_assert(is_auth("AUTH s3cret"));
    ck_assert(is_auth("auth s3cret"));
    ck_assert(is_auth("  \tAuTh\ts3cret"));
    ck_assert(is_auth("AUTH"));
    ck_assert(is_auth("AUTH\r"));
    ck_assert(!is_auth("AUTHOR x"));
    ck_assert(!is_auth("ADD AUTH Smith 30 123-45-6789"));
    ck_assert(!is_auth("AUT"));
    ck_assert(!is_auth(""));
    ck_assert(!is_auth("FIND John Smith"));
}
END_TEST

/* ---- the --stat line ------------------------------------------------------ */

/* A sample at t seconds from STATS-shaped text. */
static void sample(struct cli_stats *s, double t, const char *text)
{
    char line[128];
    memset(s, 0, sizeof(*s));
    s->t_ns = time_s_to_ns(t);
    while (*text) {
        size_t n = strcspn(text, "\n");
        snprintf(line, sizeof(line), "%.*s", (int)n, text);
        cli_stats_take(s, line);
        text += n + (text[n] == '\n');
    }
}

/* The whitespace-separated columns of a --stat line. */
static int columns(const char *line, char col[][24], int max)
{
    int n = 0;
    const char *p = line;
    while (n < max) {
        p += strspn(p, " \n");
        if (!*p)
            break;
        size_t len = strcspn(p, " \n");
        snprintf(col[n++], 24, "%.*s", (int)len, p);
        p += len;
    }
    return n;
}

START_TEST(test_cli_stat_line)
{
    struct cli_stats a, b;
    char buf[160], col[8][24];

    sample(&a, 10, "mode fine\ncommands_total 1000\nentries 50\n"
           "connections_current 3\nlock_acquisitions 900\nlock_wait_us 100\n"
           "lock_hold_us 2000\nlock_wait_max_us 7\n");
    ck_assert_uint_eq(a.have, CLI_ST_COMMANDS | CLI_ST_ENTRIES |
                      CLI_ST_CLIENTS | CLI_ST_LOCK_ACQ | CLI_ST_LOCK_WAIT |
                      CLI_ST_LOCK_HOLD);
    ck_assert_uint_eq(a.lock_wait_us, 100);     /* not lock_wait_max_us */
    /* Two seconds later: 4000 more requests, 3000 acquisitions, 600 us of
     * waiting and 500 ms held. */
    sample(&b, 12, "commands_total 5000\nentries 70\nconnections_current 4\n"
           "lock_acquisitions 3900\nlock_wait_us 700\nlock_hold_us 502000\n");
    cli_stat_format(&a, &b, buf, sizeof(buf));
    ck_assert_int_eq(columns(buf, col, 8), 7);
    ck_assert_str_eq(col[0], "70");             /* people */
    ck_assert_str_eq(col[1], "4");              /* clients */
    ck_assert_str_eq(col[2], "5000");           /* requests */
    ck_assert_str_eq(col[3], "2000");           /* requests/s */
    ck_assert_str_eq(col[4], "1500");           /* acquisitions/s */
    ck_assert_str_eq(col[5], "300");            /* wait us/s */
    ck_assert_str_eq(col[6], "25.0");           /* held % */
    ck_assert_int_eq(buf[strlen(buf) - 1], '\n');
    /* The header has a title over every column. */
    ck_assert_int_eq(columns(cli_stat_header, col, 8), 8);   /* "held %" */
}
END_TEST

START_TEST(test_cli_stat_reset_and_missing)
{
    struct cli_stats a, b;
    char buf[160], col[8][24];

    /* STATS RESET between the samples: counters start again from 0. */
    sample(&a, 1, "commands_total 9000\nentries 5\nlock_acquisitions 100\n");
    sample(&b, 2, "commands_total 40\nentries 5\nlock_acquisitions 130\n"
           "bogus\nentries x\n");
    cli_stat_format(&a, &b, buf, sizeof(buf));
    ck_assert_int_eq(columns(buf, col, 8), 7);
    ck_assert_str_eq(col[0], "5");
    ck_assert_str_eq(col[1], "-");              /* no connections_current */
    ck_assert_str_eq(col[3], "40");
    ck_assert_str_eq(col[4], "30");
    ck_assert_str_eq(col[5], "-");
    ck_assert_str_eq(col[6], "-");

    /* No time between the samples: no rate. */
    cli_stat_format(&b, &b, buf, sizeof(buf));
    columns(buf, col, 8);
    ck_assert_str_eq(col[3], "-");
}
END_TEST

static Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *opts = tcase_create("options");
    tcase_add_checked_fixture(opts, quiet_stderr, restore_stderr);
    tcase_add_test(opts, test_cli_parse_defaults);
    tcase_add_test(opts, test_cli_parse_request);
    tcase_add_test(opts, test_cli_parse_modes);
    tcase_add_test(opts, test_cli_parse_bad_values);
    tcase_add_test(opts, test_cli_parse_bad_combinations);
    suite_add_tcase(s, opts);

    TCase *text = tcase_create("text");
    tcase_add_test(text, test_cli_join);
    tcase_add_test(text, test_cli_is_auth);
    tcase_add_test(text, test_cli_stat_line);
    tcase_add_test(text, test_cli_stat_reset_and_missing);
    suite_add_tcase(s, text);
    return s;
}

SUITE_REGISTER(cli_suite)
