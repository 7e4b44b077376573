/* names.c -- first names and last-name lists for the load generator
 * (names.h). Lists are parsed once at start-up; nothing here runs per
 * request.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "entry.h"
#include "names.h"

#define NAMES_FILE_MAX  (64u << 20)     /* refuse last-name files over 64 MiB */

/* The classic tool's 65 first names. Kept in this order forever: the
 * generated streams (and recorded digests) depend on it. */
const char *const names_first[NAMES_NFIRST] = {
    "James", "Mary", "John", "Patricia", "Robert", "Jennifer", "Michael",
    "Linda", "William", "Elizabeth", "David", "Barbara", "Richard", "Susan",
    "Joseph", "Jessica", "Thomas", "Sarah", "Charles", "Karen", "Daniel",
    "Nancy", "Matthew", "Lisa", "Anthony", "Betty", "Mark", "Margaret",
    "Donald", "Sandra", "Steven", "Ashley", "Paul", "Kimberly", "Andrew",
    "Emily", "Joshua", "Donna", "Kenneth", "Michelle", "Kevin", "Carol",
    "Brian", "Amanda", "George", "Dorothy", "Timothy", "Melissa", "Ronald",
    "Deborah", "Edward", "Stephanie", "Jason", "Rebecca", "Jeffrey", "Sharon",
    "Ryan", "Laura", "Jacob", "Cynthia", "Gary", "Kathleen", "Nicholas",
    "Amy", "Eric",
};

void names_free(struct namelist *nl)
{
    free(nl->name);
    free(nl->text);
    memset(nl, 0, sizeof(*nl));
}

static int cmp_index(const void *a, const void *b, void *arg)
{
    char *const *name = arg;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = strcmp(name[x], name[y]);
    return c ? c : (x > y) - (x < y);
}

/* Drops later duplicates in O(n log n), keeping file order. */
static int drop_duplicates(struct namelist *nl)
{
    if (nl->n < 2)
        return 0;
    size_t *idx = malloc(nl->n * sizeof(*idx));
    char *dup = calloc(nl->n, 1);
    if (!idx || !dup) {
        free(idx);
        free(dup);
        return -ENOMEM;
    }
    for (size_t i = 0; i < nl->n; i++)
        idx[i] = i;
    qsort_r(idx, nl->n, sizeof(*idx), cmp_index, nl->name);
    for (size_t i = 1; i < nl->n; i++)
        if (strcmp(nl->name[idx[i]], nl->name[idx[i - 1]]) == 0)
            dup[idx[i]] = 1;        /* equal runs are sorted by index */
    size_t k = 0;
    for (size_t i = 0; i < nl->n; i++)
        if (!dup[i])
            nl->name[k++] = nl->name[i];
    nl->duplicates = nl->n - k;
    nl->n = k;
    free(idx);
    free(dup);
    return 0;
}

int names_parse(struct namelist *nl, const char *text, size_t len,
                char *err, size_t errlen)
{
    memset(nl, 0, sizeof(*nl));
    nl->text = malloc(len + 1);
    size_t cap = 1;
    for (size_t i = 0; i < len; i++)
        cap += text[i] == '\n';
    nl->name = malloc(cap * sizeof(*nl->name));
    if (!nl->text || !nl->name) {
        names_free(nl);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    memcpy(nl->text, text, len);
    nl->text[len] = '\0';

    size_t lineno = 0;
    char *p = nl->text, *end = nl->text + len;
    while (p < end) {
        char *nl_at = memchr(p, '\n', (size_t)(end - p));
        char *stop = nl_at ? nl_at : end;
        size_t n = (size_t)(stop - p);
        lineno++;
        if (n > 0 && p[n - 1] == '\r')
            n--;
        p[n] = '\0';
        if (n > 0 && p[0] != '#') {
            if (!entry_name_ok(p, n) || entry_name_unsafe(p, n)) {
                snprintf(err, errlen, "line %zu: not a valid name (1-%d "
                         "bytes of UTF-8, no spaces or control characters)",
                         lineno, ENTRY_NAME_MAX);
                names_free(nl);
                return -EINVAL;
            }
            nl->name[nl->n++] = p;
        }
        p = stop + 1;
    }
    if (drop_duplicates(nl)) {
        names_free(nl);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    if (nl->n == 0) {
        names_free(nl);
        snprintf(err, errlen, "no names in the list");
        return -EINVAL;
    }
    return 0;
}

int names_load(struct namelist *nl, const char *path, char *err, size_t errlen)
{
    if (!path || !*path)
        return names_parse(nl, names_default_text, strlen(names_default_text),
                           err, errlen);

    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        if (fd >= 0)
            close(fd);
        return -e;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > (off_t)NAMES_FILE_MAX) {
        snprintf(err, errlen, "%s: not a regular file of at most %u MiB",
                 path, NAMES_FILE_MAX >> 20);
        close(fd);
        return -EINVAL;
    }
    size_t len = (size_t)st.st_size, got = 0;
    char *buf = malloc(len + 1);
    if (!buf) {
        close(fd);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    while (got < len) {
        ssize_t n = read(fd, buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            snprintf(err, errlen, "%s: %s", path, strerror(e));
            free(buf);
            close(fd);
            return -e;
        }
        got += (size_t)n;
    }
    close(fd);
    int rc = names_parse(nl, buf, len, err, errlen);
    if (rc == -EINVAL) {        /* prefix the file name to the message */
        char msg[256];
        snprintf(msg, sizeof(msg), "%s: %s", path, err);
        snprintf(err, errlen, "%s", msg);
    }
    free(buf);
    return rc;
}
