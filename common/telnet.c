/* telnet.c -- taking telnet commands out of a byte stream (telnet.h). */
#include <assert.h>
#include <string.h>
#include "telnet.h"

enum {
    TN_DATA,                    /* plain bytes */
    TN_IAC,                     /* after IAC */
    TN_OPTION,                  /* after IAC WILL/WONT/DO/DONT */
    TN_SB,                      /* inside a subnegotiation */
    TN_SB_IAC,                  /* IAC inside a subnegotiation */
};

void telnet_init(struct telnet *t)
{
    t->state = TN_DATA;
    t->verb = 0;
}

int telnet_between(const struct telnet *t)
{
    return t->state == TN_DATA;
}

/* Refuses what was offered or asked; says nothing to refusals, so two
 * refusing ends never loop. */
static void negotiate(struct telnet *t, unsigned char option,
                      telnet_answer_fn answer, void *arg)
{
    unsigned char seq[TELNET_ANSWER_MAX] = { TELNET_IAC, 0, option };

    if (t->verb == TELNET_DO)
        seq[1] = TELNET_WONT;
    else if (t->verb == TELNET_WILL)
        seq[1] = TELNET_DONT;
    else
        return;
    answer(arg, seq, sizeof(seq));
}

/* One byte after IAC: returns how many data bytes the pair leaves: 1 for
 * IAC IAC (one 0xFF), 2 for IAC and a byte that is no command (below SE:
 * both are data, so a stray 0xFF never swallows a newline or a space), 0
 * for a command. */
static int after_iac(struct telnet *t, unsigned char c)
{
    if (c == TELNET_IAC || c < TELNET_SE) {
        t->state = TN_DATA;
        return c == TELNET_IAC ? 1 : 2;
    }
    if (c >= TELNET_WILL && c <= TELNET_DONT) {
        t->verb = c;
        t->state = TN_OPTION;
    } else {
        t->state = c == TELNET_SB ? TN_SB : TN_DATA;   /* IP, NOP, ...: drop */
    }
    return 0;
}

size_t telnet_filter(struct telnet *t, char *buf, size_t len, size_t cap,
                     telnet_answer_fn answer, void *arg)
{
    size_t out = 0, i = 0;

    assert(cap >= len);

    /* Most reads hold no IAC: found by memchr, not byte by byte (that
     * was about 630 instructions of a 40-byte ADD, callgrind). */
    if (t->state == TN_DATA) {
        const char *iac = memchr(buf, TELNET_IAC, len);
        if (!iac)
            return len;
        i = out = (size_t)(iac - buf);
    }
    for (; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];

        switch (t->state) {
        case TN_DATA:
            if (c == TELNET_IAC)
                t->state = TN_IAC;
            else
                buf[out++] = (char)c;
            break;
        case TN_IAC:
            switch (after_iac(t, c)) {
            case 2:
                /* Output stays behind input but when the IAC came in
                 * the previous call: then the byte after len is used,
                 * or with no room there the stray IAC is dropped. */
                if (out < i || len < cap) {
                    if (out == i)
                        memmove(buf + i + 1, buf + i, len - i);
                    buf[out++] = (char)TELNET_IAC;
                    if (out > i) {
                        i++;
                        len++;
                    }
                }
                /* fall through */
            case 1:
                buf[out++] = (char)c;
                break;
            }
            break;
        case TN_OPTION:
            negotiate(t, c, answer, arg);
            t->state = TN_DATA;
            break;
        case TN_SB:
            if (c == TELNET_IAC)
                t->state = TN_SB_IAC;
            break;
        case TN_SB_IAC:
            t->state = c == TELNET_SE ? TN_DATA : TN_SB;
            break;
        }
    }
    return out;
}
