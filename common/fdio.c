/* fdio.c -- whole writes to a file descriptor (fdio.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "fdio.h"

int fd_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    int sock = 1;               /* try send first; ENOTSOCK says otherwise */

    while (len > 0) {
        ssize_t n = sock ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (sock && errno == ENOTSOCK) {
                sock = 0;
                continue;
            }
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int fd_is_socket(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

int fd_starts_with(int fd, const void *prefix, size_t n)
{
    unsigned char buf[64];
    ssize_t got;

    if (n > sizeof(buf))
        return 0;
    if ((got = pread(fd, buf, n, 0)) < 0 && errno == EBADF) {
        /* Open for writing only: the same file again, for reading. */
        char self[32];
        snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
        int rfd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (rfd < 0)
            return 0;
        got = pread(rfd, buf, n, 0);
        close(rfd);
    }
    return got == (ssize_t)n && memcmp(buf, prefix, n) == 0;
}
