/* kill_it.c -- blasts a server with NCLIENTS pipelined clients at once and
 * says, per client, how long each waited; then checks the server's final
 * state against what the clients' streams must have left behind.
 *
 *   kill_it [options] HOST PORT NEVENTS NCLIENTS
 *
 * Verification needs a server that was empty at the start: client i runs
 * inputgen's stream with seed SEED+i on --shard i/NCLIENTS, so the clients
 * never touch each other's names, and the final state must be the union of
 * their final live sets. Exit status: 0 verified, 1 FAILED, 2 bad
 * arguments, 3 not verified.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include "cliutil.h"
#include "killit.h"
#include "preload.h"

static void usage(FILE *f)
{
    fprintf(f,
"usage: kill_it [options] HOST PORT NEVENTS NCLIENTS\n"
"Forks NCLIENTS clients that connect at once and send NEVENTS generated\n"
"requests each (inputgen's stream, seed SEED+i, --shard i/NCLIENTS),\n"
"pipelined. Prints per client: requests, service time, requests/s, latency\n"
"p50/p99 and errors; then the mean and max/min of the service times; then\n"
"a verdict. When the server was empty at the start, its final COUNT, CHECK\n"
"and DIGEST are compared with the clients' expected final state.\n"
"\n"
"  --rate BYTES      each client reads replies at most this fast (bytes/s)\n"
"  --slow N          only the first N clients get --rate (default: all)\n"
"  --rcvbuf BYTES    each client's socket receive buffer\n"
"  --mss BYTES       each client's TCP segment size (default 1460 under\n"
"                    --rate)\n"
"  --seed N          base seed (default 1)\n"
"  --preload N       add N people of its own before the clients start, so\n"
"                    every PRINT is big (verification includes them)\n"
"  --mix A:D:P[:F]   request weights (default 5:5:1:0)\n"
"  --lastnames FILE  last-name list (default: the bundled one)\n"
"  --timeout SEC     give the whole run at most SEC seconds (default %.0f)\n"
"  --hang SEC        FAILED when no client receives anything for SEC\n"
"                    seconds while replies are due (default %.0f, 0: off)\n"
"  --server-pid PID  name this pid when the server hangs or dies\n"
"  --json FILE       every figure as JSON\n"
"  --csv FILE        one CSV row per client\n"
"  -q, --quiet       no table (the verdict line is still printed)\n"
"  -h, --help        this text\n"
"  -V, --version     the version\n"
"Exit status: 0 verified, 1 FAILED, 2 bad arguments, 3 not verified.\n",
            KI_TIMEOUT_S, KI_HANG_S);
}

static int die_usage(const char *msg, const char *arg)
{
    fprintf(stderr, "kill_it: %s%s%s\n", msg, arg ? ": " : "",
            arg ? arg : "");
    fprintf(stderr, "Try 'kill_it --help'.\n");
    return 2;
}

static int parse_args(struct killit *k, int argc, char **argv)
{
    static const struct option longopts[] = {
        { "rate", required_argument, NULL, 'r' },
        { "rcvbuf", required_argument, NULL, 'b' },
        { "slow", required_argument, NULL, 'w' },
        { "mss", required_argument, NULL, 'M' },
        { "seed", required_argument, NULL, 's' },
        { "preload", required_argument, NULL, 'p' },
        { "mix", required_argument, NULL, 'm' },
        { "lastnames", required_argument, NULL, 'L' },
        { "timeout", required_argument, NULL, 't' },
        { "hang", required_argument, NULL, 'H' },
        { "server-pid", required_argument, NULL, 'P' },
        { "json", required_argument, NULL, 'j' },
        { "csv", required_argument, NULL, 'c' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    uint64_t v;
    int c;

    while ((c = getopt_long(argc, argv, "qhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'r':
            if (cli_parse_u64(optarg, CLI_RATE_MAX, &k->rate) || !k->rate)
                return die_usage("--rate wants bytes per second > 0", optarg);
            break;
        case 'b':
            if (cli_parse_u64(optarg, 1u << 30, &v) || v == 0)
                return die_usage("--rcvbuf wants a size in bytes", optarg);
            k->rcvbuf = (int)v;
            break;
        case 'w':
            if (cli_parse_u64(optarg, KI_MAX_CLIENTS, &v))
                return die_usage("--slow wants a number of clients", optarg);
            k->nslow = (unsigned)v;
            break;
        case 'M':
            if (cli_parse_u64(optarg, 32767, &v) || v < 88)
                return die_usage("--mss wants 88-32767 bytes", optarg);
            k->mss = (int)v;
            break;
        case 's':
            if (cli_parse_u64(optarg, UINT64_MAX - KI_MAX_CLIENTS, &k->seed))
                return die_usage("--seed wants a non-negative integer", optarg);
            break;
        case 'p':
            if (cli_parse_u64(optarg, PRELOAD_MAX, &k->preload))
                return die_usage("--preload wants 0-1000000 people", optarg);
            break;
        case 'm':
            if (cli_parse_mix(optarg, &k->mix))
                return die_usage("--mix wants ADD:DELETE:PRINT[:FIND] "
                                 "weights 0-1000, not all 0", optarg);
            break;
        case 'L': k->lastnames = optarg; break;
        case 't':
            if (cli_parse_seconds(optarg, &k->timeout_s) || k->timeout_s <= 0)
                return die_usage("--timeout wants seconds > 0", optarg);
            break;
        case 'H':
            if (cli_parse_seconds(optarg, &k->hang_s))
                return die_usage("--hang wants seconds", optarg);
            break;
        case 'P':
            if (cli_parse_u64(optarg, 1u << 30, &v) || v == 0)
                return die_usage("--server-pid wants a pid", optarg);
            k->server_pid = (pid_t)v;
            break;
        case 'j': k->json_path = optarg; break;
        case 'c': k->csv_path = optarg; break;
        case 'q': k->quiet = 1; break;
        case 'h': usage(stdout); exit(0);
        case 'V': printf("kill_it %s\n", CLIENT_VERSION); exit(0);
        default: return die_usage("bad option", NULL);
        }
    }
    if (argc - optind != 4)
        return die_usage("wants HOST PORT NEVENTS NCLIENTS", NULL);
    k->host = argv[optind];
    k->port = argv[optind + 1];
    if (cli_parse_u64(k->port, 65535, &v) || v == 0)
        return die_usage("PORT must be 1-65535", k->port);
    if (cli_parse_u64(argv[optind + 2], CLI_EVENTS_MAX, &k->nevents))
        return die_usage("NEVENTS must be a number 0-1000000000",
                         argv[optind + 2]);
    if (cli_parse_u64(argv[optind + 3], KI_MAX_CLIENTS, &v) || v == 0)
        return die_usage("NCLIENTS must be 1-1000", argv[optind + 3]);
    k->nclients = (unsigned)v;
    if (k->nslow == 0 || k->nslow > k->nclients)
        k->nslow = k->nclients;
    return 0;
}

int main(int argc, char **argv)
{
    static struct killit k = {
        .seed = 1, .timeout_s = KI_TIMEOUT_S, .hang_s = KI_HANG_S,
        .mix = GEN_MIX_DEFAULT,
    };
    char err[300];

    int rc = parse_args(&k, argc, argv);
    if (rc)
        return rc;
    signal(SIGPIPE, SIG_IGN);
    if (names_load(&k.names, k.lastnames, err, sizeof(err))) {
        fprintf(stderr, "kill_it: %s\n", err);
        return 2;
    }
    if (k.preload && preload_clashes(&k.names)) {
        fprintf(stderr, "kill_it: --preload: the last-name list has names "
                "starting with %s, which preloading uses\n", PRELOAD_PREFIX);
        ki_cleanup(&k);
        return 2;
    }
    if (k.names.n < k.nclients) {
        fprintf(stderr, "kill_it: %u clients need at least %u last names; "
                "the list has %zu\n", k.nclients, k.nclients, k.names.n);
        ki_cleanup(&k);
        return 2;
    }
    if (digest_global_init() || ki_expected(&k)) {
        fprintf(stderr, "kill_it: cannot compute the expected state "
                "(libcrypto or memory)\n");
        ki_cleanup(&k);
        return 1;
    }
    if (ki_check_start(&k)) {
        printf("FAILED: cannot reach the server at %s:%s\n", k.host, k.port);
        ki_cleanup(&k);
        return 1;
    }
    if (k.preload)
        ki_preload(&k);
    if (ki_run(&k)) {
        ki_cleanup(&k);
        return 1;
    }
    if (!k.hung)                /* a frozen server would not answer */
        ki_check_end(&k);
    ki_judge(&k);

    if (!k.quiet)
        ki_print_table(&k, stdout);
    printf("%s: %s\n", ki_verdict_name(k.verdict), k.reasons);
    fflush(stdout);
    if (k.json_path && ki_write_json(&k, k.json_path))
        fprintf(stderr, "kill_it: cannot write %s\n", k.json_path);
    if (k.csv_path && ki_write_csv(&k, k.csv_path))
        fprintf(stderr, "kill_it: cannot write %s\n", k.csv_path);
    ki_cleanup(&k);
    return k.verdict == KI_VERIFIED ? 0 : k.verdict == KI_FAILED ? 1 : 3;
}
