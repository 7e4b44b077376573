/* cli.h -- ssn-cli, the command-line client for people, in redis-cli's
 * spirit: a prompt with line editing and history, one-shot requests for
 * scripts, a file of requests pipelined (--pipe), a live view of STATS
 * (--stat) and a latency probe (--latency). The files, one job each:
 *
 *   cli_opts.c      the options and the usage text       } pure: in the
 *   cli_text.c      request text: words joined, AUTH told } client library,
 *   cli_statline.c  STATS samples and the --stat line    } tests/check_cli.c
 *   cli_signal.c    Ctrl-C as a request to stop, and naps it cuts short
 *   cli_conn.c      the connection: connect, AUTH, one request, its reply
 *   cli_repl.c      the prompt and its history file (the one file that
 *                   includes libedit)
 *   cli_once.c      a request sent once or repeated, or read from a pipe
 *   cli_pipe.c      --pipe, on the pipelined session (pipeline.h)
 *   cli_stat.c      --stat
 *   cli_latency.c   --latency
 *   ssn_cli.c       main: the password, then the mode
 *
 * Every request goes through ctl.h (one request, its whole reply framed by
 * frame.h) or, for --pipe, pipeline.h: ssn-cli speaks no protocol of its
 * own.
 */
#ifndef SSN_CLIENT_CLI_H
#define SSN_CLIENT_CLI_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "cliutil.h"
#include "ctl.h"

#define CLI_NAME          "ssn-cli"     /* what messages start with */
#define CLI_DEFAULT_HOST  "127.0.0.1"
#define CLI_DEFAULT_PORT  "7777"        /* ssnserver's (server/server.h) */
#define CLI_CONNECT_MS    10000         /* connect time limit */
#define CLI_HINT_MS       2000          /* a late reply's word at the prompt */
#define CLI_REPEAT_MAX    1000000000ll  /* largest -r */
#define CLI_STAT_INTERVAL 1.0           /* --stat's default -i */
#define CLI_LAT_INTERVAL  0.01          /* --latency's default -i (redis-cli's) */
#define CLI_STAT_HEADER_EVERY 20        /* --stat repeats its header so often */
#define CLI_HISTORY_FILE  ".ssn_cli_history"    /* in $HOME */
#define CLI_HISTORY_MAX   1000          /* lines of history kept */

/* What a run does. */
enum cli_mode {
    CLI_MODE_AUTO,              /* no request: a prompt on a terminal, else
                                   one request per line of standard input */
    CLI_MODE_ONCE,              /* the request of the command line (-r) */
    CLI_MODE_PIPE,              /* --pipe */
    CLI_MODE_STAT,              /* --stat */
    CLI_MODE_LATENCY,           /* --latency */
};

/* The command line, parsed. Strings point into argv. */
struct cli_opts {
    const char *host;           /* -h */
    const char *port;           /* -p, checked: 1 to 65535 */
    const char *password_file;  /* --password-file; NULL: SSN_PASSWORD */
    enum cli_mode mode;
    long long repeat;           /* -r: runs of the request; -1: until Ctrl-C */
    double interval_s;          /* -i; < 0 when not given */
    uint64_t count;             /* --count; 0: no limit */
    double timeout_s;           /* --timeout; 0: none */
    char **words;               /* the request's words, nwords of them */
    int nwords;
};

/* ---- cli_opts.c ---------------------------------------------------------- */

extern const struct cli_prog cli_prog;

/* Parses argv into *o. Returns 0, or CLI_EXIT_USAGE after saying what is
 * wrong on stderr (naming the option and its value); --help and --version
 * print and exit 0. May be called again (it resets getopt). */
int cli_parse(struct cli_opts *o, int argc, char **argv);

/* -i as given, or the mode's default: 1 s for --stat, 0.01 s for
 * --latency, 0 between repeats. */
double cli_interval(const struct cli_opts *o);

/* ---- cli_text.c ---------------------------------------------------------- */

/* Joins n words with single spaces into buf (cap bytes) as one request
 * line, its '\n' added. Returns its length with the '\n'; -EINVAL when a
 * word holds a '\n' or '\r' (it would be two requests); -E2BIG when the
 * request would be over PROTO_MAX_LINE bytes. */
int cli_join(char *const *words, int n, char *buf, size_t cap);

/* 1 when line (len bytes) is an AUTH request: its first word, after any
 * blanks, is AUTH in any case. Such lines never reach the history. */
int cli_is_auth(const char *line, size_t len);

/* ---- cli_statline.c -------------------------------------------------------- */

