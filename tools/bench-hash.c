/* bench-hash.c -- what a lock around a shared digest context costs, and what
 * libcrypto's implicit algorithm fetch costs (issue 5, docs/LESSONS.md).
 *
 * Hashes --count 16-byte lowercase strings (rand_r, seed 0xdeadbeef, made
 * before any timing) with SHA-256 at each --threads count, in these variants:
 *   locked          one static EVP_MD_CTX shared by all threads behind a mutex
 *   newctx          a new context per hash, implicit fetch (EVP_sha256())
 *   perthread       one context per thread, reused; SHA-256 fetched once
 *                   (EVP_MD_fetch) -- what common/digest.c does
 *   oneshot         EVP_Digest(..., EVP_sha256(), ...) per string
 *   oneshot-fetched EVP_Digest with the fetched digest (extra: separates the
 *                   cost of fetching from the cost of a new context)
 * Every run writes all per-string digests into one array; a SHA-256 over that
 * array in index order must be identical for every variant, thread count and
 * repeat, or the program fails with exit status 1.
 */
#include "bench-util.h"

#include <errno.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"

#define STR_LEN         16              /* bytes per hashed string */
#define HASH_LEN        32              /* SHA-256 output bytes */
#define DATA_SEED       0xdeadbeefu     /* rand_r seed of the classic experiment */
#define DEFAULT_COUNT   10000000UL      /* strings hashed per run */
#define DEFAULT_REPEAT  3               /* runs per cell; the median is reported */
#define MAX_THREADS     1024            /* most threads one run may use */

enum { V_LOCKED, V_NEWCTX, V_PERTHREAD, V_ONESHOT, V_ONESHOT_FETCHED, NVAR };

static const char *const variant_names[NVAR] = {
    "locked", "newctx", "perthread", "oneshot", "oneshot-fetched",
};

/* Variant "locked": the one context all threads share. Every Init, Update
 * and Final on shared_ctx happens with shared_mu held. */
static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;
static EVP_MD_CTX *shared_ctx;

/* SHA-256 fetched once by main before any thread starts; read-only after. */
static EVP_MD *fetched_md;

struct job {
    int variant;
    const unsigned char *data;      /* all strings, STR_LEN bytes each */
    unsigned char *out;             /* HASH_LEN bytes per string */
    size_t lo, hi;                  /* this thread's slice [lo, hi) */
    pthread_barrier_t *start;       /* released when every thread exists */
    double t_begin, t_end;          /* this thread's own clock readings */
    bool failed;                    /* a libcrypto call returned 0 */
};

static bool hash_locked(const unsigned char *in, unsigned char *out)
{
    bool ok;

    /* The whole hash is under the lock: that is the point of the variant. */
    pthread_mutex_lock(&shared_mu);
    ok = EVP_DigestInit_ex(shared_ctx, EVP_sha256(), NULL) &&
         EVP_DigestUpdate(shared_ctx, in, STR_LEN) &&
         EVP_DigestFinal_ex(shared_ctx, out, NULL);
    pthread_mutex_unlock(&shared_mu);
    return ok;
}

static bool hash_newctx(const unsigned char *in, unsigned char *out)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = ctx != NULL &&
              EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) &&
              EVP_DigestUpdate(ctx, in, STR_LEN) &&
              EVP_DigestFinal_ex(ctx, out, NULL);

    EVP_MD_CTX_free(ctx);
    return ok;
}

static bool hash_reused(EVP_MD_CTX *ctx, const unsigned char *in,
                        unsigned char *out)
{
    return EVP_DigestInit_ex2(ctx, fetched_md, NULL) &&
           EVP_DigestUpdate(ctx, in, STR_LEN) &&
           EVP_DigestFinal_ex(ctx, out, NULL);
}

