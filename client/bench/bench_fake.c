/* bench_fake.c -- a tiny stand-in for Redis or memcached, for
 * tests/test-bench.sh only (never installed): it lets the test check
 * ssn-bench's redis and memcache dialects with exact counts without
 * running either server. One thread, poll(2), keys "L<k>:f<k>" only.
 *
 *   bench-fake redis|memcache [--split] [--extra N] [--close-after N]
 *
 * Prints "listening on 127.0.0.1:PORT" (tests/lib/server.sh waits for it)
 * and serves until killed. Redis: inline SET/GET/DEL/AUTH. memcache: set,
 * get, delete. --split writes replies in pieces of 1 to 7 bytes, so the
 * client's reads end inside replies; --extra N answers each connection's
 * N-th request twice; --close-after N closes a connection after N replies.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FAKE_KEYS   (1u << 20)      /* keys 0..FAKE_KEYS-1 */
#define FAKE_VALUE  63              /* longest value kept */
#define FAKE_CONNS  512             /* connections at once */
#define FAKE_IN     65536           /* a connection's input buffer */

struct value { unsigned char len, set; char v[FAKE_VALUE]; };

struct conn {
    int fd;
    char in[FAKE_IN];
    size_t ilen;
    char *out;
    size_t olen, opos, ocap;
    unsigned long requests;
};

static struct value *store;
static int memcache, split;
static unsigned long extra, close_after;

static void out_add(struct conn *c, const char *s, size_t n)
{
    if (c->olen + n > c->ocap) {
        c->ocap = (c->olen + n) * 2;
        if (!(c->out = realloc(c->out, c->ocap)))
            abort();
    }
    memcpy(c->out + c->olen, s, n);
    c->olen += n;
}

static void out_str(struct conn *c, const char *s)
{
    out_add(c, s, strlen(s));
}

/* "L<k>:f<k>" -> the value slot, or NULL. */
static struct value *slot(const char *key)
{
    unsigned long a, b;
    int n = 0;
    if (sscanf(key, "L%lu:f%lu%n", &a, &b, &n) != 2 || key[n] || a != b ||
        a >= FAKE_KEYS)
        return NULL;
    return &store[a];
}

/* One GET-like answer for v (NULL: no such key). */
static void answer_get(struct conn *c, const char *key, struct value *v)
{
    char head[128];
    if (!v || !v->set) {
        out_str(c, memcache ? "END\r\n" : "$-1\r\n");
        return;
    }
    if (memcache)
        snprintf(head, sizeof(head), "VALUE %s 0 %u\r\n", key, v->len);
    else
        snprintf(head, sizeof(head), "$%u\r\n", v->len);
    out_str(c, head);
    out_add(c, v->v, v->len);
    out_str(c, memcache ? "\r\nEND\r\n" : "\r\n");
}

/* One command: verb, key, and for a set its value. */
static void answer(struct conn *c, const char *verb, const char *key,
                   const char *val, size_t vlen)
{
    struct value *v = key ? slot(key) : NULL;
    size_t mark = c->olen;

    if (!strcasecmp(verb, "auth") && !memcache)
        out_str(c, "+OK\r\n");
    else if (!key || !v || vlen > FAKE_VALUE)
        out_str(c, memcache ? "CLIENT_ERROR bad key\r\n" : "-ERR bad key\r\n");
    else if (!strcasecmp(verb, "set")) {
        v->set = 1;
        v->len = (unsigned char)vlen;
        memcpy(v->v, val, vlen);
        out_str(c, memcache ? "STORED\r\n" : "+OK\r\n");
    } else if (!strcasecmp(verb, "get"))
        answer_get(c, key, v);
    else if (!strcasecmp(verb, "del") || !strcasecmp(verb, "delete")) {
        out_str(c, v->set ? (memcache ? "DELETED\r\n" : ":1\r\n")
                          : (memcache ? "NOT_FOUND\r\n" : ":0\r\n"));
        v->set = 0;
    } else
        out_str(c, memcache ? "ERROR\r\n" : "-ERR unknown command\r\n");
    if (++c->requests == extra) {           /* the reply once more */
        size_t n = c->olen - mark;
        char copy[256];
        memcpy(copy, c->out + mark, n < sizeof(copy) ? n : sizeof(copy));
        out_add(c, copy, n < sizeof(copy) ? n : sizeof(copy));
    }
}

