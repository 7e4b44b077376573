/* entry.h -- one person (name, age, SSN) in two forms, with field
 * validation, ordering and the two text forms, PRINT's line and the
 * canonical dump line that DIGEST hashes. Knows nothing of trees' locking
 * or of sockets.
 *
 *   struct person  the plain form: fixed, NUL-terminated text fields. What
 *                  a request parses into, what a journal record decodes
 *                  into, what clients generate and expect. A value: lives
 *                  on the stack or in arrays, never linked.
 *   struct entry   the stored form: compact, one malloc sized to fit its
 *                  names (entry_new), linked into the store's tree. Its
 *                  fields never change once made; read them through the
 *                  accessors below.
 *
 * Both forms print and dump to the same bytes (one formatter serves both).
 */
#ifndef SSN_ENTRY_H
#define SSN_ENTRY_H

#include <stddef.h>
#include <stdint.h>
#include "rbtree.h"

#define ENTRY_NAME_MAX  63      /* longest first or last name, in bytes */
#define ENTRY_SSN_LEN   11      /* DDD-DD-DDDD */
#define ENTRY_AGE_MAX   150     /* oldest age accepted */
#define ENTRY_LINE_MAX  192     /* room for any PRINT or dump line + NUL */

/* The plain form. Every field is NUL-terminated within its array. */
struct person {
    char last[ENTRY_NAME_MAX + 1];
    char first[ENTRY_NAME_MAX + 1];
    char ssn[ENTRY_SSN_LEN + 1];        /* DDD-DD-DDDD */
    int age;
};

/* The stored form: 38 bytes before the names (offsetof(struct entry,
 * names)), then "last\0first\0"; entry_new allocates exactly that. With
 * malloc's 8-byte header, names of up to 16 bytes together (18 with their
 * NULs) fit glibc's 64-byte chunk: ssn-bench's names (2 to 7 bytes each)
 * do (docs/PERFORMANCE.md, "100 bytes per person"). */
struct entry {
    struct rb_node node;        /* linked into the store's tree */
    uint32_t ssn;               /* DDD-DD-DDDD as the number DDDDDDDDD */
    uint8_t age;                /* 0..ENTRY_AGE_MAX */
    uint8_t last_len;           /* bytes of the last name, 1..63 */
    uint8_t chars;              /* UTF-8 characters of both names, 2..126:
                                   PRINT's padding (entry_format_print);
                                   and ENTRY_UNSHOWN */
    char names[];               /* "last\0first\0" */
};

/* Validation: each returns 1 when the token is acceptable, 0 otherwise.
 * A name is 1..63 bytes with no control character, space or DEL, and no
 * 0xFE or 0xFF (other bytes >= 0x80 are allowed, so UTF-8 names work). An age is 1..3 decimal digits
 * with a value 0..150. An SSN is exactly DDD-DD-DDDD. */
int entry_name_ok(const char *s, size_t len);
/* entry_name_ok's test, saying more: 0, not a name; 1, a name of ASCII
 * only (printable: entry_name_unsafe would say 0); 2, a name with bytes
 * >= 0x80, which entry_name_unsafe has to look at. */
int entry_name_check(const char *s, size_t len);
/* 1 when the name holds a byte a terminal could act on: a C1 control in
 * UTF-8 (0xC2 then 0x80..0x9F), or a byte that is not part of well-formed
 * UTF-8 (a lone 0x9B is an 8-bit CSI to some terminals). ADD refuses it
 * (proto.c); a name in an older journal may hold one, so replay, FIND
 * and DELETE take it. */
int entry_name_unsafe(const char *s, size_t len);
/* Each byte of s[0..n) entry_name_unsafe would object to becomes '?', in
 * place (a C1 control's two bytes are two '?'). */
void entry_unsafe_mask(char *s, size_t n);
/* name (NUL-terminated) as an error reply may echo it: itself, or its copy
 * in buf (ENTRY_NAME_MAX + 1 bytes) masked by entry_unsafe_mask. */
const char *entry_name_shown(const char *name, char *buf);
int entry_age_parse(const char *s, size_t len, int *age);
int entry_ssn_ok(const char *s, size_t len);

/* An SSN's text (already accepted by entry_ssn_ok: not checked again) as
 * the number its nine digits make, and back: buf gets ENTRY_SSN_LEN bytes
 * and a NUL, with leading zeros. Returns buf. */
uint32_t entry_ssn_pack(const char *text);
char *entry_ssn_unpack(uint32_t ssn, char buf[ENTRY_SSN_LEN + 1]);

/* A new entry, in one allocation sized to fit the names. The caller has
 * validated every field (entry_name_ok, entry_age_parse, entry_ssn_ok, or
 * a journal record's checks): nothing is validated again, only asserted.
 * The names need no terminator (len bytes are taken). Returns NULL when
 * out of memory. The caller owns it: entry_free. */
struct entry *entry_new(const char *last, size_t last_len,
                        const char *first, size_t first_len,
                        uint32_t ssn, int age);

/* entry_new from a validated plain form. */
struct entry *entry_from_person(const struct person *p);

/* Wipes the SSN (personal data) and frees e. NULL is allowed. */
void entry_free(struct entry *e);

/* The fields of a stored entry. Names are NUL-terminated. */
static inline const char *entry_last(const struct entry *e)
{
    return e->names;
}

static inline const char *entry_first(const struct entry *e)
{
    return e->names + e->last_len + 1;
}

static inline int entry_age(const struct entry *e)
{
    return e->age;
}

/* The SSN as DDD-DD-DDDD in buf (ENTRY_SSN_LEN + 1 bytes); returns buf. */
static inline char *entry_ssn_text(const struct entry *e,
                                   char buf[ENTRY_SSN_LEN + 1])
{
    return entry_ssn_unpack(e->ssn, buf);
}

/* A lookup key: the two names, NUL-terminated. Points into the request;
 * FIND and DELETE search with it and never allocate. */
/* In chars: a name holds a byte entry_name_unsafe objects to. ADD never
 * stores one, but a journal written before ADD took UTF-8 only may (a
 * lone 0x9B, an 8-bit CSI): such an entry is shown with '?' for those
 * bytes (entry_format_print). */
#define ENTRY_UNSHOWN 0x80

static inline int entry_unshown(const struct entry *e)
{
    return e->chars & ENTRY_UNSHOWN;
}

struct entry_key {
    const char *last;
    const char *first;
};

/* Tree order: last name, then first name, each compared bytewise.
 * entry_cmp orders two linked entries (for rb_check); entry_key_cmp
 * compares a struct entry_key with a linked entry (for lookups);
 * person_cmp orders two plain forms the same way (for clients). */
int entry_cmp(const struct rb_node *a, const struct rb_node *b);
int entry_key_cmp(const void *key, const struct rb_node *n);
int person_cmp(const struct person *a, const struct person *b);

/* PRINT's line: "%-30s -- %11s %4d\n" of "Last, First", SSN and age.
 * Writes at most ENTRY_LINE_MAX bytes into buf; returns the length. */
size_t entry_format_print(const struct entry *e, char *buf);
size_t person_format_print(const struct person *p, char *buf);

/* The canonical dump line: "last first age ssn\n". Returns the length. */
size_t entry_format_dump(const struct entry *e, char *buf);
size_t person_format_dump(const struct person *p, char *buf);

/* PRINT's frame lines, each ending in '\n'. */
#define ENTRY_PRINT_HEAD "__________________________________________________\n"
#define ENTRY_PRINT_TAIL "--------------------------------------------------\n"

#endif
