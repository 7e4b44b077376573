/* bench-logline.h -- the log line every bench-log variant writes: exactly
 * LOG_LINE_LEN bytes ending in '\n', so a checker can tell a torn or
 * interleaved line from a whole one by where the newlines fall. Formatting
 * happens in the caller, outside any lock, in every variant alike.
 */
#ifndef SSN_BENCH_LOGLINE_H
#define SSN_BENCH_LOGLINE_H

#include <stdio.h>

#define LOG_LINE_LEN     80     /* bytes per line, newline included */
#define LOG_MAX_THREADS  1024   /* most caller threads a variant may use */

/* Writes one line (LOG_LINE_LEN bytes plus a NUL) into buf; seq is printed
 * modulo 10^12 and id modulo 10^4 so the width always holds. */
static inline void log_format_line(char buf[LOG_LINE_LEN + 1],
                                   unsigned long seq, int id)
{
    /* 12 + 8 + 4 + 1 + 54 + 1 = 80 bytes; the modulos let the compiler
     * see that the line fits. */
    snprintf(buf, LOG_LINE_LEN + 1, "%012lu thread %04u %-54.54s\n",
             seq % 1000000000000UL, (unsigned)id % 10000u,
             "the quick brown fox jumps over the lazy dog 0123456789");
}

#endif
