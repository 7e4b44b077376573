/* options.c -- parsing ssnserver's command line (options.h). A bad value
 * is answered with one line naming the option and the value, and exit 2. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "journal/journal.h"
#include "lockmode.h"
#include "log.h"
#include "net/budget.h"
#include "options.h"
#include "trace.h"

#define MAX_OUTPUT_MIN  4096    /* a limit must hold any one-line reply */

static const char *prog = "ssnserver";

static void usage(FILE *f, const struct lock_policy *policy)
{
    char total_text[32];

    snprintf(total_text, sizeof(total_text), "%zu MiB",
             budget_default(SSN_DEFAULT_MAX_OUTPUT) >> 20);
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
"  -m, --max-clients N    connections served at once (default %d, lowered\n"
"                         to what the open-file limit allows); one more\n"
"                         gets 'Error: too many connections'\n"
"      --max-output BYTES replies one client may hold unsent, suffix k, m\n"
"                         or g (default %s); past it the client gets\n"
"                         'Error: output limit exceeded' and is disconnected\n"
"      --max-output-total BYTES\n"
"                         replies all clients together may hold unsent\n"
"                         (default: 1/%d of physical memory, here %s, and\n"
"                         at least twice --max-output; 0: no limit); past\n"
"                         it the clients holding the most are disconnected\n"
"      --timeout SECONDS  close a connection idle this long (default 0:\n"
"                         never). In serial and coarse mode an idle client\n"
"                         holds up every other one: this bounds how long\n"
"      --write-timeout SECONDS\n"
"                         end a session whose client accepts no bytes for\n"
"                         this long (default %d; 0: never)\n"
"      --password-file FILE\n"
"                         require 'AUTH password' with the first line of\n"
"                         FILE as the password (never on the command line)\n"
"      --login-grace SECONDS\n"
"                         with a password, close a connection that has not\n"
"                         authenticated this long after connecting\n"
"                         (default %d; 0: never)\n"
"      --max-unauth N     with a password, connections not yet\n"
"                         authenticated at once (default a quarter of\n"
"                         --max-clients, always below it: -m 2 at least);\n"
"                         one more drops the oldest of the address holding\n"
"                         the most, so a client with the password always\n"
"                         gets in\n"
"      --tcp-keepalive SECONDS\n"
"                         probe a silent peer after this long, so one that\n"
"                         vanished is found and freed (default %d; 0: off)\n"
"      --unprotected      allow listening beyond loopback with no password\n"
"      --core-dumps       allow a core file if the server crashes (it holds\n"
"                         every name and SSN; by default the limit is 0)\n"
"      --io MODEL         threads (default: a thread per connection, the\n"
"                         model the lessons are about) or events (worker\n"
"                         threads with an event loop each, memcached's)\n"
"      --batch N          one hold of the store lock covers up to N buffered\n"
"                         ADD, DELETE, FIND and COUNT requests of a client\n"
"                         (default 32; 1 takes the lock for each request)\n"
"      --lock-order ORDER in what order the store lock goes: bounded\n"
"                         (default: a thread that finds it free takes it,\n"
"                         even ahead of waiters, until the holds since the\n"
"                         oldest began waiting add up to 100 us), fifo\n"
"                         (handed over in arrival order:\n"
"                         once, at the cost of a convoy of threads) or\n"
"                         unfair (whoever finds it free; no bound)\n"
"      --unfair-lock      the same as --lock-order unfair\n"
"      --sched POLICY     batch (default: each thread of --io threads runs\n"
"                         as SCHED_BATCH, so a thread woken by its client's\n"
"                         bytes waits for the running one's time slice\n"
"                         instead of preempting it, even inside the store\n"
"                         lock) or normal (the kernel's default); refused\n"
"                         with --io events\n"
"      --uring on|off     on (default): an event worker makes the reads of\n"
"                         a poll's connections, and the sends of their\n"
"                         replies, in one io_uring_enter each (one system\n"
"                         call a connection when the kernel has no\n"
"                         io_uring); refused with --io threads\n"
"      --workers N        worker threads for --io events (default: the\n"
"                         number of CPUs less one, at least 1); refused\n"
"                         with --io threads\n"
"      --journal FILE     append every ADD and DELETE to FILE and replay it\n"
"                         at start-up: a restart loses nothing that was\n"
"                         acknowledged (not in nolock mode)\n"
"      --fsync POLICY     always (sync before each reply; group commit),\n"
"                         everysec (write before replying, sync each\n"
"                         second; default) or no (never sync)\n"
"      --journal-truncate start even when the journal has a damaged record\n"
"                         in the middle: keep what is before it, cut the rest\n"
"      --journal-wake HOW signal (default: one signal per session waiting\n"
"                         for a sync, each on its own condition) or\n"
"                         broadcast (one broadcast wakes every waiter)\n"
"      --journal-compact-min BYTES\n"
"                         rewrite the journal as the live set by itself once\n"
"                         it passes BYTES and twice that set's size (suffix\n"
"                         k, m, g; default 64m; 0: only on COMPACT)\n"
"      --metrics-port PORT\n"
"                         serve GET /metrics (Prometheus's text format:\n"
"                         counters, gauges, latency summaries; never a name\n"
"                         or SSN) on PORT of the --bind address, under the\n"
"                         same protected mode; 0 picks a free port (default:\n"
"                         none). With --password-file a scrape must send the\n"
"                         password (HTTP Basic, any user, or Bearer)\n"
"      --race-window USEC pause inside every tree insert and delete (the\n"
"                         race-condition lab; default 0, no pause)\n"
"      --stdin            serve one session on standard input and output\n"
"                         (a file of requests: signals take their default\n"
"                         action there)\n"
"      --trace FILE       record a timeline of each thread's waits for and\n"
"                         holds of the store lock, reply writes and journal\n"
"                         rounds from start-up, and write it to FILE (0600,\n"
"                         rewritten, never through a symbolic link) at\n"
"                         TRACE STOP or exit, in the Chrome Trace Event\n"
"                         format (open it in ui.perfetto.dev); each thread\n"
"                         keeps its latest %d events, the older counted as\n"
"                         dropped. TRACE START records again, into FILE\n"
"      --trace-file FILE  the same file, but nothing recorded until a\n"
"                         client sends TRACE START (clients never name it)\n"
"  -q, --quiet            with --stdin: no OK or Bye replies (errors and data\n"
"                         still print)\n"
"  -l, --log-level LEVEL  error, warn, info or debug (default info)\n"
"      --log-file PATH    append the log to PATH (default standard error)\n"
"  -h, --help             this text\n"
"  -V, --version          version and lock mode\n"
"\n"
"The first line on standard output is 'listening on ADDR:PORT'; with\n"
"--metrics-port the next is 'metrics on ADDR:PORT'.\n"
"SIGINT or SIGTERM stop the server (exit status 0, or 3 when sessions still\n"
"running had to be abandoned); SIGHUP reopens the log file; SIGUSR1 writes\n"
"the STATS counters to the log; SIGUSR2 and SIGXFSZ are ignored. Exit\n"
"status 1: it could not start; 2: bad options; 4: memory ran out while\n"
"replaying the journal, which is left untouched (give it more memory;\n"
"--journal-truncate would not help).\n",
            prog, policy->name, policy->number, policy->summary,
            SSN_DEFAULT_PORT, SSN_DEFAULT_MAX, SSN_DEFAULT_MAX_OUTPUT_TEXT,
            SSN_OUTPUT_TOTAL_SHARE, total_text,
            SSN_DEFAULT_WRITE_TIMEOUT, SSN_DEFAULT_LOGIN_GRACE,
            SSN_DEFAULT_KEEPALIVE, TRACE_RING_EVENTS);
}

