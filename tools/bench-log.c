/* bench-log.c -- what threads do (and cost) for logging (issue 5,
 * docs/LESSONS.md). Writes --lines lines of exactly LOG_LINE_LEN bytes to a
 * file in six ways and prints seconds and lines per second for each:
 *   (a) direct        buffered stdio writes from the calling thread
 *   (b) mutex         the same from T threads behind one mutex
 *   (c) thread-mutex  a new thread per line, lines serialised by a mutex
 *   (d) thread-spin   a new thread per line, lines serialised by a spinlock
 *   (e) queue         one logger thread fed through a malloc'd queue and a
 *                     condition variable, signalled once per line
 *   (f) dbuf          what server/log.c does: callers memcpy into a buffer
 *                     under a mutex (no I/O under it); one writer thread swaps
 *                     the full buffer for an empty one and write(2)s it
 *                     outside the lock; signalled once per buffer
 * (b), (e) and (f) run once for each T in --threads (default 1,4); (c) and
 * (d) use --slow-lines (default 100,000) because they are very slow.
 * Every run is checked: the file must hold exactly the requested number of
 * whole lines, each ending at a multiple of LOG_LINE_LEN, or the program
 * fails. The file lives in a temporary directory and is removed.
 */
#include "bench-dbuf.h"
#include "bench-logq.h"
#include "bench-util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_LINES       10000000UL  /* lines for (a), (b), (e), (f) */
#define DEFAULT_SLOW_LINES  100000UL    /* lines for the thread-per-line runs */
#define DEFAULT_THREADS     4           /* callers in (b), (e), (f) */
#define DEFAULT_REPEAT      3           /* runs per variant; median reported */
#define DEFAULT_BUFSIZE     (1 << 20)   /* bytes per buffer in (f) */
#define PERLINE_STACK       (64 << 10)  /* stack of each thread-per-line thread */

enum { V_DIRECT, V_MUTEX, V_THR_MUTEX, V_THR_SPIN, V_QUEUE, V_DBUF, NVAR };

static const char *const variant_names[NVAR] = {
    "direct", "mutex", "thread-mutex", "thread-spin", "queue", "dbuf",
};
static const char *const variant_desc[NVAR] = {
    "(a) direct, calling thread", "(b) T threads + mutex",
    "(c) thread/line, mutex", "(d) thread/line, spinlock",
    "(e) queue thread, 1 signal/line", "(f) double buffer, 1 signal/buf",
};

/* One run's parameters and what it counted. */
struct run {
    const char *path;
    unsigned long lines;
    int threads;
    size_t bufsize;
    unsigned long signals;      /* wake-ups sent to a logger thread */
    unsigned long retries;      /* pthread_create EAGAINs (thread per line) */
};

/* ---- (a) and (b): stdio from the callers ----------------------------- */

/* Guards file_f in (b): the whole fwrite of a line happens with it held. */
static pthread_mutex_t file_mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *file_f;

struct slice {
    unsigned long lo, hi;
    int id;
};

static void *mutex_writer(void *arg)
{
    struct slice *s = arg;
    char line[LOG_LINE_LEN + 1];

    for (unsigned long i = s->lo; i < s->hi; i++) {
        log_format_line(line, i, s->id);    /* formatting outside the lock */
        pthread_mutex_lock(&file_mu);
        fwrite(line, 1, LOG_LINE_LEN, file_f);
        pthread_mutex_unlock(&file_mu);
    }
    return NULL;
}

