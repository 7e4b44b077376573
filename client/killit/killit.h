/* killit.h -- kill_it's state, shared by its files: kill_it.c (options,
 * main), killit_verify.c (questions to the server, expected state,
 * verdict), killit_run.c (forking the clients and watching them),
 * killit_report.c (table, JSON and CSV).
 *
 * The clients are forked processes; each writes its progress and result
 * into its own slot of an anonymous shared mapping. The parent only reads
 * a slot's result after the child exited, and reads progress counters with
 * atomic loads while it runs.
 */
#ifndef SSN_CLIENT_KILLIT_H
#define SSN_CLIENT_KILLIT_H

#include <stdint.h>
#include <sys/types.h>
#include "digest.h"
#include "gen.h"
#include "hist.h"
#include "names.h"
#include "cliutil.h"
#include "pipeline.h"

#define KI_MAX_CLIENTS  1000    /* the server's default --max-clients is 1024 */
#define KI_TIMEOUT_S    60.0    /* default --timeout */
#define KI_HANG_S       10.0    /* default no-progress watchdog */
#define KI_REASONS      1024    /* room for the FAILED reasons */

/* One client's slot in shared memory. */
struct ki_slot {
    struct pl_progress prog;    /* written by the child while it runs */
    struct pl_result res;       /* written by the child just before exiting */
    struct hist lat;            /* its latencies, likewise */
    _Atomic int done;           /* 1 once res and lat are complete */
};

enum ki_verdict { KI_VERIFIED, KI_FAILED, KI_NOT_VERIFIED };

struct killit {
    /* options */
    const char *host, *port;
    uint64_t nevents, seed, rate;
    uint64_t preload;           /* people added before the clients start */
    unsigned nclients;
    unsigned nslow;             /* clients 0..nslow-1 get the rate limit */
    int rcvbuf, mss;
    double timeout_s, hang_s;
    struct gen_mix mix;
    const char *lastnames, *json_path, *csv_path;
    const char *password_file;  /* --password-file; NULL: no AUTH */
    char password[CLI_PASSWORD_MAX + 1];    /* read from it; wiped at exit */
    pid_t server_pid;           /* --server-pid, or found from the port; 0 */
    int quiet;                  /* no table on stdout */

    struct namelist names;

    /* the run */
    struct ki_slot *slot;       /* nclients slots, MAP_SHARED */
    pid_t *pid;                 /* children; 0 once reaped */
    int *exit_status;           /* waitpid status per child */
    double wall_s;              /* first fork to last child finished */
    int hung, timed_out, interrupted;
    uint64_t hung_outstanding;  /* requests unanswered when it hung */

    /* verification */
    long long start_count;      /* COUNT before the run; -1 unknown */
    char start_note[200];       /* why start_count is unknown */
    char preload_fail[220];     /* why the preload failed; "" if it did not */
    size_t expect_count;
    char expect_digest[DIGEST_HEX_LEN + 1];
    int server_reachable;       /* after the run */
    long long end_count;        /* -1 unknown */
    char end_check[200], end_digest[200];

    /* the store lock, from the server's STATS: zeroed (STATS RESET) just
     * before the clients start, read just after they finish */
    int lock_known;             /* 1 when both worked */
    char lock_note[200];        /* why not, when 0 */
    char lock_mode[16];         /* STATS "mode" */
    int lock_bad;               /* a lock_ figure was no count */
    uint64_t lock_acq, lock_contended, lock_wait_us, lock_hold_us;
    uint64_t lock_wait_max_us, lock_hold_max_us;
    uint64_t lock_wait_p99_us, lock_hold_p99_us;

    enum ki_verdict verdict;
    char reasons[KI_REASONS];   /* "; "-separated, for FAILED and not verified */
};

/* killit_verify.c. Every connection they open sends AUTH first when
 * there is a password. ki_check_start asks COUNT before the run: returns
 * -1 when the server cannot be reached at all (the reason is on stderr),
 * -2 when it refused AUTH or wants a password it was not given (the
 * reason is in start_note), else 0 with start_count set (-1 and
 * start_note when it is unknown).
 * ki_preload adds --preload people (sets preload_fail on failure).
 * ki_expected computes expect_count and expect_digest; 0 or -1.
 * ki_check_end asks COUNT, CHECK and DIGEST after the run.
 * ki_lock_reset sends STATS RESET just before the clients start, and
 * ki_lock_read reads STATS just after: the lock_ figures (lock_known 0
 * and lock_note when either failed).
 * ki_judge sets verdict and reasons from all of the above. */
int ki_check_start(struct killit *k);
void ki_preload(struct killit *k);
int ki_expected(struct killit *k);
void ki_check_end(struct killit *k);
void ki_lock_reset(struct killit *k);
void ki_lock_read(struct killit *k);
void ki_judge(struct killit *k);

/* killit_run.c: forks the clients, waits for them (bounded by the timeout
 * and the no-progress watchdog), reaps them. Returns 0, or -1 when the run
 * could not start (fork, mmap); the cause is on stderr. */
int ki_run(struct killit *k);
void ki_cleanup(struct killit *k);

/* killit_report.c */
void ki_print_table(const struct killit *k, FILE *f);
/* The lock's figures of the run, under the table (nothing when unknown
 * but the reason). */
void ki_print_lock(const struct killit *k, FILE *f);
int ki_write_json(const struct killit *k, const char *path);
int ki_write_csv(const struct killit *k, const char *path);
const char *ki_verdict_name(enum ki_verdict v);

/* Service-time summary over the clients that finished: mean, min, max. */
void ki_service_summary(const struct killit *k, double *mean, double *min,
                        double *max);

#endif
