/* stress_hold.c -- the stress client's hold job: N connections open at
 * once, each sends "FIND fI LI" (I its number mod P) only once all are
 * open and must get exactly that person's PRINT line; STATS from one more
 * connection while all are open; then half close and half reset. Prints
 * "opened sent answered wrong connections_current".
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include "entry.h"
#include "stress_client.h"

static void raise_nofile(long need)
{
    struct rlimit r;

    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < (rlim_t)need) {
        r.rlim_cur = r.rlim_max == RLIM_INFINITY || r.rlim_max > (rlim_t)need
                     ? (rlim_t)need : r.rlim_max;
        setrlimit(RLIMIT_NOFILE, &r);
    }
}

/* STATS over a new connection: connections_current, or -1. */
static long stats_current(void)
{
    char buf[8192];
    size_t len = 0;
    long v = -1;
    int fd = dial(0);

    if (fd < 0 || send_str(fd, "STATS\n"))
        return -1;
    struct pollfd p = { .fd = fd, .events = POLLIN };
    long deadline = now_ms() + 5000;
    while (len < sizeof(buf) - 1 && !strstr(buf, "\nEND\n") &&
           poll(&p, 1, (int)(deadline - now_ms())) > 0) {
        ssize_t r = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
        if (r <= 0)
            break;
        len += (size_t)r;
        buf[len] = '\0';
    }
    buf[len] = '\0';
    char *s = strstr(buf, "connections_current ");
    if (s)
        v = strtol(s + strlen("connections_current "), NULL, 10);
    close(fd);
    return v;
}

/* The hold job's connections and what each has received. */
struct hold {
    long n, opened, sent;
    int *fd;
    struct pollfd *pf;
    char (*got)[128];
    size_t *glen;
};

/* Opens up to h->n connections, then (only once all are open, so each
 * request meets all of them) sends each one a FIND. */
static void hold_open_and_ask(struct hold *h, long people)
{
    char req[64];

    for (long i = 0; i < h->n; i++) {
        h->fd[i] = dial(0);
        if (h->fd[i] < 0) {
            fprintf(stderr, "stress-client: connection %ld: %s\n", i,
                    strerror(errno));
            break;
        }
        h->opened++;
    }
    for (long i = 0; i < h->opened; i++) {
        long p = i % people;
        snprintf(req, sizeof(req), "FIND f%ld L%ld\n", p, p);
        if (send_str(h->fd[i], req) == 0)
            h->sent++;
        h->pf[i].fd = h->fd[i];
        h->pf[i].events = POLLIN;
    }
}

/* Connection i's reply is whole (one line, EOF or an error): is it the
 * PRINT line of person i % people (age 30, SSN_TEST)? */
static int hold_reply_right(const struct hold *h, long i, long people)
{
    struct person want = { .age = 30 };
    char line[ENTRY_LINE_MAX];
    long p = i % people;

    snprintf(want.first, sizeof(want.first), "f%ld", p);
    snprintf(want.last, sizeof(want.last), "L%ld", p);
    snprintf(want.ssn, sizeof(want.ssn), "%s", SSN_TEST);
    person_format_print(&want, line);
    return strcmp(h->got[i], line) == 0;
}

/* Reads every reply until all are whole or the deadline passes; counts the
 * right ones, prints the first few wrong ones. */
static void hold_collect(struct hold *h, long people, long *answered,
                         long *wrong)
{
    long deadline = now_ms() + HOLD_DEADLINE_MS;

    for (long pending = h->opened; pending > 0 && now_ms() < deadline;) {
        if (poll(h->pf, (nfds_t)h->opened, (int)(deadline - now_ms())) < 0) {
            if (errno == EINTR)
                continue;
            die("poll");
        }
        for (long i = 0; i < h->opened; i++) {
            if (h->pf[i].fd < 0 || !h->pf[i].revents)
                continue;
            ssize_t r = recv(h->fd[i], h->got[i] + h->glen[i],
                             sizeof(h->got[i]) - 1 - h->glen[i], MSG_DONTWAIT);
            if (r > 0)
                h->glen[i] += (size_t)r;
            h->got[i][h->glen[i]] = '\0';
            if (r < 0 && errno == EAGAIN)
                continue;
            if (r > 0 && !strchr(h->got[i], '\n') &&
                h->glen[i] < sizeof(h->got[i]) - 1)
                continue;
            h->pf[i].fd = -1;
            pending--;
            if (hold_reply_right(h, i, people))
                (*answered)++;
            else if ((*wrong)++ < 3)
                fprintf(stderr, "stress-client: connection %ld got '%s'\n",
                        i, h->got[i]);
        }
    }
}

void run_hold(long n, long people)
{
    struct hold h = {
        .n = n,
        .fd = calloc((size_t)n, sizeof(*h.fd)),
        .pf = calloc((size_t)n, sizeof(*h.pf)),
        .got = calloc((size_t)n, sizeof(*h.got)),
        .glen = calloc((size_t)n, sizeof(*h.glen)),
    };
    long answered = 0, wrong = 0;

    if (!h.fd || !h.pf || !h.got || !h.glen)
        die("calloc");
    raise_nofile(n + 64);
    hold_open_and_ask(&h, people);
    hold_collect(&h, people, &answered, &wrong);
    long current = stats_current();     /* all n still open */
    for (long i = 0; i < h.opened; i++) {   /* half go with a reset */
        if (i % 2)
            close_rst(h.fd[i]);
        else
            close(h.fd[i]);
    }
    printf("opened %ld sent %ld answered %ld wrong %ld "
           "connections_current %ld\n", h.opened, h.sent, answered, wrong,
           current);
    free(h.fd);
    free(h.pf);
    free(h.got);
    free(h.glen);
}
