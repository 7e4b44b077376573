/* bench-echo.c -- the floor under every server of docs/PERFORMANCE.md: a
 * minimal epoll server that does no work but the socket's. One thread, one
 * epoll set, non-blocking sockets, level-triggered; it reads what a client
 * sent, answers each newline-terminated line with one short line, and
 * writes the batch's answers with one send(2). No store, no parsing beyond
 * the first word, no locks.
 *
 * ssn-bench's ssn dialect checks every reply against its request (a FIND
 * must answer that key's record), so the answers are shaped to pass: "OK"
 * for ADD and DELETE, PRINT's entry line for "FIND fK LK" (every person of
 * ssn-bench is 30 years old with SSN 123-45-6789). That is a fixed-format
 * snprintf, not a lookup: what is left is the cost of the system calls and
 * of the loopback itself, the limit no server on this machine can beat.
 *
 *   bench-echo [-p PORT] [-w WORKERS] [-m epoll|threads] [-s batch|normal]
 *                                         PORT 0 (the default) picks one;
 *                                         prints 'listening on ADDR:PORT'
 *
 * -w N runs N threads, each with its own epoll set and its own listening
 * socket on the same port (SO_REUSEPORT: the kernel spreads connections),
 * so the floor can be measured on one core or on both.
 *
 * -m threads is the floor of the other model instead, ssnserver's --io
 * threads (bench-echo-threads.c): a thread per connection, blocking
 * read(2) and send(2), the same answers (-w does not apply: there is no
 * worker to count). What it pays
 * on top of epoll's floor is the model's own cost, a wake-up and a context
 * switch per read, that no lock or parser adds. Its threads run as
 * SCHED_BATCH, as ssnserver's do by default (--sched); -s normal keeps the
 * kernel's default policy, as ssnserver --sched normal does.
 *
 * -u (--uring) batches the epoll model's calls as ssnserver --io events
 * does by default: the reads of the connections one epoll_wait found
 * readable in one io_uring_enter(2), then their answers' sends in
 * another (bench-echo-uring.c over server/net/uring.c): the floor of
 * that model with batched calls.
 *
 * -j FILE (with -m threads) adds what a journal costs that model and
 * nothing more: the bytes each read took go to FILE in one pwrite(2)
 * before their answers are sent, the floor under ssnserver --fsync
 * everysec with a thread per connection (bench-echo-journal.c).
 * -S (with -j) makes each answer wait for an fdatasync(2) too, one for
 * many (group commit): the floor under --fsync always.
 *
 * SIGINT or SIGTERM stop it. Not part of any server: tools/bench-compare
 * and tools/bench-journal use it. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "version.h"
#include "bench-echo.h"
#include "bench-echo-journal.h"

#define ECHO_MAX_WORKERS 64   /* -w at most */

struct echo_conn *conns[ECHO_MAX_CONN];
volatile sig_atomic_t stopping;
static int use_uring;           /* -u */
static int listen_port;

static void stop_cb(int sig) { (void)sig; stopping = 1; }