static void *hash_thread(void *arg)
{
    struct job *job = arg;
    EVP_MD_CTX *ctx = NULL;
    bool ok = true;

    if (job->variant == V_PERTHREAD && (ctx = EVP_MD_CTX_new()) == NULL)
        ok = false;
    pthread_barrier_wait(job->start);
    job->t_begin = bench_now();
    for (size_t i = job->lo; ok && i < job->hi; i++) {
        const unsigned char *in = job->data + i * STR_LEN;
        unsigned char *out = job->out + i * HASH_LEN;

        switch (job->variant) {
        case V_LOCKED:
            ok = hash_locked(in, out);
            break;
        case V_NEWCTX:
            ok = hash_newctx(in, out);
            break;
        case V_PERTHREAD:
            ok = hash_reused(ctx, in, out);
            break;
        case V_ONESHOT:
            ok = EVP_Digest(in, STR_LEN, out, NULL, EVP_sha256(), NULL);
            break;
        default:
            ok = EVP_Digest(in, STR_LEN, out, NULL, fetched_md, NULL);
            break;
        }
    }
    job->t_end = bench_now();
    EVP_MD_CTX_free(ctx);
    job->failed = !ok;
    return NULL;
}

/* One timed run. Returns the seconds from the first thread starting work to
 * the last one finishing, or -1 after printing why. The workers read the
 * clock themselves: on 2 cores main may not run again until they are done,
 * so a clock read by main after the barrier would be late. */
static double run_once(int variant, int nthreads, const unsigned char *data,
                       unsigned char *out, size_t count)
{
    pthread_t tids[MAX_THREADS];
    struct job jobs[MAX_THREADS];
    pthread_barrier_t start;
    double t0 = 0, t1 = 0;
    bool failed = false;
    int rc, started = 0;

    pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1);
    for (int t = 0; t < nthreads; t++) {
        jobs[t] = (struct job){
            .variant = variant, .data = data, .out = out, .start = &start,
            .lo = count * (size_t)t / (size_t)nthreads,
            .hi = count * (size_t)(t + 1) / (size_t)nthreads,
        };
        rc = pthread_create(&tids[t], NULL, hash_thread, &jobs[t]);
        if (rc != 0) {
            /* The barrier can never open now: the runs would hang. */
            fprintf(stderr, "bench-hash: pthread_create: %s\n", strerror(rc));
            exit(1);
        }
        started++;
    }
    pthread_barrier_wait(&start);
    for (int t = 0; t < started; t++) {
        pthread_join(tids[t], NULL);
        failed |= jobs[t].failed;
        if (t == 0 || jobs[t].t_begin < t0)
            t0 = jobs[t].t_begin;
        if (jobs[t].t_end > t1)
            t1 = jobs[t].t_end;
    }
    pthread_barrier_destroy(&start);
    if (failed) {
        fprintf(stderr, "bench-hash: %s: a libcrypto call failed\n",
                variant_names[variant]);
        return -1;
    }
    return t1 - t0;
}

static void hex(const unsigned char *b, size_t n, char *outhex)
{
    for (size_t i = 0; i < n; i++)
        sprintf(outhex + 2 * i, "%02x", b[i]);
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: bench-hash [options]\n"
        "  Hashes COUNT 16-byte strings with SHA-256 per variant and thread\n"
        "  count, prints millions of hashes per second (median of the runs),\n"
        "  and fails unless every variant gives the same digests.\n"
        "  -n, --count N       strings per run (default 10M; k/M suffixes)\n"
        "  -t, --threads LIST  comma list of thread counts (default 1,2,4,8,12,24)\n"
        "  -r, --repeat R      runs per cell, median reported (default %d)\n"
        "  -w, --variants LIST subset of: locked,newctx,perthread,oneshot,\n"
        "                      oneshot-fetched (default: all); -w was -V\n"
        "                      before 0.2.0, -V is --version now\n"
        "  -j, --json          print JSON instead of the table\n"
        "  -v, --verbose       print each run's time on stderr\n"
        "      --corrupt NAME  test hook: flip one output bit of variant NAME,\n"
        "                      which must make the digest check fail\n"
        "  -h, --help          this text\n"
        "  -V, --version       the version\n"
        "Exit status: 0 when every digest matched, 1 when they differ or a run\n"
        "failed, 2 for bad arguments.\n", DEFAULT_REPEAT);
}

/* The command line, parsed. */
struct hash_opts {
    unsigned long count, repeat;
    struct bench_list threads;
    int sel[NVAR];              /* variants to run */
    int corrupt;                /* --corrupt's variant, or -1 */
    bool json, verbose;
};

/* Parses argv into o. Returns 0, or the exit status for bad arguments
 * after saying why; --help and --version exit here (bench_getopt). */