static void bad_value(const char *opt, const char *s, const char *why)
{
    fprintf(stderr, "%s: %s: '%s' %s\nTry '%s --help'.\n",
            prog, opt, s, why, prog);
    exit(2);
}

static long number(const char *opt, const char *s, long lo, long hi)
{
    char why[64];
    char *end;

    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || (*s != '-' && (*s < '0' || *s > '9')))
        bad_value(opt, s, "is not a number");
    if (v < lo || v > hi) {
        snprintf(why, sizeof(why), "is out of range (%ld to %ld)", lo, hi);
        bad_value(opt, s, why);
    }
    return v;
}

/* A byte count with an optional k, m or g (powers of 1024), at least
 * min (4k or 0) and at most 1024g. */
static size_t bytes(const char *opt, const char *s, unsigned long long min)
{
    static const char suffixes[] = "kmg";
    char *end;

    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s < '0' || *s > '9')
        bad_value(opt, s, "is not a size (a number, then k, m or g)");
    const char *suf = *end ? strchr(suffixes, *end | 0x20) : NULL;
    if (*end && (!suf || end[1]))
        bad_value(opt, s, "is not a size (a number, then k, m or g)");
    for (int i = suf ? (int)(suf - suffixes) + 1 : 0; i > 0; i--) {
        if (v > (1ULL << 40))
            bad_value(opt, s, "is too large");
        v *= 1024;
    }
    if (v < min || v > (1ULL << 40))
        bad_value(opt, s, min ? "is out of range (4k to 1024g)"
                              : "is out of range (0 to 1024g)");
    return (size_t)v;
}

