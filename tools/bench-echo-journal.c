/* bench-echo-journal.c -- bench-echo's -j FILE: one pwrite(2) of the bytes
 * a read returned (threads) or a pass read (epoll) before their answers
 * go, at an offset every thread takes from one atomic counter, over a
 * region zeroed at the start and written round and round. No fsync, no
 * encoding, no lock: the cheapest way a server can have each request in
 * the kernel's hands before it answers, which is what ssnserver's
 * --fsync everysec promises (a reply survives kill -9). */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include "bench-echo-journal.h"

#define EJ_REGION (16u << 20)   /* bytes written round and round */

static int ej_fd = -1;
static atomic_size_t ej_next;   /* bytes reserved so far, all threads */

int echo_journal_open(const char *path)
{
    static const char zeros[65536];
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    if (fd < 0)
        return -1;
    for (size_t off = 0; off < EJ_REGION; off += sizeof(zeros)) {
        if (pwrite(fd, zeros, sizeof(zeros), (off_t)off) !=
            (ssize_t)sizeof(zeros)) {
            int e = errno ? errno : ENOSPC;
            close(fd);
            errno = e;
            return -1;
        }
    }
    ej_fd = fd;
    return 0;
}

int echo_journal_on(void)
{
    return ej_fd >= 0;
}

int echo_journal_write(const void *p, size_t n)
{
    while (n) {
        size_t take = n < EJ_REGION / 2 ? n : EJ_REGION / 2;
        size_t at = atomic_fetch_add_explicit(&ej_next, take,
                                              memory_order_relaxed);
        size_t off = at % EJ_REGION;

        if (off + take > EJ_REGION)     /* not across the end: from 0 */
            off = 0;
        ssize_t w = pwrite(ej_fd, p, take, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w != (ssize_t)take) {
            if (w >= 0)
                errno = EIO;            /* short: no errno of its own */
            return -1;
        }
        p = (const char *)p + take;
        n -= take;
    }
    return 0;
}