static int run_stdio(struct run *r, bool threaded)
{
    char line[LOG_LINE_LEN + 1];
    pthread_t tids[LOG_MAX_THREADS];
    struct slice sl[LOG_MAX_THREADS];
    int rc = 0, n = threaded ? r->threads : 0;

    if ((file_f = fopen(r->path, "w")) == NULL)
        return -errno;
    if (!threaded)
        for (unsigned long i = 0; i < r->lines; i++) {
            log_format_line(line, i, 0);
            fwrite(line, 1, LOG_LINE_LEN, file_f);
        }
    for (int t = 0; t < n; t++) {
        sl[t] = (struct slice){ r->lines * (unsigned long)t / (unsigned long)n,
                                r->lines * (unsigned long)(t + 1) / (unsigned long)n, t };
        if ((rc = pthread_create(&tids[t], NULL, mutex_writer, &sl[t])) != 0) {
            n = t;
            break;
        }
    }
    for (int t = 0; t < n; t++)
        pthread_join(tids[t], NULL);
    if (fclose(file_f) != 0 && rc == 0)
        rc = errno;
    return -rc;
}

/* ---- (c) and (d): a new thread per line ------------------------------- */

/* perline_f is written only with perline_mu (c) or perline_spin (d) held.
 * perline_done counts finished lines; whoever brings it to perline_total sets
 * perline_finished under perline_done_mu and signals main. The threads are
 * detached, so the add to perline_done must be each thread's last touch of
 * this run's globals (perline_f, perline_total, ...): once main sees the run
 * finished it rewrites them for the next run while stragglers still exit. */
static pthread_mutex_t perline_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t perline_spin;
static FILE *perline_f;
static bool perline_use_spin;
static unsigned long perline_total;
static atomic_ulong perline_done;
static pthread_mutex_t perline_done_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t perline_done_cv = PTHREAD_COND_INITIALIZER;
static bool perline_finished;

static void *perline_thread(void *arg)
{
    unsigned long seq = (unsigned long)(uintptr_t)arg;
    unsigned long total = perline_total;    /* read before the add, see above */
    char line[LOG_LINE_LEN + 1];

    log_format_line(line, seq, (int)(seq % 10000));
    if (perline_use_spin) {
        pthread_spin_lock(&perline_spin);
        fwrite(line, 1, LOG_LINE_LEN, perline_f);
        pthread_spin_unlock(&perline_spin);
    } else {
        pthread_mutex_lock(&perline_mu);
        fwrite(line, 1, LOG_LINE_LEN, perline_f);
        pthread_mutex_unlock(&perline_mu);
    }
    if (atomic_fetch_add(&perline_done, 1) + 1 == total) {
        pthread_mutex_lock(&perline_done_mu);
        perline_finished = true;
        pthread_cond_signal(&perline_done_cv);
        pthread_mutex_unlock(&perline_done_mu);
    }
    return NULL;
}

static int run_perline(struct run *r, bool spin)
{
    const struct timespec pause = { 0, 100000 };   /* 100 us after EAGAIN */
    pthread_attr_t attr;
    pthread_t tid;
    int rc = 0;

    if ((perline_f = fopen(r->path, "w")) == NULL)
        return -errno;
    perline_use_spin = spin;
    perline_total = r->lines;
    atomic_store(&perline_done, 0);
    perline_finished = false;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, PERLINE_STACK);
    for (unsigned long i = 0; i < r->lines; i++) {
        /* Detached threads pile up when creation outruns them; wait for
         * some to exit instead of failing. */
        while ((rc = pthread_create(&tid, &attr, perline_thread,
                                    (void *)(uintptr_t)i)) == EAGAIN) {
            r->retries++;
            nanosleep(&pause, NULL);
        }
        if (rc != 0) {
            /* Count the lines never started as done, so the threads that
             * did start still end the run. */
            unsigned long missing = r->lines - i;

            if (atomic_fetch_add(&perline_done, missing) + missing == r->lines) {
                pthread_mutex_lock(&perline_done_mu);
                perline_finished = true;
                pthread_mutex_unlock(&perline_done_mu);
            }
            break;
        }
    }
    pthread_attr_destroy(&attr);
    pthread_mutex_lock(&perline_done_mu);
    while (!perline_finished)
        pthread_cond_wait(&perline_done_cv, &perline_done_mu);
    pthread_mutex_unlock(&perline_done_mu);
    if (fclose(perline_f) != 0 && rc == 0)
        rc = errno;
    return -rc;
}

