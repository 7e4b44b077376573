/* fsync-rate.c -- this disk's serial small-append fdatasync rate, the
 * yardstick of docs/DURABILITY.md: how many "write a record, fdatasync it"
 * rounds one thread gets per second, one after the other, on the file
 * system of a given directory. The journal's --fsync always with one
 * client in lockstep cannot beat it. Variants, each on a fresh file:
 *
 *   append      pwrite at the end of a growing file (every sync commits the
 *               new size)
 *   keep-size   overwrite inside space reserved ahead with
 *               fallocate(FALLOC_FL_KEEP_SIZE), past the file's size: the
 *               journal's old reservation (every sync commits the extent's
 *               unwritten -> written conversion and the new size)
 *   falloc      the same reserved with mode 0 (the size set at once): the
 *               extent conversion without the size change
 *   zeros       overwrite inside space pre-filled with zeros and synced
 *               once, untimed: the data only, no metadata to commit
 *   direct      the same zeros, then each round rewrites the whole 4 KiB
 *               block holding the new bytes with O_DIRECT and one
 *               pwritev2(RWF_DSYNC): no page cache, one call per sync
 *
 * Rounds alternate the variants (round r starts with variant r mod n) so a
 * neighbour's burst of I/O hits each alike; the table gives each variant's
 * syncs per second over all its rounds, the slowest and fastest round, and
 * the p50 and p99 of single write+sync times. The files are removed.
 */
#include "bench-util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/vfs.h>

#define DEFAULT_COUNT   2000    /* timed syncs per variant, all rounds */
#define DEFAULT_ROUNDS  4       /* rounds the count is split over */
#define DEFAULT_SIZE    64      /* bytes per append */
#define MAX_SIZE        (1 << 20)       /* most --size accepted */
#define ZERO_BLOCK      (64 * 1024)     /* zeros written per call */
#define DIRECT_BLOCK    4096            /* direct: the block rewritten */

enum { V_APPEND, V_KEEP_SIZE, V_FALLOC, V_ZEROS, V_DIRECT, NVAR };

static const char *const variant_names[NVAR] = {
    "append", "keep-size", "falloc", "zeros", "direct",
};

static const char *const variant_what[NVAR] = {
    "append to a growing file",
    "overwrite space reserved with fallocate KEEP_SIZE",
    "overwrite space reserved with fallocate (size set)",
    "overwrite space pre-filled with zeros, synced once",
    "zeros, then the 4 KiB block with O_DIRECT and RWF_DSYNC",
};

struct rate_opts {
    const char *dir;
    unsigned long count, rounds, size;
    int sel[NVAR];
    bool json;
};

/* Per variant: every sample (ns), and each round's rate. */
struct rate_res {
    double *ns;
    size_t n;
    double secs;                /* timed seconds, all rounds */
    double round_min, round_max;        /* syncs/s of a round */
    int err;                    /* errno that stopped it; 0 when it ran */
    const char *err_what;
};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: fsync-rate [options]\n"
        "  Measures the serial small-append fdatasync rate of the file system\n"
        "  under a directory: write SIZE bytes, fdatasync, again, one after\n"
        "  the other, in variants (each on a fresh file, removed after):\n"
        "    append     append to a growing file\n"
        "    keep-size  overwrite space reserved with fallocate(KEEP_SIZE)\n"
        "    falloc     overwrite space reserved with fallocate (size set)\n"
        "    zeros      overwrite space pre-filled with zeros, synced once\n"
