/* cli_latency.c -- ssn-cli --latency (cli.h): COUNT, the cheapest request,
 * sent in a loop on one connection, each round trip timed into a histogram
 * (hist.h); min, avg, p50, p99 and max in ms on one line, rewritten in
 * place on a terminal, printed once at the end otherwise. Until Ctrl-C or
 * --count samples.
 *
 * The connection stays open, as redis-cli's does, so the time measured is
 * the request's and not a connect's; against a coarse or serial server it
 * therefore holds the store lock or the only slot while it runs.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "hist.h"
#include "proto.h"
#include "timeutil.h"

#define CLI_LAT_REDRAW_NS (100 * TIME_NS_PER_MS)   /* a terminal's line, at
                                                      most so often */

static void print_summary(FILE *f, const struct hist *h)
{
    char v[5][24];

    fprintf(f, "min: %s, avg: %s, p50: %s, p99: %s, max: %s ms "
            "(%llu samples)",
            hist_fmt3(time_ns_to_ms(h->count ? h->min : 0), v[0],
                      sizeof(v[0])),
            hist_fmt3(hist_mean(h) / 1e6, v[1], sizeof(v[1])),
            hist_fmt3(time_ns_to_ms(hist_percentile(h, 50)), v[2],
                      sizeof(v[2])),
            hist_fmt3(time_ns_to_ms(hist_percentile(h, 99)), v[3],
                      sizeof(v[3])),
            hist_fmt3(time_ns_to_ms(h->max), v[4], sizeof(v[4])),
            (unsigned long long)h->count);
}

int cli_run_latency(const struct cli_opts *o, const char *password)
{
    static struct hist h;       /* 15 KiB: not on the stack */
    struct cli_conn k;
    struct cli_reply r;
    int tty = isatty(STDOUT_FILENO);
    uint64_t drawn = 0;
    double interval = cli_interval(o);
    int status = 0;

    hist_init(&h);
    cli_conn_init(&k, o, password);
    if (cli_conn_open(&k) < 0) {
        fprintf(stderr, "%s: %s\n", CLI_NAME, k.err);
        return 1;
    }
    cli_stop_on_sigint();
    while (!cli_stopped() && (o->count == 0 || h.count < o->count)) {
        if (h.count > 0)
            cli_nap(interval);
        if (cli_stopped())
            break;
        if (cli_conn_request(&k, "COUNT", 5, NULL, &r) < 0) {
            fprintf(stderr, "%s%s: %s\n", tty && h.count ? "\n" : "",
                    CLI_NAME, k.err);
            return 1;
        }
        uint64_t t1 = time_now_ns();
        if (r.error) {
            fprintf(stderr, "%s%s: COUNT got %s%s\n",
                    tty && h.count ? "\n" : "", CLI_NAME, r.malformed
                    ? "a reply that is no count" : "an error reply",
                    r.auth_required
                    ? " (the server wants a password: --password-file FILE"
                      " or SSN_PASSWORD)" : "");
            status = 1;
            break;
        }
        hist_record(&h, r.ns);          /* the request's own time */
        if (tty && t1 - drawn >= CLI_LAT_REDRAW_NS) {
            fputs("\r\033[K", stdout);      /* back to the line's start */
            print_summary(stdout, &h);
            fflush(stdout);
            drawn = t1;
        }
    }
    if (tty)
        fputs("\r\033[K", stdout);
    if (h.count)
        print_summary(stdout, &h);
    if (h.count || tty)
        putchar('\n');
    cli_conn_close(&k);
    return status;
}