enum {
    OPT_RACE = 256, OPT_STDIN, OPT_LOGFILE, OPT_MAXOUT, OPT_TIMEOUT,
    OPT_WTIMEOUT, OPT_PASSFILE, OPT_UNPROTECTED, OPT_IO, OPT_WORKERS,
    OPT_BATCH, OPT_UNFAIR, OPT_LOCKORDER, OPT_SCHED, OPT_URING,
    OPT_JOURNAL, OPT_FSYNC, OPT_JTRUNCATE, OPT_JWAKE, OPT_JCOMPACT,
    OPT_METRICS, OPT_TRACE, OPT_TRACE_FILE, OPT_MAXOUT_TOTAL, OPT_GRACE,
    OPT_MAXUNAUTH, OPT_KEEPALIVE, OPT_COREDUMPS,
};

static const struct option longopts[] = {
    { "port",          required_argument, NULL, 'p' },
    { "bind",          required_argument, NULL, 'b' },
    { "max-clients",   required_argument, NULL, 'm' },
    { "max-output",    required_argument, NULL, OPT_MAXOUT },
    { "max-output-total", required_argument, NULL, OPT_MAXOUT_TOTAL },
    { "login-grace",   required_argument, NULL, OPT_GRACE },
    { "max-unauth",    required_argument, NULL, OPT_MAXUNAUTH },
    { "tcp-keepalive", required_argument, NULL, OPT_KEEPALIVE },
    { "timeout",       required_argument, NULL, OPT_TIMEOUT },
    { "write-timeout", required_argument, NULL, OPT_WTIMEOUT },
    { "password-file", required_argument, NULL, OPT_PASSFILE },
    { "unprotected",   no_argument,       NULL, OPT_UNPROTECTED },
    { "core-dumps",    no_argument,       NULL, OPT_COREDUMPS },
    { "io",            required_argument, NULL, OPT_IO },
    { "workers",       required_argument, NULL, OPT_WORKERS },
    { "batch",         required_argument, NULL, OPT_BATCH },
    { "unfair-lock",   no_argument,       NULL, OPT_UNFAIR },
    { "lock-order",    required_argument, NULL, OPT_LOCKORDER },
    { "sched",         required_argument, NULL, OPT_SCHED },
    { "uring",         required_argument, NULL, OPT_URING },
    { "journal",       required_argument, NULL, OPT_JOURNAL },
    { "fsync",         required_argument, NULL, OPT_FSYNC },
    { "journal-truncate", no_argument,    NULL, OPT_JTRUNCATE },
    { "journal-wake",  required_argument, NULL, OPT_JWAKE },
    { "journal-compact-min", required_argument, NULL, OPT_JCOMPACT },
    { "metrics-port",  required_argument, NULL, OPT_METRICS },
    { "race-window",   required_argument, NULL, OPT_RACE },
    { "trace",         required_argument, NULL, OPT_TRACE },
    { "trace-file",    required_argument, NULL, OPT_TRACE_FILE },
    { "stdin",         no_argument,       NULL, OPT_STDIN },
    { "quiet",         no_argument,       NULL, 'q' },
    { "log-level",     required_argument, NULL, 'l' },
    { "log-file",      required_argument, NULL, OPT_LOGFILE },
    { "help",          no_argument,       NULL, 'h' },
    { "version",       no_argument,       NULL, 'V' },
    { NULL, 0, NULL, 0 },
};