"    direct     the same zeros, then rewrite the 4 KiB block holding the\n"
"               new bytes with O_DIRECT and pwritev2(RWF_DSYNC)\n"
        "  Prints syncs/s (all rounds; slowest and fastest round) and the\n"
        "  p50 and p99 of one write+fdatasync, per variant.\n"
        "  -d, --dir DIR        where the test files go (default: .)\n"
        "  -n, --count N        timed syncs per variant (default %d)\n"
        "  -r, --rounds R       rounds the count is split over, the variants\n"
        "                       alternating (default %d)\n"
        "  -s, --size BYTES     bytes per write (default %d)\n"
        "  -w, --variants LIST  subset of: append,keep-size,falloc,zeros,direct\n"
        "                       (default: all)\n"
        "  -j, --json           print JSON instead of the table\n"
        "  -h, --help           this text\n"
        "  -V, --version        the version\n"
        "Exit status: 0 when every selected variant ran, 1 when one failed\n"
        "(the directory, the disk; the table says which and why), 2 for bad\n"
        "arguments.\n", DEFAULT_COUNT, DEFAULT_ROUNDS, DEFAULT_SIZE);
}

static int parse_args(int argc, char **argv, struct rate_opts *o)
{
    const struct bench_opt opts[] = {
        { "dir", 'd', BENCH_OPT_STRING, &o->dir, 0, 0 },
        { "count", 'n', BENCH_OPT_COUNT, &o->count, 1, 10000000 },
        { "rounds", 'r', BENCH_OPT_COUNT, &o->rounds, 1, 1000 },
        { "size", 's', BENCH_OPT_COUNT, &o->size, 1, MAX_SIZE },
        { "variants", 'w', BENCH_OPT_VARIANTS, o->sel, 0, 0 },
        { "json", 'j', BENCH_OPT_FLAG, &o->json, 0, 0 },
        { NULL, 0, 0, NULL, 0, 0 },
    };
    const struct bench_variants variants = { variant_names, NVAR };
    const struct bench_prog prog = { "fsync-rate", usage };

    return bench_getopt(&prog, argc, argv, opts, &variants);
}

/* The file system's name, from statfs's magic (the common ones). */
static const char *fs_name(const char *dir)
{
    static const struct { unsigned long magic; const char *name; } fs[] = {
        { 0xEF53, "ext2/3/4" }, { 0x58465342, "xfs" },
        { 0x9123683E, "btrfs" }, { 0x01021994, "tmpfs" },
        { 0x794C7630, "overlayfs" }, { 0x2FC12FC1, "zfs" },
        { 0x6969, "nfs" }, { 0xF2F52010, "f2fs" },
    };
    struct statfs sf;

    if (statfs(dir, &sf) != 0)
        return "unknown";
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        if ((unsigned long)sf.f_type == fs[i].magic)
            return fs[i].name;
    return "other";
}

static int write_all(int fd, const char *p, size_t n, off_t off)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        p += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

/* Readies fd for variant v with room for len bytes (untimed). Returns 0,
 * or the errno with *what naming the call. */
static int prepare(int fd, int v, size_t len, const char **what)
{
    static const char zeros[ZERO_BLOCK];
    int rc;

    switch (v) {
    case V_KEEP_SIZE:
    case V_FALLOC:
        *what = "fallocate";
        do
            rc = fallocate(fd, v == V_KEEP_SIZE ? FALLOC_FL_KEEP_SIZE : 0,
                           0, (off_t)len);
        while (rc && errno == EINTR);
        if (rc)
            return errno;
        break;
    case V_ZEROS:
    case V_DIRECT:
        *what = "write zeros";
        for (size_t off = 0; off < len; off += ZERO_BLOCK) {
            size_t n = len - off < ZERO_BLOCK ? len - off : ZERO_BLOCK;
            if ((rc = write_all(fd, zeros, n, (off_t)off)))
                return rc;
        }
        break;
    default:
        return 0;
    }
    *what = "fdatasync";
    return fdatasync(fd) ? errno : 0;
}

/* direct: O_DIRECT on fd, and an aligned 4 KiB block of zeros into *blk.
 * Returns 0, or the errno with *what naming the call. */
static int direct_setup(int fd, unsigned char **blk, const char **what)
{
    int fl = fcntl(fd, F_GETFL);

    *what = "fcntl O_DIRECT";
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_DIRECT) < 0)
        return errno;
    *what = "posix_memalign";
    if (posix_memalign((void **)blk, DIRECT_BLOCK, DIRECT_BLOCK))
        return ENOMEM;
    memset(*blk, 0, DIRECT_BLOCK);
    return 0;
}

