/* bench-echo-journal.c -- bench-echo's -j FILE: one pwrite(2) of the bytes
 * a read returned (threads) or a pass read (epoll) before their answers
 * go, at an offset every thread takes from one atomic counter, over a
 * region zeroed at the start and written round and round. No fsync, no
 * encoding, no lock: the cheapest way a server can have each request in
 * the kernel's hands before it answers, which is what ssnserver's
 * --fsync everysec promises (a reply survives kill -9).
 *
 * -S adds group commit, the floor under ssnserver --fsync always with a
 * thread per connection: an answer waits for an fdatasync(2) begun after
 * its bytes were written. The thread that finds none under way syncs, then
 * sends every answer that sync covered, its own and the others' (held
 * here meanwhile, their threads back in read(2): nobody is woken for
 * durability), and syncs again while answers wait for one. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

/* ---- -S: group commit ------------------------------------------------- */

/* A connection's answers held until a sync covers them. */
struct ej_reply {
    int fd;
    char *buf;                  /* the answers held; under gm */
    size_t len, cap;
    uint64_t need;              /* the number of the sync they wait for */
    int queued, sending, owner_waits, err;
    pthread_cond_t done;        /* sending went to 0 */
    struct ej_reply *next;      /* on held */
};

static int ej_synced;
static pthread_mutex_t gm = PTHREAD_MUTEX_INITIALIZER;
static uint64_t syncs_begun, syncs_done;    /* under gm */
static int syncing;                         /* under gm */
static struct ej_reply *held;               /* under gm */

void echo_journal_sync_each(void) { ej_synced = 1; }
int echo_journal_synced(void) { return ej_synced; }

struct ej_reply *ej_reply_new(int fd)
{
    struct ej_reply *r = calloc(1, sizeof(*r));

    if (r) {
        r->fd = fd;
        pthread_cond_init(&r->done, NULL);
    }
    return r;
}

static void wait_not_sending(struct ej_reply *r)
{
    while (r->sending) {
        r->owner_waits = 1;
        pthread_cond_wait(&r->done, &gm);
    }
}

void ej_reply_free(struct ej_reply *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&gm);
    wait_not_sending(r);
    for (struct ej_reply **pp = &held; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    pthread_mutex_unlock(&gm);
    pthread_cond_destroy(&r->done);
    free(r->buf);
    free(r);
}

/* Whether a held answer waits for a sync not yet begun; gm held. */
static int sync_wanted(void)
{
    for (struct ej_reply *r = held; r; r = r->next)
        if (r->need > syncs_begun)
            return 1;
    return 0;
}

int echo_send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Syncs while held answers want it and nobody else is syncing, sending
 * after each sync what it covered, with gm let go; gm held. */
static void lead_locked(void)
{
    while (!syncing && sync_wanted()) {
        uint64_t k = ++syncs_begun;

        syncing = 1;
        pthread_mutex_unlock(&gm);
        if (fdatasync(ej_fd) < 0) {
            perror("bench-echo: --journal: fdatasync");
            exit(1);
        }
        pthread_mutex_lock(&gm);
        syncs_done = k;
        syncing = 0;
        struct ej_reply *due = NULL, **pp = &held;

        while (*pp) {
            struct ej_reply *r = *pp;
            if (r->need <= syncs_done) {
                *pp = r->next;
                r->queued = 0;
                r->sending = 1;
                r->next = due;
                due = r;
            } else {
                pp = &r->next;
            }
        }
        pthread_mutex_unlock(&gm);
        for (struct ej_reply *r = due; r; r = r->next)
            if (echo_send_all(r->fd, r->buf, r->len) < 0)
                r->err = 1;
        pthread_mutex_lock(&gm);
        for (struct ej_reply *r = due, *next; r; r = next) {
            next = r->next;
            r->next = NULL;
            r->len = 0;
            r->sending = 0;
            if (r->owner_waits) {
                r->owner_waits = 0;
                pthread_cond_signal(&r->done);
            }
        }
    }
}

int ej_reply_answer(struct ej_reply *r, const char *a, size_t n)
{
    int rc = 0;

    pthread_mutex_lock(&gm);
    wait_not_sending(r);
    if (r->err) {
        rc = -1;
        goto out;
    }
    if (r->len + n > r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 256;
        while (cap < r->len + n)
            cap *= 2;
        char *p = realloc(r->buf, cap);
        if (!p) {
            rc = -1;
            goto out;
        }
        r->buf = p;
        r->cap = cap;
    }
    memcpy(r->buf + r->len, a, n);
    r->len += n;
    r->need = syncs_begun + 1;  /* written before that sync begins */
    if (!r->queued) {
        r->next = held;
        held = r;
        r->queued = 1;
    }
    lead_locked();
out:
    pthread_mutex_unlock(&gm);
    return rc;
}
