/* fuzz_session.h -- what the parts of the session fuzz target share (fs_:
 * fuzz_session). fuzz_session.c reads the input's setting and runs one
 * session (the input layout and the oracle's list are at its top);
 * fuzz_session_drive.c is the client and the two drivers, thread and
 * event; fuzz_session_model.c is the reference model;
 * fuzz_session_reply.c checks each request's reply against it; and
 * fuzz_session_check.c checks the whole conversation and the store once
 * the session has ended. A check aborts through FUZZ_CHECK (fuzz.h) on a
 * broken rule, so none returns an error.
 */
#ifndef SSN_FUZZ_SESSION_H
#define SSN_FUZZ_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include "proto.h"

#define FUZZ_PASSWORD   "s3cret"    /* the server's, when it has one */

struct listing;
struct lock_policy;
struct session_pool;

/* ---- the client: what the session sends (fuzz_session_drive.c) ---------- */

/* A listing the event driver holds until its "socket" takes it, or bytes
 * queued behind one (econn_send.c queues what follows a held reply). */
struct queued {
    struct listing *l;          /* NULL: bytes */
    char *bytes;
    size_t len;
};

struct client {
    char *buf;                  /* every byte the client received */
    size_t len, cap;
    struct queued *q;           /* the event driver's queue, in order */
    size_t nq, qcap;
    int sends, fail_from;       /* sends so far; fail from this one (0:
                                   never) */
    int failed;                 /* a send was refused */
};

/* One run's setting and what came of it. */
struct run {
    const uint8_t *in;          /* what the client sends */
    size_t n;
    size_t fed;                 /* bytes the session was given */
    int password, events, quiet;
    int batch_max;              /* session_set_batch's: --batch - 1 */
    size_t limit;               /* --max-output */
    uint8_t seed;               /* chunk sizes: 0, whole reads */
    unsigned x;                 /* the sizes' generator */
    int ending;                 /* the session had ended at the last */
    int send_error;             /* ... its failed send's -errno */
    struct client client;
};

/* The drivers: one session on srv.store fed r's input, as threads.c
 * (thread) or econn.c (events) would. Whatever the client received is
 * left in r->client (its buf and q are the caller's to free), and how the
 * session ended in r->ending and r->send_error. */
void fs_run_thread(struct run *r, struct session_pool *pool);
void fs_run_events(struct run *r, struct session_pool *pool);

/* ---- the reference model (fuzz_session_model.c) ------------------------- */

struct model {
    struct person *p;           /* sorted as the tree: last, then first */
    size_t n, cap;
};

/* Where (first, last) is in m, or would go: *found says which. */
size_t fs_model_find(const struct model *m, const char *first,
                     const char *last, int *found);
/* p copied in at at (fs_model_find's); the one at at taken out. */
void fs_model_insert(struct model *m, size_t at, const struct person *p);
void fs_model_erase(struct model *m, size_t at);
/* PRINT's and FIND's line for p, without its '\n', into buf; its length
 * as snprintf gives it. */
size_t fs_person_line(const struct person *p, char *buf, size_t size);
/* DIGEST's reply: the SHA-256 of m's canonical dump, in hex. */
void fs_model_digest(const struct model *m, char hex[65]);

/* ---- each request's reply (fuzz_session_reply.c) ------------------------ */

/* The replies, as lines. */
struct replies {
    const char *buf;
    size_t len, at;
};

/* The conversation checked against the model. */
struct conv {
    const struct run *run;
    struct replies r;
    struct model m;
    int authed, failures;
    int ended;                  /* QUIT, a third wrong AUTH, the limit */
    int lost;                   /* the replies ran out: a send failed */
};

/* One request's reply, read from cv->r, checked against cv->m (which an
 * ADD or DELETE that did it changes); req NULL: a line over the limit.
 * Returns 0 to go on, 1 once the session has ended or the replies ran
 * out. */
int fs_check_request(struct conv *cv, enum proto_cmd cmd,
                     const struct proto_req *req, const struct person *p);

/* ---- after the session (fuzz_session_check.c) --------------------------- */

/* The whole conversation: the telnet answers, then each request's reply
 * in order, then how the session ended. *m gets the model of the people
 * the replies say are stored (m->p is the caller's to free). */
void fs_check_conversation(struct run *run, struct model *m);

/* The store after the session: consistent, holding m's people (when every
 * reply was seen); then emptied, checked again, and made afresh under
 * policy. */
void fs_check_store(const struct run *run, const struct model *m,
                    const struct lock_policy *policy);

#endif
