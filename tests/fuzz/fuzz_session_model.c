/* fuzz_session_model.c -- the session fuzz target's reference model: the
 * people added and not deleted, sorted as the store's tree is (last
 * name, then first), in a plain array. fuzz_session_reply.c changes it
 * as each ADD and DELETE that did it, and asks it what FIND, PRINT,
 * COUNT, CHECK and DIGEST must say; fuzz_session_check.c holds the store
 * against it at the end. Allocation failures abort (FUZZ_CHECK).
 */
#include <string.h>
#include <openssl/evp.h>
#include "fuzz.h"
#include "fuzz_session.h"

/* Where (first, last) is or would go; *found says which. */
size_t fs_model_find(const struct model *m, const char *first,
                     const char *last, int *found)
{
    size_t lo = 0, hi = m->n;

    *found = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(last, m->p[mid].last);
        if (c == 0)
            c = strcmp(first, m->p[mid].first);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* An ADD that said OK (or, --quiet, said nothing): p goes in at at. */
void fs_model_insert(struct model *m, size_t at, const struct person *p)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->p = realloc(m->p, m->cap * sizeof(*m->p));
        FUZZ_CHECK(m->p != NULL, "memory for the model");
    }
    memmove(&m->p[at + 1], &m->p[at], (m->n - at) * sizeof(*m->p));
    m->p[at] = *p;
    m->n++;
}

/* A DELETE that said OK (or, --quiet, said nothing). */
void fs_model_erase(struct model *m, size_t at)
{
    memmove(&m->p[at], &m->p[at + 1], (m->n - at - 1) * sizeof(*m->p));
    m->n--;
}

/* PRINT's and FIND's line, without its '\n': "%-30s -- %11s %4d" of
 * "Last, First", the SSN and the age (PROTOCOL.md), the name padded to 30
 * UTF-8 characters: printf's width counts bytes, so it is given the
 * continuation bytes on top. */
size_t fs_person_line(const struct person *p, char *buf, size_t size)
{
    char name[2 * ENTRY_NAME_MAX + 3];
    int extra = 0;

    snprintf(name, sizeof(name), "%s, %s", p->last, p->first);
    for (const char *c = name; *c; c++)
        extra += ((unsigned char)*c & 0xC0) == 0x80;
    return (size_t)snprintf(buf, size, "%-*s -- %11s %4d", 30 + extra, name,
                            p->ssn, p->age);
}

/* DIGEST: SHA-256 of the canonical dump, "last first age ssn\n" each. */
void fs_model_digest(const struct model *m, char hex[65])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char md[32];
    char line[ENTRY_LINE_MAX];

    FUZZ_CHECK(ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL),
               "a SHA-256 context");
    for (size_t i = 0; i < m->n; i++) {
        int len = snprintf(line, sizeof(line), "%s %s %d %s\n", m->p[i].last,
                           m->p[i].first, m->p[i].age, m->p[i].ssn);
        EVP_DigestUpdate(ctx, line, (size_t)len);
    }
    EVP_DigestFinal_ex(ctx, md, NULL);
    EVP_MD_CTX_free(ctx);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}
