/* utf8.c -- well-formed, printable UTF-8 (utf8.h). */
#include <string.h>
#include "utf8.h"

size_t utf8_seq_ok(const unsigned char *s, size_t n)
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

/* U+2028 and U+2029 (line and paragraph separators), U+202A to U+202E
 * (bidirectional embeddings and overrides) and U+2066 to U+2069 (isolates):
 * E2 80 A8..AE and E2 81 A6..A9. */
static int bidi_or_separator(const unsigned char *s)
{
    return s[0] == 0xE2 &&
           ((s[1] == 0x80 && s[2] >= 0xA8 && s[2] <= 0xAE) ||
            (s[1] == 0x81 && s[2] >= 0xA6 && s[2] <= 0xA9));
}

size_t utf8_shown_len(const unsigned char *s, size_t n)
{
    size_t len;

    if (s[0] < 0x80)
        return s[0] >= 0x20 && s[0] != 0x7F;
    len = utf8_seq_ok(s, n);
    return len == 3 && bidi_or_separator(s) ? 0 : len;
}

size_t utf8_unshown(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, k;

    while (i < n && (k = utf8_shown_len(u + i, n - i)) > 0)
        i += k;
    return i;
}

void utf8_mask(const char *s, size_t n, char *out)
{
    const unsigned char *u = (const unsigned char *)s;

    for (size_t i = 0, k; i < n; i += k) {
        if ((k = utf8_shown_len(u + i, n - i)) == 0) {
            out[i] = '?';
            k = 1;
            continue;
        }
        if (out != s)
            memcpy(out + i, s + i, k);
    }
}