/* direct: puts size bytes of rec at file offset off into the block image
 * (a record crossing a block boundary is cut there: the point is the
 * sync's cost), then writes the whole block holding off, O_DIRECT, with
 * RWF_DSYNC. Returns 0, or the errno with *what naming the call. */
static int direct_write(int fd, unsigned char *blk, const char *rec,
                        size_t size, size_t off, const char **what)
{
    size_t base = off & ~(size_t)(DIRECT_BLOCK - 1), in = off - base;
    size_t n = size < DIRECT_BLOCK - in ? size : DIRECT_BLOCK - in;

    if (in == 0)
        memset(blk, 0, DIRECT_BLOCK);   /* a new block */
    memcpy(blk + in, rec, n);
    struct iovec iov = { .iov_base = blk, .iov_len = DIRECT_BLOCK };
    ssize_t w;
    do
        w = pwritev2(fd, &iov, 1, (off_t)base, RWF_DSYNC);
    while (w < 0 && errno == EINTR);
    *what = "pwritev2 RWF_DSYNC";
    if (w < 0)
        return errno;
    return w == DIRECT_BLOCK ? 0 : EIO;
}

/* One round of variant v: n timed write+fdatasync into a fresh file in
 * dir, samples appended to r. Returns 0, or the errno (r->err_what set). */
static int run_round(const struct rate_opts *o, int v, size_t n,
                     struct rate_res *r)
{
    char path[4096];
    char *rec = malloc(o->size);
    unsigned char *blk = NULL;
    int fd, rc = 0;

    snprintf(path, sizeof path, "%s/fsync-rate.%ld.%s", o->dir,
             (long)getpid(), variant_names[v]);
    if (!rec) {
        r->err_what = "malloc";
        return ENOMEM;
    }
    memset(rec, 'j', o->size);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = errno;
        r->err_what = "open";
        free(rec);
        return rc;
    }
    unlink(path);               /* gone whatever happens next */
    if ((rc = prepare(fd, v, n * o->size, &r->err_what)))
        goto out;
    if (v == V_DIRECT && (rc = direct_setup(fd, &blk, &r->err_what)))
        goto out;
    r->err_what = "pwrite";
    double t0 = bench_now();
    for (size_t i = 0; i < n; i++) {
        double a = bench_now();
        if (v == V_DIRECT) {
            if ((rc = direct_write(fd, blk, rec, o->size, i * o->size,
                                   &r->err_what)))
                goto out;
        } else {
            if ((rc = write_all(fd, rec, o->size, (off_t)(i * o->size))))
                goto out;
            if (fdatasync(fd)) {
                rc = errno;
                r->err_what = "fdatasync";
                goto out;
            }
        }
        r->ns[r->n++] = (bench_now() - a) * 1e9;
    }
    double secs = bench_now() - t0;
    double rate = (double)n / secs;
    r->secs += secs;
    if (r->round_min == 0 || rate < r->round_min)
        r->round_min = rate;
    if (rate > r->round_max)
        r->round_max = rate;
out:
    close(fd);
    free(rec);
    free(blk);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The p-th percentile (0..100) of sorted v[0..n), nearest rank. */
static double percentile(const double *v, size_t n, int p)
{
    if (n == 0)
        return 0;
    size_t k = (size_t)((p * n + 99) / 100);
    return v[k ? k - 1 : 0];
}

