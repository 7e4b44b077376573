/* kill_it.c -- blasts a server with NCLIENTS pipelined clients at once and
 * says, per client, how long each waited; then checks the server's final
 * state against what the clients' streams must have left behind.
 *
 *   kill_it [options] HOST PORT NEVENTS NCLIENTS
 *
 * Verification needs a server that was empty at the start: client i runs
 * inputgen's stream with seed SEED+i on --shard i/NCLIENTS, so the clients
 * never touch each other's names, and the final state must be the union of
 * their final live sets. With --password-file, every connection it opens
 * (the clients', the preload's, the questions before and after) says AUTH
 * first. Exit status: 0 verified, 1 FAILED, 2 bad arguments, 3 not
 * verified.
 */
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
"the store lock's figures from the server's STATS (it sends STATS RESET\n"
"just before the clients start); then a verdict. When the server was empty at the start, its final COUNT, CHECK\n"
"and DIGEST are compared with the clients' expected final state.\n"
"\n"
"  --rate BYTES      each client reads replies at most this fast (bytes/s)\n"
"  --slow N          only the first N clients get --rate (default, 0: all;\n"
"                    at most NCLIENTS)\n"
"  --rcvbuf BYTES    each client's socket receive buffer\n"
"  --mss BYTES       each client's TCP segment size (default 1460 under\n"
"                    --rate)\n"
"  --seed N          base seed (default 1)\n"
"  --preload N       add N people of its own before the clients start, so\n"
"                    every PRINT is big (verification includes them)\n"
"  --mix MIX         request weights: add=5,delete=5,print=1,find=0 (the\n"
"                    default; parts left out are 0), or A:D:P[:F]\n"
"  --lastnames FILE  last-name list (default: the bundled one)\n"
"  --password-file FILE\n"
"                    send 'AUTH password' first on every connection, the\n"
"                    password being the first line of FILE\n"
"  --timeout SEC     give the clients' run at most SEC seconds (default %.0f)\n"
"  --hang SEC        FAILED when no client gets a whole reply for SEC\n"
"                    seconds while replies are due (default %.0f, 0: off)\n"
"  --server-pid PID  name this pid when the server hangs or dies\n"
"  --json FILE       every figure as JSON\n"
"  --csv FILE        one CSV row per client\n"
"  -q, --quiet       no table (the verdict line is still printed)\n"
"  -h, --help        this text\n"
"  -V, --version     the version\n"
"Exit status: 0 verified, 1 FAILED (or no connection, or AUTH refused),\n"
"2 bad arguments, 3 not verified.\n",
            KI_TIMEOUT_S, KI_HANG_S);
}

static const struct cli_prog prog = { "kill_it", usage };

static int die_usage(const char *msg, const char *arg)
{
    return cli_usage_error(prog.name, msg, arg);
}

/* One option whose value must be checked (c is its getopt letter).
 * Returns NULL, or what a good value is (cliutil.h). */
static const char *value_option(struct killit *k, int c, const char *arg)
{
    uint64_t v;

    switch (c) {
    case 'r': return cli_opt_rate(arg, &k->rate);
    case 'b': return cli_opt_rcvbuf(arg, &k->rcvbuf);
    case 'w':
        if (cli_parse_u64(arg, KI_MAX_CLIENTS, &v))
            return "a number of clients from 0 to 1000";
        k->nslow = (unsigned)v;
        return NULL;
    case 'M': return cli_opt_mss(arg, &k->mss);
    case 's':
        return cli_parse_u64(arg, UINT64_MAX - KI_MAX_CLIENTS, &k->seed)
               ? "a non-negative integer below 2^64 - 1000" : NULL;
    case 'p':
        return cli_parse_u64(arg, PRELOAD_MAX, &k->preload)
               ? "a number of people from 0 to 1000000" : NULL;
    case 'm': return cli_opt_mix(arg, &k->mix);
    case 't':
        return cli_parse_seconds(arg, &k->timeout_s) || k->timeout_s <= 0
               ? "a number of seconds above 0, at most 86400" : NULL;
    case 'H': return cli_opt_hang(arg, &k->hang_s);
    case 'P':
        if (cli_parse_u64(arg, 1u << 30, &v) || v == 0)
            return "a process id from 1 to 1073741824";
        k->server_pid = (pid_t)v;
        return NULL;
    }
    return "an option kill_it knows";     /* not reached: getopt said '?' */
}

