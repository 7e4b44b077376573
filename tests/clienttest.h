/* clienttest.h -- a small fake server in a thread, shared by the client
 * library's network tests (check_client_pipeline.c, check_client_ctl.c):
 * it listens on a loopback port of its own, takes one connection and
 * answers like ssnserver, slowly, with garbage, not at all, or hangs up
 * after five replies. static inline so each test file takes only what it
 * uses.
 */
#ifndef SSN_TESTS_CLIENTTEST_H
#define SSN_TESTS_CLIENTTEST_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <check.h>
#include "entry.h"
#include "fdio.h"
#include "linereader.h"
#include "outbuf.h"
#include "proto.h"
#include "timeutil.h"

enum fake_mode {
    FAKE_GOOD,                  /* answers like ssnserver */
    FAKE_SLOW,                  /* the same, 300 us per reply */
    FAKE_SILENT,                /* reads, never answers */
    FAKE_HANGUP,                /* answers 5 requests, then closes */
    FAKE_GARBAGE,               /* answers every line with junk */
    FAKE_REDIS,                 /* answers every line as Redis would */
};

struct fake {
    int lfd;
    char port[8];
    enum fake_mode mode;
    size_t print_lines;         /* lines in a PRINT listing */
    pthread_t thread;
};

static inline void fake_reply(struct fake *f, struct outbuf *ob,
                              const char *line, size_t n)
{
    if (f->mode == FAKE_SLOW)
        time_sleep_ns(300000);
    if (f->mode == FAKE_REDIS) {
        ob_puts(ob, "-ERR unknown command\r\n");
        return;
    }
    if (f->mode == FAKE_GARBAGE) {
        static const char junk[] = "\x01\x02 garbage \xff";
        ob_append(ob, junk, sizeof(junk) - 1);
        if (n % 3 == 0)
            for (int i = 0; i < 600; i++)       /* an over-long line too */
                ob_puts(ob, "xxxxxxxxxx");
        ob_puts(ob, "\n");
        return;
    }
    if (strncmp(line, "ADD", 3) == 0 || strncmp(line, "DELETE", 6) == 0) {
        ob_puts(ob, PROTO_OK_LINE);
    } else if (strncmp(line, "PRINT", 5) == 0) {
        ob_puts(ob, ENTRY_PRINT_HEAD);
        for (size_t i = 0; i < f->print_lines; i++)
            ob_printf(ob, "%-30s -- %11s %4d\n", "Smith, Amy", "123-45-6789",
                      (int)(i % 100));
        ob_puts(ob, ENTRY_PRINT_TAIL);
    } else if (strncmp(line, "COUNT", 5) == 0) {
        ob_puts(ob, "3\n");
    } else if (strncmp(line, "DONE", 4) == 0) {
        ob_puts(ob, PROTO_BYE_LINE);
    } else {
        ob_puts(ob, PROTO_ERR_PREFIX "unknown command\n");
    }
}

/* Sends what the fake has buffered. Returns 0 or -errno. */
static inline int fake_flush(struct outbuf *ob, int fd)
{
    int rc = fd_write_all(fd, ob->buf, ob->len);
    ob_consume(ob, ob->len);
    return rc;
}

static inline void *fake_main(void *arg)
{
    struct fake *f = arg;
    static struct linereader lr;
    static char lr_mem[LR_BUF_SIZE];
    struct outbuf ob;
    int fd = accept(f->lfd, NULL, NULL);
    size_t answered = 0;
    int done = 0;

    if (fd < 0 || ob_init(&ob, 4096))
        return NULL;
    lr_init(&lr, PROTO_MAX_LINE);
    lr_attach(&lr, lr_mem);
    while (!done && lr_read(&lr, fd) > 0) {
        char *line;
        size_t n;
        while (!done && lr_next(&lr, &line, &n) == LR_LINE) {
            if (f->mode == FAKE_SILENT)
                continue;
            if (f->mode == FAKE_HANGUP && answered == 5) {
                done = 1;
                break;
            }
            fake_reply(f, &ob, line, answered++);
            done = strncmp(line, "DONE", 4) == 0;
            if (f->mode == FAKE_SLOW && fake_flush(&ob, fd))
                done = 1;
        }
        if (fake_flush(&ob, fd))
            break;
    }
    ob_destroy(&ob);
    close(fd);
    return NULL;
}

static inline void fake_start(struct fake *f, enum fake_mode mode)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t len = sizeof(a);

    f->mode = mode;
    if (!f->print_lines)
        f->print_lines = 3;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(f->lfd, 0);
    ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(f->lfd, 4), 0);
    ck_assert_int_eq(getsockname(f->lfd, (struct sockaddr *)&a, &len), 0);
    snprintf(f->port, sizeof(f->port), "%u", ntohs(a.sin_port));
    ck_assert_int_eq(pthread_create(&f->thread, NULL, fake_main, f), 0);
}

static inline void fake_stop(struct fake *f)
{
    shutdown(f->lfd, SHUT_RDWR);
    close(f->lfd);
    pthread_detach(f->thread);
}

#endif
