/* bench-wakeup.c -- one pthread_cond_broadcast versus one pthread_cond_signal
 * per waiter (issue 5, docs/LESSONS.md). Starts --threads waiters (default
 * 5,000, 64 KiB stacks; fewer if the system refuses, and says so), parks them
 * all on condition variables, wakes them all, and reports the time from the
 * first signal to the last waiter awake. Variants:
 *   broadcast            one shared mutex + condition, one broadcast
 *   signal               each waiter has its own mutex + condition; main
 *                        signals each one (how the journal's group commit
 *                        would wake its waiters)
 *   signal-shared-mutex  own condition per waiter but one shared mutex
 *                        (separates "one signal each" from "one mutex for all")
 *
 * Measuring it correctly:
 *  - a waiter bumps nready while holding its wait mutex and keeps holding it
 *    until pthread_cond_wait releases it, so once nready equals the number
 *    started, main taking each wait mutex once proves every waiter is inside
 *    pthread_cond_wait before the clock starts;
 *  - the wait is on a predicate (the round number, guarded by the wait mutex),
 *    so a spurious wake-up goes back to sleep and is never counted;
 *  - each woken waiter reads CLOCK_MONOTONIC itself; the result is the latest
 *    of those minus the time main began waking. A round is not over until
 *    every waiter has reported (all_woken), and the waiters then park on a
 *    semaphore that costs nothing while later waiters are still waking.
 * One warm-up round is run and discarded; the median of --repeat rounds is
 * reported.
 */
#include "bench-util.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_WAITERS 5000        /* threads asked for */
#define DEFAULT_REPEAT  5           /* timed rounds; the median is reported */
#define WAITER_STACK    (64 << 10)  /* small, so thousands of threads fit */
#define MAX_WAITERS     100000      /* most --threads accepted */

enum { V_BROADCAST, V_SIGNAL, V_SIGNAL_SHARED_MU, NVAR };

static const char *const variant_names[NVAR] = {
    "broadcast", "signal", "signal-shared-mutex",
};

struct waiter {
    pthread_mutex_t *mu;        /* the wait mutex: shared_mu or own_mu */
    pthread_cond_t *cv;         /* shared_cv or own_cv */
    unsigned *gen;              /* round this waiter may run; guarded by *mu */
    pthread_mutex_t own_mu;
    pthread_cond_t own_cv;
    unsigned own_gen;
    struct timespec woke;       /* set by the waiter before it reports */
    pthread_t tid;
} __attribute__((aligned(64)));  /* one cache line each: no false sharing */

/* The shared wait mutex; it guards shared_gen (broadcast) and, in
 * signal-shared-mutex, every waiter's own_gen. */
static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t shared_cv = PTHREAD_COND_INITIALIZER;
static unsigned shared_gen;

/* nready: waiters parked for the current round; ready_target: how many to
 * expect (INT_MAX until main knows). Both guarded by ready_mu. */
static pthread_mutex_t ready_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cv = PTHREAD_COND_INITIALIZER;
static int nready, ready_target = INT_MAX;

static atomic_int nstarted;     /* threads created for this variant */
static atomic_int nwoken;       /* waiters awake this round */
static atomic_bool stopping;    /* read by waiters after each release */
static sem_t all_woken;         /* posted by the last waiter to wake */
static sem_t release;           /* one post per waiter ends a round */

static void *waiter_main(void *arg)
{
    struct waiter *w = arg;

    for (unsigned round = 1;; round++) {
        pthread_mutex_lock(w->mu);
        pthread_mutex_lock(&ready_mu);
        if (++nready == ready_target)
            pthread_cond_signal(&ready_cv);
        pthread_mutex_unlock(&ready_mu);
        while (*w->gen < round)             /* spurious wake-ups sleep again */
            pthread_cond_wait(w->cv, w->mu);
        clock_gettime(CLOCK_MONOTONIC, &w->woke);
        pthread_mutex_unlock(w->mu);
        if (atomic_fetch_add(&nwoken, 1) + 1 == atomic_load(&nstarted))
            sem_post(&all_woken);
        while (sem_wait(&release) != 0 && errno == EINTR)
            ;
        if (atomic_load(&stopping))
            return NULL;
    }
}

