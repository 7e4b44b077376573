/* stress_client.h -- what the stress client's files share
 * (stress_client.c, stress_hold.c): the server's port, the clock, the
 * socket helpers, and the hold job.
 */
#ifndef SSN_TESTS_STRESS_CLIENT_H
#define SSN_TESTS_STRESS_CLIENT_H

#define HOLD_DEADLINE_MS    20000   /* hold: every reply in by then */
#define SSN_TEST            "123-45-6789"   /* the script's people() */

extern int port;                /* the server's, on 127.0.0.1 */

long now_ms(void);              /* CLOCK_MONOTONIC, in ms */
void die(const char *what);     /* says what failed (errno) and exits 2 */

/* A connected socket, or -1. rcvbuf > 0 is set before connecting, so the
 * window the client offers is small from the start. */
int dial(int rcvbuf);

/* Sends all of s; 0, or -1 when the connection failed. */
int send_str(int fd, const char *s);

/* An abortive close: a reset, whatever is queued dropped. */
void close_rst(int fd);

/* stress-client PORT hold N P (stress_hold.c). */
void run_hold(long n, long people);

#endif
