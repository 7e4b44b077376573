/* stats.h -- the STATS block: the server's counters as "name value" lines
 * ending with "END", for the STATS command and for SIGUSR1's log lines.
 */
#ifndef SSN_STATS_H
#define SSN_STATS_H

#include <stddef.h>

struct store;

/* Writes the block into buf (at most cap bytes, NUL-terminated) and returns
 * its length, or 0 when it does not fit. entries is the people count the
 * caller read; own_commands the requests its session has answered but not
 * yet added to the server's total. No lock is taken. */
size_t stats_format(char *buf, size_t cap, const struct store *st,
                    size_t entries, long own_commands);

#define STATS_MAX 2048          /* room for the whole block */

#endif