/* The STATS fields --stat shows, from one sample. */
struct cli_stats {
    uint64_t t_ns;              /* when the sample was complete (monotonic) */
    uint64_t commands;          /* commands_total */
    uint64_t entries;           /* entries: people */
    uint64_t clients;           /* connections_current */
    uint64_t lock_acq;          /* lock_acquisitions */
    uint64_t lock_wait_us;      /* lock_wait_us */
    uint64_t lock_hold_us;      /* lock_hold_us */
    unsigned have;              /* CLI_ST_* bits: the fields found */
};

#define CLI_ST_COMMANDS  (1u << 0)
#define CLI_ST_ENTRIES   (1u << 1)
#define CLI_ST_CLIENTS   (1u << 2)
#define CLI_ST_LOCK_ACQ  (1u << 3)
#define CLI_ST_LOCK_WAIT (1u << 4)
#define CLI_ST_LOCK_HOLD (1u << 5)

/* Takes one STATS line ("name value") into s; other names are ignored. */
void cli_stats_take(struct cli_stats *s, const char *line);

/* The header --stat prints every CLI_STAT_HEADER_EVERY lines ('\n' ended). */
extern const char cli_stat_header[];

/* The --stat line for the interval from prev to cur into buf (cap bytes,
 * '\n' ended): people, clients, requests, then requests/s, lock
 * acquisitions/s, lock wait in us per second and the share of the time
 * the lock was held, all from the two samples' differences. A counter that
 * went down (STATS RESET) counts from 0; a field the server did not give
 * shows as "-". Returns buf. */
const char *cli_stat_format(const struct cli_stats *prev,
                            const struct cli_stats *cur, char *buf,
                            size_t cap);

/* ---- cli_signal.c ---------------------------------------------------------- */

/* The first Ctrl-C (SIGINT) asks the running loop to stop: cli_stopped
 * turns 1; a second one, half a second later or more, ends the program at
 * once. */
void cli_stop_on_sigint(void);
int cli_stopped(void);
atomic_int *cli_stop_flag(void);        /* for pl_opts.stop */

/* Sleeps s seconds, or less when a stop is asked for. */
void cli_nap(double s);

/* ---- cli_conn.c ------------------------------------------------------------ */

/* One connection to the server, opened again on demand after it is lost. */
struct cli_conn {
    struct ctl c;
    int open;                   /* c.fd is connected (and AUTH said OK) */
    const char *host, *port;
    const char *password;       /* sent as AUTH on every connect; NULL: no */
    int timeout_ms;             /* per reply (INT_MAX: no limit) */
    void (*hint)(void *arg);    /* a reply late by CLI_HINT_MS (ctl.h) */
    char err[256];              /* why the last call failed */
};

/* What a request got. */
struct cli_reply {
    int cmd;                    /* enum proto_cmd of the request */
    int error;                  /* the reply was an "Error: " line */
    int kind;                   /* enum replykind */
    int auth_required;          /* it was "Error: authentication required" */
    int malformed;              /* a line of it had the wrong shape for its
                                   request (frame.h): counted as an error */
    uint64_t ns;                /* from the request sent to its reply's end */
};

void cli_conn_init(struct cli_conn *k, const struct cli_opts *o,
                   const char *password);

/* Connects and, with a password, sends AUTH. Returns 0, or -1 with the
 * reason in k->err ("cannot connect to HOST:PORT: ..."). */
int cli_conn_open(struct cli_conn *k);

/* Sends one request (len bytes at line, no '\n' needed; a last '\r' is
 * dropped) and prints its reply's lines to out (NULL: nowhere), control
 * bytes shown as '?'. Connects first if need be. Returns 0 with *r filled
 * in; 1 for a blank line, which is not sent (the server would not answer);
 * -1 when the connection failed, or the server had sent lines no request
 * asked for, which would have been read as this one's reply (k->err says
 * why; it is closed, and the next request connects again). After QUIT's
 * reply the connection is closed, as the server closes it. */
int cli_conn_request(struct cli_conn *k, const char *line, size_t len,
                     FILE *out, struct cli_reply *r);

/* Says DONE and closes (bounded by the reply time limit). */
void cli_conn_close(struct cli_conn *k);

/* ---- the modes: each returns the exit status --------------------------- */

int cli_run_repl(const struct cli_opts *o, const char *password);
int cli_run_once(const struct cli_opts *o, const char *password);
int cli_run_lines(const struct cli_opts *o, const char *password, FILE *in);
int cli_run_pipe(const struct cli_opts *o, const char *password);
int cli_run_stat(const struct cli_opts *o, const char *password);
int cli_run_latency(const struct cli_opts *o, const char *password);

#endif