/* Seconds of one round: [0] last awake, [1] first awake, [2] signalling loop,
 * all measured from the moment main began waking. Returns 0, or -1 if a
 * waiter woke before it was signalled (a broken predicate). */
static int run_round(int variant, struct waiter *w, int n, unsigned round,
                     double out[3])
{
    struct timespec ts;
    double t0, first = 0, last = 0;

    pthread_mutex_lock(&ready_mu);
    ready_target = n;
    while (nready < n)
        pthread_cond_wait(&ready_cv, &ready_mu);
    pthread_mutex_unlock(&ready_mu);
    /* Fence: each waiter held its wait mutex from nready++ until inside
     * pthread_cond_wait, so getting each mutex once means all are waiting. */
    if (variant == V_SIGNAL) {
        for (int i = 0; i < n; i++) {
            pthread_mutex_lock(w[i].mu);
            pthread_mutex_unlock(w[i].mu);
        }
    } else {
        pthread_mutex_lock(&shared_mu);
        pthread_mutex_unlock(&shared_mu);
    }

    clock_gettime(CLOCK_MONOTONIC, &ts);
    t0 = bench_ts_sec(&ts);
    if (variant == V_BROADCAST) {
        pthread_mutex_lock(&shared_mu);
        shared_gen = round;
        pthread_mutex_unlock(&shared_mu);
        pthread_cond_broadcast(&shared_cv);
    } else {
        /* Signalling after the unlock is safe (the waiter rechecks its
         * predicate under the mutex) and spares it waking into a held lock. */
        for (int i = 0; i < n; i++) {
            pthread_mutex_lock(w[i].mu);
            *w[i].gen = round;
            pthread_mutex_unlock(w[i].mu);
            pthread_cond_signal(w[i].cv);
        }
    }
    out[2] = bench_now() - t0;
    while (sem_wait(&all_woken) != 0 && errno == EINTR)
        ;
    for (int i = 0; i < n; i++) {
        double t = bench_ts_sec(&w[i].woke);

        if (i == 0 || t < first)
            first = t;
        if (t > last)
            last = t;
    }
    out[0] = last - t0;
    out[1] = first - t0;
    return first < t0 ? -1 : 0;
}

/* Starts up to `asked` waiters for one variant, runs 1 + repeat rounds and
 * stops them. Fills res[r][3] for the timed rounds and returns the number of
 * waiters started (0 on failure, after printing why). *why gets the
 * pthread_create error that stopped the creation early, or 0. */