static void set_defaults(struct options *opt)
{
    memset(opt, 0, sizeof(*opt));
    opt->bind = "127.0.0.1";
    opt->port = SSN_DEFAULT_PORT;
    opt->max_clients = SSN_DEFAULT_MAX;
    opt->max_output = SSN_DEFAULT_MAX_OUTPUT;
    opt->write_timeout_s = SSN_DEFAULT_WRITE_TIMEOUT;
    opt->batch = SSN_DEFAULT_BATCH;
    opt->sched_batch = 1;
    opt->uring = 1;
    opt->max_output_total = (size_t)-1;     /* budget_default, once parsed */
    opt->login_grace_s = SSN_DEFAULT_LOGIN_GRACE;
    opt->tcp_keepalive_s = SSN_DEFAULT_KEEPALIVE;
    opt->log_level = LOG_LEVEL_INFO;
    opt->fsync = JOURNAL_FSYNC_EVERYSEC;
    opt->journal_wake = JOURNAL_WAKE_SIGNAL;    /* measured best,
                                                   docs/DURABILITY.md */
    opt->journal_compact_min = 64 << 20;   /* as Redis's auto-aof-rewrite-min-size */
    opt->metrics_port = -1;
    /* One CPU is left to the rest: the listener, the flusher, and on a
     * small machine the clients. On 2 CPUs one worker, whose rounds answer
     * a pass's connections together, wins or ties two in every cell
     * tried: two sleep and wake more and meet at the store lock
     * (docs/PERFORMANCE.md, "One worker or two"). */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    opt->workers = cpus > 1 && cpus <= 257 ? (int)cpus - 1 : 1;
}

/* Applies one option getopt_long returned; exits for --help, --version
 * and anything wrong. */
