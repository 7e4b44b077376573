/* metrics_head.c -- the client's bytes of a request to --metrics-port
 * (metrics_head.h): the head, parsed in place, and Basic credentials.
 */
#include <string.h>
#include <strings.h>
#include <openssl/evp.h>
#include "metrics_head.h"

/* Cuts the line at *p (ending in "\n" or "\r\n") and moves *p past it. */
static char *next_line(char **p)
{
    char *line = *p, *nl = strchr(line, '\n');

    if (!nl)
        return NULL;
    *p = nl + 1;
    if (nl > line && nl[-1] == '\r')
        nl--;
    *nl = '\0';
    return line;
}

/* Whether line holds no control byte (a bare CR, another line's LF cut
 * out, a DEL...), but for tabs where tab_ok: RFC 9112 makes a bare CR
 * invalid, and nothing of a request may smuggle one further. */
static int clean(const char *line, int tab_ok)
{
    for (const unsigned char *c = (const unsigned char *)line; *c; c++)
        if ((*c < ' ' && !(tab_ok && *c == '\t')) || *c == 0x7f)
            return 0;
    return 1;
}

int metrics_head_parse(char *head, struct metrics_request *rq)
{
    char *p = head, *line, *target, *version, *q;

    while (*p == '\r' || *p == '\n')    /* blank lines before: allowed */
        p++;
    line = next_line(&p);
    if (!line || !clean(line, 0) || !(target = strchr(line, ' ')))
        return 400;
    *target++ = '\0';
    if (!(version = strchr(target, ' ')))
        return 400;
    *version++ = '\0';
    if (strncmp(version, "HTTP/", 5) != 0 || strchr(version, ' '))
        return 400;
    if (strncmp(version, "HTTP/1.", 7) != 0 || version[7] < '0' ||
        version[7] > '9' || version[8])
        return 505;
    if (strcmp(line, "GET") != 0 && strcmp(line, "HEAD") != 0)
        return 405;
    if (target[0] != '/')
        return 400;
    if ((q = strpbrk(target, "?#")))
        *q = '\0';
    rq->head_only = line[0] == 'H';
    rq->path = target;
    rq->authorization = NULL;
    while ((line = next_line(&p)) && *line) {
        char *colon = strchr(line, ':');
        if (!colon || colon == line || !clean(line, 1))
            return 400;
        *colon = '\0';
        if (rq->authorization || strcasecmp(line, "Authorization") != 0)
            continue;
        for (q = colon + 1; *q == ' ' || *q == '\t'; q++)
            ;
        rq->authorization = q;
        for (q += strlen(q); q > rq->authorization &&
             (q[-1] == ' ' || q[-1] == '\t'); q--)
            ;
        *q = '\0';
    }
    return 0;
}

const char *metrics_auth_scheme(const char *h, const char *scheme)
{
    size_t n = strlen(scheme);

    if (strncasecmp(h, scheme, n) != 0 || h[n] != ' ')
        return NULL;
    for (h += n; *h == ' '; h++)
        ;
    return h;
}

int metrics_basic_password(const char *b64, unsigned char *buf, size_t cap,
                           const char **secret)
{
    size_t len = strlen(b64), pad = 0;
    int n;

    while (len > 0 && b64[len - 1] == ' ')
        len--;
    if (len == 0 || len % 4 || len / 4 * 3 > cap)
        return -1;
    n = EVP_DecodeBlock(buf, (const unsigned char *)b64, (int)len);
    pad = (b64[len - 1] == '=') + (b64[len - 2] == '=');
    if (n < 0 || (size_t)n < pad)
        return -1;
    n -= (int)pad;
    unsigned char *colon = memchr(buf, ':', (size_t)n);
    if (!colon)
        return -1;
    *secret = (const char *)colon + 1;
    return (int)(buf + n - (colon + 1));
}
