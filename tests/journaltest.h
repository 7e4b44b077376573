/* journaltest.h -- what the journal's check files share
 * (check_journal.c, check_journal_file.c): a fresh directory per test
 * with the journal's path in it, the file's size, and mutations applied
 * to a store as commands.c applies them, waiting for the journal. static
 * so each test file takes only what it uses.
 */
#ifndef SSN_TESTS_JOURNALTEST_H
#define SSN_TESTS_JOURNALTEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <check.h>
#include "../common/entry.h"
#include "../server/journal/journal.h"
#include "../server/store.h"

static char dir[] = "/tmp/check_journal.XXXXXX";
static char path[64];

static inline void file_setup(void)
{
    strcpy(dir, "/tmp/check_journal.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/j", dir);
}

static inline void file_teardown(void)
{
    unlink(path);
    rmdir(dir);
}

static inline off_t file_size(void)
{
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    return sb.st_size;
}

/* Applies one ADD or DELETE to st, as commands.c does; returns its rc. */
static inline int apply(struct store *st, enum store_op op,
                        const char *first, const char *last)
{
    struct store_mutation m = { .op = op };

    if (op == STORE_ADD) {
        m.entry = entry_new(last, strlen(last), first, strlen(first),
                            entry_ssn_pack("123-45-6789"), 33);
        ck_assert_ptr_nonnull(m.entry);
    } else {
        m.key.first = first;
        m.key.last = last;
    }
    store_lock(st);
    int rc = store_apply_locked(st, &m);
    store_unlock(st);
    if (rc == 0)
        ck_assert_uint_gt(m.seq, 0);
    if (rc == 0 && st->journal)
        ck_assert_int_eq(journal_wait(st->journal, m.seq), 0);
    if (op == STORE_ADD && rc)
        entry_free(m.entry);
    if (op == STORE_DELETE && rc == 0)
        entry_free(m.removed);
    return rc;
}

/* Adds Smith FIRST to st without waiting for its record to be durable
 * (the event driver's way, or a reply handed to the journal): the
 * record's sequence number. */
static inline uint64_t add_nowait(struct store *st, const char *first)
{
    struct store_mutation m = { .op = STORE_ADD };

    m.entry = entry_new("Smith", 5, first, strlen(first),
                        entry_ssn_pack("123-45-6789"), 33);
    ck_assert_ptr_nonnull(m.entry);
    store_lock(st);
    ck_assert_int_eq(store_apply_locked(st, &m), 0);
    store_unlock(st);
    ck_assert_uint_gt(m.seq, 0);
    return m.seq;
}

static inline size_t count(struct store *st)
{
    store_lock(st);
    size_t n = store_count_locked(st);
    store_unlock(st);
    return n;
}

static inline void write_file(const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
    close(fd);
}

static inline size_t read_file(unsigned char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ssize_t n = read(fd, buf, cap);
    ck_assert_int_ge(n, 0);
    close(fd);
    return (size_t)n;
}

/* A journal_sync_fn that fails as a broken disk does. */
static inline int sync_fails(int fd)
{
    (void)fd;
    errno = EIO;
    return -1;
}

#endif
