/* telnet.c -- taking telnet commands out of a byte stream (telnet.h). */
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

/* One byte after IAC: returns 1 when it is a data byte (IAC IAC). */
static int after_iac(struct telnet *t, unsigned char c)
{
    if (c == TELNET_IAC) {
        t->state = TN_DATA;
        return 1;
    }
    if (c >= TELNET_WILL && c <= TELNET_DONT) {
        t->verb = c;
        t->state = TN_OPTION;
    } else {
        t->state = c == TELNET_SB ? TN_SB : TN_DATA;   /* IP, NOP, ...: drop */
    }
    return 0;
}

size_t telnet_filter(struct telnet *t, char *buf, size_t len,
                     telnet_answer_fn answer, void *arg)
{
    size_t out = 0;

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];

        switch (t->state) {
        case TN_DATA:
            if (c == TELNET_IAC)
                t->state = TN_IAC;
            else
                buf[out++] = (char)c;
            break;
        case TN_IAC:
            if (after_iac(t, c))
                buf[out++] = (char)c;
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
