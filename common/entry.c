/* entry.c -- validation, ordering and formatting of one person (entry.h). */
#include <stdio.h>
#include <string.h>
#include "entry.h"

int entry_name_ok(const char *s, size_t len)
{
    if (len == 0 || len > ENTRY_NAME_MAX)
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c == 0x7f)      /* controls, space, DEL */
            return 0;
        if (c >= 0xfe)                  /* never in UTF-8; 0xff is telnet's
                                           IAC and is never echoed */
            return 0;
    }
    return 1;
}

int entry_age_parse(const char *s, size_t len, int *age)
{
    int v = 0;

    if (len == 0 || len > 3)
        return 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    if (v > ENTRY_AGE_MAX)
        return 0;
    *age = v;
    return 1;
}

int entry_ssn_ok(const char *s, size_t len)
{
    if (len != ENTRY_SSN_LEN)
        return 0;
    for (size_t i = 0; i < len; i++) {
        if (i == 3 || i == 6) {
            if (s[i] != '-')
                return 0;
        } else if (s[i] < '0' || s[i] > '9') {
            return 0;
        }
    }
    return 1;
}

int entry_cmp(const struct rb_node *a, const struct rb_node *b)
{
    const struct entry *x = RB_ENTRY(a, struct entry, node);
    const struct entry *y = RB_ENTRY(b, struct entry, node);
    int c = strcmp(x->last, y->last);       /* bytewise: strcmp compares
                                               as unsigned char */
    return c ? c : strcmp(x->first, y->first);
}

int entry_key_cmp(const void *key, const struct rb_node *n)
{
    const struct entry_key *k = key;
    const struct entry *y = RB_ENTRY(n, struct entry, node);
    int c = strcmp(k->last, y->last);

    return c ? c : strcmp(k->first, y->first);
}

size_t entry_format_print(const struct entry *e, char *buf)
{
    char name[2 * ENTRY_NAME_MAX + 3];

    snprintf(name, sizeof(name), "%s, %s", e->last, e->first);
    int n = snprintf(buf, ENTRY_LINE_MAX, "%-30s -- %11s %4d\n",
                     name, e->ssn, e->age);
    return (size_t)n;
}

size_t entry_format_dump(const struct entry *e, char *buf)
{
    int n = snprintf(buf, ENTRY_LINE_MAX, "%s %s %d %s\n",
                     e->last, e->first, e->age, e->ssn);
    return (size_t)n;
}
