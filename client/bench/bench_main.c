/* bench_main.c -- ssn-bench: a load generator for ssnserver, Redis and
 * memcached alike, in the spirit of redis-benchmark and memtier_benchmark.
 *
 *   ssn-bench [--dialect ssn|redis|memcache] [-c N] [-t T] [-P N]
 *             [-n N | --duration SEC] [--mix A:F:D] [--keys K] ...
 *
 * This file is the order of things: connect, AUTH, preload, the timed
 * run with its progress line and SIGINT, the report. The options are
 * bench_opts.c, the workers bench_set.c and bench_conn.c, the dialects
 * bench_dialect.c, bench_resp.c and bench_memcache.c, the output
 * bench_report.c (bench_opts.h, bench_conn.h, bench.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include "bench.h"
#include "bench_conn.h"
#include "bench_opts.h"
#include "bench_stats.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* The phases' tick, on the main thread: the progress line, and SIGINT. */
struct ticker {
    int tty;                    /* stderr is a terminal */
    int shown;                  /* a progress line is on it */
};

static int tick(void *arg, uint64_t replies, uint64_t elapsed_ns)
{
    struct ticker *t = arg;
    if (t->tty) {
        bench_progress(stderr, replies, elapsed_ns);
        t->shown = 1;
    }
    return interrupted;
}

static void tick_clear(struct ticker *t)
{
    if (t->shown)
        fputs("\r\033[K", stderr);
    t->shown = 0;
}

/* Runs one phase. Returns 0, or the exit status after a failure (with its
 * message printed) or an interrupted untimed phase. */
static int phase(struct bench_set *set, enum bench_phase ph, struct ticker *t)
{
    static const char *const names[] = { "AUTH", "preload", "run" };
    char err[BENCH_ERR_MAX];
    int rc = bench_set_run(set, ph, tick, t, err, sizeof(err));
    tick_clear(t);
    if (rc) {
        fprintf(stderr, "%s: %s: %s\n", bench_prog.name, names[ph], err);
        return 1;
    }
    if (interrupted && ph != BPH_RUN) {
        fprintf(stderr, "%s: interrupted during %s\n", bench_prog.name,
                names[ph]);
        return BENCH_EXIT_INT;
    }
    return 0;
}

/* The server's store lock around the run (ssn dialect): STATS before the
 * connections, again after the preload where that does not wait for the
 * run's connections (bench_stats_while_connected), and after they are
 * closed (lock_after). */
struct lock_reads {
    int asked;                  /* the ssn dialect: STATS is tried */
    int have_before;
    int preload_included;
    struct bench_stats before;
    char note[128];             /* why a read failed */
};

static void lock_before(struct bench_args *a, struct lock_reads *l)
{
    l->asked = strcmp(a->plan.dialect->name, "ssn") == 0;
    if (!l->asked)
        return;
    l->have_before = bench_stats_read(&a->plan, &l->before, l->note,
                                      sizeof(l->note)) == 0;
    l->preload_included = a->plan.preload > 0;
}

static void lock_after_preload(struct bench_args *a, struct lock_reads *l)
{
    struct bench_stats s;

    if (!l->have_before || !a->plan.preload ||
        !bench_stats_while_connected(&l->before))
        return;
    if (bench_stats_read(&a->plan, &s, l->note, sizeof(l->note)) == 0) {
        l->before = s;
        l->preload_included = 0;
    }
}

static void lock_after(struct bench_args *a, struct lock_reads *l,
                       struct bench_server_lock *out)
{
    struct bench_stats after;

    memset(out, 0, sizeof(*out));
    if (!l->asked)
        return;
    if (l->have_before && bench_stats_read(&a->plan, &after, l->note,
                                           sizeof(l->note)) == 0)
        bench_stats_delta(&l->before, &after, l->preload_included, out);
    else
        snprintf(out->note, sizeof(out->note), "%s", l->note);
}

/* The report in the format asked for, with the server's CPU time and its
 * store lock's figures, read once the run's connections are closed. */
static int report(struct bench_args *a, struct bench_set **set,
                  struct lock_reads *lr)
{
    static struct bench_result r;   /* a histogram: too big for the stack */
    bench_set_result(*set, &r);
    if (a->server_pid) {
        uint64_t cpu1;
        if (bench_proc_cpu_us((pid_t)a->server_pid, &cpu1)) {
            fprintf(stderr, "%s: --server-pid: cannot read /proc/%ld/stat "
                    "after the run: has the server exited?\n", bench_prog.name,
                    a->server_pid);
            return 1;
        }
        r.have_cpu = 1;
        r.server_pid = a->server_pid;
        r.server_cpu_us = cpu1 - a->cpu0;
    }
    bench_set_free(*set);
    *set = NULL;
    lock_after(a, lr, &r.lock);
    if (a->json)
        bench_report_json(stdout, &a->cf, &r);
    else if (a->csv)
        bench_report_csv(stdout, &a->cf, &r);
    else
        bench_report_text(stdout, &a->cf, &r);
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "%s: cannot write the report: %s\n", bench_prog.name,
                strerror(errno));
        return 1;
    }
    return r.interrupted ? BENCH_EXIT_INT : 0;
}

/* Connect, AUTH, preload, run, report. Returns the exit status. */
static int bench(struct bench_args *a)
{
    struct ticker t = { .tty = isatty(STDERR_FILENO) };
    struct lock_reads lr = { 0 };
    char err[BENCH_ERR_MAX];
    int rc;

    lock_before(a, &lr);
    struct bench_set *set = bench_set_new(&a->plan, err, sizeof(err));
    if (!set) {
        fprintf(stderr, "%s: %s\n", bench_prog.name, err);
        return 1;
    }
    rc = a->plan.password ? phase(set, BPH_AUTH, &t) : 0;
    if (!rc && a->plan.preload)
        rc = phase(set, BPH_PRELOAD, &t);
    if (!rc)
        lock_after_preload(a, &lr);
    if (!rc && a->server_pid &&
        bench_proc_cpu_us((pid_t)a->server_pid, &a->cpu0)) {
        fprintf(stderr, "%s: --server-pid: cannot read /proc/%ld/stat\n",
                bench_prog.name, a->server_pid);
        rc = 1;
    }
    if (!rc)
        rc = phase(set, BPH_RUN, &t);
    if (!rc)
        rc = report(a, &set, &lr);
    bench_set_free(set);
    return rc;
}

int main(int argc, char **argv)
{
    struct bench_args a;
    int rc = bench_args_parse(&a, argc, argv);
    if (rc == 0) {
        struct sigaction sa = { .sa_handler = on_sigint,
                                .sa_flags = SA_RESETHAND };
        sigaction(SIGINT, &sa, NULL);   /* a second ^C ends it at once */
        rc = bench(&a);
    }
    OPENSSL_cleanse(a.password, sizeof(a.password));
    return rc;
}
