/* source.c -- the two request sources of a pipelined session
 * (pipeline.h): the generator, and lines read from a file descriptor.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include "net.h"
#include "pipeline.h"
#include "proto.h"

/* ---- generator ---------------------------------------------------------- */

static const int gen_cmd[GEN_NOPS] = {
    [GEN_ADD] = PROTO_ADD, [GEN_DELETE] = PROTO_DELETE,
    [GEN_PRINT] = PROTO_PRINT, [GEN_FIND] = PROTO_FIND,
    [GEN_DONE] = PROTO_QUIT,
};

static ssize_t gen_source_next(void *arg, char *buf, size_t cap, int *cmd)
{
    enum gen_op op;
    if (cap < GEN_LINE_MAX)
        return -EINVAL;
    size_t n = gen_next(arg, buf, &op);
    if (n == 0)
        return op == GEN_NOPS ? -ENOMEM : 0;
    *cmd = gen_cmd[op];
    return (ssize_t)n;
}

void pl_source_gen(struct pl_source *s, struct gen *g)
{
    s->next = gen_source_next;
    s->arg = g;
    s->fd = -1;
}

/* ---- lines from a file descriptor ---------------------------------------- */

/* Classifies and copies one line; 0 when it is blank (not sent). */
static ssize_t take_line(const char *line, size_t len, char *buf, size_t cap,
                         int *cmd)
{
    struct proto_req req;
    struct person scratch;

    if (len + 1 > cap)
        return -EINVAL;
    *cmd = proto_parse(line, len, &req, &scratch);
    if (*cmd == PROTO_BLANK)
        return 0;
    memcpy(buf, line, len);
    buf[len] = '\n';
    return (ssize_t)len + 1;
}

static ssize_t fd_source_next(void *arg, char *buf, size_t cap, int *cmd)
{
    struct pl_fdsource *fs = arg;
    struct linereader *lr = &fs->lr;

    for (;;) {
        char *line;
        size_t len;
        int st = lr_next(lr, &line, &len);
        if (st == LR_TOOLONG) {
            if (fs->dropped++ == 0)     /* once: the count comes at the end */
                fprintf(stderr, "warning: request over %d bytes dropped\n",
                        PROTO_MAX_LINE);
            continue;
        }
        if (st == LR_LINE) {
            ssize_t n = take_line(line, len, buf, cap, cmd);
            if (n != 0)
                return n;
            continue;
        }
        if (fs->eof) {
            /* A last line without '\n' is still a request. The reader's
             * fields are public for exactly this kind of peek. */
            len = lr_pending(lr);
            if (len == 0 || lr->discarding)
                return 0;
            line = lr->buf + lr->start;
            lr->start = lr->end;
            if (line[len - 1] == '\r')
                len--;
            if (len > PROTO_MAX_LINE) {
                fs->dropped++;
                return 0;
            }
            ssize_t n = take_line(line, len, buf, cap, cmd);
            if (n != 0)
                return n;
            continue;
        }
        int ev = net_wait(fs->fd, POLLIN, 0);
        if (ev == 0)
            return -EAGAIN;
        if (ev < 0)
            return ev;
        ssize_t n = lr_read(lr, fs->fd);
        if (n == 0)
            fs->eof = 1;
        else if (n < 0 && n != -EAGAIN && n != -EWOULDBLOCK)
            return n;
    }
}

void pl_source_fd(struct pl_source *s, struct pl_fdsource *fs, int fd)
{
    memset(fs, 0, sizeof(*fs));
    lr_init(&fs->lr, PROTO_MAX_LINE);
    lr_attach(&fs->lr, fs->lr_mem);
    fs->fd = fd;
    s->next = fd_source_next;
    s->arg = fs;
    s->fd = fd;
}
