/* log_source.h -- log lines a client can cause (a wrong password, a
 * connection dropped), limited so that no client can fill the disk with
 * them: at most one a second per source address (each a full second after
 * the one before), and at most LOG_SOURCE_PER_SEC a second from all
 * sources together. What is held
 * back is counted: the next line that source gets says how many, and
 * STATS log_lines_suppressed sums them.
 */
#ifndef SSN_LOG_SOURCE_H
#define SSN_LOG_SOURCE_H

#include <stdatomic.h>

#define LOG_SOURCE_SLOTS    1024    /* sources remembered at once */
#define LOG_SOURCE_PER_SEC  50      /* such lines a second, all together */

/* Lines held back since start-up (or the last STATS RESET). */
extern atomic_long log_source_suppressed;

/* log_msg's line, unless peer's address ("addr:port", "[v6]:port"; the
 * port is not part of the source) had one less than a second ago, or
 * LOG_SOURCE_PER_SEC
 * such lines were written this second. Returns 1 when it was logged, 0
 * when held back (and counted). */
int log_source(int level, const char *peer, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* libevent's own lines (event_set_log_callback): a failing accept, a
 * socket's error, which a client can cause too. They go through
 * log_source as one source, LOG_SOURCE_LIBEVENT: a line a second at most,
 * in the server's log format; debug lines are dropped. */
#define LOG_SOURCE_LIBEVENT "libevent"
void log_source_libevent(int severity, const char *msg);

#endif