/* ---- checking, the table, main ----------------------------------------- */

/* Returns 0 when path holds exactly `lines` lines of LOG_LINE_LEN bytes;
 * otherwise prints what is wrong and returns -1. */
static int verify_file(const char *path, unsigned long lines)
{
    static char buf[1 << 20];
    unsigned long newlines = 0, bad = 0;
    unsigned long long off = 0;
    ssize_t n;
    int fd = open(path, O_RDONLY);

    if (fd < 0) {
        perror(path);
        return -1;
    }
    while ((n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            perror(path);
            close(fd);
            return -1;
        }
        for (char *p = buf; (p = memchr(p, '\n', (size_t)(buf + n - p))) != NULL; p++) {
            newlines++;
            bad += (off + (unsigned long long)(p - buf)) % LOG_LINE_LEN != LOG_LINE_LEN - 1;
        }
        off += (unsigned long long)n;
    }
    close(fd);
    if (newlines != lines || bad != 0 || off != (unsigned long long)lines * LOG_LINE_LEN) {
        fprintf(stderr, "bench-log: %s: expected %lu lines of %d bytes, found "
                "%lu newlines (%lu misplaced) in %llu bytes\n", path, lines,
                LOG_LINE_LEN, newlines, bad, off);
        return -1;
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: bench-log [options]\n"
        "  Writes LINES lines of %d bytes to a file in six ways and prints\n"
        "  seconds and lines/s (median of the runs); fails unless every run\n"
        "  wrote exactly the lines asked for.\n"
        "  -n, --lines N        lines for (a) (b) (e) (f) (default 10M; k/M ok)\n"
        "  -s, --slow-lines N   lines for the thread-per-line runs (c) (d)\n"
        "                       (default 100k)\n"
        "  -t, --threads LIST   comma list of caller thread counts for (b) (e)\n"
        "                       (f) (default 1,%d)\n"
        "  -r, --repeat R       runs per variant, median reported (default %d)\n"
        "  -b, --bufsize B      bytes per buffer in (f) (default 1M)\n"
        "  -d, --dir DIR        directory for the file (default: mkdtemp in /tmp)\n"
        "  -w, --variants LIST  subset of: direct,mutex,thread-mutex,thread-spin,\n"
        "                       queue,dbuf (default: all); -w was -V before\n"
        "                       0.2.0, -V is --version now\n"
        "  -j, --json           print JSON instead of the table\n"
        "      --corrupt NAME   test hook: add a torn line to variant NAME's\n"
        "                       file, which the line check must catch\n"
        "  -h, --help           this text\n"
        "  -V, --version        the version\n"
        "Exit status: 0 when every run wrote exactly its lines, 1 when one did\n"
        "not or a run failed, 2 for bad arguments.\n",
        LOG_LINE_LEN, DEFAULT_THREADS, DEFAULT_REPEAT);
}

/* One row of the table: a variant at one thread count. */
struct cell {
    int v;
    int threads;                /* 0: a thread per line */
    unsigned long lines;
    unsigned long signals;      /* of the last run */
    unsigned long retries;      /* summed over the runs */
    double *runs;               /* seconds per run */
};