static int parse_args(int argc, char **argv, struct hash_opts *o)
{
    const struct bench_opt opts[] = {
        { "count", 'n', BENCH_OPT_COUNT, &o->count, 1, ULONG_MAX },
        { "threads", 't', BENCH_OPT_LIST, &o->threads, 0, MAX_THREADS },
        { "repeat", 'r', BENCH_OPT_COUNT, &o->repeat, 1, 1000 },
        { "variants", 'w', BENCH_OPT_VARIANTS, o->sel, 0, 0 },
        { "json", 'j', BENCH_OPT_FLAG, &o->json, 0, 0 },
        { "verbose", 'v', BENCH_OPT_FLAG, &o->verbose, 0, 0 },
        { "corrupt", 0, BENCH_OPT_VARIANT, &o->corrupt, 0, 0 },
        { NULL, 0, 0, NULL, 0, 0 },
    };
    const struct bench_variants variants = { variant_names, NVAR };
    const struct bench_prog prog = { "bench-hash", usage };

    return bench_getopt(&prog, argc, argv, opts, &variants);
}

/* Fetches SHA-256 and checks it against a known answer, SHA-256("abc"), so
 * "identical digests" also means right ones. Returns 0 or -1 after saying
 * why. */
static int crypto_init(void)
{
    static const char abc_hex[] =
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    unsigned char md[HASH_LEN];
    char mdhex[2 * HASH_LEN + 1];

    fetched_md = EVP_MD_fetch(NULL, "SHA256", NULL);
    shared_ctx = EVP_MD_CTX_new();
    if (fetched_md == NULL || shared_ctx == NULL ||
        !EVP_Digest("abc", 3, md, NULL, fetched_md, NULL)) {
        fprintf(stderr, "bench-hash: libcrypto cannot provide SHA-256\n");
        return -1;
    }
    hex(md, HASH_LEN, mdhex);
    if (strcmp(mdhex, abc_hex) != 0) {
        fprintf(stderr, "bench-hash: SHA-256(\"abc\") is wrong: %s\n", mdhex);
        return -1;
    }
    return 0;
}

/* The data, the output array and the run times: one bench-hash session. */
struct hash_work {
    unsigned char *data;        /* count strings of STR_LEN bytes */
    unsigned char *out;         /* count digests of HASH_LEN bytes */
    double *runs;               /* [variant][thread count][repeat] seconds */
    char refhex[2 * HASH_LEN + 1];  /* SHA-256 of the first run's digests */
};

static double *cell_runs(const struct hash_work *w, const struct hash_opts *o,
                         int v, int ti)
{
    return &w->runs[((size_t)v * (size_t)o->threads.n + (size_t)ti) *
                    o->repeat];
}

/* Runs variant v at thread count ti, repeat r, and checks its digests
 * against the first run's. Returns 0, or -1 after saying why. */
static int run_cell(struct hash_work *w, const struct hash_opts *o, int v,
                    int ti, int r)
{
    unsigned char md[HASH_LEN];
    char mdhex[2 * HASH_LEN + 1];
    int nthreads = o->threads.v[ti];

    memset(w->out, 0, o->count * HASH_LEN);     /* stale output can't pass */
    double s = run_once(v, nthreads, w->data, w->out, o->count);
    if (s < 0)
        return -1;
    if (v == o->corrupt)
        w->out[(o->count / 2) * HASH_LEN] ^= 1;
    EVP_Digest(w->out, o->count * HASH_LEN, md, NULL, fetched_md, NULL);
    hex(md, HASH_LEN, mdhex);
    if (w->refhex[0] == '\0')
        memcpy(w->refhex, mdhex, sizeof w->refhex);
    if (strcmp(mdhex, w->refhex) != 0) {
        fprintf(stderr, "bench-hash: DIGEST MISMATCH: %s at %d threads gave "
                "%s, earlier runs gave %s\n", variant_names[v], nthreads,
                mdhex, w->refhex);
        return -1;
    }
    cell_runs(w, o, v, ti)[r] = s;
    if (o->verbose)
        fprintf(stderr, "run %d/%lu %-15s %3d threads %8.3f s\n", r + 1,
                o->repeat, variant_names[v], nthreads, s);
    return 0;
}

/* Every selected cell, repeat times. Repeats are the outer loop so slow
 * drift (other load, clock changes) spreads over every cell instead of
 * landing on one. Returns 0 or -1 (said why). */
