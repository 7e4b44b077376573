/* entry.h -- one person in the store (name, age, SSN): field validation,
 * ordering and the two text forms, PRINT's line and the canonical dump line
 * that DIGEST hashes. Knows nothing of trees' locking or of sockets.
 */
#ifndef SSN_ENTRY_H
#define SSN_ENTRY_H

#include <stddef.h>
#include "rbtree.h"

#define ENTRY_NAME_MAX  63      /* longest first or last name, in bytes */
#define ENTRY_SSN_LEN   11      /* DDD-DD-DDDD */
#define ENTRY_AGE_MAX   150     /* oldest age accepted */
#define ENTRY_LINE_MAX  192     /* room for any PRINT or dump line + NUL */

struct entry {
    struct rb_node node;        /* linked into the store's tree */
    char last[ENTRY_NAME_MAX + 1];
    char first[ENTRY_NAME_MAX + 1];
    char ssn[ENTRY_SSN_LEN + 1];
    int age;
};

/* Validation: each returns 1 when the token is acceptable, 0 otherwise.
 * A name is 1..63 bytes with no control character, space or DEL, and no
 * 0xFE or 0xFF (other bytes >= 0x80 are allowed, so UTF-8 names work). An age is 1..3 decimal digits
 * with a value 0..150. An SSN is exactly DDD-DD-DDDD. */
int entry_name_ok(const char *s, size_t len);
int entry_age_parse(const char *s, size_t len, int *age);
int entry_ssn_ok(const char *s, size_t len);

/* A lookup key: the two names, NUL-terminated. */
struct entry_key {
    const char *last;
    const char *first;
};

/* Tree order: last name, then first name, each compared bytewise.
 * entry_cmp orders two linked entries (for rb_check); entry_key_cmp
 * compares a struct entry_key with a linked entry (for lookups). */
int entry_cmp(const struct rb_node *a, const struct rb_node *b);
int entry_key_cmp(const void *key, const struct rb_node *n);

/* PRINT's line: "%-30s -- %11s %4d\n" of "Last, First", SSN and age.
 * Writes at most ENTRY_LINE_MAX bytes into buf; returns the length. */
size_t entry_format_print(const struct entry *e, char *buf);

/* The canonical dump line: "last first age ssn\n". Returns the length. */
size_t entry_format_dump(const struct entry *e, char *buf);

/* PRINT's frame lines, each ending in '\n'. */
#define ENTRY_PRINT_HEAD "__________________________________________________\n"
#define ENTRY_PRINT_TAIL "--------------------------------------------------\n"

#endif
