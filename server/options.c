/* options.c -- parsing ssnserver's command line (options.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lockmode.h"
#include "log.h"
#include "options.h"

static const char *prog = "ssnserver";

static void usage(FILE *f, const struct lock_policy *policy)
{
    fprintf(f,
"usage: %s [options] [PORT]\n"
"\n"
"A red-black tree of people (name, age, SSN) served over a line protocol\n"
"(try: telnet 127.0.0.1 PORT, then HELP).\n"
"\n"
"This build's lock mode: %s (ssnserver%d)\n"
"  %s\n"
"\n"
"options:\n"
"  -p, --port PORT        port to listen on; 0 picks a free one (default %d)\n"
"  -b, --bind ADDR        address to listen on (default 127.0.0.1)\n"
"  -m, --max-clients N    connections served at once (default %d); one more\n"
"                         gets 'Error: too many connections'\n"
"      --race-window USEC pause inside every tree insert and delete (the\n"
"                         race-condition lab; default 0, no pause)\n"
"      --stdin            serve one session on standard input and output\n"
"  -q, --quiet            no OK or Bye replies (errors and data still print)\n"
"  -l, --log-level LEVEL  error, warn, info or debug (default info)\n"
"      --log-file PATH    append the log to PATH (default standard error)\n"
"  -h, --help             this text\n"
"  -V, --version          version and lock mode\n"
"\n"
"The first line on standard output is 'listening on ADDR:PORT'.\n"
"SIGINT or SIGTERM stop the server cleanly.\n",
            prog, policy->name, policy->number, policy->summary,
            SSN_DEFAULT_PORT, SSN_DEFAULT_MAX);
}

static long number(const char *what, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: bad %s '%s' (want %ld to %ld)\n",
                prog, what, s, lo, hi);
        exit(2);
    }
    return v;
}

enum { OPT_RACE = 256, OPT_STDIN, OPT_LOGFILE };

static const struct option longopts[] = {
    { "port",        required_argument, NULL, 'p' },
    { "bind",        required_argument, NULL, 'b' },
    { "max-clients", required_argument, NULL, 'm' },
    { "race-window", required_argument, NULL, OPT_RACE },
    { "stdin",       no_argument,       NULL, OPT_STDIN },
    { "quiet",       no_argument,       NULL, 'q' },
    { "log-level",   required_argument, NULL, 'l' },
    { "log-file",    required_argument, NULL, OPT_LOGFILE },
    { "help",        no_argument,       NULL, 'h' },
    { "version",     no_argument,       NULL, 'V' },
    { NULL, 0, NULL, 0 },
};

static void set_defaults(struct options *opt)
{
    memset(opt, 0, sizeof(*opt));
    opt->bind = "127.0.0.1";
    opt->port = SSN_DEFAULT_PORT;
    opt->max_clients = SSN_DEFAULT_MAX;
    opt->log_level = LOG_LEVEL_INFO;
}

/* Applies one option getopt_long returned; exits for --help, --version
 * and anything wrong. */
static void apply(int c, struct options *opt, const struct lock_policy *policy)
{
    switch (c) {
    case 'p': opt->port = (int)number("port", optarg, 0, 65535); break;
    case 'b': opt->bind = optarg; break;
    case 'm': opt->max_clients = number("max-clients", optarg, 1, 1000000);
              break;
    case OPT_RACE:
        opt->race_window_us = number("race window", optarg, 0, 10000000);
        break;
    case OPT_STDIN: opt->use_stdin = 1; break;
    case 'q': opt->quiet = 1; break;
    case 'l':
        opt->log_level = log_level_parse(optarg);
        if (opt->log_level < 0) {
            fprintf(stderr, "%s: bad log level '%s' (want error, warn, "
                    "info or debug)\n", prog, optarg);
            exit(2);
        }
        break;
    case OPT_LOGFILE: opt->log_file = optarg; break;
    case 'h': usage(stdout, policy); exit(0);
    case 'V':
        printf("ssnserver %s, lock mode %s (ssnserver%d)\n",
               SSN_VERSION, policy->name, policy->number);
        exit(0);
    default:
        fprintf(stderr, "Try '%s --help'.\n", prog);
        exit(2);
    }
}

void options_parse(int argc, char **argv, struct options *opt,
                   const struct lock_policy *policy)
{
    int c;

    if (argv[0] && strrchr(argv[0], '/'))
        prog = strrchr(argv[0], '/') + 1;
    else if (argv[0])
        prog = argv[0];
    set_defaults(opt);
    while ((c = getopt_long(argc, argv, "p:b:m:ql:hV", longopts, NULL)) != -1)
        apply(c, opt, policy);
    if (optind < argc)
        opt->port = (int)number("port", argv[optind++], 0, 65535);
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\nTry '%s --help'.\n",
                prog, argv[optind], prog);
        exit(2);
    }
}
