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

/* -S: answers wait for an fdatasync(2) that covers what was written
 * before them (group commit), the floor under ssnserver --fsync always
 * with a thread per connection. Set before any connection is served. */
void echo_journal_sync_each(void);
int echo_journal_synced(void);

/* A connection's held answers, from its thread's start to its end
 * (free waits while another thread is sending them). ej_reply_answer
 * holds n bytes of answers until a sync covers the bytes written before
 * it: this thread syncs and sends them, its own and the others', when
 * no sync is under way, else returns at once and whoever ends that sync
 * sends them. 0, or -1 when a send of them failed or memory ran out. */
struct ej_reply;
/* Sends all n bytes, blocking: 0, or -1 when the connection is gone. */
int echo_send_all(int fd, const char *p, size_t n);
struct ej_reply *ej_reply_new(int fd);
void ej_reply_free(struct ej_reply *r);
int ej_reply_answer(struct ej_reply *r, const char *a, size_t n);

#endif
