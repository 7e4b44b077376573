/* bench_opts.c -- ssn-bench's options (bench_opts.h): the usage, each
 * option's value checked with the suite's complaints (client/lib/cliutil.h),
 * then what they say together. Nothing here touches a socket.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_opts.h"
#include "timeutil.h"

#define BENCH_MIX_MAX   1000        /* largest --mix weight */
#define BENCH_KEYS_MAX  1000000000ull   /* most --keys and --preload */

static void usage(FILE *f)
{
    fprintf(f,
"usage: ssn-bench [options]\n"
"Drives a server with C connections shared by T threads, each connection\n"
"keeping P requests in flight, and reports requests/s, replies by kind and\n"
"latency percentiles. Key k is the person f<k> L<k> (Redis and memcached:\n"
"key L<k>:f<k>, a 30-byte value).\n"
"\n"
"      --host HOST         server address (default 127.0.0.1)\n"
"  -p, --port PORT         server port (default 7777)\n"
"      --dialect NAME      ssn (ssnserver, the default), redis (inline\n"
"                          commands, RESP replies) or memcache (memcached's\n"
"                          text protocol)\n"
"  -c, --connections N     connections (default 50, at most %d)\n"
"  -t, --threads T         threads, each with its own event loop (default 1,\n"
"                          at most %d and at most N)\n"
"  -P, --pipeline N        requests in flight per connection (default 1, at\n"
"                          most %d)\n"
"  -n, --requests N        requests in all (default 100000; k, m suffixes)\n"
"      --duration SECONDS  send requests for this long instead of -n\n"
"      --hang SECONDS      fail the run when a connection with requests in\n"
"                          flight gets no whole reply this long (default %d)\n"
"      --mix MIX           weights of ADD, FIND and DELETE, 0 to %d each:\n"
"                          add=1,find=8,delete=1 (the default), or A:F:D\n"
"      --keys K            the key space: keys 0..K-1 (default 100000)\n"
"      --preload N         add keys 0..N-1 first, pipelined and untimed\n"
"      --new-keys          every ADD of the timed run names a key no request\n"
"                          of the run named before (from max(K, N) up, in a\n"
"                          scrambled order): a real insert, a SET of a new\n"
"                          key for Redis and memcached. Without it an ADD\n"
"                          draws from 0..K-1 and, once the key is there, is\n"
"                          refused (ssn) or overwrites (Redis, memcached)\n"
"      --password-file FILE\n"
"                          send 'AUTH password' first, the password being the\n"
"                          first line of FILE (ssn and redis dialects)\n"
"      --server-pid PID    also report the server's CPU time per request,\n"
"                          from /proc/PID/stat\n"
"      --json              the report as one JSON object\n"
"      --csv               the report as a CSV header and one row\n"
"  -h, --help              this text\n"
"  -V, --version           the version\n"
"A progress line goes to stderr when it is a terminal.\n"
"Exit status: 0 when every request was answered (error replies included),\n"
"1 when the run failed (connect, AUTH, a reply that cannot be parsed or\n"
"matched, counts that differ, a server that closes or hangs), 2 for bad\n"
"arguments, %d after SIGINT (the report covers what was done).\n",
            BENCH_CONNS_MAX, BENCH_THREADS_MAX, BENCH_PIPELINE_MAX,
            BENCH_HANG_S, BENCH_MIX_MAX, BENCH_EXIT_INT);
}

const struct cli_prog bench_prog = { "ssn-bench", usage };

/* "add=N,find=N,delete=N" (cli_parse_named_mix, the form every tool
 * shares) or "A:F:D", each 0..BENCH_MIX_MAX, not all 0. Returns 0 or
 * -1. */
static int parse_mix(const char *s, unsigned mix[BENCH_OPS])
{
    static const char *const names[BENCH_OPS] = { "add", "find", "delete" };
    unsigned v[BENCH_OPS], sum = 0;

    if (strchr(s, '='))
        return cli_parse_named_mix(s, names, BENCH_OPS, BENCH_MIX_MAX, mix)
               ? -1 : 0;
    for (int i = 0; i < BENCH_OPS; i++) {
        char part[16];
        size_t len = strcspn(s, ":");
        uint64_t x;
        if (len == 0 || len >= sizeof(part) || (i < BENCH_OPS - 1) !=
            (s[len] == ':'))
            return -1;
        memcpy(part, s, len);
        part[len] = '\0';
        if (strpbrk(part, "kKmM") || cli_parse_u64(part, BENCH_MIX_MAX, &x))
            return -1;
        v[i] = (unsigned)x;
        sum += v[i];
        s += len + (s[len] == ':');
    }
    if (sum == 0)
        return -1;
    memcpy(mix, v, sizeof(v));
    return 0;
}

