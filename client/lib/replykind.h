/* replykind.h -- what a reply said, in the four kinds the clients count:
 * a normal answer, "not found", "already exists", or a real error. Every
 * error reply starts "Error: " (docs/PROTOCOL.md), but two of them are
 * ordinary outcomes rather than failures: "Error: first last not found" to a FIND
 * or DELETE of someone absent, and "Error: first last already exists" to
 * an ADD of someone present. The framer (frame.h) tags each reply with its
 * kind; ssn-cli --pipe and ssn-bench's ssn dialect count by it. Pure: no
 * I/O, no state.
 */
#ifndef SSN_CLIENT_REPLYKIND_H
#define SSN_CLIENT_REPLYKIND_H

#include <stddef.h>

enum replykind {
    RK_OK,                      /* a normal answer: OK, a count, a record,
                                   a listing, Bye */
    RK_NOT_FOUND,               /* "Error: first last not found" to FIND
                                   or DELETE ("Error: No first last"
                                   before 0.3) */
    RK_EXISTS,                  /* "Error: first last already exists" to ADD */
    RK_ERROR,                   /* any other "Error: " line */
    RK_KINDS
};

/* The kind of the reply whose first line is line (len bytes, no '\n') to
 * a request of kind cmd (an enum proto_cmd). Only the first line decides:
 * a listing never starts with "Error: ". */
enum replykind replykind_of(int cmd, const char *line, size_t len);

/* "ok", "not found", "exists", "error"; "?" for anything else. */
const char *replykind_name(int kind);

#endif
