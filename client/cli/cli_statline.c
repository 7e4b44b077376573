/* cli_statline.c -- what ssn-cli --stat prints (cli.h): the fields it
 * takes from a STATS block, and its line made from two samples' differences.
 * Pure: the samples come from cli_stat.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* The STATS names --stat reads (docs/PROTOCOL.md), and where they go. */
static const struct {
    const char *name;
    size_t off;
    unsigned bit;
} fields[] = {
    { "commands_total", offsetof(struct cli_stats, commands), CLI_ST_COMMANDS },
    { "entries", offsetof(struct cli_stats, entries), CLI_ST_ENTRIES },
    { "connections_current", offsetof(struct cli_stats, clients),
      CLI_ST_CLIENTS },
    { "lock_acquisitions", offsetof(struct cli_stats, lock_acq),
      CLI_ST_LOCK_ACQ },
    { "lock_wait_us", offsetof(struct cli_stats, lock_wait_us),
      CLI_ST_LOCK_WAIT },
    { "lock_hold_us", offsetof(struct cli_stats, lock_hold_us),
      CLI_ST_LOCK_HOLD },
};

void cli_stats_take(struct cli_stats *s, const char *line)
{
    size_t n = strcspn(line, " ");
    if (line[n] != ' ')
        return;
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        if (strlen(fields[i].name) != n ||
            memcmp(line, fields[i].name, n) != 0)
            continue;
        uint64_t x;
        if (cli_parse_count(line + n + 1, &x))
            return;                     /* shown as "-": no count */
        memcpy((char *)s + fields[i].off, &x, sizeof(x));
        s->have |= fields[i].bit;
        return;
    }
}

const char cli_stat_header[] =
    "  people  clients    requests     req/s   lock acq/s  wait us/s  held %\n";

/* cur - prev for a counter; a counter that went down was reset (STATS
 * RESET) and counts from 0. */
static uint64_t delta(uint64_t prev, uint64_t cur)
{
    return cur >= prev ? cur - prev : cur;
}

/* A rate column: the counter's change per second, or "-" when either
 * sample lacks the field. */
static void rate(char *out, size_t cap, const struct cli_stats *prev,
                 const struct cli_stats *cur, unsigned bit, uint64_t a,
                 uint64_t b, double secs)
{
    if (!(prev->have & cur->have & bit) || secs <= 0)
        snprintf(out, cap, "-");
    else
        snprintf(out, cap, "%.0f", (double)delta(a, b) / secs);
}

static void gauge(char *out, size_t cap, const struct cli_stats *cur,
                  unsigned bit, uint64_t v)
{
    if (cur->have & bit)
        snprintf(out, cap, "%" PRIu64, v);
    else
        snprintf(out, cap, "-");
}

const char *cli_stat_format(const struct cli_stats *prev,
                            const struct cli_stats *cur, char *buf,
                            size_t cap)
{
    double secs = cur->t_ns > prev->t_ns
                  ? (double)(cur->t_ns - prev->t_ns) / 1e9 : 0;
    char people[24], clients[24], reqs[24], reqps[24], acqps[24], wait[24];
    char held[24];

    gauge(people, sizeof(people), cur, CLI_ST_ENTRIES, cur->entries);
    gauge(clients, sizeof(clients), cur, CLI_ST_CLIENTS, cur->clients);
    gauge(reqs, sizeof(reqs), cur, CLI_ST_COMMANDS, cur->commands);
    rate(reqps, sizeof(reqps), prev, cur, CLI_ST_COMMANDS, prev->commands,
         cur->commands, secs);
    rate(acqps, sizeof(acqps), prev, cur, CLI_ST_LOCK_ACQ, prev->lock_acq,
         cur->lock_acq, secs);
    rate(wait, sizeof(wait), prev, cur, CLI_ST_LOCK_WAIT, prev->lock_wait_us,
         cur->lock_wait_us, secs);
    /* The share of the interval the lock was held: held us per second over
     * the 10^6 us a second has. Threads hold it in turn, never at once,
     * but a hold counts whole in the interval it ends in: one longer than
     * -i (a CHECK of many people) shows over 100 there. */
    if (!(prev->have & cur->have & CLI_ST_LOCK_HOLD) || secs <= 0)
        snprintf(held, sizeof(held), "-");
    else
        snprintf(held, sizeof(held), "%.1f",
                 (double)delta(prev->lock_hold_us, cur->lock_hold_us) /
                 (secs * 1e4));
    snprintf(buf, cap, "%8s %8s %11s %9s %12s %10s %7s\n", people, clients,
             reqs, reqps, acqps, wait, held);
    return buf;
}
