/* stats.h -- the STATS block: the server's counters as "name value" lines
 * ending with "END", for the STATS command and for SIGUSR1's log lines.
 */
#ifndef SSN_STATS_H
#define SSN_STATS_H

#include <stddef.h>

struct store;

struct store_lock_figures;

/* Writes the block into buf (at most cap bytes, NUL-terminated) and returns
 * its length, or 0 when it does not fit or memory for the latency figures
 * (metrics_snapshot) cannot be had. entries is the people count and
 * lock the store lock's figures the caller read under the lock (NULL: no
 * lock lines, for a caller that must not wait for the lock); own_commands
 * the requests its session has answered but not yet added to the server's
 * total. No lock is taken. */
size_t stats_format(char *buf, size_t cap, const struct store *st,
                    size_t entries, const struct store_lock_figures *lock,
                    long own_commands);

/* STATS RESET: zeroes every server counter that is not a gauge, and the
 * latency figures of metrics.h (the caller resets the store lock's own
 * figures and the journal's). */
void stats_reset(void);

#define STATS_MAX 8192          /* room for the whole block */

#endif