/* The commands in c->in; returns the bytes they took. */
static size_t serve(struct conn *c)
{
    size_t pos = 0;
    for (;;) {
        char *nl = memchr(c->in + pos, '\n', c->ilen - pos);
        if (!nl)
            return pos;
        size_t llen = (size_t)(nl - (c->in + pos)), took = llen + 1;
        char line[1100], *save = NULL;
        if (llen >= sizeof(line))
            llen = sizeof(line) - 1;
        memcpy(line, c->in + pos, llen);
        line[llen] = '\0';
        line[strcspn(line, "\r")] = '\0';
        char *verb = strtok_r(line, " ", &save);
        char *key = verb ? strtok_r(NULL, " ", &save) : NULL;
        char *rest = key ? strtok_r(NULL, "", &save) : NULL;
        if (!verb)
            return pos + took;
        if (memcache && !strcmp(verb, "set")) {
            unsigned long fl, ex, n = 0;
            if (!rest || sscanf(rest, "%lu %lu %lu", &fl, &ex, &n) != 3)
                n = 0;
            if (c->ilen - pos < took + n + 2)
                return pos;             /* the data block is still coming */
            answer(c, verb, key, c->in + pos + took, n);
            pos += took + n + 2;
            continue;
        }
        answer(c, verb, key, rest, rest ? strlen(rest) : 0);
        pos += took;
    }
}

/* Writes what c has, in small pieces under --split. 0, or -1 to close. */
static int flush(struct conn *c)
{
    static unsigned piece;
    while (c->opos < c->olen) {
        size_t n = c->olen - c->opos;
        if (split && n > piece % 7 + 1)
            n = piece++ % 7 + 1;
        ssize_t w = send(c->fd, c->out + c->opos, n, MSG_NOSIGNAL);
        if (w <= 0)
            return w < 0 && (errno == EAGAIN || errno == EINTR) ? 0 : -1;
        c->opos += (size_t)w;
        if (split)
            return 0;                   /* one piece per turn of poll */
    }
    c->opos = c->olen = 0;
    return close_after && c->requests >= close_after ? -1 : 0;
}

/* Reads what c's client sent and answers it. 0, or -1 to close. */
static int on_read(struct conn *c)
{
    ssize_t n = recv(c->fd, c->in + c->ilen, FAKE_IN - c->ilen, 0);
    if (n <= 0)
        return n < 0 && (errno == EAGAIN || errno == EINTR) ? 0 : -1;
    c->ilen += (size_t)n;
    size_t used = serve(c);
    memmove(c->in, c->in + used, c->ilen - used);
    c->ilen -= used;
    return c->ilen == FAKE_IN ? -1 : flush(c);
}

static int listen_any(void)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    socklen_t len = sizeof(sa);
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
        listen(fd, 128) || getsockname(fd, (struct sockaddr *)&sa, &len)) {
        perror("bench-fake: listen");
        exit(1);
    }
    printf("listening on 127.0.0.1:%u\n", ntohs(sa.sin_port));
    fflush(stdout);
    return fd;
}

static void args(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "redis") && strcmp(argv[1], "memcache"))) {
        fprintf(stderr, "usage: bench-fake redis|memcache [--split] "
                "[--extra N] [--close-after N]\n");
        exit(2);
    }
    memcache = !strcmp(argv[1], "memcache");
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--split"))
            split = 1;
        else if (!strcmp(argv[i], "--extra") && i + 1 < argc)
            extra = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--close-after") && i + 1 < argc)
            close_after = strtoul(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "bench-fake: unknown option %s\n", argv[i]);
            exit(2);
        }
    }
}

int main(int argc, char **argv)
{
    static struct conn *conns[FAKE_CONNS];
    struct pollfd pf[FAKE_CONNS + 1];
    int nc = 0;

    args(argc, argv);
    if (!(store = calloc(FAKE_KEYS, sizeof(*store))))
        return 1;
    pf[0] = (struct pollfd){ .fd = listen_any(), .events = POLLIN };
    for (;;) {
        for (int i = 0; i < nc; i++)
            pf[i + 1] = (struct pollfd){ .fd = conns[i]->fd, .events =
                POLLIN | (conns[i]->olen > conns[i]->opos ? POLLOUT : 0) };
        if (poll(pf, (nfds_t)nc + 1, -1) < 0)
            continue;
        for (int i = nc - 1; i >= 0; i--) {
            struct conn *c = conns[i];
            short ev = pf[i + 1].revents;
            int rc = 0;
            if (ev & POLLOUT)
                rc = flush(c);
            if (!rc && (ev & (POLLIN | POLLHUP | POLLERR)))
                rc = on_read(c);
            if (rc) {
                close(c->fd);
                free(c->out);
                free(c);
                conns[i] = conns[--nc];
            }
        }
        if ((pf[0].revents & POLLIN) && nc < FAKE_CONNS) {
            int fd = accept4(pf[0].fd, NULL, NULL, SOCK_NONBLOCK);
            struct conn *c = fd >= 0 ? calloc(1, sizeof(*c)) : NULL;
            if (c) {
                int one = 1;        /* small pieces leave at once */
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                c->fd = fd;
                conns[nc++] = c;
            } else if (fd >= 0)
                close(fd);
        }
    }
}