static void print_results(const struct cell *cells, int ncells, int repeat,
                          const char *dir, unsigned long lines,
                          unsigned long slow, bool json)
{
    bool any_slow = false;

    if (json) {
        printf("{\"tool\": \"bench-log\", ");
        bench_json_machine(stdout);
        printf("\"line_bytes\": %d, \"repeat\": %d, \"lines_ok\": true, "
               "\"results\": [", LOG_LINE_LEN, repeat);
    } else {
        bench_print_machine(stdout, "bench-log");
        printf("# %d-byte lines to a file in %s; median of %d run%s; every "
               "run's file checked line by line\n", LOG_LINE_LEN, dir, repeat,
               repeat == 1 ? "" : "s");
        printf("%-34s %8s %10s %9s %12s %9s\n", "variant", "threads", "lines",
               "seconds", "lines/s", "signals");
    }
    for (int k = 0; k < ncells; k++) {
        const struct cell *c = &cells[k];
        bool has_sig = c->v == V_QUEUE || c->v == V_DBUF;
        double med;

        if (json) {
            printf("%s{\"variant\": \"%s\", \"lines\": %lu, \"threads\": %d, "
                   "\"signals\": %lu, \"create_retries\": %lu, \"runs_s\": [",
                   k ? ", " : "", variant_names[c->v], c->lines, c->threads,
                   has_sig ? c->signals : 0, c->retries);
            for (int rep = 0; rep < repeat; rep++)
                printf("%s%.6f", rep ? ", " : "", c->runs[rep]);
        }
        med = bench_median(c->runs, repeat);    /* sorts runs */
        if (json) {
            printf("], \"median_s\": %.6f, \"lines_per_s\": %.0f}", med,
                   (double)c->lines / med);
            continue;
        }
        char thr[16] = "per line", sig[24] = "-";
        if (c->threads > 0)
            snprintf(thr, sizeof thr, "%d", c->threads);
        if (has_sig)
            snprintf(sig, sizeof sig, "%lu", c->signals);
        any_slow |= c->threads == 0;
        printf("%-34s %8s %10lu%s %8.3f %12.0f %9s\n", variant_desc[c->v], thr,
               c->lines, c->threads == 0 ? "*" : " ", med,
               (double)c->lines / med, sig);
    }
    if (json)
        printf("]}\n");
    else if (any_slow)
        printf("* thread-per-line runs use --slow-lines (%lu), not --lines "
               "(%lu): they are far slower\n", slow, lines);
}

/* The command line, parsed. */
struct log_opts {
    unsigned long lines, slow, repeat, bufsize;
    struct bench_list threads;
    int sel[NVAR];              /* variants to run */
    int corrupt;                /* --corrupt's variant, or -1 */
    const char *dir;            /* --dir; NULL: a fresh temporary one */
    bool json;
};

/* Parses argv into o. Returns 0, or the exit status for bad arguments
 * after saying why; --help and --version exit here (bench_getopt). */
static int parse_args(int argc, char **argv, struct log_opts *o)
{
    const struct bench_opt opts[] = {
        { "lines", 'n', BENCH_OPT_COUNT, &o->lines, 1, ULONG_MAX },
        { "slow-lines", 's', BENCH_OPT_COUNT, &o->slow, 1, ULONG_MAX },
        { "threads", 't', BENCH_OPT_LIST, &o->threads, 0, LOG_MAX_THREADS },
        { "repeat", 'r', BENCH_OPT_COUNT, &o->repeat, 1, 1000 },
        { "bufsize", 'b', BENCH_OPT_COUNT, &o->bufsize, 4096, ULONG_MAX },
        { "dir", 'd', BENCH_OPT_STRING, &o->dir, 0, 0 },
        { "variants", 'w', BENCH_OPT_VARIANTS, o->sel, 0, 0 },
        { "json", 'j', BENCH_OPT_FLAG, &o->json, 0, 0 },
        { "corrupt", 0, BENCH_OPT_VARIANT, &o->corrupt, 0, 0 },
        { NULL, 0, 0, NULL, 0, 0 },
    };
    const struct bench_variants variants = { variant_names, NVAR };
    const struct bench_prog prog = { "bench-log", usage };

    return bench_getopt(&prog, argc, argv, opts, &variants);
}

/* The rows: (a) once with one thread, (c) (d) once with a thread per line,
 * (b) (e) (f) at each --threads count. Each row gets o->repeat slots of
 * runs. Returns the number of rows. */
