/* telnet.h -- telnet's in-band commands taken out of a byte stream (RFC 854
 * and RFC 855), so that a person typing at the server with telnet(1) sends
 * plain lines. Every option the client offers or asks for is refused
 * (WILL x -> DONT x, DO x -> WONT x). That matters for Ctrl-C: telnet then
 * sends IAC IP and IAC DO TIMING-MARK and throws away all output until the
 * server answers TIMING-MARK; the WONT answer lets it show replies again.
 * Pure: no I/O, no allocation; the caller sends the answers.
 */
#ifndef SSN_TELNET_H
#define SSN_TELNET_H

#include <stddef.h>

#define TELNET_IAC          255     /* "interpret as command" */
#define TELNET_DONT         254
#define TELNET_DO           253
#define TELNET_WONT         252
#define TELNET_WILL         251
#define TELNET_SB           250     /* subnegotiation begins */
#define TELNET_SE           240     /* subnegotiation ends */
#define TELNET_IP           244     /* interrupt process: Ctrl-C */
#define TELNET_TIMING_MARK  6       /* the option telnet asks for at Ctrl-C */

#define TELNET_ANSWER_MAX   3       /* bytes of one answer */

struct telnet {
    int state;                  /* where in a command the stream is */
    unsigned char verb;         /* WILL, WONT, DO or DONT being read */
};

/* Called with each answer to send (IAC WONT x or IAC DONT x). */
typedef void (*telnet_answer_fn)(void *arg, const unsigned char *seq,
                                 size_t len);

void telnet_init(struct telnet *t);

/* 1 when t is between commands (a fresh one would read on the same). */
int telnet_between(const struct telnet *t);

/* Removes the telnet commands from buf[0..len) in place (IAC IAC becomes
 * one 0xFF data byte; IAC and a byte below SE, no command, stay two data
 * bytes) and returns the length of what is left. A command split across
 * calls is completed by the next call. cap (>= len) is what buf holds:
 * when an IAC ending the previous call is followed by no command, both
 * bytes come out and the result is len + 1 if cap allows, else the IAC
 * is dropped. */
size_t telnet_filter(struct telnet *t, char *buf, size_t len, size_t cap,
                     telnet_answer_fn answer, void *arg);

#endif
