/* bench-echo-journal.h -- bench-echo's -j: what every request costs a
 * server that puts it in a file before it answers (the floor under
 * ssnserver --fsync everysec), and nothing else. */
#ifndef BENCH_ECHO_JOURNAL_H
#define BENCH_ECHO_JOURNAL_H

#include <stddef.h>

/* Opens (creates, truncates) path and writes zeros over the region the
 * writes go round, so that no write extends the file (ssnserver's journal
 * writes over space it has zeroed ahead). 0, or -1 with errno set. */
int echo_journal_open(const char *path);

/* 1 once echo_journal_open succeeded. */
int echo_journal_on(void);

/* One pwrite(2) of n bytes at the next offset of the region (taken
 * atomically: threads and workers share it), going round to its start
 * when it is full. 0, or -1 with errno set when the write failed or fell
 * short. */
int echo_journal_write(const void *p, size_t n);

#endif
