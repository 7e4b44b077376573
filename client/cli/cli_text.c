/* cli_text.c -- the text of ssn-cli's requests (cli.h): a command line's
 * words joined into one request, and an AUTH line told apart so that it
 * never reaches the history file. Pure: no I/O, no state.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>
#include "cli.h"
#include "proto.h"

int cli_join(char *const *words, int n, char *buf, size_t cap)
{
    size_t len = 0;

    for (int i = 0; i < n; i++) {
        size_t w = strlen(words[i]);
        if (strpbrk(words[i], "\r\n"))
            return -EINVAL;
        /* The word, a space or the final '\n', and a NUL must fit; the
         * request itself must fit in the server's line. */
        if (len + w + 2 > cap || len + w > PROTO_MAX_LINE)
            return -E2BIG;
        memcpy(buf + len, words[i], w);
        len += w;
        buf[len++] = i + 1 < n ? ' ' : '\n';
    }
    if (n == 0) {
        if (cap < 2)
            return -E2BIG;
        buf[len++] = '\n';
    }
    buf[len] = '\0';
    return (int)len;
}

int cli_is_auth(const char *line, size_t len)
{
    size_t i = 0;

    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    return len - i >= 4 && strncasecmp(line + i, "AUTH", 4) == 0 &&
           (len - i == 4 || line[i + 4] == ' ' || line[i + 4] == '\t' ||
            line[i + 4] == '\r' || line[i + 4] == '\n');
}
