/* inputgen.c -- prints the classic request stream (gen.h) on stdout.
 *
 *   inputgen [options] NEVENTS SEED [LASTNAMES_FILE]
 *
 * The same arguments give the same bytes on any machine; inclient and
 * kill_it generate exactly the same stream in-process.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cliutil.h"
#include "expect.h"
#include "gen.h"
#include "names.h"

static void usage(FILE *f)
{
    fprintf(f,
"usage: inputgen [options] NEVENTS SEED [LASTNAMES_FILE]\n"
"Prints NEVENTS requests for ssnserver, then PRINT and DONE.\n"
"The first %d events are ADDs; then ADD, DELETE and PRINT come in the\n"
"ratio 5:5:1 (shuffled blocks, so the ratio is exact). A DELETE names a\n"
"live person of this stream; an ADD never names one. Last names come from\n"
"LASTNAMES_FILE (one per line, '#' comments) or the bundled list.\n"
"\n"
"  --shard K/N     use only the last names whose index is K mod N\n"
"  --mix A:D:P[:F] weights of ADD, DELETE, PRINT (and FIND); default 5:5:1:0\n"
"  --expect FILE   write the final live set as the canonical dump\n"
"                  (last first age ssn, in tree order): its SHA-256 is\n"
"                  the DIGEST a server should report after the stream\n"
"  -h, --help      this text\n"
"  -V, --version   the version\n", GEN_WARMUP);
}

static int die_usage(const char *msg, const char *arg)
{
    fprintf(stderr, "inputgen: %s%s%s\n", msg, arg ? ": " : "",
            arg ? arg : "");
    fprintf(stderr, "Try 'inputgen --help'.\n");
    return 2;
}

static int write_expect(const struct gen *g, const char *path)
{
    struct expect x;
    expect_init(&x);
    if (expect_add(&x, g)) {
        fprintf(stderr, "inputgen: out of memory\n");
        return -1;
    }
    expect_sort(&x);
    FILE *f = fopen(path, "w");
    int rc = f ? expect_write(&x, f) : -errno;
    if (f && fclose(f) && rc == 0)
        rc = -EIO;
    if (rc)
        fprintf(stderr, "inputgen: %s: %s\n", path, strerror(-rc));
    expect_free(&x);
    return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "shard", required_argument, NULL, 's' },
        { "mix", required_argument, NULL, 'm' },
        { "expect", required_argument, NULL, 'e' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    struct gen_opts o = { .shard_k = 0, .shard_n = 1, .mix = GEN_MIX_DEFAULT };
    const char *expect_path = NULL;
    int c;

    while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (cli_parse_shard(optarg, &o.shard_k, &o.shard_n))
                return die_usage("--shard wants K/N with 0 <= K < N", optarg);
            break;
        case 'm':
            if (cli_parse_mix(optarg, &o.mix))
                return die_usage("--mix wants ADD:DELETE:PRINT[:FIND] "
                                 "weights 0-1000, not all 0", optarg);
            break;
        case 'e':
            expect_path = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("inputgen %s\n", CLIENT_VERSION);
            return 0;
        default:
            return die_usage("bad option", NULL);
        }
    }
    int nargs = argc - optind;
    if (nargs < 2 || nargs > 3)
        return die_usage("wants NEVENTS SEED [LASTNAMES_FILE]", NULL);
    if (cli_parse_u64(argv[optind], CLI_EVENTS_MAX, &o.nevents))
        return die_usage("NEVENTS must be a number 0-1000000000",
                         argv[optind]);
    if (cli_parse_u64(argv[optind + 1], UINT64_MAX, &o.seed))
        return die_usage("SEED must be a non-negative integer",
                         argv[optind + 1]);

    struct namelist names;
    char err[300];
    if (names_load(&names, nargs == 3 ? argv[optind + 2] : NULL, err,
                   sizeof(err))) {
        fprintf(stderr, "inputgen: %s\n", err);
        return 1;
    }
    if (names.duplicates)
        fprintf(stderr, "inputgen: warning: %zu duplicate last names "
                "ignored\n", names.duplicates);

    struct gen g;
    int rc = gen_init(&g, &names, &o);
    if (rc) {
        fprintf(stderr, "inputgen: %s\n", rc == -ENOMEM ? "out of memory" :
                "shard has no last names (fewer names than N?)");
        names_free(&names);
        return 1;
    }

    static char out[1 << 16];
    setvbuf(stdout, out, _IOFBF, sizeof(out));
    char line[GEN_LINE_MAX];
    enum gen_op op;
    size_t n;
    int status = 0;
    while ((n = gen_next(&g, line, &op)) > 0)
        fwrite(line, 1, n, stdout);
    if (op == GEN_NOPS) {
        fprintf(stderr, "inputgen: out of memory\n");
        status = 1;
    }
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "inputgen: writing stdout: %s\n", strerror(errno));
        status = 1;
    }
    if (status == 0 && expect_path && write_expect(&g, expect_path))
        status = 1;
    gen_destroy(&g);
    names_free(&names);
    return status;
}