static int listen_on(int port)
{
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        listen(fd, 4096) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Appends the answer to one request line to c->out; -1 when out of memory. */
static int answer(struct echo_conn *c, const char *line, size_t len)
{
    char buf[128];
    int n;
    unsigned long long k1, k2;
    if (len > 5 && memcmp(line, "FIND ", 5) == 0 &&
        sscanf(line + 5, "f%llu L%llu", &k1, &k2) == 2) {
        char name[64];
        snprintf(name, sizeof(name), "L%llu, f%llu", k2, k1);
        n = snprintf(buf, sizeof(buf), "%-30s -- %11s %4d\n", name,
                     "123-45-6789", 30);
    } else {
        n = snprintf(buf, sizeof(buf), "OK\n");
    }
    if (c->out_len + (size_t)n > c->out_cap) {
        size_t cap = c->out_cap ? c->out_cap * 2 : 4096;
        while (cap < c->out_len + (size_t)n)
            cap *= 2;
        char *p = realloc(c->out, cap);
        if (!p)
            return -1;
        c->out = p;
        c->out_cap = cap;
    }
    memcpy(c->out + c->out_len, buf, (size_t)n);
    c->out_len += (size_t)n;
    return 0;
}

/* Answers every whole line in c->in, keeps the partial one. Returns -1
 * when out of memory or when a line is longer than the buffer. */
int answer_lines(struct echo_conn *c)
{
    size_t start = 0;

    for (size_t i = 0; i < c->in_len; i++) {
        if (c->in[i] != '\n')
            continue;
        size_t len = i - start;
        if (len && c->in[start + len - 1] == '\r')
            len--;
        if (answer(c, c->in + start, len) < 0)
            return -1;
        start = i + 1;
    }
    if (start == 0 && c->in_len == sizeof(c->in))
        return -1;
    memmove(c->in, c->in + start, c->in_len - start);
    c->in_len -= start;
    return 0;
}

/* The table's slot is emptied before the close: once fd is closed, the
 * other worker's accept may be given the same number and fill the slot,
 * which a later clearing here would then wipe (its next event found no
 * connection, and crashed). */
void drop(int ep, int fd)
{
    struct echo_conn *c = conns[fd];

    conns[fd] = NULL;
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    if (c) {
        free(c->out);
        free(c);
    }
}

/* Sends what is pending; watches EPOLLOUT only while something is left.
 * Returns -1 when the connection is gone. */
int flush_out(int ep, int fd, struct echo_conn *c)
{
    size_t off = 0;
    while (off < c->out_len) {
        ssize_t w = send(fd, c->out + off, c->out_len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    memmove(c->out, c->out + off, c->out_len - off);
    c->out_len -= off;
    if (!c->out_len != !c->watching_out) {  /* a floor: no epoll_ctl a
                                               request, only on a change */
        struct epoll_event ev = { .events = EPOLLIN |
                                            (c->out_len ? EPOLLOUT : 0),
                                  .data.fd = fd };
        epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
        c->watching_out = c->out_len != 0;
    }
    return 0;
}

static int on_readable(int ep, int fd, struct echo_conn *c)
{
    ssize_t r;
    do
        r = read(fd, c->in + c->in_len, sizeof(c->in) - c->in_len);
    while (r < 0 && errno == EINTR);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    if (r <= 0)
        return -1;
    c->in_len += (size_t)r;
    if (answer_lines(c) < 0)
        return -1;
    return c->out_len ? flush_out(ep, fd, c) : 0;
}

void accept_all(int ep, int lfd)
{
    int cfd;

    while ((cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
        int one = 1;
        struct echo_conn *c = calloc(1, sizeof(*c));
        if (cfd >= ECHO_MAX_CONN || !c) {
            free(c);
            close(cfd);
            continue;
        }
        setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        conns[cfd] = c;
        struct epoll_event cev = { .events = EPOLLIN, .data.fd = cfd };
        epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &cev);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    int lfd = listen_on(listen_port);
    int ep = epoll_create1(0);
    if (lfd < 0 || ep < 0) {
        perror("bench-echo: listen");
        exit(1);
    }
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = lfd };
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    if (use_uring && worker_uring(ep, lfd) == 0) {
        close(lfd);
        close(ep);
        return NULL;
    }
    struct epoll_event evs[ECHO_EVENTS];
    while (!stopping) {
        int n = epoll_wait(ep, evs, ECHO_EVENTS, 200);
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == lfd) {
                accept_all(ep, lfd);
                continue;
            }
            struct echo_conn *c = conns[fd];
            int rc = 0;
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                rc = on_readable(ep, fd, c);
            if (rc == 0 && (evs[i].events & EPOLLOUT) && c->out_len)
                rc = flush_out(ep, fd, c);
            if (rc < 0)
                drop(ep, fd);
        }
    }
    close(lfd);
    close(ep);
    return NULL;
}

static const char usage_text[] =
"usage: bench-echo [-p PORT] [-w WORKERS] [-m epoll|threads] [-s batch|normal]\n"
"                  [-u] [-j FILE [-S]]\n"
"The floor under every server of docs/PERFORMANCE.md: answers each line\n"
"with one short line and does nothing else. Prints 'listening on\n"
"127.0.0.1:PORT'; SIGINT or SIGTERM stop it.\n"
"  -p, --port PORT      the port, 0 (the default): any free one\n"
"  -w, --workers N      epoll threads, each with its own listening socket\n"
"                       (1 to %d, default 1)\n"
"  -m, --model MODEL    epoll (the default) or threads (one per connection)\n"
"  -s, --sched POLICY   with -m threads: batch (the default: each thread\n"
"                       SCHED_BATCH, as ssnserver --sched batch) or normal\n"
"  -u, --uring          with -m epoll: a poll's reads in one io_uring_enter,\n"
"                       their answers' sends in another (as ssnserver\n"
"                       --io events --uring on)\n"
"  -j, --journal FILE   with -m threads: write what each read took to FILE,\n"
"                       one pwrite before its answers go (the floor under\n"
"                       ssnserver --fsync everysec)\n"
"  -S, --sync           with -j: each answer waits for an fdatasync begun\n"
"                       after its bytes were written, one for many (group\n"
"                       commit; the floor under ssnserver --fsync always)\n"
"  -h, --help           this text\n"
"  -V, --version        the version\n";

/* A whole number in [lo, hi] from the option's value, or exit 2 naming
 * the option and the value. */
static int int_arg(const char *opt, const char *v, long lo, long hi)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < lo || n > hi) {
        fprintf(stderr, "bench-echo: %s: '%s' is not a whole number from "
                "%ld to %ld\nTry 'bench-echo --help'.\n", opt, v, lo, hi);
        exit(2);
    }
    return (int)n;
}

