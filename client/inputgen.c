/* inputgen.c -- prints the classic request stream (gen.h) on stdout.
 *
 *   inputgen [options] NEVENTS SEED [LASTNAMES_FILE]
 *
 * The same arguments give the same bytes on any machine; inclient and
 * kill_it generate exactly the same stream in-process.
 */
#include <errno.h>
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
"  --mix MIX       weights: add=5,delete=5,print=1,find=0 by default (parts\n"
"                  left out are 0), or A:D:P[:F]\n"
"  --expect FILE   write the final live set as the canonical dump\n"
"                  (last first age ssn, in tree order): its SHA-256 is\n"
"                  the DIGEST a server should report after the stream\n"
"  -h, --help      this text\n"
"  -V, --version   the version\n"
"Exit status: 0 when the whole stream was written, 1 when it could not be\n"
"(last-name list, memory, output), 2 for bad arguments.\n", GEN_WARMUP);
}

static const struct cli_prog prog = { "inputgen", usage };

static int die_usage(const char *msg, const char *arg)
{
    return cli_usage_error(prog.name, msg, arg);
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

/* Options and operands. Returns 0, or the exit status for bad ones;
 * --help and --version exit here (cli_getopt). */
static int parse_args(int argc, char **argv, struct gen_opts *o,
                      const char **expect_path, const char **lastnames)
{
    static const struct option longopts[] = {
        { "shard", required_argument, NULL, 's' },
        { "mix", required_argument, NULL, 'm' },
        { "expect", required_argument, NULL, 'e' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    const char *bad = NULL;
    int c;

    while ((c = cli_getopt(&prog, argc, argv, "hV", longopts)) != -1) {
        switch (c) {
        case 's': bad = cli_opt_shard(optarg, &o->shard_k, &o->shard_n); break;
        case 'm': bad = cli_opt_mix(optarg, &o->mix); break;
        case 'e': *expect_path = optarg; break;
        default: return CLI_EXIT_USAGE;
        }
        if (bad)
            return cli_bad_opt(prog.name, longopts, c, optarg, bad);
    }
    int nargs = argc - optind;
    char **arg = argv + optind;
    if (nargs < 2 || nargs > 3)
        return die_usage("wants NEVENTS SEED [LASTNAMES_FILE]", NULL);
    if ((bad = cli_arg_events(arg[0], &o->nevents)))
        return cli_bad_value(prog.name, "NEVENTS", arg[0], bad);
    if ((bad = cli_arg_seed(arg[1], &o->seed)))
        return cli_bad_value(prog.name, "SEED", arg[1], bad);
    *lastnames = nargs == 3 ? arg[2] : NULL;
    return 0;
}

/* Loads the last names and sets g up over them. Returns 0, or -1 after
 * saying why (names is empty then). */
static int open_gen(struct gen *g, struct namelist *names,
                    const struct gen_opts *o, const char *lastnames)
{
    char err[300];
    if (names_load(names, lastnames, err, sizeof(err))) {
        fprintf(stderr, "inputgen: %s\n", err);
        return -1;
    }
    if (names->duplicates)
        fprintf(stderr, "inputgen: warning: %zu duplicate last names "
                "ignored\n", names->duplicates);
    int rc = gen_init(g, names, o);
    if (rc) {
        fprintf(stderr, "inputgen: %s\n", rc == -ENOMEM ? "out of memory" :
                "shard has no last names (fewer names than N?)");
        names_free(names);
        return -1;
    }
    return 0;
}

/* The whole stream on stdout. Returns 0, or -1 after saying why. */
static int write_stream(struct gen *g)
{
    static char out[1 << 16];
    char line[GEN_LINE_MAX];
    enum gen_op op;
    size_t n;
    int rc = 0;

    setvbuf(stdout, out, _IOFBF, sizeof(out));
    while ((n = gen_next(g, line, &op)) > 0)
        fwrite(line, 1, n, stdout);
    if (op == GEN_NOPS) {
        fprintf(stderr, "inputgen: out of memory\n");
        rc = -1;
    }
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "inputgen: writing stdout: %s\n", strerror(errno));
        rc = -1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    struct gen_opts o = { .shard_k = 0, .shard_n = 1, .mix = GEN_MIX_DEFAULT };
    const char *expect_path = NULL, *lastnames = NULL;
    struct namelist names;
    struct gen g;

    int rc = parse_args(argc, argv, &o, &expect_path, &lastnames);
    if (rc)
        return rc;
    if (open_gen(&g, &names, &o, lastnames))
        return 1;
    int status = write_stream(&g) ? 1 : 0;
    if (status == 0 && expect_path && write_expect(&g, expect_path))
        status = 1;
    gen_destroy(&g);
    names_free(&names);
    return status;
}
