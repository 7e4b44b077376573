/* bench-dbuf.h -- bench-log variant (f), the design server/log.c uses:
 * callers memcpy whole lines into the current buffer under a mutex and never
 * do I/O under it; one writer thread swaps the full buffer for an empty one
 * and write(2)s it outside the lock. The writer is signalled once per full
 * buffer, not once per line.
 */
#ifndef SSN_BENCH_DBUF_H
#define SSN_BENCH_DBUF_H

#include <stddef.h>

#include "bench-logline.h"

/* Writes `lines` lines from `threads` callers to a new file at path through
 * two buffers of bufsize bytes (at least LOG_LINE_LEN). Counts the signals
 * sent to the writer in *signals. Returns 0 or a negative errno. */
int dbuf_run(const char *path, unsigned long lines, int threads,
             size_t bufsize, unsigned long *signals);

#endif