/* A number from lo to hi into *out; the complaint otherwise. */
static const char *opt_num(const char *arg, uint64_t lo, uint64_t hi,
                           uint64_t *out, const char *want)
{
    uint64_t v;
    if (cli_parse_u64(arg, hi, &v) || v < lo)
        return want;
    *out = v;
    return NULL;
}

#define STR_(x) #x
#define STR(x) STR_(x)

/* An option that takes a count, into a. Returns NULL, or what a good
 * value is. */
static const char *parse_count(struct bench_args *a, int c, const char *arg)
{
    struct bench_plan *p = &a->plan;
    uint64_t v = 0;
    const char *bad = NULL;

    switch (c) {
    case 'c':
        bad = opt_num(arg, 1, BENCH_CONNS_MAX, &v, "a number of connections "
                      "from 1 to " STR(BENCH_CONNS_MAX));
        p->conns = (unsigned)v;
        break;
    case 't':
        bad = opt_num(arg, 1, BENCH_THREADS_MAX, &v, "a number of threads "
                      "from 1 to " STR(BENCH_THREADS_MAX));
        p->threads = (unsigned)v;
        break;
    case 'P':
        bad = opt_num(arg, 1, BENCH_PIPELINE_MAX, &v, "a pipeline depth "
                      "from 1 to " STR(BENCH_PIPELINE_MAX));
        p->pipeline = (unsigned)v;
        break;
    case 'n':
        bad = opt_num(arg, 1, CLI_EVENTS_MAX, &p->requests, "a number of "
                      "requests from 1 to 1000000000 (k, m suffixes)");
        a->have_n = 1;
        break;
    case 'k':
        bad = opt_num(arg, 1, BENCH_KEYS_MAX, &p->keys, "a number of keys "
                      "from 1 to 1000000000 (k, m suffixes)");
        break;
    case 'L':
        bad = opt_num(arg, 0, BENCH_KEYS_MAX, &p->preload, "a number of keys "
                      "from 0 to 1000000000 (k, m suffixes)");
        break;
    }
    return bad;
}

/* One option's value into a. Returns NULL, or what a good value is. */
static const char *parse_opt(struct bench_args *a, int c, const char *arg)
{
    struct bench_plan *p = &a->plan;
    uint64_t v = 0;

    switch (c) {
    case 'H': p->host = arg; return NULL;
    case 'p': p->port = arg; return cli_arg_port(arg);
    case 'D':
        p->dialect = bench_dialect_find(arg);
        return p->dialect ? NULL : "a dialect: ssn, redis or memcache";
    case 'd':
        if (cli_parse_seconds(arg, &a->cf.duration_s) ||
            a->cf.duration_s < 0.001)
            return "a number of seconds from 0.001 to 86400";
        return NULL;
    case 'G':
        if (cli_parse_seconds(arg, &a->hang_s) || a->hang_s < 0.1)
            return "a number of seconds from 0.1 to 86400";
        return NULL;
    case 'm':
        return parse_mix(arg, p->mix) ? "add=N,find=N,delete=N or A:F:D weights from 0 to "
               STR(BENCH_MIX_MAX) ", not all 0" : NULL;
    case 'A': a->password_file = arg; return NULL;
    case 'S':
        if (opt_num(arg, 1, 4194304, &v, "x") ||
            bench_proc_cpu_us((pid_t)v, &a->cpu0))
            return "the process ID of a running process";
        a->server_pid = (long)v;
        return NULL;
    case 'N': p->new_keys = 1; return NULL;
    case 'J': a->json = 1; return NULL;
    case 'C': a->csv = 1; return NULL;
    }
    return parse_count(a, c, arg);
}

/* The options. Returns 0, or the exit status for bad ones; --help and
 * --version exit here (cli_getopt). */
