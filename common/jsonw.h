/* jsonw.h -- the JSON string writer shared by the clients' reports
 * (kill_it --json, inclient --json) and the benchmarks' JSON output
 * (tools/bench-*). Numbers and punctuation are plain printf; only strings
 * need care, so only strings live here. No state, no allocation.
 */
#ifndef SSN_JSONW_H
#define SSN_JSONW_H

#include <stdio.h>

/* Writes s to f as a JSON string literal, quotes included: '"' and '\\'
 * get a backslash, every other byte below 0x20 becomes \u00XX (lower-case
 * hex), and all other bytes, 0x80 and above included, pass through as
 * they are (UTF-8 stays UTF-8). A write error shows in ferror(f). */
void json_write_str(FILE *f, const char *s);

#endif
