/* cli_opts.c -- ssn-cli's command line (cli.h): the options, the checks
 * between them, and the usage text. Value parsers and complaints are the
 * suite's (cliutil.h); like redis-cli, -h is the host and the options end
 * at the first word of the request. No I/O but the complaints.
 */
#include <errno.h>
#include <string.h>
#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
"usage: ssn-cli [options] [REQUEST [WORD...]]\n"
"Talks to ssnserver. With a request on the command line, sends it (its\n"
"words joined by spaces) and prints the reply. Without one: a prompt with\n"
"line editing and history when standard input is a terminal, else one\n"
"request per line of standard input.\n"
"\n"
"  -h, --host HOST       the server's address (default %s)\n"
"  -p, --port PORT       the server's port (default %s)\n"
"  -r, --repeat N        send the request N times (-1: until Ctrl-C)\n"
"  -i, --interval SEC    seconds between repeats, --stat lines (default 1)\n"
"                        or --latency samples (default 0.01); fractions\n"
"                        allowed\n"
"  --pipe                send standard input's requests pipelined, then\n"
"                        count the replies: ok, not found, exists, errors\n"
"  --stat                a line per interval from STATS: people, clients,\n"
"                        requests/s, lock acquisitions/s, lock wait, lock\n"
"                        held\n"
"  --latency             time COUNT requests: min, avg, p50, p99 and max in\n"
"                        ms, until Ctrl-C\n"
"  --count N             stop --latency after N samples, --stat after N\n"
"                        lines\n"
"  --password-file FILE  send AUTH first, the password being FILE's first\n"
"                        line (or set SSN_PASSWORD; never on the command\n"
"                        line)\n"
"  --timeout SEC         give up on a reply after SEC seconds (default:\n"
"                        never)\n"
"  --help                this text\n"
"  -V, --version         the version\n"
"Exit status: 0 when every reply was a normal one; 1 when a reply was an\n"
"'Error: ...' line (--pipe: a real error, not 'not found' or 'exists'),\n"
"or the server could not be reached; 2 for bad arguments.\n",
            CLI_DEFAULT_HOST, CLI_DEFAULT_PORT);
}

const struct cli_prog cli_prog = { CLI_NAME, usage };

static const struct option longopts[] = {
    { "host", required_argument, NULL, 'h' },
    { "port", required_argument, NULL, 'p' },
    { "repeat", required_argument, NULL, 'r' },
    { "interval", required_argument, NULL, 'i' },
    { "pipe", no_argument, NULL, 'P' },
    { "stat", no_argument, NULL, 'S' },
    { "latency", no_argument, NULL, 'L' },
    { "count", required_argument, NULL, 'c' },
    { "password-file", required_argument, NULL, 'A' },
    { "timeout", required_argument, NULL, 't' },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 },
};

/* -r: "-1", or 1 to CLI_REPEAT_MAX. */
static const char *opt_repeat(const char *arg, long long *out)
{
    uint64_t v;
    if (strcmp(arg, "-1") == 0) {
        *out = -1;
        return NULL;
    }
    if (cli_parse_u64(arg, (uint64_t)CLI_REPEAT_MAX, &v) || v == 0)
        return "a number of runs from 1 to 1000000000, or -1 (until Ctrl-C)";
    *out = (long long)v;
    return NULL;
}

/* A mode option: only one of them. */
static int set_mode(struct cli_opts *o, enum cli_mode m)
{
    if (o->mode != CLI_MODE_AUTO && o->mode != m)
        return cli_usage_error(cli_prog.name, "--pipe, --stat and --latency "
                               "go one at a time", NULL);
    o->mode = m;
    return 0;
}

static int parse_options(struct cli_opts *o, int argc, char **argv)
{
    int c, rc;

    /* "+": the options end at the request's first word, so a word that
     * starts with '-' is never taken for one. */
    while ((c = cli_getopt(&cli_prog, argc, argv, "+h:p:r:i:V",
                           longopts)) != -1) {
        const char *bad = NULL;
        switch (c) {
        case 'h':
            if (!*optarg)
                bad = "a host name or address";
            o->host = optarg;
            break;
        case 'p':
            bad = cli_arg_port(optarg);
            o->port = optarg;
            break;
        case 'r': bad = opt_repeat(optarg, &o->repeat); break;
        case 'i':
            if (cli_parse_seconds(optarg, &o->interval_s))
                bad = "a number of seconds from 0 to 86400";
            break;
        case 'c':
            if (cli_parse_u64(optarg, CLI_EVENTS_MAX, &o->count) ||
                o->count == 0)
                bad = "a number from 1 to 1000000000";
            break;
        case 't':
            if (cli_parse_seconds(optarg, &o->timeout_s))
                bad = "a number of seconds from 0 to 86400";
            break;
        case 'A': o->password_file = optarg; break;
        case 'P':
        case 'S':
        case 'L':
            rc = set_mode(o, c == 'P' ? CLI_MODE_PIPE : c == 'S'
                          ? CLI_MODE_STAT : CLI_MODE_LATENCY);
            if (rc)
                return rc;
            break;
        default:
            return CLI_EXIT_USAGE;
        }
        if (bad)
            return cli_bad_opt(cli_prog.name, longopts, c, optarg, bad);
    }
    return 0;
}

/* The options that only make sense together. */
static int check_combination(struct cli_opts *o, int repeat_given)
{
    const char *prog = cli_prog.name;

    if (o->nwords > 0 && o->mode != CLI_MODE_AUTO)
        return cli_usage_error(prog, o->mode == CLI_MODE_PIPE
            ? "--pipe takes its requests from standard input, not the "
              "command line" : "--stat and --latency take no request",
            o->words[0]);
    if (o->nwords > 0)
        o->mode = CLI_MODE_ONCE;
    if (repeat_given && o->mode != CLI_MODE_ONCE)
        return cli_usage_error(prog, "-r repeats a request: give one after "
                               "the options", NULL);
    if (o->interval_s >= 0 && !repeat_given &&
        o->mode != CLI_MODE_STAT && o->mode != CLI_MODE_LATENCY)
        return cli_usage_error(prog, "-i goes with -r, --stat or --latency",
                               NULL);
    if (o->count && o->mode != CLI_MODE_STAT && o->mode != CLI_MODE_LATENCY)
        return cli_usage_error(prog, "--count goes with --stat or "
                               "--latency", NULL);
    return 0;
}

int cli_parse(struct cli_opts *o, int argc, char **argv)
{
    *o = (struct cli_opts){
        .host = CLI_DEFAULT_HOST, .port = CLI_DEFAULT_PORT,
        .mode = CLI_MODE_AUTO, .repeat = 0, .interval_s = -1,
    };
    optind = 0;                 /* GNU: start afresh, "+" included */
    int rc = parse_options(o, argc, argv);
    if (rc)
        return rc;
    int repeat_given = o->repeat != 0;      /* opt_repeat never gives 0 */
    if (!repeat_given)
        o->repeat = 1;
    o->words = argv + optind;
    o->nwords = argc - optind;
    return check_combination(o, repeat_given);
}

double cli_interval(const struct cli_opts *o)
{
    if (o->interval_s >= 0)
        return o->interval_s;
    return o->mode == CLI_MODE_STAT ? CLI_STAT_INTERVAL
         : o->mode == CLI_MODE_LATENCY ? CLI_LAT_INTERVAL : 0;
}