static int parse_options(struct bench_args *a, int argc, char **argv)
{
    static const struct option longopts[] = {
        { "host", required_argument, NULL, 'H' },
        { "port", required_argument, NULL, 'p' },
        { "dialect", required_argument, NULL, 'D' },
        { "connections", required_argument, NULL, 'c' },
        { "threads", required_argument, NULL, 't' },
        { "pipeline", required_argument, NULL, 'P' },
        { "requests", required_argument, NULL, 'n' },
        { "duration", required_argument, NULL, 'd' },
        { "hang", required_argument, NULL, 'G' },
        { "mix", required_argument, NULL, 'm' },
        { "keys", required_argument, NULL, 'k' },
        { "preload", required_argument, NULL, 'L' },
        { "new-keys", no_argument, NULL, 'N' },
        { "password-file", required_argument, NULL, 'A' },
        { "server-pid", required_argument, NULL, 'S' },
        { "json", no_argument, NULL, 'J' },
        { "csv", no_argument, NULL, 'C' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = cli_getopt(&bench_prog, argc, argv, "p:c:t:P:n:hV", longopts))
           != -1) {
        if (c == '?')
            return CLI_EXIT_USAGE;
        const char *bad = parse_opt(a, c, optarg);
        if (bad)
            return cli_bad_opt(bench_prog.name, longopts, c, optarg, bad);
    }
    if (optind < argc)
        return cli_usage_error(bench_prog.name,
                               "takes no operands, only options",
                               argv[optind]);
    return 0;
}

/* The options, then what they say together. Returns 0 or the exit status. */
static int parse_args(struct bench_args *a, int argc, char **argv)
{
    struct bench_plan *p = &a->plan;
    char buf[128];
    int rc = parse_options(a, argc, argv);
    if (rc)
        return rc;
    if (a->have_n && a->cf.duration_s > 0)
        return cli_usage_error(bench_prog.name, "-n and --duration cannot go "
                               "together", NULL);
    if (a->json && a->csv)
        return cli_usage_error(bench_prog.name, "--json and --csv cannot go "
                               "together", NULL);
    if (p->threads > p->conns) {
        snprintf(buf, sizeof(buf), "%u threads for %u connections (each "
                 "thread needs one)", p->threads, p->conns);
        return cli_usage_error(bench_prog.name, "--threads", buf);
    }
    if ((uint64_t)p->conns * p->pipeline > BENCH_INFLIGHT_MAX) {
        snprintf(buf, sizeof(buf), "%u connections x %u in flight is over "
                 "%u", p->conns, p->pipeline, BENCH_INFLIGHT_MAX);
        return cli_usage_error(bench_prog.name, "--pipeline", buf);
    }
    if (a->password_file && !p->dialect->has_auth) {
        snprintf(buf, sizeof(buf), "the %s dialect has no AUTH",
                 p->dialect->name);
        return cli_usage_error(bench_prog.name, "--password-file", buf);
    }
    p->hang_ns = time_s_to_ns(a->hang_s);
    if (a->cf.duration_s > 0) {
        p->requests = 0;
        p->duration_ns = time_s_to_ns(a->cf.duration_s);
    }
    return 0;
}

int bench_args_parse(struct bench_args *a, int argc, char **argv)
{
    struct bench_plan *p = &a->plan;

    *a = (struct bench_args){
        .plan = {
            .dialect = &bench_dialect_ssn, .host = "127.0.0.1",
            .port = "7777", .conns = 50, .threads = 1, .pipeline = 1,
            .mix = { 1, 8, 1 }, .keys = 100000, .requests = 100000,
        },
        .hang_s = BENCH_HANG_S,
    };
    int rc = parse_args(a, argc, argv);
    if (rc)
        return rc;
    if (a->password_file) {
        char err[256];
        if (cli_password_load(a->password_file, a->password,
                              sizeof(a->password), err, sizeof(err))) {
            fprintf(stderr, "%s: %s\n", bench_prog.name, err);
            return 1;
        }
        p->password = a->password;
    }
    a->cf = (struct bench_config){
        .dialect = p->dialect->name, .host = p->host, .port = p->port,
        .connections = p->conns, .threads = p->threads,
        .pipeline = p->pipeline, .mix = { p->mix[0], p->mix[1], p->mix[2] },
        .keys = p->keys, .preload = p->preload, .new_keys = p->new_keys,
        .requests = p->requests,
        .duration_s = a->cf.duration_s,
    };
    return 0;
}
