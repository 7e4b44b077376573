/* bench-logq.h -- bench-log variant (e): caller threads hand each line to one
 * logger thread through a linked queue and a condition variable, with one
 * pthread_cond_signal per line, as the classic experiment did.
 */
#ifndef SSN_BENCH_LOGQ_H
#define SSN_BENCH_LOGQ_H

#include "bench-logline.h"

/* Writes `lines` lines from `threads` callers to a new file at path. Counts
 * the signals sent to the logger in *signals. Returns 0 or a negative errno;
 * on error the file may be partial. */
int logq_run(const char *path, unsigned long lines, int threads,
             unsigned long *signals);

#endif
