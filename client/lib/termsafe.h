/* termsafe.h -- a server's bytes made safe to show on a terminal. A sound
 * ssnserver never sends a control byte, but a broken or hostile one (or
 * a peer of ssn-bench's) could send escape sequences that retitle a
 * window, clear a screen or move the cursor. Control characters (C0, DEL
 * and the C1 ones, U+0080 to U+009F), the bidirectional overrides and
 * line separators utf8_shown_len names, and bytes that are not well-formed
 * UTF-8 (a lone 0x9B is an 8-bit CSI to some terminals) each become '?';
 * well-formed UTF-8 passes, so names like "Zoë" print as they are.
 * Pure: no I/O, no allocation.
 */
#ifndef SSN_CLIENT_TERMSAFE_H
#define SSN_CLIENT_TERMSAFE_H

#include <stddef.h>
#include <stdio.h>

/* Writes s[0..n) made safe into out, which has room for n bytes (never
 * more come out than go in), and returns the length written. out may be
 * s itself. */
size_t term_safe(const char *s, size_t n, char *out);

/* The same, written to f. */
void term_fwrite(FILE *f, const char *s, size_t n);

#endif
