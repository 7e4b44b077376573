/* cli_stat.c -- ssn-cli --stat (cli.h): a line per interval made from two
 * STATS samples (cli_statline.c), with the header again every
 * CLI_STAT_HEADER_EVERY lines, until Ctrl-C or --count lines.
 *
 * Each sample is a connection of its own: connect, AUTH, STATS, DONE.
 * A connection kept open would hold a serial server's only slot, or a
 * coarse server's store lock, for as long as --stat runs: the very server
 * being watched would stop. Four round trips a second cost nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "net.h"
#include "timeutil.h"

static void take_line(void *arg, const char *line)
{
    cli_stats_take(arg, line);
}

/* One sample into *s. Returns 0, or -1 with the reason in err. */
static int sample(const struct cli_conn *k, struct cli_stats *s, char *err,
                  size_t errlen)
{
    struct ctl c;
    int ms = k->timeout_ms < CLI_CONNECT_MS ? k->timeout_ms : CLI_CONNECT_MS;
    int fd = net_connect(k->host, k->port, 0, 0, ms, err, errlen);

    if (fd < 0)
        return -1;
    ctl_adopt(&c, fd, k->timeout_ms);
    memset(s, 0, sizeof(*s));
    int rc = k->password ? ctl_auth(&c, k->password) : 0;
    if (rc == 0)
        rc = ctl_query_block(&c, "STATS", take_line, s);
    if (rc) {
        snprintf(err, errlen, "%s:%s: %s", k->host, k->port, c.err);
        ctl_abandon(&c);
        return -1;
    }
    s->t_ns = time_now_ns();
    ctl_close(&c);
    return 0;
}

int cli_run_stat(const struct cli_opts *o, const char *password)
{
    struct cli_conn k;          /* only its address, password and limits */
    struct cli_stats prev, cur;
    char err[300], line[160];
    double interval = cli_interval(o);

    cli_conn_init(&k, o, password);
    if (sample(&k, &prev, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s: %s\n", CLI_NAME, err);
        return 1;
    }
    cli_stop_on_sigint();
    for (uint64_t n = 0; o->count == 0 || n < o->count; n++) {
        cli_nap(interval);
        if (cli_stopped())
            break;
        if (sample(&k, &cur, err, sizeof(err)) < 0) {
            fprintf(stderr, "%s: %s\n", CLI_NAME, err);
            return 1;
        }
        if (n % CLI_STAT_HEADER_EVERY == 0)
            fputs(cli_stat_header, stdout);
        fputs(cli_stat_format(&prev, &cur, line, sizeof(line)), stdout);
        fflush(stdout);
        prev = cur;
    }
    return 0;
}