static int run_all(struct hash_work *w, const struct hash_opts *o)
{
    for (int r = 0; r < (int)o->repeat; r++)
        for (int ti = 0; ti < o->threads.n; ti++)
            for (int v = 0; v < NVAR; v++)
                if (o->sel[v] && run_cell(w, o, v, ti, r) < 0)
                    return -1;
    return 0;
}

static void print_json(struct hash_work *w, const struct hash_opts *o)
{
    bool first = true;

    printf("{\"tool\": \"bench-hash\", ");
    bench_json_machine(stdout);
    printf("\"openssl\": ");
    json_write_str(stdout, OpenSSL_version(OPENSSL_VERSION));
    printf(", \"count\": %lu, \"repeat\": %lu, \"digest_ok\": true, "
           "\"combined_sha256\": \"%s\", \"results\": [", o->count, o->repeat,
           w->refhex);
    for (int v = 0; v < NVAR; v++) {
        for (int ti = 0; o->sel[v] && ti < o->threads.n; ti++) {
            double *cell = cell_runs(w, o, v, ti), med;

            printf("%s{\"variant\": \"%s\", \"threads\": %d, \"runs_s\": [",
                   first ? "" : ", ", variant_names[v], o->threads.v[ti]);
            for (int r = 0; r < (int)o->repeat; r++)
                printf("%s%.6f", r ? ", " : "", cell[r]);
            med = bench_median(cell, (int)o->repeat);   /* sorts the cell */
            printf("], \"median_s\": %.6f, \"hashes_per_s\": %.0f}", med,
                   (double)o->count / med);
            first = false;
        }
    }
    printf("]}\n");
}

static void print_table(struct hash_work *w, const struct hash_opts *o)
{
    bench_print_machine(stdout, "bench-hash");
    printf("# %s; %lu strings of %d bytes per run; median of %lu run%s;\n"
           "# millions of SHA-256 hashes per second\n",
           OpenSSL_version(OPENSSL_VERSION), o->count, STR_LEN, o->repeat,
           o->repeat == 1 ? "" : "s");
    printf("%-16s", "variant");
    for (int ti = 0; ti < o->threads.n; ti++)
        printf(" %5d thr", o->threads.v[ti]);
    printf("\n");
    for (int v = 0; v < NVAR; v++) {
        if (!o->sel[v])
            continue;
        printf("%-16s", variant_names[v]);
        for (int ti = 0; ti < o->threads.n; ti++)
            printf(" %9.2f", (double)o->count /
                   bench_median(cell_runs(w, o, v, ti), (int)o->repeat) / 1e6);
        printf("\n");
    }
    printf("digests: identical across all variants, thread counts and "
           "runs (SHA-256 of all digests in index order: %.16s...)\n",
           w->refhex);
}

int main(int argc, char **argv)
{
    struct hash_opts o = {
        .count = DEFAULT_COUNT, .repeat = DEFAULT_REPEAT, .corrupt = -1,
        .threads = { {1, 2, 4, 8, 12, 24}, 6 },
    };
    struct hash_work w = { .refhex = "" };
    unsigned seed = DATA_SEED;
    int status = 1, rc;

    for (int v = 0; v < NVAR; v++)
        o.sel[v] = 1;
    if ((rc = parse_args(argc, argv, &o)) != 0)
        return rc;
    if (crypto_init() < 0)
        goto out;

    /* The data set, made before any timing, exactly as the classic did. */
    w.data = malloc(o.count * STR_LEN);
    w.out = malloc(o.count * HASH_LEN);
    w.runs = calloc((size_t)NVAR * (size_t)o.threads.n * o.repeat,
                    sizeof *w.runs);
    if (w.data == NULL || w.out == NULL || w.runs == NULL) {
        fprintf(stderr, "bench-hash: out of memory for %lu strings\n", o.count);
        goto out;
    }
    for (size_t i = 0; i < o.count * STR_LEN; i++)
        w.data[i] = (unsigned char)('a' + rand_r(&seed) % 26);

    if (run_all(&w, &o) < 0)
        goto out;
    if (o.json)
        print_json(&w, &o);
    else
        print_table(&w, &o);
    status = 0;
out:
    EVP_MD_CTX_free(shared_ctx);
    EVP_MD_free(fetched_md);
    free(w.runs);
    free(w.out);
    free(w.data);
    return status;
}
