/* utf8.h -- which bytes a terminal shows as text: well-formed UTF-8 that
 * is not a control. The server checks names with it (ADD refuses the
 * rest, error replies mask it) and the clients filter what a server sends
 * (client/lib/termsafe.c). Pure: no I/O, no allocation.
 */
#ifndef SSN_UTF8_H
#define SSN_UTF8_H

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence that starts s[0..n) and
 * is not a C1 control (U+0080 to U+009F), or 0. s[0] >= 0x80. RFC 3629's
 * table: no overlong form, no surrogate, nothing past U+10FFFF. */
size_t utf8_seq_ok(const unsigned char *s, size_t n);

/* The length of the run s[0..n) starts with that a terminal shows as it
 * is: one printable ASCII byte (0x20 to 0x7E) or one sequence
 * utf8_seq_ok takes; 0 when s[0] is neither, and for the characters that
 * reorder or break the text around them: the bidirectional overrides,
 * embeddings and isolates (U+202A to U+202E, U+2066 to U+2069, which
 * make "Smith" show as "htimS") and the line and paragraph separators
 * (U+2028, U+2029). Zero-width joiners and the LRM and RLM marks stay:
 * names in Persian and Indic scripts use them. */
size_t utf8_shown_len(const unsigned char *s, size_t n);

/* The offset of the first byte of s[0..n) that utf8_shown_len does not
 * take, or n when a terminal shows all of them as they are. */
size_t utf8_unshown(const char *s, size_t n);

/* s[0..n) into out (n bytes; out may be s), each byte utf8_shown_len does
 * not take as '?': the same length, safe to show. */
void utf8_mask(const char *s, size_t n, char *out);

#endif
