/* names.h -- the name lists the load generator draws from: 65 built-in
 * first names, and last names read from a file (one per line, '#' starts a
 * comment line) or from the list bundled in the binary at build time
 * (client/lastnames.txt, so every machine gets the same default bytes).
 */
#ifndef SSN_CLIENT_NAMES_H
#define SSN_CLIENT_NAMES_H

#include <stddef.h>

#define NAMES_NFIRST    65      /* built-in first names */

extern const char *const names_first[NAMES_NFIRST];

struct namelist {
    char **name;                /* name[0..n), NUL-terminated, in file order */
    size_t n;
    size_t duplicates;          /* repeated names dropped (first one kept) */
    char *text;                 /* owns the bytes name[] points into */
};

/* Parses text (len bytes) into nl: blank lines and lines starting with '#'
 * are skipped, a trailing '\r' is dropped, every other line must be a valid
 * name (entry_name_ok). Later duplicates are dropped, so each name keeps the
 * index of its first appearance. Returns 0; -EINVAL with a message in err
 * (naming the line) and nl empty; or -ENOMEM. The caller calls names_free. */
int names_parse(struct namelist *nl, const char *text, size_t len,
                char *err, size_t errlen);

/* Reads path and parses it as above; "" or NULL means the bundled list.
 * Returns 0 or -errno with a message in err. */
int names_load(struct namelist *nl, const char *path, char *err, size_t errlen);

void names_free(struct namelist *nl);

/* The bundled list's text, generated from client/lastnames.txt. */
extern const char names_default_text[];

#endif
