/* termsafe.c -- a server's bytes made safe to show on a terminal
 * (termsafe.h). */
#include "termsafe.h"
#include "utf8.h"

size_t term_safe(const char *s, size_t n, char *out)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, o = 0;

    while (i < n) {
        size_t len = utf8_shown_len(u + i, n - i);
        if (len == 0) {
            out[o++] = '?';
            i++;
            continue;
        }
        for (size_t k = 0; k < len; k++)
            out[o++] = (char)u[i + k];
        i += len;
    }
    return o;
}

void term_fwrite(FILE *f, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;

    while (i < n) {
        size_t start = i, len;
        while (i < n && (len = utf8_shown_len(u + i, n - i)) > 0)
            i += len;
        if (i > start)
            fwrite(s + start, 1, i - start, f);
        if (i < n) {
            putc('?', f);
            i++;
        }
    }
}