static void apply(int c, struct options *opt, const struct lock_policy *policy)
{
    switch (c) {
    case 'p': opt->port = (int)number("--port", optarg, 0, 65535); break;
    case 'b': opt->bind = optarg; break;
    case 'm':
        opt->max_clients = number("--max-clients", optarg, 1, 1000000);
        break;
    case OPT_MAXOUT: opt->max_output = bytes("--max-output", optarg, MAX_OUTPUT_MIN); break;
    case OPT_MAXOUT_TOTAL:
        opt->max_output_total = bytes("--max-output-total", optarg, 0);
        if (opt->max_output_total && opt->max_output_total < MAX_OUTPUT_MIN)
            bad_value("--max-output-total", optarg, "is out of range (0 "
                      "for no limit, else 4k to 1024g: below 4k no client "
                      "could hold a reply)");
        break;
    case OPT_GRACE:
        opt->login_grace_s = number("--login-grace", optarg, 0, 86400);
        break;
    case OPT_MAXUNAUTH:
        opt->max_unauth = number("--max-unauth", optarg, 1, 1000000);
        break;
    case OPT_KEEPALIVE:
        opt->tcp_keepalive_s = number("--tcp-keepalive", optarg, 0, 86400);
        break;
    case OPT_TIMEOUT:
        opt->idle_timeout_s = number("--timeout", optarg, 0, 86400 * 365);
        break;
    case OPT_WTIMEOUT:
        opt->write_timeout_s = number("--write-timeout", optarg, 0,
                                      86400 * 365);
        break;
    case OPT_RACE:
        opt->race_window_us = number("--race-window", optarg, 0, 10000000);
        break;
    case OPT_STDIN: opt->use_stdin = 1; break;
    case 'q': opt->quiet = 1; break;
    case 'l':
        opt->log_level = log_level_parse(optarg);
        if (opt->log_level < 0)
            bad_value("--log-level", optarg,
                      "is not a level (error, warn, info or debug)");
        break;
    case OPT_LOGFILE: opt->log_file = optarg; break;
    case OPT_PASSFILE: opt->password_file = optarg; break;
    case OPT_UNPROTECTED: opt->unprotected = 1; break;
    case OPT_COREDUMPS: opt->core_dumps = 1; break;
    case OPT_UNFAIR: opt->lock_order = STORE_LOCK_UNFAIR; break;
    case OPT_LOCKORDER:
        opt->lock_order = store_lock_order_parse(optarg);
        if (opt->lock_order < 0)
            bad_value("--lock-order", optarg, "is not an order (bounded, "
                      "fifo or unfair)");
        break;
    case OPT_IO:
        if (strcmp(optarg, "threads") && strcmp(optarg, "events"))
            bad_value("--io", optarg, "is not an I/O model (threads or "
                      "events)");
        opt->io_events = strcmp(optarg, "events") == 0;
        break;
    case OPT_SCHED:
        if (strcmp(optarg, "batch") && strcmp(optarg, "normal"))
            bad_value("--sched", optarg, "is not a policy (batch or normal)");
        opt->sched_batch = strcmp(optarg, "batch") == 0;
        opt->sched_given = 1;
        break;
    case OPT_URING:
        if (strcmp(optarg, "on") && strcmp(optarg, "off"))
            bad_value("--uring", optarg, "is not on or off");
        opt->uring = strcmp(optarg, "on") == 0;
        opt->uring_given = 1;
        break;
    case OPT_BATCH:
        opt->batch = (int)number("--batch", optarg, 1, 1024);
        break;
    case OPT_WORKERS:
        opt->workers = (int)number("--workers", optarg, 1, 256);
        opt->workers_given = 1;
        break;
    case OPT_JOURNAL: opt->journal = optarg; break;
    case OPT_FSYNC:
        opt->fsync = journal_fsync_parse(optarg);
        if (opt->fsync < 0)
            bad_value("--fsync", optarg, "is not a policy (always, everysec "
                      "or no)");
        break;
    case OPT_JTRUNCATE: opt->journal_truncate = 1; break;
    case OPT_JWAKE:
        opt->journal_wake = journal_wake_parse(optarg);
        if (opt->journal_wake < 0)
            bad_value("--journal-wake", optarg, "is not a wake-up "
                      "(broadcast or signal)");
        break;
    case OPT_METRICS:
        opt->metrics_port = (int)number("--metrics-port", optarg, 0, 65535);
        break;
    case OPT_TRACE: opt->trace = optarg; break;
    case OPT_TRACE_FILE: opt->trace_file = optarg; break;
    case OPT_JCOMPACT:
        opt->journal_compact_min = bytes("--journal-compact-min", optarg, 0);
        break;
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

/* The files the server writes or reads its secret from are four: no two
 * of --journal, --log-file, --trace (or --trace-file) and --password-file
 * may be one file, by name or by a link (the log went into an empty
 * journal, a trace over the password file). */
static void same_files(const struct options *opt)
{
    const struct { const char *opt, *path; } f[] = {
        { "--journal", opt->journal },
        { "--log-file", opt->log_file },
        { opt->trace ? "--trace" : "--trace-file",
          opt->trace ? opt->trace : opt->trace_file },
        { "--password-file", opt->password_file },
    };
    struct stat st[4];
    int have[4];

    for (int i = 0; i < 4; i++)
        have[i] = f[i].path && stat(f[i].path, &st[i]) == 0;
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) {
            if (!f[i].path || !f[j].path)
                continue;
            if (strcmp(f[i].path, f[j].path) == 0 ||
                (have[i] && have[j] && st[i].st_dev == st[j].st_dev &&
                 st[i].st_ino == st[j].st_ino)) {
                fprintf(stderr, "%s: %s and %s name the same file (%s)\n",
                        prog, f[i].opt, f[j].opt, f[j].path);
                exit(2);
            }
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
        opt->port = (int)number("PORT", argv[optind++], 0, 65535);
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\nTry '%s --help'.\n",
                prog, argv[optind], prog);
        exit(2);
    }
    if (opt->max_output_total == (size_t)-1)
        opt->max_output_total = budget_default(opt->max_output);
    if (opt->password_file && opt->max_clients < 2) {
        fprintf(stderr, "%s: --max-clients: 1 with --password-file: a "
                "connection that has not given the password would fill it, "
                "and one with the password could never get in (2 or more)\n",
                prog);
        exit(2);
    }
    if (opt->max_unauth && opt->max_unauth >= opt->max_clients) {
        fprintf(stderr, "%s: --max-unauth: %ld is not below --max-clients "
                "(%ld): a client with the password must always have room\n",
                prog, opt->max_unauth, opt->max_clients);
        exit(2);
    }
    if (opt->journal && policy->journal_refusal) {
        fprintf(stderr, "%s: --journal: %s\n", prog, policy->journal_refusal);
        exit(2);
    }
    same_files(opt);
    if (opt->trace && opt->trace_file) {
        fprintf(stderr, "%s: --trace and --trace-file: give one (--trace "
                "records from start-up, --trace-file from TRACE START)\n",
                prog);
        exit(2);
    }
    if (opt->sched_given && opt->io_events) {
        fprintf(stderr, "%s: --sched works only with --io threads (event "
                "workers keep the kernel's policy)\n", prog);
        exit(2);
    }
    if (opt->uring_given && !opt->io_events) {
        fprintf(stderr, "%s: --uring works only with --io events (a thread "
                "per connection makes its own calls)\n", prog);
        exit(2);
    }
    if (opt->workers_given && !opt->io_events) {
        fprintf(stderr, "%s: --workers works only with --io events (--io "
                "threads runs a thread per connection)\n", prog);
        exit(2);
    }
    if (opt->quiet && !opt->use_stdin) {
        fprintf(stderr, "%s: --quiet works only with --stdin (over TCP every "
                "request gets its reply)\n", prog);
        exit(2);
    }
}
