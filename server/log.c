/* log.c -- a double-buffered logger (log.h).
 *
 * log_lock protects active, active_len, dropped and stopping. Callers hold it
 * only to memcpy a line in; the writer takes it only to swap buffers. File
 * I/O happens with no lock held, so a slow disk never blocks a session: when
 * the active buffer is full the line is dropped and counted instead.
 * The writer is woken with pthread_cond_signal on its own condition: there
 * is exactly one waiter (tools/bench-wakeup measures the alternatives).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lockmode.h"
#include "log.h"
#include "server.h"
#include "fdio.h"
#include "journal/journal_rec.h"
#include "timeutil.h"

#define LOG_BUF_SIZE   (256 * 1024)    /* each of the two buffers */
#define LOG_LINE_MAX   512             /* longer lines are cut */
#define LOG_WAKE_AT    (LOG_BUF_SIZE / 2)
#define LOG_PERIOD_MS  200             /* the writer flushes at least this
                                          often when there is anything */

static const char *const level_names[] = { "error", "warn", "info", "debug" };

static int log_level = LOG_LEVEL_INFO;
static int log_fd = 2;                  /* set once by log_init; log_reopen
                                           replaces the file behind it */
static const char *log_path;            /* NULL: stderr */
static atomic_int started;           /* the writer thread runs */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t log_wake;
static char bufs[2][LOG_BUF_SIZE];
static char *active = bufs[0];          /* protected by log_lock */
static size_t active_len;               /* protected by log_lock */
static unsigned long dropped;           /* protected by log_lock */
static int stopping;                    /* protected by log_lock */
static pthread_t writer;

int log_level_parse(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, level_names[i]) == 0)
            return i;
    return -1;
}

/* Swaps the buffers under log_lock and writes the full one without it.
 * Only the writer thread calls this: two callers could swap twice. */
static void write_out(void)
{
    char note[64];
    size_t nlen = 0;

    pthread_mutex_lock(&log_lock);
    char *full = active;
    size_t len = active_len;
    active = (active == bufs[0]) ? bufs[1] : bufs[0];
    active_len = 0;
    if (dropped) {
        nlen = (size_t)snprintf(note, sizeof(note),
                                "log: %lu lines dropped\n", dropped);
        dropped = 0;
    }
    pthread_mutex_unlock(&log_lock);

    fd_write_all(log_fd, full, len);
    if (nlen)
        fd_write_all(log_fd, note, nlen);
}

static void *writer_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&log_lock);
    while (!stopping) {
        struct timespec t = time_mono_after_ns(LOG_PERIOD_MS * TIME_NS_PER_MS);
        pthread_cond_timedwait(&log_wake, &log_lock, &t);
        if (active_len == 0 && !dropped)
            continue;
        pthread_mutex_unlock(&log_lock);
        write_out();
        pthread_mutex_lock(&log_lock);
    }
    pthread_mutex_unlock(&log_lock);
    write_out();
    return NULL;
}

/* path opened for appending lines: never a journal (-EEXIST), whose
 * records a line would follow; a FIFO with no reader fails (-ENXIO)
 * rather than block the opener, the main thread at SIGHUP. */
static int open_log(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
                  O_NONBLOCK, 0640);
    if (fd < 0)
        return -errno;
    if (fd_starts_with(fd, JREC_MAGIC, strlen(JREC_MAGIC))) {
        close(fd);
        return -EEXIST;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    return fd;
}

const char *log_open_error(int rc)
{
    return rc == -EEXIST ? "it is a journal (ssnserver --journal): not "
                           "written to" : strerror(-rc);
}

int log_init(int level, const char *path)
{
    pthread_condattr_t ca;
    int rc;

    log_level = level;
    if (path) {
        int fd = open_log(path);
        if (fd < 0)
            return fd;
        log_fd = fd;
        log_path = path;
    }
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&log_wake, &ca);
    pthread_condattr_destroy(&ca);
    rc = pthread_create(&writer, NULL, writer_main, NULL);
    if (rc)
        return -rc;
    started = 1;
    return 0;
}

void log_shutdown(void)
{
    if (!atomic_exchange(&started, 0))
        return;
    pthread_mutex_lock(&log_lock);
    stopping = 1;
    pthread_cond_signal(&log_wake);
    pthread_mutex_unlock(&log_lock);
    pthread_join(writer, NULL);     /* the writer's last write_out */
}

void log_msg(int level, const char *fmt, ...)
{
    char line[LOG_LINE_MAX];
    struct timespec now;
    struct tm tm;
    va_list ap;

    /* Nothing logs under the store lock for a store operation: the facts
     * are collected there and logged after the unlock. Asserted before the
     * level check, so a quiet log does not hide a call that breaks it. */
    STORE_ASSERT_NOT_HELD(&srv.store);
    if (level > log_level)
        return;
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    int n = (int)strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
    n += snprintf(line + n, sizeof(line) - (size_t)n, ".%03ldZ %-5s ",
                  now.tv_nsec / 1000000L, level_names[level]);
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof(line) - 2)
        len = sizeof(line) - 2;
    line[len++] = '\n';

    if (!started) {                     /* start-up and tests: no thread */
        fd_write_all(log_fd, line, len);
        return;
    }
    pthread_mutex_lock(&log_lock);
    if (active_len + len <= LOG_BUF_SIZE) {
        memcpy(active + active_len, line, len);
        active_len += len;
        if (active_len >= LOG_WAKE_AT)
            pthread_cond_signal(&log_wake);
    } else {
        dropped++;
    }
    pthread_mutex_unlock(&log_lock);
}

/* dup2 swaps the file behind log_fd in one step, so the writer thread,
 * which may be in write(2) on log_fd at this moment, never sees a closed or
 * reused descriptor: it writes to the old file or to the new one. */
int log_reopen(void)
{
    if (!log_path)
        return 1;
    int fd = open_log(log_path);
    if (fd < 0)
        return fd;
    int rc = dup3(fd, log_fd, O_CLOEXEC) < 0 ? -errno : 0;
    close(fd);
    return rc;
}

