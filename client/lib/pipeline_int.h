/* pipeline_int.h -- what the pieces of one pipelined session share, and
 * nothing outside them includes: the session state, the ring of in-flight
 * requests, the failure record and the entry points of the two sides.
 *
 *   pipeline.c         pl_run: connect, start the reader, send, finish;
 *   pipeline_sender.c  the caller's thread: requests in batches, sent;
 *   pipeline_reader.c  the reader thread: replies framed and matched.
 *
 * Locking: pl.mu guards the in-flight ring (head, tail, slots), sender_done
 * and the failure record. Everything else belongs to one side: the sender
 * owns requests/bytes_out, the reader owns the framer, the histogram and the
 * reply counters. abort is an atomic so blocked waits can poll it.
 */
#ifndef SSN_CLIENT_PIPELINE_INT_H
#define SSN_CLIENT_PIPELINE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include "hist.h"
#include "linereader.h"
#include "pipeline.h"

/* One request sent and not yet answered. */
struct slot {
    uint64_t t_ns;              /* when its batch was handed to send() */
    int cmd;                    /* enum proto_cmd */
};

struct pl {
    const struct pl_opts *o;
    struct pl_result *r;
    struct hist *lat;
    int fd;
    uint64_t t_start, deadline; /* deadline 0: none */
    atomic_int abort;           /* either side gave up */

    pthread_mutex_t mu;
    pthread_cond_t space;       /* the reader freed ring slots (its timed
                                   waits run on CLOCK_MONOTONIC) */
    struct slot *ring;          /* PL_MAX_INFLIGHT slots; protected by mu */
    uint64_t head, tail;        /* next to send, oldest unanswered; mu */
    int sender_done;            /* nothing more will be pushed; mu */
    uint64_t end_ns;            /* last reply or failure; mu */

    struct linereader lr;       /* the reader's */
    char lr_mem[LR_BUF_SIZE];   /* lr's buffer */
};

/* Records the first failure only (takes p->mu), and tells the other side to
 * stop: sets p->abort and wakes a sender waiting for ring room. */
void pl_fail_set(struct pl *p, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* pl_fail_set for a socket error err (positive errno) met while doing
 * something ("sending requests"): reset, closed and timed out get their own
 * kinds; ECANCELED (the other side gave up) records nothing. */
void pl_fail_errno(struct pl *p, int err, const char *doing);

/* The reader thread (pthread_create's start routine; arg is the struct pl):
 * receives and frames replies until every request is answered or the
 * session fails. Returns NULL. */
void *pl_reader_main(void *arg);

/* The sender, in the caller's thread: draws requests from src, publishes
 * their slots and sends them in batches through buf (PL_BATCH_BYTES), until
 * the source ends or the session fails. Failures are recorded in p. */
void pl_sender_run(struct pl *p, struct pl_source *src, char *buf);

#endif
