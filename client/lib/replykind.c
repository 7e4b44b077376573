/* replykind.c -- a reply's kind from its first line (replykind.h). */
#include <string.h>
#include "proto.h"
#include "replykind.h"

#define NOT_FOUND_SUFFIX " not found"               /* "Error: f l not found" */
#define OLD_NOT_FOUND    PROTO_ERR_PREFIX "No "     /* "Error: No f l", servers
                                                       before 0.3 */
#define EXISTS_SUFFIX    " already exists"          /* "Error: f l already exists" */

static int ends_with(const char *line, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len >= n && memcmp(line + len - n, suffix, n) == 0;
}

enum replykind replykind_of(int cmd, const char *line, size_t len)
{
    if (!proto_line_starts(line, len, PROTO_ERR_PREFIX))
        return RK_OK;
    /* The request decides as much as the text: "Error: ... not found"
     * means a miss only as the answer to a lookup, and only an ADD can be
     * refused because someone already exists. */
    if ((cmd == PROTO_FIND || cmd == PROTO_DELETE) &&
        (ends_with(line, len, NOT_FOUND_SUFFIX) ||
         proto_line_starts(line, len, OLD_NOT_FOUND)))
        return RK_NOT_FOUND;
    if (cmd == PROTO_ADD && ends_with(line, len, EXISTS_SUFFIX))
        return RK_EXISTS;
    return RK_ERROR;
}

const char *replykind_name(int kind)
{
    static const char *const names[RK_KINDS] = {
        "ok", "not found", "exists", "error",
    };
    return kind >= 0 && kind < RK_KINDS ? names[kind] : "?";
}
