/* termsafe.c -- a server's bytes made safe to show on a terminal
 * (termsafe.h). */
#include "termsafe.h"

/* The length of the well-formed UTF-8 sequence at s[0..n) that is not a
 * C1 control, or 0: RFC 3629's table (no overlong form, no surrogate,
 * nothing past U+10FFFF). s[0] >= 0x80. */
static size_t utf8_ok(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;     /* the second byte's range */

    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    if (c == 0xC2 && s[1] <= 0x9F)
        return 0;                       /* U+0080..U+009F: C1 controls */
    return len;
}

/* How many bytes at s[0..n) pass as they are (0: s[0] is shown as '?'). */
static size_t safe_run(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return s[0] >= 0x20 && s[0] != 0x7F;
    return utf8_ok(s, n);
}

size_t term_safe(const char *s, size_t n, char *out)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, o = 0;

    while (i < n) {
        size_t len = safe_run(u + i, n - i);
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
        while (i < n && (len = safe_run(u + i, n - i)) > 0)
            i += len;
        if (i > start)
            fwrite(s + start, 1, i - start, f);
        if (i < n) {
            putc('?', f);
            i++;
        }
    }
}
