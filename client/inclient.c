/* inclient.c -- sends a request stream to ssnserver, pipelined, and times
 * it: the session's service time and every request's latency.
 *
 *   inclient [options] HOST PORT NEVENTS SEED [LASTNAMES_FILE]
 *   inclient [options] HOST PORT -          (requests from standard input)
 *
 * The generated stream is inputgen's, byte for byte. The work is done by
 * pipeline.c (which opens with AUTH when --password-file gives a
 * password); this file is options and output.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include "cliutil.h"
#include "hist.h"
#include "jsonw.h"
#include "gen.h"
#include "names.h"
#include "pipeline.h"
#include "proto.h"
#include "timeutil.h"

#define INCLIENT_HANG_S 60.0    /* default --hang */

static void usage(FILE *f)
{
    fprintf(f,
"usage: inclient [options] HOST PORT NEVENTS SEED [LASTNAMES_FILE]\n"
"       inclient [options] HOST PORT -\n"
"Sends inputgen's stream (or standard input, with -) to the server at\n"
"HOST:PORT. Requests are pipelined: a reader thread takes the replies while\n"
"the sender keeps sending. Replies go to stdout.\n"
"\n"
"  -q, --quiet       discard the replies\n"
"  --stats           print requests, errors, service time and latency\n"
"                    percentiles on stderr at the end\n"
"  --json            the same as one JSON object on stderr\n"
"  --rate BYTES      read replies at most this fast (bytes per second, k/m\n"
"                    suffixes) through a small receive buffer: a slow link\n"
"  --rcvbuf BYTES    socket receive buffer (default %d under --rate)\n"
"  --mss BYTES       TCP segment size to ask for (default %d under --rate:\n"
"                    Ethernet's, not loopback's 64 KiB)\n"
"  --password-file FILE\n"
"                    send 'AUTH password' first, the password being the\n"
"                    first line of FILE; fail unless the server says OK\n"
"  --shard K/N       generated stream: last names with index K mod N only\n"
"  --mix MIX         generated stream: weights, add=5,delete=5,print=1,find=0\n"
"                    by default (parts left out are 0), or A:D:P[:F]\n"
"  --timeout SEC     give up after SEC seconds (default: never)\n"
"  --hang SEC        give up after SEC seconds without a whole reply from\n"
"                    the server while replies are due (default %.0f, 0: never)\n"
"  -h, --help        this text\n"
"  -V, --version     the version\n"
"Exit status: 0 when every request was answered, 1 when the session\n"
"failed (connect, AUTH, reset, close, hang, time-out) or a reply was of no\n"
"known shape or unasked for, 2 for bad arguments.\n",
            PL_RATE_RCVBUF, PL_RATE_MSS, INCLIENT_HANG_S);
}

static const struct cli_prog prog = { "inclient", usage };

static int die_usage(const char *msg, const char *arg)
{
    return cli_usage_error(prog.name, msg, arg);
}

static void print_stats(const struct pl_result *r)
{
    double secs = time_ns_to_s(r->service_ns);
    fprintf(stderr, "inclient: %llu requests, %llu replies, %llu errors, "
            "%llu bad replies\n", (unsigned long long)r->requests,
            (unsigned long long)r->replies, (unsigned long long)r->errors,
            (unsigned long long)r->bad);
    fprintf(stderr, "inclient: service time %.3f s (connect to last reply), "
            "%.0f requests/s\n", secs,
            secs > 0 ? (double)r->replies / secs : 0.0);
    char v[6][24];              /* only the digits the histogram has */
    fprintf(stderr, "inclient: latency ms: p50 %s  p90 %s  p99 %s  "
            "max %s  (min %s, mean %s)\n",
            hist_fmt3(time_ns_to_ms(r->lat_p50), v[0], sizeof(v[0])),
            hist_fmt3(time_ns_to_ms(r->lat_p90), v[1], sizeof(v[1])),
            hist_fmt3(time_ns_to_ms(r->lat_p99), v[2], sizeof(v[2])),
            hist_fmt3(time_ns_to_ms(r->lat_max), v[3], sizeof(v[3])),
            hist_fmt3(time_ns_to_ms(r->lat_min), v[4], sizeof(v[4])),
            hist_fmt3(r->lat_mean / 1e6, v[5], sizeof(v[5])));
    fprintf(stderr, "inclient: at most %llu requests in flight; %llu bytes "
            "sent, %llu received (%.0f bytes/s)\n",
            (unsigned long long)r->inflight_max,
            (unsigned long long)r->bytes_out,
            (unsigned long long)r->bytes_in,
            secs > 0 ? (double)r->bytes_in / secs : 0.0);
}

