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
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "cliutil.h"
#include "ctl.h"
#include "expect.h"
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

static void reason(struct killit *k, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void reason(struct killit *k, const char *fmt, ...)
{
    size_t len = strlen(k->reasons);
    if (len + 3 >= sizeof(k->reasons))
        return;
    if (len)
        len += (size_t)snprintf(k->reasons + len, sizeof(k->reasons) - len,
                                "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->reasons + len, sizeof(k->reasons) - len, fmt, ap);
    va_end(ap);
}

static int ctl_timeout_ms(const struct killit *k)
{
    double s = k->hang_s > 0 ? k->hang_s : k->timeout_s;
    return s > 0 ? (int)(s * 1000) : 10000;
}

static int is_local(const char *host)
{
    return strcmp(host, "localhost") == 0 || strcmp(host, "::1") == 0 ||
           strncmp(host, "127.", 4) == 0;
}

/* COUNT before the run: is verification possible? Returns -1 when the
 * server cannot be reached at all. */
static int check_start(struct killit *k)
{
    struct ctl c;
    char reply[CTL_REPLY_MAX];

    k->start_count = -1;
    if (!k->server_pid && is_local(k->host))
        k->server_pid = ki_find_listener((unsigned)atoi(k->port));
    if (ctl_open(&c, k->host, k->port, ctl_timeout_ms(k))) {
        fprintf(stderr, "kill_it: %s\n", c.err);
        return -1;
    }
    if (ctl_query(&c, "COUNT", reply, sizeof(reply))) {
        snprintf(k->start_note, sizeof(k->start_note), "COUNT failed: %.150s",
                 c.err);
        ctl_abandon(&c);
        return 0;
    } else if (reply[0] < '0' || reply[0] > '9' || strlen(reply) > 18)
        snprintf(k->start_note, sizeof(k->start_note),
                 "COUNT replied '%.60s'", reply);
    else
        k->start_count = atoll(reply);
    ctl_close(&c);
    return 0;
}

static void check_end(struct killit *k)
{
    struct ctl c;
    char reply[CTL_REPLY_MAX];

    k->end_count = -1;
    if (ctl_open(&c, k->host, k->port, ctl_timeout_ms(k))) {
        snprintf(k->end_check, sizeof(k->end_check), "%.190s", c.err);
        return;
    }
    /* Each question is asked only if the one before was answered: a
     * server that stopped answering costs one time limit, not four. */
    int rc = ctl_query(&c, "COUNT", reply, sizeof(reply));
    if (rc == 0 && reply[0] >= '0' && reply[0] <= '9')
        k->end_count = atoll(reply);
    if (rc == 0)
        rc = ctl_query(&c, "CHECK", reply, sizeof(reply));
    if (rc == 0) {
        snprintf(k->end_check, sizeof(k->end_check), "%.190s", reply);
        k->server_reachable = 1;
    } else {
        snprintf(k->end_check, sizeof(k->end_check), "no reply: %.180s",
                 c.err);
    }
    if (rc == 0 && ctl_query(&c, "DIGEST", reply, sizeof(reply)) == 0)
        snprintf(k->end_digest, sizeof(k->end_digest), "%.190s", reply);
    if (rc == 0)
        ctl_close(&c);
    else
        ctl_abandon(&c);
}

/* Adds the --preload people in one pipelined session of our own, closed
 * before any client starts. */
static void run_preload(struct killit *k)
{
    struct preload_source ps;
    struct pl_source src;
    struct pl_result r;
    struct pl_opts o = {
        .host = k->host, .port = k->port,
        .timeout_s = k->timeout_s, .hang_s = k->hang_s,
    };

    pl_source_preload(&src, &ps, k->preload);
    if (pl_run(&o, &src, &r, NULL))
        snprintf(k->preload_fail, sizeof(k->preload_fail), "%.200s",
                 r.what);
    else if (r.errors || r.bad)
        snprintf(k->preload_fail, sizeof(k->preload_fail),
                 "%llu of its ADDs failed", (unsigned long long)(r.errors +
                                                                 r.bad));
}

/* The union of every client's final live set, from their streams. */
static int compute_expected(struct killit *k)
{
    struct expect x;
    int rc = 0;

    expect_init(&x);
    for (uint64_t i = 0; i < k->preload && rc == 0; i++) {
        struct entry e;
        preload_entry(i, &e);
        rc = expect_add_entry(&x, &e);
    }
    for (unsigned i = 0; i < k->nclients && rc == 0; i++) {
        struct gen g;
        struct gen_opts go = {
            .nevents = k->nevents, .seed = k->seed + i,
            .shard_k = i, .shard_n = k->nclients, .mix = k->mix,
        };
        rc = gen_init(&g, &k->names, &go);
        if (rc == 0) {
            gen_run_to_end(&g);
            rc = expect_add(&x, &g);
            gen_destroy(&g);
        }
    }
    if (rc == 0) {
        expect_sort(&x);
        k->expect_count = x.n;
        rc = expect_digest(&x, k->expect_digest);
    }
    expect_free(&x);
    return rc;
}

static void server_hint(struct killit *k, char *buf, size_t len)
{
    if (k->server_pid)
        snprintf(buf, len, "server pid %ld", (long)k->server_pid);
    else
        snprintf(buf, len, "find its pid with: ss -ltnp 'sport = :%s'",
                 k->port);
}

/* What went wrong on the clients' side: hang, time-out, crashes, resets. */
static void judge_clients(struct killit *k, uint64_t *errors, uint64_t *bad)
{
    char hint[96];
    unsigned byfail[PL_ERR_INTERNAL + 1] = { 0 }, crashed = 0;
    const char *what[PL_ERR_INTERNAL + 1] = { 0 };

    if (k->hung) {
        server_hint(k, hint, sizeof(hint));
        reason(k, "server hung: no reply for %.0f s with %llu requests "
               "outstanding (%s)", k->hang_s,
               (unsigned long long)k->hung_outstanding, hint);
    }
    if (k->timed_out)
        reason(k, "the run took longer than %.0f s (--timeout)", k->timeout_s);
    if (k->interrupted)
        reason(k, "interrupted");
    for (unsigned i = 0; i < k->nclients; i++) {
        struct ki_slot *s = &k->slot[i];
        if (!atomic_load(&s->done)) {
            if (!k->hung && !k->timed_out && !k->interrupted)
                crashed++;
            continue;
        }
        *errors += s->res.errors;
        *bad += s->res.bad;
        if (s->res.fail != PL_OK) {
            byfail[s->res.fail]++;
            what[s->res.fail] = s->res.what;
        }
    }
    if (crashed)
        reason(k, "%u client%s died before reporting", crashed,
               crashed > 1 ? "s" : "");
    for (int f = PL_ERR_CONNECT; f <= PL_ERR_INTERNAL; f++)
        if (byfail[f] && !(f == PL_ERR_TIMEOUT && k->timed_out))
            reason(k, "%u client%s: %s", byfail[f], byfail[f] > 1 ? "s" : "",
                   what[f]);
}

static void judge(struct killit *k)
{
    uint64_t errors = 0, bad = 0;
    if (k->preload_fail[0])
        reason(k, "preloading %llu people failed: %s",
               (unsigned long long)k->preload, k->preload_fail);
    judge_clients(k, &errors, &bad);
    int clients_ok = k->reasons[0] == '\0';

    if (k->hung) {
        /* judge_clients said it; the server was not asked again */
    } else if (!k->server_reachable) {
        if (k->server_pid && kill(k->server_pid, 0) < 0 && errno == ESRCH)
            reason(k, "server died (pid %ld is gone): %s",
                   (long)k->server_pid, k->end_check);
        else
            reason(k, "server died or stopped answering: %s", k->end_check);
    } else if (strncmp(k->end_check, "OK", 2) != 0) {
        reason(k, "tree invariant broken: CHECK said '%s'", k->end_check);
    }
    if (bad)
        reason(k, "%llu garbage replies", (unsigned long long)bad);

    if (k->start_count != 0) {
        if (k->reasons[0]) {
            k->verdict = KI_FAILED;
            return;
        }
        k->verdict = KI_NOT_VERIFIED;
        if (k->start_count > 0)
            reason(k, "the server held %lld entries when the run began "
                   "(verification needs an empty server)", k->start_count);
        else
            reason(k, "%s", k->start_note);
        return;
    }
    if (errors)
        reason(k, "%llu Error: replies (none expected: clients never "
               "share names)", (unsigned long long)errors);
    if (clients_ok && k->server_reachable) {
        long long want = (long long)k->expect_count;
        if (k->end_count < 0)
            reason(k, "COUNT gave no number after the run");
        else if (k->end_count < want)
            reason(k, "lost %lld entries (expected %lld, server has %lld)",
                   want - k->end_count, want, k->end_count);
        else if (k->end_count > want)
            reason(k, "%lld extra entries (expected %lld, server has %lld)",
                   k->end_count - want, want, k->end_count);
        if (strcmp(k->end_digest, k->expect_digest) != 0)
            reason(k, "digest differs: expected %.16s..., server says %.20s",
                   k->expect_digest, k->end_digest[0] ? k->end_digest :
                   "nothing");
    }
    k->verdict = k->reasons[0] ? KI_FAILED : KI_VERIFIED;
    if (k->verdict == KI_VERIFIED)
        reason(k, "%zu entries, digest matches", k->expect_count);
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
    if (digest_global_init() || compute_expected(&k)) {
        fprintf(stderr, "kill_it: cannot compute the expected state "
                "(libcrypto or memory)\n");
        ki_cleanup(&k);
        return 1;
    }
    if (check_start(&k)) {
        printf("FAILED: cannot reach the server at %s:%s\n", k.host, k.port);
        ki_cleanup(&k);
        return 1;
    }
    if (k.preload)
        run_preload(&k);
    if (ki_run(&k)) {
        ki_cleanup(&k);
        return 1;
    }
    if (!k.hung)                /* a frozen server would not answer */
        check_end(&k);
    judge(&k);

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
