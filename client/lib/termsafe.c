/* termsafe.c -- a server's bytes made safe to show on a terminal
 * (termsafe.h). */
#include "termsafe.h"
#include "utf8.h"

size_t term_safe(const char *s, size_t n, char *out)
{
    utf8_mask(s, n, out);
    return n;
}

void term_fwrite(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {        /* past each '?' */
        size_t k = utf8_unshown(s + i, n - i);
        if (k)
            fwrite(s + i, 1, k, f);
        if ((i += k) < n)
            putc('?', f);
    }
}