static void print_json(const struct pl_result *r)
{
    double secs = time_ns_to_s(r->service_ns);
    fprintf(stderr, "{\"result\":\"%s\",\"failure\":",
            pl_fail_name(r->fail));
    json_write_str(stderr, r->what);
    fprintf(stderr, ",\"requests\":%llu,\"replies\":%llu,\"errors\":%llu,"
            "\"bad_replies\":%llu,\"service_s\":%.6f,\"requests_per_s\":%.1f,"
            "\"latency_ms\":{\"min\":%.6f,\"p50\":%.6f,\"p90\":%.6f,"
            "\"p99\":%.6f,\"max\":%.6f,\"mean\":%.6f},"
            "\"inflight_max\":%llu,\"bytes_sent\":%llu,"
            "\"bytes_received\":%llu,\"receive_bytes_per_s\":%.1f}\n",
            (unsigned long long)r->requests, (unsigned long long)r->replies,
            (unsigned long long)r->errors, (unsigned long long)r->bad, secs,
            secs > 0 ? (double)r->replies / secs : 0.0,
            time_ns_to_ms(r->lat_min), time_ns_to_ms(r->lat_p50),
            time_ns_to_ms(r->lat_p90), time_ns_to_ms(r->lat_p99),
            time_ns_to_ms(r->lat_max), r->lat_mean / 1e6,
            (unsigned long long)r->inflight_max,
            (unsigned long long)r->bytes_out, (unsigned long long)r->bytes_in,
            secs > 0 ? (double)r->bytes_in / secs : 0.0);
}

/* One run: its options, and where its requests come from. */
struct inclient {
    struct pl_opts po;
    struct gen_opts go;
    int stats, json;
    int from_stdin;             /* "-": requests from standard input */
    const char *lastnames;      /* LASTNAMES_FILE; NULL: the bundled list */
    const char *password_file;  /* --password-file; NULL: no AUTH */
    char password[CLI_PASSWORD_MAX + 1];
    struct namelist names;
    struct gen g;
    struct pl_fdsource fs;
    struct pl_source src;
};

/* The options. Returns 0, or the exit status for bad ones; --help and
 * --version exit here (cli_getopt). */