static int run_variant(int variant, struct waiter *w, int asked, int repeat,
                       double (*res)[3], int *why)
{
    pthread_attr_t attr;
    int n = 0, rc = 0, status = 0;
    double warm[3];

    shared_gen = 0;
    nready = 0;
    ready_target = INT_MAX;
    atomic_store(&nwoken, 0);
    atomic_store(&stopping, false);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, WAITER_STACK);
    atomic_store(&nstarted, asked);     /* lowered below if creation fails */
    for (n = 0; n < asked; n++) {
        bool own_mu = variant == V_SIGNAL, own_cv = variant != V_BROADCAST;

        pthread_mutex_init(&w[n].own_mu, NULL);
        pthread_cond_init(&w[n].own_cv, NULL);
        w[n].own_gen = 0;
        w[n].mu = own_mu ? &w[n].own_mu : &shared_mu;
        w[n].cv = own_cv ? &w[n].own_cv : &shared_cv;
        w[n].gen = own_cv ? &w[n].own_gen : &shared_gen;
        if ((rc = pthread_create(&w[n].tid, &attr, waiter_main, &w[n])) != 0)
            break;
    }
    pthread_attr_destroy(&attr);
    atomic_store(&nstarted, n);
    *why = rc;
    if (n == 0) {
        fprintf(stderr, "bench-wakeup: pthread_create: %s\n", strerror(rc));
        return 0;
    }

    for (int r = 0; r <= repeat && status == 0; r++) {
        status = run_round(variant, w, n, (unsigned)r + 1, r ? res[r - 1] : warm);
        pthread_mutex_lock(&ready_mu);
        nready = 0;
        pthread_mutex_unlock(&ready_mu);
        atomic_store(&nwoken, 0);
        if (r == repeat || status != 0)
            atomic_store(&stopping, true);
        for (int i = 0; i < n; i++)
            sem_post(&release);
    }
    for (int i = 0; i < n; i++)
        pthread_join(w[i].tid, NULL);
    for (int i = 0; i < asked && i <= n; i++) {
        pthread_mutex_destroy(&w[i].own_mu);
        pthread_cond_destroy(&w[i].own_cv);
    }
    if (status != 0) {
        fprintf(stderr, "bench-wakeup: %s: a waiter woke before the first "
                "signal\n", variant_names[variant]);
        return 0;
    }
    return n;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: bench-wakeup [options]\n"
        "  Parks N threads on condition variables and wakes them all; prints\n"
        "  the time from the first signal to the last thread awake (median).\n"
        "  -t, --threads N      waiters to start (default %d; fewer if the\n"
        "                       system refuses, and the table says so)\n"
        "  -r, --repeat R       timed rounds, median reported (default %d),\n"
        "                       after one discarded warm-up round\n"
        "  -w, --variants LIST  subset of: broadcast,signal,signal-shared-mutex\n"
        "                       (default: all); -w was -V before 0.2.0, -V is\n"
        "                       --version now\n"
        "  -j, --json           print JSON instead of the table\n"
        "  -h, --help           this text\n"
        "  -V, --version        the version\n"
        "Exit status: 0 when every round ran, 1 when a run failed (memory,\n"
        "threads), 2 for bad arguments.\n", DEFAULT_WAITERS, DEFAULT_REPEAT);
}

/* The command line, parsed. */
struct wake_opts {
    unsigned long asked, repeat;    /* --threads, --repeat */
    int sel[NVAR];                  /* variants to run */
    bool json;
};

/* Parses argv into o. Returns 0, or the exit status for bad arguments
 * after saying why; --help and --version exit here (bench_getopt). */
static int parse_args(int argc, char **argv, struct wake_opts *o)
{
    const struct bench_opt opts[] = {
        { "threads", 't', BENCH_OPT_COUNT, &o->asked, 1, MAX_WAITERS },
        { "repeat", 'r', BENCH_OPT_COUNT, &o->repeat, 1, 1000 },
        { "variants", 'w', BENCH_OPT_VARIANTS, o->sel, 0, 0 },
        { "json", 'j', BENCH_OPT_FLAG, &o->json, 0, 0 },
        { NULL, 0, 0, NULL, 0, 0 },
    };
    const struct bench_variants variants = { variant_names, NVAR };
    const struct bench_prog prog = { "bench-wakeup", usage };

    return bench_getopt(&prog, argc, argv, opts, &variants);
}

/* What the runs found, per variant. */
struct wake_results {
    double (*res)[NVAR][3];     /* [round][variant]: run_round's three times */
    int started[NVAR];          /* waiters that existed */
    int why[NVAR];              /* pthread_create error that limited them */
    int fewest;                 /* least started over the variants run */
};

/* Runs every selected variant. Returns 0, or -1 after saying why. */
static int run_all(const struct wake_opts *o, struct waiter *w,
                   struct wake_results *out)
{
    static double tmp[1000][3];     /* one variant's rounds */
    int asked = (int)o->asked, repeat = (int)o->repeat;

    out->fewest = asked;
    for (int v = 0; v < NVAR; v++) {
        if (!o->sel[v])
            continue;
        out->started[v] = run_variant(v, w, asked, repeat, tmp, &out->why[v]);
        if (out->started[v] == 0)
            return -1;
        for (int r = 0; r < repeat; r++)
            memcpy(out->res[r][v], tmp[r], sizeof tmp[r]);
        if (out->started[v] < out->fewest)
            out->fewest = out->started[v];
    }
    return 0;
}

