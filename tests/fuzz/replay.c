/* replay.c -- a main() for the fuzz targets without libFuzzer: runs
 * LLVMFuzzerTestOneInput once on each file named, and on each file of each
 * directory named (not recursively). Linked with gcc, ASan and UBSan by
 * tests/fuzz/fuzz.mk (make fuzz-replay), so make check replays the seed
 * corpus (tests/test-fuzz-corpus.sh) with no clang installed. A broken
 * oracle or a sanitizer report aborts; a file that cannot be read is an
 * error too. Prints "replay: N inputs" and exits 0 when all went through.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fuzz.h"

/* Runs the target on one file; 0, or -1 after saying why. Each input gets
 * a buffer of its exact size, so ASan sees a read one byte past it. */
static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    uint8_t *buf = NULL;
    int rc = -1;

    if (!f || fstat(fileno(f), &st) < 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        goto out;
    }
    size_t n = (size_t)st.st_size;
    buf = malloc(n ? n : 1);
    if (!buf || fread(buf, 1, n, f) != n) {
        fprintf(stderr, "replay: %s: cannot read it\n", path);
        goto out;
    }
    /* The name goes first: a crash report below it then says which file. */
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
    LLVMFuzzerTestOneInput(n ? buf : NULL, n);
    rc = 0;
out:
    free(buf);
    if (f)
        fclose(f);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of dir, in name order; adds them to *count. */
static int run_dir(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;

    if (!d) {
        fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **more = realloc(names, cap * sizeof(*names));
            if (!more) {
                rc = -1;
                break;
            }
            names = more;
        }
        if (asprintf(&names[n], "%s/%s", dir, de->d_name) < 0) {
            rc = -1;
            break;
        }
        n++;
    }
    closedir(d);
    if (names)
        qsort(names, n, sizeof(*names), by_name);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (rc == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            rc = run_file(names[i]);
            *count += rc == 0;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    size_t count = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        if (S_ISDIR(st.st_mode) ? run_dir(argv[i], &count)
                                : run_file(argv[i]))
            return 1;
        count += !S_ISDIR(st.st_mode);
    }
    printf("replay: %zu inputs\n", count);
    return 0;
}