/* Options and operands. Returns 0, or the exit status for bad ones;
 * --help and --version exit here (cli_getopt). */
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
        { "password-file", required_argument, NULL, 'A' },
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
    const char *bad;
    uint64_t v;
    int c;

    while ((c = cli_getopt(&prog, argc, argv, "qhV", longopts)) != -1) {
        switch (c) {
        case 'L': k->lastnames = optarg; break;
        case 'A': k->password_file = optarg; break;
        case 'j': k->json_path = optarg; break;
        case 'c': k->csv_path = optarg; break;
        case 'q': k->quiet = 1; break;
        case '?': return CLI_EXIT_USAGE;
        default:
            if ((bad = value_option(k, c, optarg)))
                return cli_bad_opt(prog.name, longopts, c, optarg, bad);
        }
    }
    if (argc - optind != 4)
        return die_usage("wants HOST PORT NEVENTS NCLIENTS", NULL);
    char **arg = argv + optind;
    k->host = arg[0];
    k->port = arg[1];
    if ((bad = cli_arg_port(arg[1])))
        return cli_bad_value(prog.name, "PORT", arg[1], bad);
    if ((bad = cli_arg_events(arg[2], &k->nevents)))
        return cli_bad_value(prog.name, "NEVENTS", arg[2], bad);
    if (cli_parse_u64(arg[3], KI_MAX_CLIENTS, &v) || v == 0)
        return cli_bad_value(prog.name, "NCLIENTS", arg[3],
                             "a number from 1 to 1000");
    k->nclients = (unsigned)v;
    if (k->nslow > k->nclients) {
        char val[16], want[64];
        snprintf(val, sizeof(val), "%u", k->nslow);
        snprintf(want, sizeof(want), "a number of clients up to NCLIENTS "
                 "(%u)", k->nclients);
        return cli_bad_value(prog.name, "--slow", val, want);
    }
    if (k->nslow == 0)
        k->nslow = k->nclients;
    return 0;
}

/* Everything before the run that needs no server: the password, the last
 * names, the preload's room, the expected final state. Returns 0, or the
 * exit status after saying why. */
static int prepare(struct killit *k)
{
    char err[300];

    if (k->password_file &&
        cli_password_load(k->password_file, k->password, sizeof(k->password),
                          err, sizeof(err))) {
        fprintf(stderr, "kill_it: %s\n", err);
        return 1;
    }
    if (names_load(&k->names, k->lastnames, err, sizeof(err))) {
        fprintf(stderr, "kill_it: %s\n", err);
        return 2;
    }
    if (k->preload && preload_clashes(&k->names)) {
        fprintf(stderr, "kill_it: --preload: the last-name list has names "
                "with a '%c', which preloading keeps for its own\n",
                PRELOAD_MARK);
        return 2;
    }
    if (k->names.n < k->nclients) {
        fprintf(stderr, "kill_it: %u clients need at least %u last names; "
                "the list has %zu\n", k->nclients, k->nclients, k->names.n);
        return 2;
    }
    if (digest_global_init() || ki_expected(k)) {
        fprintf(stderr, "kill_it: cannot compute the expected state "
                "(libcrypto or memory)\n");
        return 1;
    }
    return 0;
}

/* The table, the verdict line and the files. */
static void report(const struct killit *k)
{
    if (!k->quiet) {
        ki_print_table(k, stdout);
        ki_print_lock(k, stdout);
    }
    printf("%s: %s\n", ki_verdict_name(k->verdict), k->reasons);
    fflush(stdout);
    if (k->json_path && ki_write_json(k, k->json_path))
        fprintf(stderr, "kill_it: cannot write %s\n", k->json_path);
    if (k->csv_path && ki_write_csv(k, k->csv_path))
        fprintf(stderr, "kill_it: cannot write %s\n", k->csv_path);
}

int main(int argc, char **argv)
{
    static struct killit k = {
        .seed = 1, .timeout_s = KI_TIMEOUT_S, .hang_s = KI_HANG_S,
        .mix = GEN_MIX_DEFAULT,
    };

    int rc = parse_args(&k, argc, argv);
    if (rc)
        return rc;
    signal(SIGPIPE, SIG_IGN);
    if ((rc = prepare(&k)) != 0) {
        ki_cleanup(&k);
        return rc;
    }
    if ((rc = ki_check_start(&k)) != 0) {
        if (rc == -2)
            printf("FAILED: %s\n", k.start_note);
        else
            printf("FAILED: cannot reach the server at %s:%s\n", k.host,
                   k.port);
        ki_cleanup(&k);
        return 1;
    }
    if (k.start_count > 0)
        fprintf(stderr, "kill_it: warning: the server already holds %lld "
                "people, so this run will not be verified (start it afresh, "
                "or DELETE them)\n", k.start_count);
    if (k.preload)
        ki_preload(&k);
    ki_lock_reset(&k);
    if (ki_run(&k)) {
        ki_cleanup(&k);
        return 1;
    }
    if (!k.hung) {              /* a frozen server would not answer */
        ki_lock_read(&k);
        ki_check_end(&k);
    } else {
        k.lock_known = 0;
        snprintf(k.lock_note, sizeof(k.lock_note), "the server hung");
    }
    ki_judge(&k);
    report(&k);
    ki_cleanup(&k);
    return k.verdict == KI_VERIFIED ? 0 : k.verdict == KI_FAILED ? 1 : 3;
}