int main(int argc, char **argv)
{
    static const struct option longs[] = {
        { "port", required_argument, NULL, 'p' },
        { "workers", required_argument, NULL, 'w' },
        { "model", required_argument, NULL, 'm' },
        { "sched", required_argument, NULL, 's' },
        { "journal", required_argument, NULL, 'j' },
        { "uring", no_argument, NULL, 'u' },
        { "sync", no_argument, NULL, 'S' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    const char *journal = NULL;
    int sync_each = 0;
    int port = 0, workers = 1, threads = 0, opt;

    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":p:w:m:s:j:uShV", longs, NULL)) != -1) {
        switch (opt) {
        case 'p': port = int_arg("--port", optarg, 0, 65535); break;
        case 'w':
            workers = int_arg("--workers", optarg, 1, ECHO_MAX_WORKERS);
            break;
        case 'm':
            if (strcmp(optarg, "threads") == 0)
                threads = 1;
            else if (strcmp(optarg, "epoll") != 0) {
                fprintf(stderr, "bench-echo: --model: '%s' is not epoll or "
                        "threads\nTry 'bench-echo --help'.\n", optarg);
                return 2;
            }
            break;
        case 's':
            if (strcmp(optarg, "batch") && strcmp(optarg, "normal")) {
                fprintf(stderr, "bench-echo: --sched: '%s' is not batch or "
                        "normal\nTry 'bench-echo --help'.\n", optarg);
                return 2;
            }
            echo_sched_batch = strcmp(optarg, "batch") == 0;
            break;
        case 'j': journal = optarg; break;
        case 'u': use_uring = 1; break;
        case 'S': sync_each = 1; break;
        case 'h':
            printf(usage_text, ECHO_MAX_WORKERS);
            return 0;
        case 'V':
            printf("bench-echo %s (%s)\n", SSN_VERSION, SSN_SUITE);
            return 0;
        case ':':
            fprintf(stderr, "bench-echo: '%s' needs a value\n"
                    "Try 'bench-echo --help'.\n", argv[optind - 1]);
            return 2;
        default:
            if (optopt)
                fprintf(stderr, "bench-echo: unknown option '%c'\n"
                        "Try 'bench-echo --help'.\n", optopt);
            else
                fprintf(stderr, "bench-echo: unknown option '%s'\n"
                        "Try 'bench-echo --help'.\n", argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "bench-echo: unexpected argument '%s'\n"
                "Try 'bench-echo --help'.\n", argv[optind]);
        return 2;
    }
    if (threads && workers != 1) {
        fprintf(stderr, "bench-echo: -w %d: -m threads has a thread per "
                "connection, not workers\n", workers);
        return 2;
    }
    if (use_uring && threads) {
        fprintf(stderr, "bench-echo: --uring: needs -m epoll\n");
        return 2;
    }
    if (journal && !threads) {
        fprintf(stderr, "bench-echo: --journal: needs -m threads\n");
        return 2;
    }
    if (sync_each && !journal) {
        fprintf(stderr, "bench-echo: --sync: needs --journal\n");
        return 2;
    }
    if (sync_each)
        echo_journal_sync_each();
    if (journal && echo_journal_open(journal) < 0) {
        fprintf(stderr, "bench-echo: --journal: '%s': %s\n", journal,
                strerror(errno));
        return 1;
    }
    /* Port 0: bind once to learn a free port, then every worker binds it
     * with SO_REUSEPORT (this first socket stays open until they have). */
    int probe = listen_on(port);
    if (probe < 0) {
        perror("bench-echo: bind");
        return 1;
    }
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    getsockname(probe, (struct sockaddr *)&a, &alen);
    listen_port = ntohs(a.sin_port);

    struct sigaction sa = { .sa_handler = stop_cb };
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (threads)
        return serve_threads(probe, listen_port);

    pthread_t th[ECHO_MAX_WORKERS];
    for (int i = 0; i < workers; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    /* Give the workers a moment to bind before the probe goes: a
     * connection that lands on the probe would never be accepted. */
    usleep(100000);
    close(probe);
    printf("listening on 127.0.0.1:%d\n", listen_port);
    fflush(stdout);
    for (int i = 0; i < workers; i++)
        pthread_join(th[i], NULL);
    return 0;
}
