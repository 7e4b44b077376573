/* pipeline.h -- one pipelined client session: the engine inside inclient
 * and inside each of kill_it's clients.
 *
 * The calling thread sends: it draws requests from a source, gathers them
 * into batches and writes them without waiting for replies. A reader thread
 * receives: it frames replies (frame.h), matches each to the oldest
 * unanswered request and records the latency from that request's send to
 * its last reply line. The two share a ring of in-flight requests guarded by
 * a mutex; the socket is non-blocking and every wait is bounded, so a dead,
 * hung or babbling server ends the session with a reason, never a hang.
 * With a password the session opens with AUTH (ctl.h), answered before the
 * first request is sent; a reply of PL_AUTH_REQUIRED ends it (PL_ERR_AUTH).
 */
#ifndef SSN_CLIENT_PIPELINE_H
#define SSN_CLIENT_PIPELINE_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "gen.h"
#include "hist.h"
#include "linereader.h"
#include "replykind.h"

#define PL_MAX_INFLIGHT 65536   /* requests sent and unanswered, at most */
#define PL_BATCH_BYTES  16384   /* requests gathered into one send */
#define PL_REPLY_MAX    4096    /* longest reply line accepted */
#define PL_RATE_RCVBUF  4096    /* SO_RCVBUF under --rate (kernel doubles it) */
#define PL_RATE_MSS     1460    /* TCP_MAXSEG under --rate: Ethernet's */
#define PL_RATE_BURST   4096    /* bytes of credit idle time can earn */
#define PL_CONNECT_MS   10000   /* connect time limit when no timeout is set */

/* Where requests come from. next writes one request line, '\n' included,
 * into buf (cap bytes) and returns its length and its kind (*cmd, an enum
 * proto_cmd); 0 at the end; -EAGAIN when it would block (then fd is polled
 * for input and next is called again); another -errno on failure. */
struct pl_source {
    ssize_t (*next)(void *arg, char *buf, size_t cap, int *cmd);
    void *arg;
    int fd;                     /* polled after -EAGAIN; -1 if never */
};

/* A source reading request lines from a file descriptor (stdin). Blank
 * lines are skipped (the server does not answer them); over-long lines are
 * dropped with a warning; a last line without '\n' is still sent. */
struct pl_fdsource {
    struct linereader lr;
    char lr_mem[LR_BUF_SIZE];   /* lr's buffer */
    int fd;
    int eof;
    size_t dropped;             /* over-long lines dropped */
};
void pl_source_fd(struct pl_source *s, struct pl_fdsource *fs, int fd);

/* A source running the generator g (gen.h). */
void pl_source_gen(struct pl_source *s, struct gen *g);

/* Live counters, readable from another thread or process while the session
 * runs (kill_it keeps them in shared memory for its progress line and its
 * watchdog). */
struct pl_progress {
    _Atomic uint64_t sent;          /* requests written */
    _Atomic uint64_t replies;       /* replies complete */
    _Atomic uint64_t bytes_in;      /* reply bytes received */
    _Atomic uint64_t last_reply_ns; /* monotonic time of the last whole
                                       reply: bytes that drip in and end
                                       none are no progress */
};

struct pl_opts {
    const char *host, *port;
    const char *password;       /* sent as "AUTH password" first, and "OK"
                                   expected; NULL: no AUTH */
    FILE *echo;                 /* reply lines go here; NULL: nowhere */
    uint64_t rate;              /* receive at most this many bytes/s; 0: no limit */
    int rcvbuf;                 /* SO_RCVBUF; 0: PL_RATE_RCVBUF under rate */
    int mss;                    /* TCP_MAXSEG; 0: PL_RATE_MSS under rate */
    double timeout_s;           /* whole session; 0: none */
    double hang_s;              /* fail after this long without a whole
                                   reply while replies are due; 0: never */
    struct pl_progress *progress;   /* may be NULL */
    atomic_int *stop;           /* set from outside to give up; may be NULL */
};

enum pl_fail {
    PL_OK,
    PL_ERR_CONNECT,             /* could not connect */
    PL_ERR_RESET,               /* connection reset by the server */
    PL_ERR_CLOSED,              /* server closed before every reply came */
    PL_ERR_HUNG,                /* no whole reply for hang_s with replies due */
    PL_ERR_TIMEOUT,             /* the session ran past timeout_s */
    PL_ERR_IO,                  /* another socket error */
    PL_ERR_SOURCE,              /* reading the requests failed */
    PL_ERR_STOPPED,             /* *stop was set */
    PL_ERR_AUTH,                /* AUTH refused, or the server wants it */
    PL_ERR_INTERNAL,            /* out of memory, thread creation */
};

struct pl_result {
    uint64_t requests;          /* requests sent */
    uint64_t replies;           /* replies received complete */
    uint64_t errors;            /* replies that were "Error: ..." */
    uint64_t kinds[RK_KINDS];   /* replies by kind (replykind.h): the
                                   errors split into not found, exists and
                                   real errors; a malformed one in none */
    uint64_t bad;               /* replies of the wrong shape, or unasked for */
    uint64_t bytes_out, bytes_in;
    uint64_t inflight_max;      /* most requests unanswered at once */
    uint64_t service_ns;        /* connect to last reply (or to failure) */
    uint64_t lat_min, lat_p50, lat_p90, lat_p99, lat_max;  /* ns */
    double lat_mean;            /* ns */
    int fail;                   /* enum pl_fail */
    char what[200];             /* why it failed; "" when fail == PL_OK */
};

/* The reply a server with a password gives to anything before AUTH. */
#define PL_AUTH_REQUIRED "Error: authentication required"

/* Runs one session to its end. Fills *r (always) and, when lat is not
 * NULL, adds every latency into it. Returns 0 when the session completed
 * (every request answered; error replies included), -1 when it failed:
 * r->fail and r->what say why. */
int pl_run(const struct pl_opts *o, struct pl_source *src,
           struct pl_result *r, struct hist *lat);

/* A short name for a failure kind ("reset", "hung", ...). */
const char *pl_fail_name(int fail);

#endif