static int plan_cells(const struct log_opts *o, struct cell *cells,
                      double *runs)
{
    int ncells = 0;

    for (int v = 0; v < NVAR; v++) {
        bool per_line = v == V_THR_MUTEX || v == V_THR_SPIN;
        int n = v == V_DIRECT || per_line ? 1 : o->threads.n;

        for (int i = 0; o->sel[v] && i < n; i++, ncells++)
            cells[ncells] = (struct cell){
                .v = v,
                .threads = v == V_DIRECT ? 1 : per_line ? 0 : o->threads.v[i],
                .lines = per_line ? o->slow : o->lines,
                .runs = runs + (size_t)ncells * o->repeat };
    }
    return ncells;
}

/* Run number rep of one row into path, timed and checked; the file is
 * removed afterwards. Returns 0, or -1 after saying what went wrong. */
static int run_cell(struct cell *ce, int rep, const char *path,
                    const struct log_opts *o)
{
    struct run r = { .path = path, .lines = ce->lines,
                     .threads = ce->threads, .bufsize = o->bufsize };
    double t0 = bench_now();
    int rc, status = 0;

    switch (ce->v) {
    case V_DIRECT:    rc = run_stdio(&r, false); break;
    case V_MUTEX:     rc = run_stdio(&r, true); break;
    case V_THR_MUTEX: rc = run_perline(&r, false); break;
    case V_THR_SPIN:  rc = run_perline(&r, true); break;
    case V_QUEUE:     rc = logq_run(path, r.lines, r.threads, &r.signals); break;
    default:          rc = dbuf_run(path, r.lines, r.threads, r.bufsize, &r.signals); break;
    }
    ce->runs[rep] = bench_now() - t0;
    if (rc == 0 && ce->v == o->corrupt) {
        FILE *f = fopen(path, "a");

        if (f != NULL) {
            fputs("torn\n", f);
            fclose(f);
        }
    }
    if (rc < 0) {
        fprintf(stderr, "bench-log: %s: %s\n", variant_names[ce->v],
                strerror(-rc));
        status = -1;
    } else if (verify_file(path, r.lines) < 0) {
        fprintf(stderr, "bench-log: %s: WRONG LINE COUNT\n",
                variant_names[ce->v]);
        status = -1;
    }
    unlink(path);
    ce->signals = r.signals;
    ce->retries += r.retries;
    return status;
}

int main(int argc, char **argv)
{
    struct log_opts o = {
        .lines = DEFAULT_LINES, .slow = DEFAULT_SLOW_LINES,
        .repeat = DEFAULT_REPEAT, .bufsize = DEFAULT_BUFSIZE, .corrupt = -1,
        .threads = { {1, DEFAULT_THREADS}, 2 },
    };
    char tmpdir[] = "/tmp/bench-log.XXXXXX", path[PATH_MAX];
    struct cell cells[NVAR * BENCH_MAX_LIST];
    int ncells, status = 0, rc;

    for (int v = 0; v < NVAR; v++)
        o.sel[v] = 1;
    if ((rc = parse_args(argc, argv, &o)) != 0)
        return rc;
    double *runs = calloc((size_t)NVAR * BENCH_MAX_LIST * o.repeat,
                          sizeof *runs);
    if (runs == NULL) {
        fprintf(stderr, "bench-log: out of memory\n");
        return 1;
    }
    ncells = plan_cells(&o, cells, runs);
    if (o.dir == NULL && (o.dir = mkdtemp(tmpdir)) == NULL) {
        perror("bench-log: mkdtemp");
        free(runs);
        return 1;
    }
    snprintf(path, sizeof path, "%s/bench-log.%ld.out", o.dir, (long)getpid());
    pthread_spin_init(&perline_spin, PTHREAD_PROCESS_PRIVATE);

    /* Repeats outermost, so drift spreads over every row. */
    for (int rep = 0; rep < (int)o.repeat && status == 0; rep++)
        for (int k = 0; k < ncells && status == 0; k++)
            status = run_cell(&cells[k], rep, path, &o) < 0;
    if (o.dir == tmpdir && rmdir(tmpdir) != 0)
        perror("bench-log: rmdir");
    if (status == 0)
        print_results(cells, ncells, (int)o.repeat, o.dir, o.lines, o.slow,
                      o.json);
    free(runs);
    return status;
}
