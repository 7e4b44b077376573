/* count_epoll_ctl.c -- an LD_PRELOAD helper for the integration tests:
 * counts the process's epoll_ctl and epoll_wait calls, passes each on to
 * libc, and at exit writes the two counts, on one line, to the file named
 * by SSN_COUNT_EPOLL_CTL. A test uses it to show that a server costs no
 * epoll_ctl, and no more than one poll, per request on a path that must
 * not (test-journal-events.sh). Never installed.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

static _Atomic unsigned long calls, waits;

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
    static int (*real)(int, int, int, struct epoll_event *);

    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "epoll_ctl");
    atomic_fetch_add(&calls, 1);
    return real(epfd, op, fd, ev);
}

int epoll_wait(int epfd, struct epoll_event *evs, int max, int timeout)
{
    static int (*real)(int, struct epoll_event *, int, int);

    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "epoll_wait");
    atomic_fetch_add(&waits, 1);
    return real(epfd, evs, max, timeout);
}

__attribute__((destructor)) static void write_count(void)
{
    const char *path = getenv("SSN_COUNT_EPOLL_CTL");
    char line[48];

    if (!path)
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return;
    int n = snprintf(line, sizeof(line), "%lu %lu\n", atomic_load(&calls),
                     atomic_load(&waits));
    if (write(fd, line, (size_t)n) != n)
        perror("count_epoll_ctl");
    close(fd);
}