static int parse_options(struct inclient *ic, int argc, char **argv)
{
    static const struct option longopts[] = {
        { "quiet", no_argument, NULL, 'q' },
        { "stats", no_argument, NULL, 'S' },
        { "json", no_argument, NULL, 'J' },
        { "rate", required_argument, NULL, 'r' },
        { "rcvbuf", required_argument, NULL, 'b' },
        { "mss", required_argument, NULL, 'M' },
        { "shard", required_argument, NULL, 's' },
        { "mix", required_argument, NULL, 'm' },
        { "timeout", required_argument, NULL, 't' },
        { "hang", required_argument, NULL, 'H' },
        { "password-file", required_argument, NULL, 'A' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    struct pl_opts *po = &ic->po;
    int c;

    while ((c = cli_getopt(&prog, argc, argv, "qhV", longopts)) != -1) {
        const char *bad = NULL;
        switch (c) {
        case 'q': po->echo = NULL; break;
        case 'S': ic->stats = 1; break;
        case 'J': ic->json = 1; break;
        case 'r': bad = cli_opt_rate(optarg, &po->rate); break;
        case 'b': bad = cli_opt_rcvbuf(optarg, &po->rcvbuf); break;
        case 'M': bad = cli_opt_mss(optarg, &po->mss); break;
        case 's':
            bad = cli_opt_shard(optarg, &ic->go.shard_k, &ic->go.shard_n);
            break;
        case 'm': bad = cli_opt_mix(optarg, &ic->go.mix); break;
        case 't':
            if (cli_parse_seconds(optarg, &po->timeout_s))
                bad = "a number of seconds from 0 to 86400";
            break;
        case 'H': bad = cli_opt_hang(optarg, &po->hang_s); break;
        case 'A': ic->password_file = optarg; break;
        default: return CLI_EXIT_USAGE;
        }
        if (bad)
            return cli_bad_opt(prog.name, longopts, c, optarg, bad);
    }
    return 0;
}

/* The options, then HOST PORT and either NEVENTS SEED [LASTNAMES_FILE] or
 * "-". Returns 0, or the exit status for bad arguments. */
static int parse_args(struct inclient *ic, int argc, char **argv)
{
    const char *bad;
    int rc = parse_options(ic, argc, argv);
    if (rc)
        return rc;
    int nargs = argc - optind;
    char **arg = argv + optind;
    ic->from_stdin = nargs == 3 && strcmp(arg[2], "-") == 0;
    if (!ic->from_stdin && (nargs < 4 || nargs > 5))
        return die_usage("wants HOST PORT NEVENTS SEED [LASTNAMES_FILE] "
                         "or HOST PORT -", NULL);
    ic->po.host = arg[0];
    ic->po.port = arg[1];
    if ((bad = cli_arg_port(arg[1])))
        return cli_bad_value(prog.name, "PORT", arg[1], bad);
    if (ic->from_stdin)
        return 0;
    if ((bad = cli_arg_events(arg[2], &ic->go.nevents)))
        return cli_bad_value(prog.name, "NEVENTS", arg[2], bad);
    if ((bad = cli_arg_seed(arg[3], &ic->go.seed)))
        return cli_bad_value(prog.name, "SEED", arg[3], bad);
    ic->lastnames = nargs == 5 ? arg[4] : NULL;
    return 0;
}

/* Reads --password-file into ic->password. Returns 0, or -1 after saying
 * why on stderr. */
static int load_password(struct inclient *ic)
{
    char err[300];

    if (!ic->password_file)
        return 0;
    if (cli_password_load(ic->password_file, ic->password,
                          sizeof(ic->password), err, sizeof(err))) {
        fprintf(stderr, "inclient: %s\n", err);
        return -1;
    }
    ic->po.password = ic->password;
    return 0;
}

/* Sets up ic->src: standard input, or the generator over the last-name
 * list. Returns 0, or -1 after saying why on stderr. */
static int open_source(struct inclient *ic)
{
    char err[300];

    if (ic->from_stdin) {
        pl_source_fd(&ic->src, &ic->fs, STDIN_FILENO);
        return 0;
    }
    if (names_load(&ic->names, ic->lastnames, err, sizeof(err))) {
        fprintf(stderr, "inclient: %s\n", err);
        return -1;
    }
    int rc = gen_init(&ic->g, &ic->names, &ic->go);
    if (rc) {
        fprintf(stderr, "inclient: %s\n", rc == -ENOMEM ? "out of memory"
                : "shard has no last names (fewer names than N?)");
        names_free(&ic->names);
        return -1;
    }
    pl_source_gen(&ic->src, &ic->g);
    return 0;
}

static void close_source(struct inclient *ic)
{
    if (!ic->from_stdin) {
        gen_destroy(&ic->g);
        names_free(&ic->names);
    }
}

int main(int argc, char **argv)
{
    struct inclient ic = {
        .po = { .echo = stdout, .hang_s = INCLIENT_HANG_S },
        .go = { .shard_n = 1, .mix = GEN_MIX_DEFAULT },
    };
    struct pl_result r;

    int rc = parse_args(&ic, argc, argv);
    if (rc)
        return rc;
    if (load_password(&ic) || open_source(&ic))
        return 1;
    signal(SIGPIPE, SIG_IGN);
    rc = pl_run(&ic.po, &ic.src, &r, NULL);
    OPENSSL_cleanse(ic.password, sizeof(ic.password));
    if (rc)
        fprintf(stderr, "inclient: FAILED (%s): %s\n", pl_fail_name(r.fail),
                r.what);
    if (ic.from_stdin && ic.fs.dropped > 1)
        fprintf(stderr, "inclient: %zu requests over %d bytes dropped\n",
                ic.fs.dropped, PROTO_MAX_LINE);
    if (ic.json)
        print_json(&r);
    else if (ic.stats)
        print_stats(&r);
    close_source(&ic);
    if (!rc && r.bad)                   /* answered, but not by ssnserver */
        fprintf(stderr, "inclient: FAILED: %llu replies of no known shape "
                "or unasked for\n", (unsigned long long)r.bad);
    return rc || r.bad ? 1 : 0;
}