static void print_table(const struct rate_opts *o, struct rate_res *res)
{
    bench_print_machine(stdout, "fsync-rate");
    printf("# %s (%s), %lu-byte writes, %lu syncs per variant in %lu "
           "rounds\n", o->dir, fs_name(o->dir), o->size, o->count,
           o->rounds);
    printf("%-10s %9s %19s %9s %9s  %s\n", "variant", "syncs/s",
           "rounds min-max", "p50 us", "p99 us", "what");
    for (int v = 0; v < NVAR; v++) {
        struct rate_res *r = &res[v];
        if (!o->sel[v])
            continue;
        if (r->err) {
            printf("%-10s failed: %s: %s\n", variant_names[v], r->err_what,
                   strerror(r->err));
            continue;
        }
        char range[40];
        snprintf(range, sizeof range, "%.0f-%.0f", r->round_min,
                 r->round_max);
        printf("%-10s %9.0f %19s %9.1f %9.1f  %s\n", variant_names[v],
               (double)r->n / r->secs, range,
               percentile(r->ns, r->n, 50) / 1e3,
               percentile(r->ns, r->n, 99) / 1e3, variant_what[v]);
    }
}

static void print_json(const struct rate_opts *o, struct rate_res *res)
{
    printf("{");
    bench_json_machine(stdout);
    printf("\"fs\": \"%s\", \"size\": %lu, \"count\": %lu, \"rounds\": %lu, "
           "\"variants\": [", fs_name(o->dir), o->size, o->count, o->rounds);
    const char *sep = "";
    for (int v = 0; v < NVAR; v++) {
        struct rate_res *r = &res[v];
        if (!o->sel[v])
            continue;
        printf("%s{\"variant\": \"%s\"", sep, variant_names[v]);
        if (r->err)
            printf(", \"error\": \"%s: %s\"}", r->err_what,
                   strerror(r->err));
        else
            printf(", \"syncs_per_s\": %.1f, \"round_min\": %.1f, "
                   "\"round_max\": %.1f, \"p50_us\": %.1f, \"p99_us\": %.1f}",
                   (double)r->n / r->secs, r->round_min, r->round_max,
                   percentile(r->ns, r->n, 50) / 1e3,
                   percentile(r->ns, r->n, 99) / 1e3);
        sep = ", ";
    }
    printf("]}\n");
}

int main(int argc, char **argv)
{
    struct rate_opts o = { .dir = ".", .count = DEFAULT_COUNT,
                           .rounds = DEFAULT_ROUNDS, .size = DEFAULT_SIZE };
    struct rate_res res[NVAR];
    struct stat sb;
    int rc, failed = 0;

    for (int v = 0; v < NVAR; v++)
        o.sel[v] = 1;
    if ((rc = parse_args(argc, argv, &o)) != 0)
        return rc;
    if (stat(o.dir, &sb) != 0) {
        fprintf(stderr, "fsync-rate: --dir %s: %s\n", o.dir,
                strerror(errno));
        return 1;
    }
    if (!S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "fsync-rate: --dir %s: not a directory\n", o.dir);
        return 1;
    }
    if (o.rounds > o.count)
        o.rounds = o.count;
    memset(res, 0, sizeof res);
    for (int v = 0; v < NVAR; v++)
        if (o.sel[v] && !(res[v].ns = malloc(o.count * sizeof(double)))) {
            fprintf(stderr, "fsync-rate: out of memory for %lu samples\n",
                    o.count);
            return 1;
        }
    for (unsigned long r = 0; r < o.rounds; r++) {
        /* This round's share; the first rounds take the remainder. */
        size_t n = o.count / o.rounds + (r < o.count % o.rounds);
        for (int k = 0; k < NVAR; k++) {
            int v = (int)((r + (unsigned long)k) % NVAR);
            if (!o.sel[v] || res[v].err)
                continue;
            if ((res[v].err = run_round(&o, v, n, &res[v])) != 0) {
                fprintf(stderr, "fsync-rate: %s in %s: %s: %s\n",
                        variant_names[v], o.dir, res[v].err_what,
                        strerror(res[v].err));
                failed = 1;
            }
        }
    }
    for (int v = 0; v < NVAR; v++)
        if (o.sel[v] && !res[v].err)
            qsort(res[v].ns, res[v].n, sizeof(double), cmp_double);
    if (o.json)
        print_json(&o, res);
    else
        print_table(&o, res);
    for (int v = 0; v < NVAR; v++)
        free(res[v].ns);
    return failed;
}
