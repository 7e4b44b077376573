/* inclient.c -- sends a request stream to ssnserver, pipelined, and times
 * it: the session's service time and every request's latency.
 *
 *   inclient [options] HOST PORT NEVENTS SEED [LASTNAMES_FILE]
 *   inclient [options] HOST PORT -          (requests from standard input)
 *
 * The generated stream is inputgen's, byte for byte. The work is done by
 * pipeline.c; this file is options and output.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cliutil.h"
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
"  --shard K/N       generated stream: last names with index K mod N only\n"
"  --mix A:D:P[:F]   generated stream: weights, default 5:5:1:0\n"
"  --timeout SEC     give up after SEC seconds (default: never)\n"
"  --hang SEC        give up after SEC seconds without a byte from the\n"
"                    server while replies are due (default %.0f, 0: never)\n"
"  -h, --help        this text\n"
"  -V, --version     the version\n"
"Exit status: 0 when every request was answered, 1 when the session\n"
"failed (connect, reset, close, hang, time-out), 2 for bad arguments.\n",
            PL_RATE_RCVBUF, PL_RATE_MSS, INCLIENT_HANG_S);
}

static int die_usage(const char *msg, const char *arg)
{
    fprintf(stderr, "inclient: %s%s%s\n", msg, arg ? ": " : "",
            arg ? arg : "");
    fprintf(stderr, "Try 'inclient --help'.\n");
    return 2;
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
    fprintf(stderr, "inclient: latency ms: p50 %.3f  p90 %.3f  p99 %.3f  "
            "max %.3f  (min %.3f, mean %.3f)\n",
            time_ns_to_ms(r->lat_p50), time_ns_to_ms(r->lat_p90),
            time_ns_to_ms(r->lat_p99), time_ns_to_ms(r->lat_max),
            time_ns_to_ms(r->lat_min), r->lat_mean / 1e6);
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
    cli_json_str(stderr, r->what);
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

int main(int argc, char **argv)
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
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    struct pl_opts po = { .echo = stdout, .hang_s = INCLIENT_HANG_S };
    struct gen_opts go = { .shard_n = 1, .mix = GEN_MIX_DEFAULT };
    int stats = 0, json = 0, c;
    uint64_t v;

    while ((c = getopt_long(argc, argv, "qhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'q': po.echo = NULL; break;
        case 'S': stats = 1; break;
        case 'J': json = 1; break;
        case 'r':
            if (cli_parse_u64(optarg, CLI_RATE_MAX, &po.rate) || !po.rate)
                return die_usage("--rate wants bytes per second > 0", optarg);
            break;
        case 'b':
            if (cli_parse_u64(optarg, 1u << 30, &v) || v == 0)
                return die_usage("--rcvbuf wants a size in bytes", optarg);
            po.rcvbuf = (int)v;
            break;
        case 'M':
            if (cli_parse_u64(optarg, 32767, &v) || v < 88)
                return die_usage("--mss wants 88-32767 bytes", optarg);
            po.mss = (int)v;
            break;
        case 's':
            if (cli_parse_shard(optarg, &go.shard_k, &go.shard_n))
                return die_usage("--shard wants K/N with 0 <= K < N", optarg);
            break;
        case 'm':
            if (cli_parse_mix(optarg, &go.mix))
                return die_usage("--mix wants ADD:DELETE:PRINT[:FIND] "
                                 "weights 0-1000, not all 0", optarg);
            break;
        case 't':
            if (cli_parse_seconds(optarg, &po.timeout_s))
                return die_usage("--timeout wants seconds", optarg);
            break;
        case 'H':
            if (cli_parse_seconds(optarg, &po.hang_s))
                return die_usage("--hang wants seconds", optarg);
            break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("inclient %s\n", CLIENT_VERSION); return 0;
        default: return die_usage("bad option", NULL);
        }
    }
    int nargs = argc - optind;
    int from_stdin = nargs == 3 && strcmp(argv[optind + 2], "-") == 0;
    if (!from_stdin && (nargs < 4 || nargs > 5))
        return die_usage("wants HOST PORT NEVENTS SEED [LASTNAMES_FILE] "
                         "or HOST PORT -", NULL);
    po.host = argv[optind];
    po.port = argv[optind + 1];
    if (cli_parse_u64(po.port, 65535, &v) || v == 0)
        return die_usage("PORT must be 1-65535", po.port);

    struct namelist names = { 0 };
    struct gen g;
    struct pl_fdsource fs;
    struct pl_source src;
    char err[300];
    if (from_stdin) {
        pl_source_fd(&src, &fs, STDIN_FILENO);
    } else {
        if (cli_parse_u64(argv[optind + 2], CLI_EVENTS_MAX, &go.nevents))
            return die_usage("NEVENTS must be a number 0-1000000000",
                             argv[optind + 2]);
        if (cli_parse_u64(argv[optind + 3], UINT64_MAX, &go.seed))
            return die_usage("SEED must be a non-negative integer",
                             argv[optind + 3]);
        if (names_load(&names, nargs == 5 ? argv[optind + 4] : NULL, err,
                       sizeof(err))) {
            fprintf(stderr, "inclient: %s\n", err);
            return 1;
        }
        int rc = gen_init(&g, &names, &go);
        if (rc) {
            fprintf(stderr, "inclient: %s\n", rc == -ENOMEM ? "out of memory"
                    : "shard has no last names (fewer names than N?)");
            names_free(&names);
            return 1;
        }
        pl_source_gen(&src, &g);
    }

    signal(SIGPIPE, SIG_IGN);
    struct pl_result r;
    int rc = pl_run(&po, &src, &r, NULL);
    if (rc)
        fprintf(stderr, "inclient: FAILED (%s): %s\n", pl_fail_name(r.fail),
                r.what);
    if (from_stdin && fs.dropped > 1)
        fprintf(stderr, "inclient: %zu requests over %d bytes dropped\n",
                fs.dropped, PROTO_MAX_LINE);
    if (json)
        print_json(&r);
    else if (stats)
        print_stats(&r);
    if (!from_stdin) {
        gen_destroy(&g);
        names_free(&names);
    }
    return rc ? 1 : 0;
}
