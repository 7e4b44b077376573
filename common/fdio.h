/* fdio.h -- whole writes to a file descriptor, for the drivers, the logger
 * and the clients: the one place that retries partial writes and EINTR. On
 * a socket a vanished peer gives -EPIPE, never SIGPIPE (MSG_NOSIGNAL); on a
 * pipe, write(2) raises SIGPIPE unless the program ignores it, as the
 * server and the clients do.
 */
#ifndef SSN_FDIO_H
#define SSN_FDIO_H

#include <stddef.h>

/* Writes all of data to fd: send(MSG_NOSIGNAL) on a socket, write(2) on
 * anything else. Returns 0, or -errno with an unknown part written. A
 * zero length makes no system call. */
int fd_write_all(int fd, const void *data, size_t len);

/* 1 when fd is a socket, else 0 (also for a bad fd). */
int fd_is_socket(int fd);

/* 1 when the file fd is open on begins with the n bytes of prefix (read
 * with pread at offset 0, the file offset untouched; a descriptor open
 * for writing only is opened again for reading), else 0. The logger
 * and the trace use it to leave a journal alone (server/log.c). */
int fd_starts_with(int fd, const void *prefix, size_t n);

#endif