/* The medians over the rounds of variant v's three times, in ms. */
static void medians(const struct wake_results *wr, int v, int repeat,
                    double med[3])
{
    double col[1000];

    for (int k = 0; k < 3; k++) {
        for (int r = 0; r < repeat; r++)
            col[r] = wr->res[r][v][k] * 1e3;
        med[k] = bench_median(col, repeat);     /* sorts col */
    }
}

static void print_json(const struct wake_opts *o,
                       const struct wake_results *wr)
{
    double med[3];
    int repeat = (int)o->repeat;
    bool first = true;

    printf("{\"tool\": \"bench-wakeup\", ");
    bench_json_machine(stdout);
    printf("\"threads_requested\": %lu, \"threads_started\": %d, "
           "\"stack_bytes\": %d, \"repeat\": %d, \"results\": [",
           o->asked, wr->fewest, WAITER_STACK, repeat);
    for (int v = 0; v < NVAR; v++) {
        if (!o->sel[v])
            continue;
        medians(wr, v, repeat, med);
        printf("%s{\"variant\": \"%s\", \"threads_started\": %d, "
               "\"last_awake_ms\": [", first ? "" : ", ", variant_names[v],
               wr->started[v]);
        for (int r = 0; r < repeat; r++)        /* round by round */
            printf("%s%.4f", r ? ", " : "", wr->res[r][v][0] * 1e3);
        printf("], \"median_last_awake_ms\": %.4f, \"median_first_awake_ms\": "
               "%.4f, \"median_signalling_ms\": %.4f}", med[0], med[1], med[2]);
        first = false;
    }
    printf("]}\n");
}

static void print_table(const struct wake_opts *o,
                        const struct wake_results *wr)
{
    double med[3];

    bench_print_machine(stdout, "bench-wakeup");
    printf("threads: %d started of %lu requested (%d KiB stacks)\n",
           wr->fewest, o->asked, WAITER_STACK >> 10);
    printf("# ms from the first signal; median of %lu rounds after 1 "
           "warm-up\n", o->repeat);
    printf("%-20s %8s %12s %12s %12s\n", "variant", "threads",
           "last awake", "first awake", "signalling");
    for (int v = 0; v < NVAR; v++) {
        if (!o->sel[v])
            continue;
        medians(wr, v, (int)o->repeat, med);
        printf("%-20s %8d %12.3f %12.3f %12.3f\n", variant_names[v],
               wr->started[v], med[0], med[1], med[2]);
    }
}

int main(int argc, char **argv)
{
    struct wake_opts o = { .asked = DEFAULT_WAITERS, .repeat = DEFAULT_REPEAT };
    struct wake_results wr = { .res = NULL };
    int rc;

    for (int v = 0; v < NVAR; v++)
        o.sel[v] = 1;
    if ((rc = parse_args(argc, argv, &o)) != 0)
        return rc;
    struct waiter *w = aligned_alloc(64, sizeof *w * o.asked);
    wr.res = calloc(o.repeat, sizeof *wr.res);
    if (w == NULL || wr.res == NULL || sem_init(&all_woken, 0, 0) != 0 ||
        sem_init(&release, 0, 0) != 0) {
        fprintf(stderr, "bench-wakeup: out of memory for %lu waiters\n",
                o.asked);
        return 1;
    }
    if (run_all(&o, w, &wr) < 0)
        return 1;
    if (o.json)
        print_json(&o, &wr);
    else
        print_table(&o, &wr);
    for (int v = 0; v < NVAR; v++)
        if (wr.why[v] != 0)
            fprintf(o.json ? stderr : stdout, "note: %s fell back to %d "
                    "threads: pthread_create: %s\n", variant_names[v],
                    wr.started[v], strerror(wr.why[v]));
    free(wr.res);
    free(w);
    return 0;
}
