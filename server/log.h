/* log.h -- the server's logger. Callers format a line on their own stack,
 * then copy it into an in-memory buffer under log_lock (a memcpy, never
 * I/O); one writer thread swaps the full buffer for the empty one and writes
 * it outside the lock. This is variant (f) of tools/bench-log, the design
 * docs/LESSONS.md measured. SSNs are never logged.
 */
#ifndef SSN_LOG_H
#define SSN_LOG_H

#include <stdatomic.h>
#include <stdint.h>

/* Prefixed, so they never clash with <syslog.h>'s LOG_INFO and friends. */
enum log_level {
    LOG_LEVEL_ERROR,
    LOG_LEVEL_WARN,
    LOG_LEVEL_INFO,
    LOG_LEVEL_DEBUG,
};

/* Parses "error", "warn", "info" or "debug"; -1 when unknown. */
int log_level_parse(const char *s);

/* Starts the writer thread, appending to path (NULL: stderr). Returns 0 or
 * -errno. Until log_init, lines go straight to stderr. */
int log_init(int level, const char *path);

/* Writes out what is buffered and stops the writer; later lines go
 * straight to stderr. */
void log_shutdown(void);

/* Reopens the log file (after logrotate moved it: SIGHUP). Returns 0,
 * 1 when logging goes to stderr (nothing to reopen), or -errno with the old
 * file still in use. */
int log_reopen(void);

/* What log_init's or log_reopen's -errno means, for a message: -EEXIST is
 * a journal the logger will not append to; -ENXIO a FIFO with no
 * reader. */
const char *log_open_error(int rc);

void log_msg(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
